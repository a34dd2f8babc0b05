"""Documentation stays true: every CLI command is in the README, and the public API is exact."""

from __future__ import annotations

import re
from pathlib import Path

import omoide
from omoide.cli import app

README = (Path(__file__).parents[1] / "README.md").read_text()


def _commands() -> list[str]:
    names = []
    for command in app.registered_commands:
        names.append(command.name or command.callback.__name__.replace("_", "-"))
    for group in app.registered_groups:
        for command in group.typer_instance.registered_commands:
            names.append(f"{group.name} {command.name}")
    return names


def test_every_cli_command_is_in_the_readme() -> None:
    documented = set(re.findall(r"`omoide ([a-z]+(?: [a-z]+)?)", README))
    documented |= {f"jobs {m}" for m in re.findall(r"`jobs ([a-z]+)", README)}
    missing = [c for c in _commands() if c not in documented and c.split()[0] not in documented]
    assert not missing, f"commands missing from README: {missing}"


def test_all_is_sorted_and_exact() -> None:
    assert omoide.__all__ == sorted(omoide.__all__)
    public = {n for n in vars(omoide) if not n.startswith("_") and n[0].isupper()}
    assert public == {n for n in omoide.__all__ if not n.startswith("_")}
