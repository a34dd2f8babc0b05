"""The seam cannot grow untested: every member of every port Protocol (and of ``Store`` and
``Tx``) must be named by some contract test's ``@covers``."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType
from typing import Protocol

import omoide.store.ports
import tests.store
from omoide.store import protocol
from tests.store.contract import COVERED, covers, port_key


def port_classes() -> list[type]:
    """Every Protocol class defined in ``omoide.store.ports.*``, plus ``Store`` and ``Tx``."""
    found: list[type] = [protocol.Store, protocol.Tx]
    for info in pkgutil.iter_modules(omoide.store.ports.__path__):
        module = importlib.import_module(f"omoide.store.ports.{info.name}")
        found += [
            cls
            for _, cls in inspect.getmembers(module, inspect.isclass)
            if cls.__module__ == module.__name__ and getattr(cls, "_is_protocol", False)
        ]
    return found


def port_members(cls: type) -> list[str]:
    """``"Class.member"`` for each method and property the class itself declares."""
    return [
        f"{cls.__name__}.{name}"
        for name, value in vars(cls).items()
        if not name.startswith("_") and (inspect.isfunction(value) or isinstance(value, property))
    ]


def contract_modules() -> list[ModuleType]:
    """Import every test module of this package, so their ``@covers`` are registered."""
    return [
        importlib.import_module(f"tests.store.{info.name}")
        for info in pkgutil.iter_modules(tests.store.__path__)
        if info.name.startswith("test_")
    ]


def uncovered(classes: list[type]) -> list[str]:
    contract_modules()
    return [m for cls in classes for m in port_members(cls) if not COVERED.get(m)]


def test_every_port_member_has_a_contract_test() -> None:
    classes = port_classes()
    assert len(classes) >= 16  # 7 aggregates x (reads, writes) + Store + Tx
    missing = uncovered(classes)
    assert not missing, "port members without a contract test: " + ", ".join(missing)


def test_every_covering_name_is_a_collected_test() -> None:
    """A ``@covers`` on a helper that pytest never runs would count as coverage."""
    modules = {m.__name__: m for m in contract_modules()}
    for key, names in COVERED.items():
        for name in names:
            module_name, _, test_name = name.rpartition(".")
            assert module_name in modules, f"{key} covered outside tests/store: {name}"
            assert test_name.startswith("test_"), f"{key} covered by a non-test: {name}"
            assert callable(getattr(modules[module_name], test_name, None)), name


def test_a_new_port_method_without_a_test_is_reported() -> None:
    class GrowingReads(Protocol):
        def old_method(self) -> int: ...
        def new_method(self) -> int: ...
        @property
        def new_port(self) -> int: ...

    covers(GrowingReads.old_method)(test_a_new_port_method_without_a_test_is_reported)
    try:
        assert uncovered([GrowingReads]) == ["GrowingReads.new_method", "GrowingReads.new_port"]
    finally:
        del COVERED["GrowingReads.old_method"]


def test_port_key_names_class_and_method() -> None:
    assert port_key(protocol.Store.transaction) == "Store.transaction"
    assert port_key(protocol.Tx.memories) == "Tx.memories"
