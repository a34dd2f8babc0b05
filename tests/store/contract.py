"""Shared pieces of the store contract suite: the coverage registry, tenants, small builders.

Every contract test declares the port methods it pins down with ``@covers(Port.method, ...)``
(the Protocol members themselves, so a renamed or removed method breaks the import instead of
leaving a stale name). ``test_port_coverage.py`` fails for every port member nobody covers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from omoide.store.protocol import NewMemory, Store
from omoide.types import Message, Scope

F = TypeVar("F", bound=Callable[..., Any])

# "MemoryReads.get_memories" -> the tests ("module.test_name") that pin it down.
COVERED: dict[str, set[str]] = {}

ALICE = Scope(user_id="alice", scope_id="demo")
BOB = Scope(user_id="bob", scope_id="demo")
ALICE_OTHER = Scope(user_id="alice", scope_id="other")
OTHERS = [BOB, ALICE_OTHER]  # same scope id, other user; same user, other scope id


@dataclass(frozen=True)
class Backend:
    """How to reach one backend's database for one test (see ``conftest.py``)."""

    name: str
    open: Callable[[], Store]  # one more handle on the test's database, as another process
    open_backup: Callable[[Path], Store]  # a store on what ``admin.backup(dest)`` wrote


def port_key(member: object) -> str:
    """``"Class.method"`` for a Protocol method or property object."""
    if isinstance(member, property):
        member = member.fget
    qualname = getattr(member, "__qualname__", None)
    if not isinstance(qualname, str) or "." not in qualname:
        raise TypeError(f"{member!r} is not a member of a port class")
    return ".".join(qualname.split(".")[-2:])


def covers(*members: object) -> Callable[[F], F]:
    """Declare which port members a contract test pins down."""
    keys = [port_key(m) for m in members]
    if not keys:
        raise TypeError("covers() needs at least one port member")

    def mark(test: F) -> F:
        name = f"{test.__module__}.{test.__qualname__}"
        for key in keys:
            COVERED.setdefault(key, set()).add(name)
        return test

    return mark


def unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def add(store: Store, scope: Scope, text: str, **fields: Any) -> str:
    """Insert one memory in its own transaction; its id."""
    with store.transaction() as tx:
        return tx.memories.insert_memory(scope, NewMemory(text=text, **fields), "test").id


def session_with_episodes(
    store: Store, scope: Scope, session_id: str, *batches: list[str]
) -> list[str]:
    """A session with one episode per batch of user messages; the episode ids in order."""
    with store.transaction() as tx:
        tx.sessions.ensure_session(scope, session_id)
        return [
            tx.sessions.insert_episode(
                scope, session_id, [Message(role="user", content=c) for c in batch]
            ).id
            for batch in batches
        ]


def enqueue(store: Store, scope: Scope, kind: str = "embed", **payload: Any) -> int:
    with store.transaction() as tx:
        return tx.jobs.enqueue_job(scope, kind, dict(payload))
