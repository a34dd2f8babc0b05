"""Projects: named groupings of a tenant's sessions, optionally isolated (nexusAI seed).

A project is named within its tenant, and a session belongs to at most one (``Session.project``).
An isolated project's sessions see only its memories, and searches outside it never see them
(``SearchFilters.project``). ``update_project`` changes only the fields given, from the seed's
allowlist; deleting a project detaches its sessions in the same transaction. ``create_project``
(the library's older call) creates or updates through the same two writes as ``add_project`` and
``update_project``: one project-write API for /v1, the library and nexusAI.

    >>> m.add_project("garden", user_id="mei", colour="#2e7d32", isolated=True)
    >>> m.update_project("garden", {"notes": "seedlings"}, user_id="mei").notes
    'seedlings'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from omoide.errors import Conflict, InvalidInput
from omoide.store.protocol import Store
from omoide.types import DEFAULT_ID, Project, Scope
from omoide.validate import check_limit, check_text

# nexusAI's updateProject allowlist, in its order.
PROJECT_FIELDS = ("name", "description", "colour", "icon", "isolated", "notes", "system_prompt")


class ProjectService:
    def __init__(self, store: Store) -> None:
        self._store = store

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
        with self._store.transaction() as tx:
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
            with self._store.transaction() as tx:
                return tx.sessions.insert_project(scope, name, {"name": name, **fields})
        except Conflict:
            with self._store.transaction() as tx:
                return tx.sessions.update_project(scope, name, fields)

    def get_project(
        self, name: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> Project:
        return self._store.sessions.get_project(Scope(user_id=user_id, scope_id=scope_id), name)

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
        return self._store.sessions.list_projects(
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
        with self._store.transaction() as tx:
            return tx.sessions.update_project(
                Scope(user_id=user_id, scope_id=scope_id), name, checked
            )

    def delete_project(
        self, name: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> int:
        """Detach the project's sessions (they keep their memories) and delete it, in one
        transaction; return how many sessions were detached."""
        with self._store.transaction() as tx:
            return tx.sessions.delete_project(Scope(user_id=user_id, scope_id=scope_id), name)


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
