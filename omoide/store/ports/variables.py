"""Typed variables per tenant and LLM token usage.

``VariableReads`` is read outside a transaction (``store.variables``);
``VariableWrites`` is used inside one (``with store.transaction() as tx: tx.variables...``)
and sees the transaction's own writes.

Tenant rule: variables are per tenant (a name is unique within it); token usage is one counter
per tenant, and ``token_usage(None)`` sums every tenant (an admin view). Values are stored as
JSON with their declared type; the engine validates and converts values before they get here.
Concurrency: each write is an atomic upsert or in-place increment, so concurrent writers never
lose each other's counts; for one variable the last committed write wins.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from omoide.types import (
    Scope,
    TokenUsage,
    Variable,
    VariableValue,
)


class VariableReads(Protocol):
    """Reads of variables and token counters."""

    def get_variables(self, scope: Scope, names: Sequence[str] | None) -> list[Variable]:
        """The tenant's variables by name (``None``: all of them; ``[]``: none), sorted by
        name; names it does not have are left out."""
        ...

    def token_usage(self, scope: Scope | None) -> TokenUsage:
        """Tokens and requests counted for the tenant (``None``: every tenant); zeros if
        nothing was counted."""
        ...


class VariableWrites(Protocol):
    """Writes of variables and token counters, in the caller's transaction."""

    def set_variables(
        self, scope: Scope, values: dict[str, tuple[VariableValue, str]], at_ms: int
    ) -> None:
        """Create or replace each ``{name: (value, type)}`` with ``updated_at = at_ms``;
        values must already have their type (nothing is checked here)."""
        ...

    def delete_variables(self, scope: Scope, names: Sequence[str]) -> list[str]:
        """Delete these variables; return the names that existed, in the order given (each
        once). Unknown names are not an error."""
        ...

    def add_usage(
        self, scope: Scope, prompt_tokens: int, completion_tokens: int, requests: int, at_ms: int
    ) -> None:
        """Add to the tenant's token and request counters (all zero: nothing written)."""
        ...
