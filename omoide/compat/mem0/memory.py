"""mem0's ``Memory`` over an ``omoide.Memory`` (the package's ``Memory``; see its docstring)."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from omoide.compat.mem0.config import settings_from_config
from omoide.compat.mem0.errors import MemoryNotFound
from omoide.compat.mem0.shape import (
    WILDCARD,
    added_dict,
    history_dict,
    memory_dict,
    owner,
    score_details,
    split_filters,
)
from omoide.config import Settings, load_settings
from omoide.embed import Embedder
from omoide.errors import InvalidInput, NotFound
from omoide.llm import LLM
from omoide.memory import Memory as OmoideMemory
from omoide.types import Scope

__all__ = ["Memory", "MemoryNotFound"]

log = logging.getLogger(__name__)

Messages = str | Mapping[str, Any] | Sequence[Mapping[str, Any]]


class Memory:
    """mem0's ``Memory`` API on an omoide store (``path``: the SQLite file; defaults as
    ``omoide.Memory``'s). ``memory`` wraps an existing ``omoide.Memory`` instead."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        memory: OmoideMemory | None = None,
        embedder: Embedder | None = None,
        llm: LLM | None = None,
        settings: Settings | None = None,
    ) -> None:
        self.omoide = memory or OmoideMemory(path, embedder=embedder, llm=llm, settings=settings)
        self._warned_no_llm = False

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any]) -> Memory:
        """A ``Memory`` from a mem0 config dict: ``llm``, ``embedder`` and
        ``history_db_path`` map (see ``omoide.compat.mem0.config``)."""
        settings, path = settings_from_config(config_dict, load_settings())
        return cls(path, settings=settings)

    def close(self) -> None:
        self.omoide.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add(
        self,
        messages: Messages,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        infer: bool = True,
        memory_type: str | None = None,
        prompt: str | None = None,
        timestamp: datetime | None = None,
    ) -> dict[str, Any]:
        """Store ``messages`` (a string, a message dict or a list of them), one memory each.

        ``infer=True`` (mem0's default) also extracts facts when an LLM is configured, and
        waits for them: they come back after the stored messages (``event`` ``"UPDATE"`` for
        a fact that supersedes a stored one, else ``"ADD"``). Without an LLM the messages
        are stored and searchable, and nothing is extracted: no error (unlike
        ``omoide.Memory.add(infer=True)``), but a warning, once per instance.
        """
        if memory_type is not None:
            raise InvalidInput("memory_type: procedural memories are not supported")
        if prompt is not None:
            raise InvalidInput("prompt: custom extraction prompts are not supported")
        who = owner(user_id, agent_id, run_id)
        batch = _messages(messages, infer=infer)
        if not infer:
            items = []
            for authored, group in _by_author(_stored_raw(batch), metadata):
                items += self.omoide.add(
                    group,
                    user_id=who.user_id,
                    scope_id=who.scope_id,
                    session_id=who.session_id,
                    metadata=authored,
                    infer=False,
                    timestamp=timestamp,
                )
            return {"results": [added_dict(i) for i in items]}
        result = self.omoide.add_messages(
            batch if isinstance(batch, str) else [_plain(m) for m in batch],
            user_id=who.user_id,
            scope_id=who.scope_id,
            session_id=who.session_id,
            metadata=metadata,
            timestamp=timestamp,
            # mem0's extraction is facts reconciled with what is stored; omoide's profile,
            # summary and graph steps would be LLM calls a mem0 caller never asked for.
            enable_user_profile=False,
            enable_summary_memory=False,
            enable_episodic_memory=False,
            enable_graph=False,
            wait=True,
        )
        if result.extraction.state == "disabled" and not self._warned_no_llm:
            self._warned_no_llm = True
            warnings.warn(
                f"infer=True stored the messages but extracted nothing: {result.extraction.reason}"
                " (pass infer=False to store messages only)",
                UserWarning,
                stacklevel=2,
            )
        return {"results": [added_dict(i) for i in [*result.items, *result.extracted]]}

    def search(
        self,
        query: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        limit: int = 100,
        filters: Mapping[str, Any] | None = None,
        threshold: float | None = None,
        rerank: bool = True,  # noqa: ARG002 (mem0 code passes it; omoide has no reranker)
        top_k: int | None = None,
        explain: bool = False,
        reference_date: datetime | None = None,
    ) -> dict[str, Any]:
        """The memories most relevant to ``query``, best first (the default recipe), each with
        its ``score``, the one every omoide door gives; ``threshold`` drops hits scored lower.
        ``filters``: the owner ids and metadata equality; at least one id is required, as in
        mem0. ``top_k`` (mem0's newer name) or ``limit``. ``rerank`` is accepted; omoide has no
        reranker. ``explain=True`` adds each hit's ``score_details`` (see ``shape``)."""
        if reference_date is not None:  # mem0's open-source Memory refuses it too
            raise InvalidInput("reference_date: not supported", field="reference_date")
        who, narrowing = split_filters(filters, user_id, agent_id, run_id)
        count = limit if top_k is None else top_k
        if _none_asked(count):
            return {"results": []}
        found = self.omoide.search(
            query,
            user_id=who.user_id,
            scope_id=who.scope_id,
            filters=narrowing,
            limit=count,
            threshold=threshold,
        )
        results = [memory_dict(h.memory, h.score) for h in found.hits]
        if explain:
            for result, hit in zip(results, found.hits, strict=True):
                result["score_details"] = score_details(hit, threshold)
        return {"results": results}

    def get_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: Mapping[str, Any] | None = None,
        limit: int = 100,
        top_k: int | None = None,
    ) -> dict[str, Any]:
        """The owner's memories, newest first (at most ``top_k`` or ``limit``); at least one
        id is required, as in mem0."""
        who, narrowing = split_filters(filters, user_id, agent_id, run_id)
        count = limit if top_k is None else top_k
        if _none_asked(count):
            return {"results": []}
        page = self.omoide.get_all(
            user_id=who.user_id,
            scope_id=who.scope_id,
            filters=narrowing,
            limit=count,
        )
        return {"results": [memory_dict(i) for i in page.items]}

    def get(self, memory_id: str) -> dict[str, Any] | None:
        """One memory by id, in whichever tenant it is; None if there is none (as mem0)."""
        try:
            scope = self.omoide.owner(memory_id)
            item = self.omoide.get(memory_id, user_id=scope.user_id, scope_id=scope.scope_id)
        except NotFound:
            return None
        return memory_dict(item)

    def update(
        self,
        memory_id: str,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        *,
        data: str | None = None,
        timestamp: int | float | str | None = None,
    ) -> dict[str, Any]:
        """Replace a memory's text (``text``, or ``data``, its older name that mem0 still
        accepts) and/or its metadata; recorded in its history. ``MemoryNotFound`` (a
        ``ValueError``, as mem0's) for an unknown id."""
        if timestamp is not None:
            raise InvalidInput("timestamp: moving a memory in time is not supported")
        if text is not None and data is not None and text != data:
            raise InvalidInput("update: give text or data (its older name), not both")
        new_text = text if text is not None else data
        if new_text is None and metadata is None:
            raise InvalidInput("update: give text (or data) or metadata")
        scope = self._owner(memory_id)
        tenant = {"user_id": scope.user_id, "scope_id": scope.scope_id}
        with _not_found():
            if metadata is not None:
                # mem0 merges the given keys into the memory's metadata: the others (its role,
                # its author, the caller's own keys) stay
                metadata = {**self.omoide.get(memory_id, **tenant).metadata, **metadata}
            self.omoide.update(memory_id, new_text, metadata, **tenant)
        return {"message": "Memory updated successfully!"}

    def delete(self, memory_id: str) -> dict[str, Any]:
        """Delete one memory (its history stays readable). ``MemoryNotFound`` (a
        ``ValueError``, as mem0's) for an unknown id."""
        scope = self._owner(memory_id)
        with _not_found():  # an id whose memory is already deleted: its tenant is known
            self.omoide.delete(memory_id, user_id=scope.user_id, scope_id=scope.scope_id)
        return {"message": "Memory deleted successfully!"}

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """What happened to a memory, oldest first: ADD, UPDATE (old and new text), DELETE.
        An unknown id has no history: ``[]``, as mem0's (it reads its history table)."""
        try:
            scope = self.omoide.owner(memory_id)
        except NotFound:
            return []
        tenant = {"user_id": scope.user_id, "scope_id": scope.scope_id}
        entries = self.omoide.history(memory_id, **tenant)
        try:
            metadata = self.omoide.get(memory_id, **tenant).metadata
        except NotFound:  # deleted: its role and author went with it
            metadata = {}
        role, actor = metadata.get("role"), metadata.get("actor_id")
        return [history_dict(e, role, actor) for e in entries]

    def _owner(self, memory_id: str) -> Scope:
        with _not_found():
            return self.omoide.owner(memory_id)

    def delete_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, Any]:
        """Delete every memory the ids match, as mem0 does: an id that is not given matches
        any, so ``user_id`` alone deletes that user's memories of every ``agent_id`` and
        ``run_id``, and ``agent_id`` alone that agent's of every user. One id is required
        (``reset()`` deletes everything)."""
        if user_id is None and agent_id is None and run_id is None:
            raise InvalidInput(
                "delete_all: give at least one of user_id, agent_id or run_id "
                "(reset() deletes everything)"
            )
        for name, value in (("user_id", user_id), ("agent_id", agent_id), ("run_id", run_id)):
            # mem0's platform reads "*" as every user (agent, run); here it would name one
            # called "*" and delete nothing without a word
            if value == WILDCARD:
                raise InvalidInput(
                    f"delete_all: {name}='*' (all of them) is not supported; give the id, or"
                    " call reset() to delete everything",
                    field=name,
                )
        who = owner(user_id, agent_id, run_id)
        if user_id is None and run_id is None:
            self.omoide.delete_scope_id(who.scope_id)  # the agent, for every user
            return {"message": "Memories deleted successfully!"}
        scopes = [who.scope_id] if agent_id is not None else self.omoide.list_scopes(who.user_id)
        for scope_id in scopes:
            if who.session_id is None:
                self.omoide.delete_all(user_id=who.user_id, scope_id=scope_id)
                continue
            try:
                self.omoide.delete_session(who.session_id, user_id=who.user_id, scope_id=scope_id)
            except NotFound:
                continue  # this agent has no such run: nothing of it to delete
        return {"message": "Memories deleted successfully!"}

    def reset(self) -> None:
        """Delete every tenant's memories. Irreversible."""
        self.omoide.reset()


