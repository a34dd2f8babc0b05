"""The ``omoide`` command line: a thin shell over ``Memory``.

Commands that only read (search, get, list, backup, ...) refuse a database file that does not
exist rather than create an empty one; ``--db`` is accepted before or after the command.
Output is for people unless ``--json``. Exit codes: 0 success, 1 an error (one line on
stderr), 2 a usage error.

``core`` holds the app and the shared helpers; each other module registers its commands on the
app when imported, here.
"""

from __future__ import annotations

# isort: off
# The order of these imports is the order of the commands in --help.
from omoide.cli import memories, ops, jobs, knowledge, transfer, crypto  # noqa: F401

# isort: on
from omoide.cli.core import app, db_first, state

__all__ = ["app", "db_first", "main", "state"]


def main() -> None:
    from omoide.store.files import private_umask

    private_umask()  # databases, backups and exports this command creates are 0600 / 0700
    app()
