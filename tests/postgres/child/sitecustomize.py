"""Puts a subprocess of the PostgreSQL pass on PostgreSQL too (``-p tests.postgres.everywhere``).

The plugin prepends this folder to ``PYTHONPATH`` and names its server in the environment, so
an ``omoide serve`` / ``omoide worker`` / ``python -c`` a test starts opens the same schema for
a file as the test process does (``tests.postgres.server.schema_for``). Without the variable
(any other run) this does nothing.
"""

import os

if os.environ.get("OMOIDE_TEST_POSTGRES_SERVER"):
    from tests.postgres.server import redirect_files_to_postgres

    redirect_files_to_postgres()