@contextmanager
def _not_found() -> Iterator[None]:
    """omoide's ``NotFound`` for a memory id as mem0's ``ValueError`` (``MemoryNotFound``)."""
    try:
        yield
    except NotFound as exc:
        raise MemoryNotFound(exc.message, **exc.fields) from exc


def _none_asked(count: object) -> bool:
    """mem0 takes ``top_k=0`` (a non-negative count) and answers no results."""
    return isinstance(count, int) and not isinstance(count, bool) and count == 0


def _plain(message: Mapping[str, str]) -> dict[str, str]:
    return {"role": message["role"], "content": message["content"]}


def _by_author(
    messages: list[dict[str, str]], metadata: dict[str, Any] | None
) -> list[tuple[dict[str, Any] | None, list[dict[str, str]]]]:
    """Runs of consecutive messages by the same author, each with the metadata to store:
    mem0 keeps a message's ``name`` as its memory's ``actor_id``."""
    runs: list[tuple[dict[str, Any] | None, list[dict[str, str]]]] = []
    last: str | None = None
    for message in messages:
        name = message.get("name")
        if not runs or name != last:
            authored = metadata if name is None else {**(metadata or {}), "actor_id": name}
            runs.append((authored, []))
            last = name
        runs[-1][1].append(_plain(message))
    return runs


