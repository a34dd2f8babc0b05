"""``VariableService``: the tenant's typed variables (declared key/values) and the
LLM token counters extraction keeps.

Everything here is tenant-scoped: the same variable name of two users is two variables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from omoide.errors import InvalidInput
from omoide.extract import coerce
from omoide.store.ports.variables import VariableReads
from omoide.store.protocol import Transactions
from omoide.types import DEFAULT_ID, Scope, TokenUsage, VariableValue, now_ms
from omoide.validate import check_text

_PYTHON_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),  # before int: True is an int too
    (int, "integer"),
    (float, "number"),
    (str, "string"),
)


class VariableService:
    def __init__(self, variable_reads: VariableReads, transactions: Transactions) -> None:
        self._variable_reads = variable_reads
        self._transactions = transactions

    # variables ----------------------------------------------------------------------------
    def get_variables(
        self,
        names: Sequence[str] | None = None,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
    ) -> dict[str, VariableValue]:
        """The tenant's variables by name (all of them when ``names`` is None); unknown names
        are absent from the result.

            >>> m.get_variables(["city"], user_id="alice")
            {'city': 'Shenzhen'}
        """
        scope = Scope(user_id=user_id, scope_id=scope_id)
        return {v.name: v.value for v in self._variable_reads.get_variables(scope, _names(names))}

    def update_variables(
        self,
        variables: Mapping[str, Any],
        *,
        types: Mapping[str, str] | None = None,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
    ) -> dict[str, VariableValue]:
        """Set variables; return them as stored.

        A value gets the type named in ``types``, else the type the variable already has, else
        the type of the Python value (str, bool, int, float). It is coerced to that type
        (``"42"`` becomes 42 for an integer) or refused with ``InvalidInput`` (lists, dicts,
        ``None``, ``"abc"`` for an integer); nothing is written when any value is refused.
        """
        if not isinstance(variables, Mapping):
            raise InvalidInput("variables must be a mapping of names to values")
        scope = Scope(user_id=user_id, scope_id=scope_id)
        names = _names(list(variables)) or []
        known = {v.name: v.type for v in self._variable_reads.get_variables(scope, names)}
        typed: dict[str, tuple[VariableValue, str]] = {}
        for name, value in variables.items():
            type_ = (types or {}).get(name) or known.get(name) or _python_type(name, value)
            try:
                typed[name] = (coerce(value, type_), type_)
            except InvalidInput as exc:
                raise InvalidInput(f"variable {name!r}: {exc.message}") from exc
        with self._transactions.transaction() as tx:
            tx.variables.set_variables(scope, typed, now_ms())
        return {name: value for name, (value, _) in typed.items()}

    def delete_variables(
        self, names: Sequence[str], *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> list[str]:
        """Delete variables; return the names that existed (and are now gone)."""
        checked = _names(names)
        if checked is None:
            raise InvalidInput("names must be a list of variable names")
        with self._transactions.transaction() as tx:
            return tx.variables.delete_variables(Scope(user_id=user_id, scope_id=scope_id), checked)

    def token_usage(self, *, scope: Scope | None = None) -> TokenUsage:
        """LLM tokens spent on extraction for one tenant, or for all when ``scope`` is None."""
        return self._variable_reads.token_usage(scope)


def _names(names: Sequence[str] | None) -> list[str] | None:
    if names is None:
        return None
    if isinstance(names, str | bytes) or not isinstance(names, Sequence):
        raise InvalidInput("names must be a list of variable names")
    for name in names:
        check_text(name, 256, what="variable name")
    return list(names)


def _python_type(name: str, value: Any) -> str:
    for python_type, type_ in _PYTHON_TYPES:
        if isinstance(value, python_type):
            return type_
    raise InvalidInput(f"variable {name!r}: {value!r} is not a string, boolean, integer or number")
