"""Sessions, their episodes (verbatim message batches) and projects.

``SessionReads`` is read outside a transaction (``store.sessions``);
``SessionWrites`` is used inside one (``with store.transaction() as tx: tx.sessions...``)
and sees the transaction's own writes.

Tenant rule: every method takes a ``Scope`` and touches only that tenant's rows. A session is
named by its external id, a project by its name, both unique within the tenant (two tenants may
use the same ones); an episode by an id the store makes. Another tenant's id or name behaves as
one that does not exist (``NotFound``).

Model. An episode is one batch of messages as received, kept verbatim and never edited.
Deleting a session deletes its episodes, memories (with their vectors and history), chunk state
and consolidations; jobs that name it stay and must cope (their handlers see ``NotFound``).
Sessions may belong to a project; an *isolated* project's sessions are seen only through that
project (see ``SearchFilters.project``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
    """Reads of sessions, episodes and projects; pages and their totals come from one
    snapshot."""

    def get_session(self, scope: Scope, session_id: str) -> Session:
        """The tenant's session with this external id. ``NotFound`` if none."""
        ...

    def list_sessions(self, scope: Scope, limit: int, offset: int) -> tuple[list[Session], int]:
        """One page of the tenant's sessions, newest first (created, then insertion order),
        and their total."""
        ...

    def list_episodes(
        self, scope: Scope, session_id: str, limit: int, offset: int
    ) -> tuple[list[Episode], int]:
        """One page of the session's episodes, oldest first (created, then insertion
        order), and their total. ``NotFound`` if the tenant has no such session."""
        ...

    def get_episode(self, scope: Scope, episode_id: str) -> Episode:
        """One episode of the tenant with its messages and access counters. ``NotFound``
        if none."""
        ...

    def get_project(self, scope: Scope, name: str) -> Project:
        """The tenant's project of that name. ``NotFound`` if none."""
        ...

    def list_projects(self, scope: Scope, limit: int, offset: int) -> tuple[list[Project], int]:
        """One page of the tenant's projects by name, and their total."""
        ...


class SessionWrites(Protocol):
    """Writes of sessions, episodes and projects, inside the caller's transaction. Existence
    and uniqueness checks run in the transaction: of two transactions creating the same
    session or project, one succeeds and the other gets ``Conflict`` (or, for
    ``ensure_session``, the first one's session)."""

    def ensure_session(self, scope: Scope, session_id: str) -> Session:
        """The tenant's session with this external id, created (no name, project or
        metadata) if missing. ``InvalidInput`` for an empty id."""
        ...

    def ensure_sessions(self, scope: Scope, session_ids: Sequence[str]) -> None:
        """``ensure_session`` for each id, for writers that need the sessions to exist and
        not their rows (a batch of memories): one statement on a client-server backend."""
        ...

    def create_session(
        self,
        scope: Scope,
        session_id: str,
        name: str | None,
        project: str | None,
        metadata: dict[str, Any],
    ) -> Session:
        """A new session. A ``project`` the tenant does not have yet is created (plain, not
        isolated). ``InvalidInput`` for an empty id; ``Conflict`` if the tenant has a
        session with that id."""
        ...

    def update_session(self, scope: Scope, session_id: str, patch: SessionPatch) -> Session:
        """Apply ``patch``; ``project=""`` detaches the session, a new project name creates
        that project. ``metadata`` replaces the whole dict. ``NotFound`` if no such
        session."""
        ...

    def delete_session(self, scope: Scope, session_id: str) -> int:
        """Delete the session and everything it holds (see the module docstring), with the
        history of its memories; return how many memories went. ``NotFound`` if none."""
        ...

    def insert_episode(self, scope: Scope, session_id: str, messages: list[Message]) -> Episode:
        """Record one batch of messages, verbatim, as a new episode of the session (created
        now, after every episode committed before it). ``NotFound`` if no such session."""
        ...

    def delete_episode(self, scope: Scope, episode_id: str) -> int:
        """Delete an episode and the memories that come from it alone (with their full-text
        rows, vectors and history); return how many memories went. Memories other episodes
        also support, and the entities it mentioned, stay. ``NotFound`` if none."""
        ...

    def upsert_project(
        self, scope: Scope, name: str, description: str | None, isolated: bool
    ) -> Project:
        """Create the project or update it: ``description`` only when given, ``isolated``
        always. Returns the project as stored."""
        ...

    def insert_project(self, scope: Scope, name: str, fields: Mapping[str, Any]) -> Project:
        """A new project with ``fields`` (``description``, ``colour``, ``icon``,
        ``isolated``, ``notes``, ``system_prompt``; the caller validates them, an unknown key
        is a ``ValueError``). ``Conflict`` if the tenant has a project of that name."""
        ...

    def update_project(self, scope: Scope, name: str, fields: Mapping[str, Any]) -> Project:
        """Set only the columns in ``fields`` (``name`` renames; its sessions follow).
        ``NotFound`` if no such project; ``Conflict`` when renaming onto a taken name."""
        ...

    def delete_project(self, scope: Scope, name: str) -> int:
        """Detach the project's sessions (kept, now in no project), then delete it; return
        how many sessions were detached. ``NotFound`` if no such project."""
        ...
