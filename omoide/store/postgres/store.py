"""The PostgreSQL store: a connection pool, full-text search in the rows, pgvector vectors.

``PostgresStore`` holds one read-port object per aggregate over the shared ``Database``
(pool). Every ``transaction()`` takes one pooled connection inside one transaction and hands
out a ``PostgresTx`` whose write ports share it. Many stores (servers, workers, processes)
may open one database: opening migrates under an advisory lock, so concurrent starts
migrate once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from omoide.errors import StoreError
from omoide.store.postgres import ann, migrate
from omoide.store.postgres.admin import PostgresAdmin
from omoide.store.postgres.db import SEARCH_TIMEOUT, Database, connect
from omoide.store.postgres.memory_reads import PostgresMemoryReads
from omoide.store.postgres.tx import LAYOUTS, PostgresTx, transaction_ports
from omoide.store.postgres.upkeep import Upkeep
from omoide.store.postgres.wakeups import JobWatcher
from omoide.store.protocol import Capability
from omoide.store.sql.admin import SQLAdminReads
from omoide.store.sql.tx import shared_reads

__all__ = ["PostgresStore"]


class PostgresStore:
    """A ``Store`` on one PostgreSQL database (or schema, by the URL's ``search_path``).

    ``auto_migrate=False`` refuses an outdated schema instead of migrating it;
    ``search_timeout`` is the seconds a search statement may run (``Database``).
    """

    capabilities = frozenset(
        {Capability.KEYWORD_SEARCH, Capability.VECTOR_SEARCH, Capability.BACKUP}
    )

    def __init__(
        self,
        url: str,
        *,
        auto_migrate: bool = True,
        max_connections: int = 10,
        search_timeout: float = SEARCH_TIMEOUT,
    ) -> None:
        with connect(url) as conn:
            if auto_migrate:
                migrate.migrate(conn)
            elif migrate.pending(conn) or migrate.current_version(conn) == 0:
                raise StoreError("the database needs `omoide migrate`", retryable=False)
        self._db = Database(url, max_size=max_connections, search_timeout=search_timeout)
        self._upkeep = Upkeep(self._db)
        self.location = self._db.location
        self.memories = PostgresMemoryReads(self._db)
        (
            self.sessions,
            self.jobs,
            self.graph,
            self.chunks,
            self.access,
            self.consolidation,
            self.variables,
            self.schedules,
        ) = shared_reads(self._db, LAYOUTS)
        self.admin = SQLAdminReads(self._db, LAYOUTS.dialect, PostgresAdmin(self._db))

    def create_vector_index(self, dim: int) -> None:
        """Build the HNSW index that large tenants' searches of ``dim``-dimension vectors use
        (concurrently: writes go on meanwhile). Not part of the ``Store`` protocol."""
        with connect(self._db.url) as conn:
            ann.create_index(conn, dim)

    @contextmanager
    def transaction(self) -> Iterator[PostgresTx]:
        with self._db.write() as conn:
            tx = transaction_ports(conn)
            yield tx
        # committed: the maintenance it calls for, at write time (never in a search)
        written = dict(tx.memories.own.written)
        for tenant, rows in tx.admin.own.written.items():
            written[tenant] = written.get(tenant, 0) + rows
        if written:
            self._upkeep.after_commit(written)

    def watch_jobs(self, wake: Callable[[], None]) -> Callable[[], None]:
        return JobWatcher(self._db.url, wake).stop

    def close(self) -> None:
        self._db.close()
