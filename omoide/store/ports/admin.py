"""Metadata, statistics, backups and whole-tenant deletes.

``AdminReads`` is read outside a transaction (``store.admin``);
``AdminWrites`` is used inside one (``with store.transaction() as tx: tx.admin...``)
and sees the transaction's own writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from omoide.types import (
    Scope,
)


class AdminReads(Protocol):
    """Reads of admin."""

    def schema_version(self) -> int: ...
    def get_meta(self, key: str) -> str | None: ...
    def stats(self) -> dict[str, int]: ...
    def backup(self, dest: Path) -> None: ...


class AdminWrites(Protocol):
    """Writes of admin."""

    def set_meta(self, key: str, value: str) -> None: ...
    def delete_scope(self, scope: Scope) -> int: ...
    def delete_everything(self) -> None: ...
