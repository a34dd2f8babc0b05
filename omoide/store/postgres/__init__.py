"""The PostgreSQL + pgvector backend (psycopg 3, psycopg_pool). See ``store.PostgresStore``."""

from omoide.store.postgres.admin import apply_migrations, migration_status, restore_backup
from omoide.store.postgres.db import is_postgres_url
from omoide.store.postgres.store import PostgresStore

__all__ = [
    "PostgresStore",
    "apply_migrations",
    "is_postgres_url",
    "migration_status",
    "restore_backup",
]
