"""Contract of ``VariableReads`` / ``VariableWrites``: typed variables and token usage."""

from __future__ import annotations

from omoide.store.ports.variables import VariableReads, VariableWrites
from omoide.store.protocol import Store
from omoide.types import TokenUsage
from tests.store.contract import ALICE, ALICE_OTHER, BOB, covers


@covers(VariableWrites.set_variables, VariableReads.get_variables)
def test_set_variables_upserts_typed_values_read_back_by_name(store: Store) -> None:
    with store.transaction() as tx:
        tx.variables.set_variables(
            ALICE,
            {"name": ("Mei", "string"), "age": (30, "integer"), "vip": (True, "boolean")},
            1_000,
        )
        tx.variables.set_variables(ALICE, {"age": (30.5, "number")}, 2_000)
        tx.variables.set_variables(BOB, {"name": ("Bob", "string")}, 1_000)
    found = store.variables.get_variables(ALICE, None)
    assert [(v.name, v.value, v.type) for v in found] == [
        ("age", 30.5, "number"),
        ("name", "Mei", "string"),
        ("vip", True, "boolean"),
    ]
    assert found[0].updated_at.timestamp() == 2.0
    assert [v.name for v in store.variables.get_variables(ALICE, ["vip", "missing"])] == ["vip"]
    assert store.variables.get_variables(ALICE, []) == []
    assert [v.value for v in store.variables.get_variables(BOB, None)] == ["Bob"]
    assert store.variables.get_variables(ALICE_OTHER, None) == []


@covers(VariableWrites.delete_variables)
def test_delete_variables_returns_the_names_it_deleted(store: Store) -> None:
    with store.transaction() as tx:
        tx.variables.set_variables(ALICE, {"a": ("1", "string"), "b": ("2", "string")}, 1)
        tx.variables.set_variables(BOB, {"a": ("bob", "string")}, 1)
    with store.transaction() as tx:
        assert tx.variables.delete_variables(ALICE, ["a", "a", "missing"]) == ["a"]
        assert tx.variables.delete_variables(ALICE_OTHER, ["b"]) == []
    assert [v.name for v in store.variables.get_variables(ALICE, None)] == ["b"]
    assert [v.name for v in store.variables.get_variables(BOB, None)] == ["a"]


@covers(VariableWrites.add_usage, VariableReads.token_usage)
def test_usage_accumulates_per_tenant_and_in_total(store: Store) -> None:
    assert store.variables.token_usage(None) == TokenUsage()
    with store.transaction() as tx:
        tx.variables.add_usage(ALICE, 10, 5, 1, 1_000)
        tx.variables.add_usage(ALICE, 1, 2, 1, 2_000)
        tx.variables.add_usage(BOB, 100, 0, 1, 1_000)
        tx.variables.add_usage(ALICE_OTHER, 0, 0, 0, 1_000)  # nothing spent: nothing recorded
    assert store.variables.token_usage(ALICE) == TokenUsage(
        prompt_tokens=11, completion_tokens=7, total_tokens=18, requests=2
    )
    assert store.variables.token_usage(None) == TokenUsage(
        prompt_tokens=111, completion_tokens=7, total_tokens=118, requests=3
    )
    assert store.variables.token_usage(ALICE_OTHER) == TokenUsage()
