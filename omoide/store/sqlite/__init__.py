from omoide.store.sqlite.store import SQLiteStore

__all__ = ["SQLiteStore"]
