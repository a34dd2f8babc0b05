"""Projects: named groupings of a tenant's sessions, optionally isolated.

A project is named within its tenant, and a session belongs to at most one (``Session.project``).
An isolated project's sessions see only its memories, and searches outside it never see them
(``SearchFilters.project``). ``update_project`` changes only the fields given, from an
allowlist (``PROJECT_FIELDS``). Deleting a project never silently widens who sees its sessions:
a plain project's sessions are detached, an isolated one's only when the caller says so
(``sessions="detach"``) or they are deleted with it (``sessions="delete"``); see
``delete_project``. ``create_project`` (the library's older call) creates or updates through
the same two writes as ``add_project`` and ``update_project``: one project-write API for /v1,
the library and every compat interface.

    >>> m.add_project("garden", user_id="mei", colour="#2e7d32", isolated=True)
    >>> m.update_project("garden", {"notes": "seedlings"}, user_id="mei").notes
    'seedlings'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel

from omoide.errors import Conflict, InvalidInput
from omoide.store.ports.sessions import SessionReads
from omoide.store.protocol import Transactions
from omoide.types import DEFAULT_ID, Project, Scope
from omoide.validate import check_limit, check_text

SessionsOnDelete = Literal["detach", "delete"]


class ProjectDeleted(BaseModel):
    """What deleting a project did with its sessions."""

    name: str
    sessions_detached: int = 0
    sessions_deleted: int = 0


# The fields a project update may change, in the order the wire lists them.
PROJECT_FIELDS = ("name", "description", "colour", "icon", "isolated", "notes", "system_prompt")


class ProjectService:
    def __init__(self, session_reads: SessionReads, transactions: Transactions) -> None:
        self._session_reads = session_reads
        self._transactions = transactions

    def add_project(
        self,
        name: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        **fields: Any,
    ) -> Project:
        """A new project (``Conflict`` if the tenant has one of that name); ``fields`` are any
        of description, colour, icon, isolated, notes and system_prompt."""
        checked = _check_fields({"name": name, **fields})
        with self._transactions.transaction() as tx:
            return tx.sessions.insert_project(
                Scope(user_id=user_id, scope_id=scope_id), name, checked
            )

    def create_project(
        self,
        name: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        description: str | None = None,
        isolated: bool = False,
    ) -> Project:
        """Create the project, or update it: ``isolated`` is set, ``description`` when given."""
        check_text(name, 256, what="project name")
        scope = Scope(user_id=user_id, scope_id=scope_id)
        fields: dict[str, Any] = {"isolated": isolated}
        if description is not None:
            fields["description"] = description
        try:
            with self._transactions.transaction() as tx:
                return tx.sessions.insert_project(scope, name, {"name": name, **fields})
        except Conflict:
            with self._transactions.transaction() as tx:
                return tx.sessions.update_project(scope, name, fields)

    def get_project(
        self, name: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> Project:
        return self._session_reads.get_project(Scope(user_id=user_id, scope_id=scope_id), name)

    def list_projects(
        self,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[Project], int]:
        """One page of the tenant's projects by name, and the total."""
        check_limit(limit, offset)
        return self._session_reads.list_projects(
            Scope(user_id=user_id, scope_id=scope_id), limit, offset
        )

    def update_project(
        self,
        name: str,
        fields: Mapping[str, Any],
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
    ) -> Project:
        """Change only the fields given (``name`` renames it; its sessions follow). A field
        outside the allowlist is ``InvalidInput``; renaming onto a taken name is ``Conflict``."""
        checked = _check_fields(fields)
        with self._transactions.transaction() as tx:
            return tx.sessions.update_project(
                Scope(user_id=user_id, scope_id=scope_id), name, checked
            )

    def delete_project(
        self,
        name: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        sessions: SessionsOnDelete | None = None,
    ) -> ProjectDeleted:
        """Delete the project, in one transaction, doing with its sessions what ``sessions``
        says: ``"detach"`` keeps them (with their memories) in no project, so every search of
        the tenant sees them; ``"delete"`` deletes them with everything they hold. Omitted,
        a plain project's sessions are detached while an isolated
        project that has sessions is a ``Conflict``: detaching them would widen who sees them,
        so the caller must choose."""
        if sessions not in (None, "detach", "delete"):
            raise InvalidInput(f"sessions must be 'detach' or 'delete', got {sessions!r}")
        scope = Scope(user_id=user_id, scope_id=scope_id)
        project = self._session_reads.get_project(scope, name)
        members = self._members(scope, name)
        if sessions is None and project.isolated and members:
            raise Conflict(
                f"project {name!r} is isolated and has {len(members)} sessions: detaching them "
                "would let every search of the tenant see them; choose sessions=delete "
                "(delete them with their memories) or sessions=detach (keep them, shared)"
            )
        with self._transactions.transaction() as tx:
            deleted = 0
            for member in members if sessions == "delete" else []:
                tx.sessions.delete_session(scope, member)
                deleted += 1
            detached = tx.sessions.delete_project(scope, name)
            if detached and project.isolated and sessions != "detach":
                # a session joined the project meanwhile: never detach it silently
                raise Conflict(f"project {name!r} gained sessions meanwhile; try again")
        return ProjectDeleted(name=name, sessions_detached=detached, sessions_deleted=deleted)

    def _members(self, scope: Scope, name: str) -> list[str]:
        """The ids of the project's sessions."""
        found: list[str] = []
        offset = 0
        while True:
            page, total = self._session_reads.list_sessions(scope, 500, offset)
            found += [s.id for s in page if s.project == name]
            offset += len(page)
            if not page or offset >= total:
                return found


def _check_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(fields) - set(PROJECT_FIELDS))
    if unknown:
        raise InvalidInput(f"unknown project fields: {', '.join(unknown)}", fields=unknown)
    if not fields:
        raise InvalidInput("nothing to update: give at least one project field")
    if "name" in fields:
        check_text(fields["name"], 256, what="project name")
    if "isolated" in fields and not isinstance(fields["isolated"], bool):
        raise InvalidInput("isolated must be true or false")
    for key in ("description", "colour", "icon", "notes", "system_prompt"):
        value = fields.get(key)
        if value is not None and not isinstance(value, str):
            raise InvalidInput(f"{key} must be a string or null")
    return dict(fields)