def _stored_raw(batch: str | list[dict[str, str]]) -> list[dict[str, str]]:
    """What mem0's ``infer=False`` stores: every message but the system ones and those
    without content, which it skips (with a warning) rather than refusing the batch."""
    messages = [{"role": "user", "content": batch}] if isinstance(batch, str) else batch
    kept = [m for m in messages if m["role"] != "system" and m["content"].strip()]
    if skipped := sum(1 for m in messages if m["role"] != "system") - len(kept):
        log.warning("add(infer=False): skipped %d message(s) without content, as mem0", skipped)
    return kept


def _messages(messages: Messages, *, infer: bool) -> str | list[dict[str, str]]:
    if isinstance(messages, str):
        return messages
    batch = [messages] if isinstance(messages, Mapping) else list(messages)
    if not batch or not all(isinstance(m, Mapping) for m in batch):
        raise InvalidInput(
            "messages: expected a string, a message dict or a list of message dicts",
            field="messages",
        )
    out = []
    for n, message in enumerate(batch):
        content = message.get("content")
        if content is None and not infer:
            content = ""  # no content: mem0's raw add skips the message, not the batch
        if not isinstance(content, str):
            raise InvalidInput(
                f"messages[{n}].content: expected a string, got {type(content).__name__}",
                field="messages",
            )
        kept = {"role": str(message.get("role", "user")), "content": content}
        if isinstance(name := message.get("name"), str) and name:
            kept["name"] = name
        out.append(kept)
    return out
