"""The port implementations both SQL backends share, written once over a ``Dialect``.

A module here holds the statements of one port in portable SQL (``?`` placeholders, translated
for the backend by ``Dialect.sql``) and the few spots where the backends differ as values of the
dialect: JSON parameters, id lists, boolean literals, byte-order collation, row locking. The
backend packages (``store/sqlite``, ``store/postgres``) keep what each tunes itself (keyword and
vector search, job claiming, bulk writes, migrations, backups) and build these classes with their
dialect and their connections. Nothing here imports a database driver.
"""
