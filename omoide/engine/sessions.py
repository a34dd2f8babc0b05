"""``SessionService``: sessions and their episodes, the conversation containers."""

from __future__ import annotations

from typing import Any

from omoide.store.ports.sessions import SessionReads
from omoide.store.protocol import SessionPatch, Transactions
from omoide.types import DEFAULT_ID, Episode, Scope, Session
from omoide.validate import check_limit, check_text, check_value


class SessionService:
    def __init__(self, session_reads: SessionReads, transactions: Transactions) -> None:
        self._session_reads = session_reads
        self._transactions = transactions

    def create_session(
        self,
        session_id: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        name: str | None = None,
        project: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Session:
        check_text(session_id, 512, what="session id")
        _check_fields(user_id, scope_id, name, project, metadata)
        with self._transactions.transaction() as tx:
            return tx.sessions.create_session(
                Scope(user_id=user_id, scope_id=scope_id), session_id, name, project, metadata or {}
            )

    def get_session(
        self, session_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> Session:
        return self._session_reads.get_session(
            Scope(user_id=user_id, scope_id=scope_id), session_id
        )

    def list_sessions(
        self,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[Session], int]:
        check_limit(limit, offset)
        return self._session_reads.list_sessions(
            Scope(user_id=user_id, scope_id=scope_id), limit, offset
        )

    def update_session(
        self,
        session_id: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        name: str | None = None,
        project: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Session:
        """Change only the fields given."""
        _check_fields(user_id, scope_id, name, project, metadata)
        patch = SessionPatch(name=name, project=project, metadata=metadata)
        with self._transactions.transaction() as tx:
            return tx.sessions.update_session(
                Scope(user_id=user_id, scope_id=scope_id), session_id, patch
            )

    def delete_session(
        self, session_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> int:
        """Delete a session, its episodes and every memory derived from them."""
        with self._transactions.transaction() as tx:
            return tx.sessions.delete_session(Scope(user_id=user_id, scope_id=scope_id), session_id)

    def list_episodes(
        self,
        session_id: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[Episode], int]:
        check_limit(limit, offset)
        scope = Scope(user_id=user_id, scope_id=scope_id)
        return self._session_reads.list_episodes(scope, session_id, limit, offset)

    # episodes --------------------------------------------------------------------------
    def get_episode(
        self, episode_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> Episode:
        return self._session_reads.get_episode(
            Scope(user_id=user_id, scope_id=scope_id), episode_id
        )

    def delete_episode(
        self, episode_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> int:
        """Delete an episode and the memories only it supports (their vectors and index rows
        with them), in one transaction; return how many memories were deleted."""
        with self._transactions.transaction() as tx:
            return tx.sessions.delete_episode(Scope(user_id=user_id, scope_id=scope_id), episode_id)


def _check_fields(
    user_id: str, scope_id: str, name: str | None, project: str | None, metadata: Any
) -> None:
    """A stored string no reply can carry (a lone surrogate, NUL) would break every later
    listing of the tenant's sessions: refused before the write (the library path; HTTP
    requests are checked whole before they get here)."""
    for value, what in ((user_id, "user_id"), (scope_id, "scope_id"), (name, "name")):
        check_value(value, what)
    check_value(project, "project")
    check_value(metadata, "metadata")
