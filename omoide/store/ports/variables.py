"""Typed variables per tenant and LLM token usage.

``VariableReads`` is read outside a transaction (``store.variables``);
``VariableWrites`` is used inside one (``with store.transaction() as tx: tx.variables...``)
and sees the transaction's own writes.
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
    """Reads of variables."""

    def get_variables(self, scope: Scope, names: Sequence[str] | None) -> list[Variable]: ...
    def token_usage(self, scope: Scope | None) -> TokenUsage: ...


class VariableWrites(Protocol):
    """Writes of variables."""

    def set_variables(
        self, scope: Scope, values: dict[str, tuple[VariableValue, str]], at_ms: int
    ) -> None: ...
    def delete_variables(self, scope: Scope, names: Sequence[str]) -> list[str]: ...
    def add_usage(
        self, scope: Scope, prompt_tokens: int, completion_tokens: int, requests: int, at_ms: int
    ) -> None: ...
