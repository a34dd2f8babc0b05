"""Sessions, their episodes (verbatim message batches) and projects.

``SessionReads`` is read outside a transaction (``store.sessions``);
``SessionWrites`` is used inside one (``with store.transaction() as tx: tx.sessions...``)
and sees the transaction's own writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from omoide.types import (
    Episode,
    Message,
    Project,
    Scope,
    Session,
)


@dataclass
class SessionPatch:
    """Fields to change on a session; ``None`` means "leave as it is"."""

    name: str | None = None
    project: str | None = None
    metadata: dict[str, Any] | None = None


class SessionReads(Protocol):
    """Reads of sessions."""

    def get_session(self, scope: Scope, session_id: str) -> Session: ...
    def list_sessions(self, scope: Scope, limit: int, offset: int) -> tuple[list[Session], int]: ...
    def list_episodes(
        self, scope: Scope, session_id: str, limit: int, offset: int
    ) -> tuple[list[Episode], int]: ...
    def get_episode(self, scope: Scope, episode_id: str) -> Episode: ...
    def get_project(self, scope: Scope, name: str) -> Project: ...
    def list_projects(self, scope: Scope, limit: int, offset: int) -> tuple[list[Project], int]: ...


class SessionWrites(Protocol):
    """Writes of sessions."""

    def ensure_session(self, scope: Scope, session_id: str) -> Session: ...
    def create_session(
        self,
        scope: Scope,
        session_id: str,
        name: str | None,
        project: str | None,
        metadata: dict[str, Any],
    ) -> Session: ...
    def update_session(self, scope: Scope, session_id: str, patch: SessionPatch) -> Session: ...
    def delete_session(self, scope: Scope, session_id: str) -> int: ...
    def insert_episode(self, scope: Scope, session_id: str, messages: list[Message]) -> Episode: ...
    def delete_episode(self, scope: Scope, episode_id: str) -> int: ...
    def upsert_project(
        self, scope: Scope, name: str, description: str | None, isolated: bool
    ) -> Project: ...
    def insert_project(self, scope: Scope, name: str, fields: Mapping[str, Any]) -> Project: ...
    def update_project(self, scope: Scope, name: str, fields: Mapping[str, Any]) -> Project: ...
    def delete_project(self, scope: Scope, name: str) -> int: ...
