"""``IngestService``: ``add`` and ``add_messages``, and what they ask of extraction.

``add_messages`` is ``add`` with a report: the stored messages, the extraction job's state
(``disabled`` when no LLM is configured, instead of an error), its steps, and, when it finished
within the wait, the memories it wrote. The job itself runs in ``omoide.engine.extraction.service``.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import ValidationError

from omoide.engine.extraction import steps
from omoide.engine.memories import MemoryService
from omoide.engine.shared.job_signal import JobSignal
from omoide.errors import FeatureDisabled, InvalidInput
from omoide.extract import MemVariable
from omoide.jobs.kinds import EXTRACT, ExtractPayload
from omoide.store.ports.jobs import JobQueue
from omoide.store.ports.memories import MemoryReads
from omoide.store.protocol import NewMemory
from omoide.types import (
    DEFAULT_ID,
    AddInput,
    AddResult,
    ExtractionStatus,
    JobState,
    MemoryItem,
    MemoryType,
    Scope,
    SearchFilters,
    check_calendar,
    dt_to_ms,
)
from omoide.validate import check_ids, to_messages

NO_LLM = "extraction needs an LLM: set OMOIDE_LLM_BASE_URL and OMOIDE_LLM_MODEL"


@dataclass(frozen=True)
class ExtractionRequest:
    """Which memory types an add's extraction makes (one switch per type).

    ``episodic`` (the exchange verbatim, no LLM call), ``semantic`` (facts, reconciled with the
    stored ones), ``user_profile``, ``summary`` (the session's rolling summary) and ``graph``
    (entities and relationships); ``long_term=False`` turns them all off. Declared variables
    are extracted regardless.

        >>> ExtractionRequest(summary=False, graph=False).wants("semantic")
        True
    """

    long_term: bool = True
    user_profile: bool = True
    semantic: bool = True
    episodic: bool = True
    summary: bool = True
    graph: bool = True

    def wants(self, step: str) -> bool:
        if not self.long_term:
            return False
        return bool(getattr(self, _SWITCH[step]))


_SWITCH = {
    "episodic": "episodic",
    "semantic": "semantic",
    "profile": "user_profile",
    "summary": "summary",
    "graph": "graph",
}


class IngestService:
    def __init__(
        self,
        memory_reads: MemoryReads,
        jobs: JobQueue,
        memories: MemoryService,
        signal: JobSignal,
        *,
        llm_enabled: bool,
        summary_trigger: Literal["episode", "chunk"],
        max_text_chars: int,
        max_messages: int = 1_000,
    ) -> None:
        self._memory_reads = memory_reads
        self._jobs = jobs
        self._memories = memories
        self._signal = signal
        self._llm_enabled = llm_enabled
        self._summary_trigger = summary_trigger
        self._max_text_chars = max_text_chars
        self._max_messages = max_messages

    def add(
        self,
        messages: AddInput,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        session_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        type: MemoryType = MemoryType.RAW,
        infer: bool | None = None,
        mem_variables: Sequence[MemVariable | dict[str, Any]] | None = None,
        extraction: ExtractionRequest | None = None,
        wait: bool = False,
        timeout: float = 60.0,
        timestamp: datetime | None = None,
    ) -> list[MemoryItem]:
        """Store each message as a memory (and, with a session, the exchange as an episode),
        and queue their LLM extraction in the same transaction (see ``Memory.add``)."""
        if not self._llm_enabled and (infer or (infer is None and mem_variables)):
            raise FeatureDisabled(f"{NO_LLM}, or add with infer=False")
        scope = Scope(user_id=user_id, scope_id=scope_id)
        request = extraction or ExtractionRequest()
        return self._add(
            self._stamped(messages, timestamp),
            scope,
            session_id,
            metadata,
            type,
            infer,
            mem_variables,
            request,
            wait,
            timeout,
            chat=not isinstance(messages, str),
        ).items

    def add_messages(
        self,
        messages: AddInput,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        session_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        mem_variables: Sequence[MemVariable | dict[str, Any]] | None = None,
        extraction: ExtractionRequest | None = None,
        wait: bool = False,
        timeout: float = 60.0,
        timestamp: datetime | None = None,
    ) -> AddResult:
        """Store messages and extract memories from them, reporting what became of it; never
        raises ``FeatureDisabled`` (without an LLM the state is ``"disabled"``)."""
        scope = Scope(user_id=user_id, scope_id=scope_id)
        request = extraction or ExtractionRequest()
        return self._add(
            self._stamped(messages, timestamp),
            scope,
            session_id,
            metadata,
            MemoryType.RAW,
            None,
            mem_variables,
            request,
            wait,
            timeout,
            chat=not isinstance(messages, str),
        )

    def _stamped(self, messages: AddInput, at: datetime | None) -> AddInput:
        """The messages with the episode's time ``at`` on each that carries no time of its own
        (what extraction reads relative dates from, and what the episode keeps)."""
        if at is None:
            return messages
        try:
            at = check_calendar(at)
        except ValueError as error:
            raise InvalidInput(str(error)) from None
        return [
            m if m.timestamp is not None else m.model_copy(update={"timestamp": at})
            for m in to_messages(messages, self._max_text_chars)
        ]

    def _add(
        self,
        messages: AddInput,
        scope: Scope,
        session_id: str | None,
        metadata: dict[str, Any] | None,
        type_: MemoryType,
        infer: bool | None,
        mem_variables: Sequence[MemVariable | dict[str, Any]] | None,
        request: ExtractionRequest,
        wait: bool,
        timeout: float,
        *,
        chat: bool,
    ) -> AddResult:
        """``chat``: the messages came as a list of chat messages (not one plain text), so
        without a session they may join an implicit conversation."""
        check_ids(scope.user_id, scope.scope_id)
        msgs = to_messages(messages, self._max_text_chars)
        if len(msgs) > self._max_messages:
            # One add is one transaction: every other writer waits for all of it (10,000
            # messages held the lock ~10 s). Bigger imports go in several adds.
            raise InvalidInput(
                f"{len(msgs)} messages in one add; the limit is {self._max_messages}"
                " (OMOIDE_MAX_MESSAGES): send them in several requests",
                limit=self._max_messages,
            )
        if not isinstance(timeout, int | float) or timeout <= 0:
            raise InvalidInput(f"timeout must be a positive number of seconds, got {timeout!r}")
        payload, status = self._plan(infer, type_, mem_variables, request, metadata or {})
        records = [
            NewMemory(
                text=m.content,
                type=type_,
                session_id=session_id,
                metadata={**(metadata or {}), "role": m.role},
                # the time it was said: what links session-less turns into a conversation
                created_at_ms=dt_to_ms(m.timestamp) if m.timestamp else None,
            )
            for m in msgs
        ]
        with self._signal.waiting(scope, timeout) if wait else nullcontext():
            items, jobs = self._memories.write(scope, records, msgs, payload, chat)
            if wait and jobs:
                self._signal.wait(list(jobs.values()), timeout)
        extracted: list[MemoryItem] = []
        if EXTRACT.name in jobs:
            status = self._status(jobs[EXTRACT.name])
            if status.state in ("done", "partial"):
                extracted = self._extracted(scope, jobs[EXTRACT.name])
        return AddResult(items=items, extraction=status, extracted=extracted)

    def _plan(
        self,
        infer: bool | None,
        type_: MemoryType,
        mem_variables: Sequence[MemVariable | dict[str, Any]] | None,
        request: ExtractionRequest,
        metadata: dict[str, Any],
    ) -> tuple[ExtractPayload | None, ExtractionStatus]:
        """The job payload (steps and variables), or None with the reason nothing will run."""
        variables = parse_variables(mem_variables)
        if infer is False or (infer is None and type_ is not MemoryType.RAW and not variables):
            return None, ExtractionStatus(state="off", reason="extraction not requested")
        chosen = [
            name
            for name in steps.STEPS
            if (bool(variables) if name == "variables" else request.wants(name))
        ]
        if not chosen:
            return None, ExtractionStatus(state="off", reason="every extraction switch is off")
        if not self._llm_enabled:
            return None, ExtractionStatus(state="disabled", reason=NO_LLM)
        if self._summary_trigger == "chunk":
            # the chunk job rolls the summary forward instead of every add
            chosen = [step for step in chosen if step != "summary"]
            if not chosen:
                return None, ExtractionStatus(state="pending")
        payload = ExtractPayload(
            steps=chosen, variables=[v.model_dump() for v in variables], metadata=metadata
        )
        return payload, ExtractionStatus(state="pending")

    def _status(self, job_id: int) -> ExtractionStatus:
        job = self._jobs.get_job(job_id)
        result = job.result or {}
        partial = job.state is JobState.DONE and result.get("outcome") == "partial"
        return ExtractionStatus(
            state="partial" if partial else job.state.value,
            job_id=job.id,
            reason=job.last_error if job.state is not JobState.DONE else result.get("skipped"),
            steps=result.get("steps", {}),
        )

    def _extracted(self, scope: Scope, job_id: int) -> list[MemoryItem]:
        filters = SearchFilters(metadata={"extraction_job": job_id})
        items, _ = self._memory_reads.list_memories(scope, filters, 1000, 0)
        return items


def parse_variables(
    mem_variables: Sequence[MemVariable | dict[str, Any]] | None,
) -> list[MemVariable]:
    """``mem_variables`` as ``MemVariable`` objects; ``InvalidInput`` naming what is wrong."""
    if mem_variables is None:
        return []
    if isinstance(mem_variables, str | bytes | dict):
        raise InvalidInput("mem_variables must be a list of variable definitions")
    parsed = []
    for position, item in enumerate(mem_variables):
        try:
            parsed.append(
                item if isinstance(item, MemVariable) else MemVariable.model_validate(item)
            )
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'definition'}: {e['msg']}"
                for e in exc.errors()
            )
            raise InvalidInput(f"mem_variables[{position}]: {problems}") from exc
    names = [v.name for v in parsed]
    if len(set(names)) != len(names):
        raise InvalidInput("mem_variables: duplicate variable names")
    return parsed
