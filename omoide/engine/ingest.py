"""What an ``add`` asks of extraction, and what it reports back.

``add_messages`` (the JiuwenMemory ``LongTermMemory.add_messages`` call) is ``add`` with a
report: the stored messages, the extraction job's state (``disabled`` when no LLM is
configured, instead of an error), its steps, and, when it finished within the wait, the
memories it wrote. The job itself runs in ``omoide.engine.extraction``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from omoide.engine import steps
from omoide.engine.extraction import EXTRACT_JOB
from omoide.errors import FeatureDisabled, InvalidInput
from omoide.extract import MemVariable
from omoide.jobs.worker import Worker
from omoide.llm import LLM
from omoide.store.protocol import NewMemory, Store
from omoide.types import (
    DEFAULT_ID,
    AddInput,
    AddResult,
    ExtractionStatus,
    JobState,
    MemoryItem,
    MemoryType,
    Message,
    Scope,
    SearchFilters,
)
from omoide.validate import to_messages

_WAIT_POLL_S = 0.05


class IngestMixin:
    store: Store
    llm: LLM | None
    max_text_chars: int
    _workers: list[Worker]

    if TYPE_CHECKING:  # provided by Engine and MaintenanceMixin

        def run_jobs(self, limit: int = 1000) -> int: ...
        def _wake_workers(self) -> None: ...
        def _write(
            self,
            scope: Scope,
            records: list[NewMemory],
            episode: list[Message] | None,
            extraction: dict[str, Any] | None = None,
        ) -> tuple[list[MemoryItem], dict[str, int]]: ...

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
        enable_long_term_mem: bool = True,
        enable_user_profile: bool = True,
        enable_semantic_memory: bool = True,
        enable_episodic_memory: bool = True,
        enable_summary_memory: bool = True,
        enable_graph: bool = True,
        wait: bool = False,
        timeout: float = 60.0,
    ) -> list[MemoryItem]:
        """Store each message as a memory (and, with a session, the exchange as an episode),
        and queue their LLM extraction in the same transaction.

        Extraction (``infer``): ``None`` extracts when an LLM is configured and ``type`` is raw;
        ``True`` asks for it and raises ``FeatureDisabled`` (before storing anything) when no
        LLM is configured, as does passing ``mem_variables``; ``False`` never extracts. The
        ``enable_*`` switches (Jiuwen ``add_messages``) choose the memory types:
        ``episodic`` (the exchange verbatim, one memory, no LLM call), ``semantic`` (facts,
        reconciled with similar stored facts: an update supersedes the old fact, a delete
        invalidates it, nothing is erased), ``user_profile`` (attribute: value entries),
        ``summary`` (the session's rolling summary; needs a session) and ``enable_graph``
        (entities and relationships). ``enable_long_term_mem=False`` turns them all off;
        ``mem_variables`` are extracted regardless. All of it is one durable job per call.
        With ``wait=True`` the call returns once the jobs it queued finished, or after
        ``timeout`` seconds. Returns the stored messages; ``add_messages`` takes the same
        arguments and also reports what became of the extraction.

            >>> m.add("I moved to Berlin", user_id="alice", session_id="chat-1", wait=True)
        """
        switches = {
            "enable_long_term_mem": enable_long_term_mem,
            "enable_user_profile": enable_user_profile,
            "enable_semantic_memory": enable_semantic_memory,
            "enable_episodic_memory": enable_episodic_memory,
            "enable_summary_memory": enable_summary_memory,
            "enable_graph": enable_graph,
        }
        if self.llm is None and (infer or (infer is None and mem_variables)):
            raise FeatureDisabled(
                "extraction needs an LLM: set OMOIDE_LLM_BASE_URL and OMOIDE_LLM_MODEL, "
                "or add with infer=False"
            )
        scope = Scope(user_id=user_id, scope_id=scope_id)
        result = self._add(
            messages,
            scope,
            session_id,
            metadata,
            type,
            infer,
            mem_variables,
            switches,
            wait,
            timeout,
        )
        return result.items

    def add_messages(
        self,
        messages: AddInput,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        session_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        mem_variables: Sequence[MemVariable | dict[str, Any]] | None = None,
        enable_long_term_mem: bool = True,
        enable_user_profile: bool = True,
        enable_semantic_memory: bool = True,
        enable_episodic_memory: bool = True,
        enable_summary_memory: bool = True,
        enable_graph: bool = True,
        wait: bool = False,
        timeout: float = 60.0,
    ) -> AddResult:
        """Store messages and extract memories from them, reporting what became of it.

        The arguments are ``add``'s. Never raises ``FeatureDisabled``: without an LLM the
        messages are stored and ``result.extraction.state`` is ``"disabled"``.

            >>> result = m.add_messages(msgs, user_id="alice", session_id="s1", wait=True)
            >>> result.extraction.state, [i.type for i in result.extracted]
            ('done', ['episodic', 'semantic', 'user_profile', 'summary'])
        """
        switches = {
            "enable_long_term_mem": enable_long_term_mem,
            "enable_user_profile": enable_user_profile,
            "enable_semantic_memory": enable_semantic_memory,
            "enable_episodic_memory": enable_episodic_memory,
            "enable_summary_memory": enable_summary_memory,
            "enable_graph": enable_graph,
        }
        scope = Scope(user_id=user_id, scope_id=scope_id)
        return self._add(
            messages,
            scope,
            session_id,
            metadata,
            MemoryType.RAW,
            None,
            mem_variables,
            switches,
            wait,
            timeout,
        )

    def _add(
        self,
        messages: AddInput,
        scope: Scope,
        session_id: str | None,
        metadata: dict[str, Any] | None,
        type_: MemoryType,
        infer: bool | None,
        mem_variables: Sequence[MemVariable | dict[str, Any]] | None,
        switches: dict[str, bool],
        wait: bool,
        timeout: float,
    ) -> AddResult:
        msgs = to_messages(messages, self.max_text_chars)
        if not isinstance(timeout, int | float) or timeout <= 0:
            raise InvalidInput(f"timeout must be a positive number of seconds, got {timeout!r}")
        payload, status = self._extraction_plan(infer, type_, mem_variables, switches)
        if payload is not None:
            payload["metadata"] = metadata or {}
        records = [
            NewMemory(
                text=m.content,
                type=type_,
                session_id=session_id,
                metadata={**(metadata or {}), "role": m.role},
            )
            for m in msgs
        ]
        items, jobs = self._write(scope, records, msgs, payload)
        if wait and jobs:
            self._await_jobs(list(jobs.values()), timeout)
        extracted: list[MemoryItem] = []
        if EXTRACT_JOB in jobs:
            status = self._extraction_status(jobs[EXTRACT_JOB])
            if status.state == "done":
                extracted = self._extracted(scope, jobs[EXTRACT_JOB])
        return AddResult(items=items, extraction=status, extracted=extracted)

    # what add asks for --------------------------------------------------------------------
    def _extraction_plan(
        self,
        infer: bool | None,
        type_: MemoryType,
        mem_variables: Sequence[MemVariable | dict[str, Any]] | None,
        switches: dict[str, bool],
    ) -> tuple[dict[str, Any] | None, ExtractionStatus]:
        """The job payload (steps and variables), or None with the reason nothing will run."""
        variables = parse_variables(mem_variables)
        if infer is False or (infer is None and type_ is not MemoryType.RAW and not variables):
            return None, ExtractionStatus(state="off", reason="extraction not requested")
        chosen = [name for name in steps.STEPS if _enabled(name, switches, variables)]
        if not chosen:
            return None, ExtractionStatus(state="off", reason="every extraction switch is off")
        if self.llm is None:
            reason = "extraction needs an LLM: set OMOIDE_LLM_BASE_URL and OMOIDE_LLM_MODEL"
            return None, ExtractionStatus(state="disabled", reason=reason)
        payload = {"steps": chosen, "variables": [v.model_dump() for v in variables]}
        return payload, ExtractionStatus(state="pending")

    def _extraction_status(self, job_id: int) -> ExtractionStatus:
        job = self.store.jobs.get_job(job_id)
        result = job.result or {}
        return ExtractionStatus(
            state=job.state.value,
            job_id=job.id,
            reason=job.last_error if job.state is not JobState.DONE else result.get("skipped"),
            steps=result.get("steps", {}),
        )

    def _extracted(self, scope: Scope, job_id: int) -> list[MemoryItem]:
        filters = SearchFilters(metadata={"extraction_job": job_id})
        items, _ = self.store.memories.list_memories(scope, filters, 1000, 0)
        return items

    def _await_jobs(self, job_ids: Sequence[int], timeout: float) -> None:
        """Until every job is done or failed, or ``timeout`` seconds passed. Without worker
        threads the jobs run here, in the caller's thread."""
        deadline = time.monotonic() + timeout
        pending = list(job_ids)
        while pending:
            if self._workers:
                self._wake_workers()
            else:
                self.run_jobs()
            pending = [i for i in pending if self.store.jobs.get_job(i).state not in _FINAL]
            left = deadline - time.monotonic()
            if not pending or left <= 0:
                return
            time.sleep(min(_WAIT_POLL_S, left))


_FINAL = (JobState.DONE, JobState.FAILED)


def _enabled(step: str, switches: dict[str, bool], variables: list[MemVariable]) -> bool:
    if step == "variables":
        return bool(variables)
    if not switches.get("enable_long_term_mem", True):
        return False
    return switches.get(_SWITCH[step], True)


_SWITCH = {
    "episodic": "enable_episodic_memory",
    "semantic": "enable_semantic_memory",
    "profile": "enable_user_profile",
    "summary": "enable_summary_memory",
    "graph": "enable_graph",
}


def parse_variables(
    mem_variables: Sequence[MemVariable | dict[str, Any]] | None,
) -> list[MemVariable]:
    """``mem_variables`` as ``MemVariable`` objects; ``InvalidInput`` naming what is wrong."""
    if mem_variables is None:
        return []
    if isinstance(mem_variables, str | bytes | dict):
        raise InvalidInput("mem_variables must be a list of variable definitions")
    parsed = []
    for index, item in enumerate(mem_variables):
        try:
            parsed.append(
                item if isinstance(item, MemVariable) else MemVariable.model_validate(item)
            )
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'definition'}: {e['msg']}"
                for e in exc.errors()
            )
            raise InvalidInput(f"mem_variables[{index}]: {problems}") from exc
    names = [v.name for v in parsed]
    if len(set(names)) != len(names):
        raise InvalidInput("mem_variables: duplicate variable names")
    return parsed
