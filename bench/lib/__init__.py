"""Helpers the benchmark suites share (run a suite as ``python bench/<suite>.py``: ``bench/``
is then first on ``sys.path`` and these import as ``lib.<module>``). Nothing here imports a
suite, and nothing imports a store backend's modules: only omoide's public API."""
