# The one entry point. `make run` and `make test` work on a fresh machine with nothing installed.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: install browser run test lint fmt bench clean

$(STAMP): pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# torch first and pinned: the CPU wheel comes from local disk; an unpinned torch pulled in by
	# sentence-transformers would be a multi-GB CUDA build.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[local,dev,cjk,files,encryption,ann]'
	touch $(STAMP)

install: $(STAMP)

run: install
	$(VENV)/bin/omoide serve

# The web UI tests (tests/ui) drive Debian's chromium through Playwright (dev extra); as root,
# install it when missing. Without it those tests skip and say why.
browser:
	@if [ -x /usr/bin/chromium ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; \
	else echo "no /usr/bin/chromium (and not root with apt-get): the UI tests will skip"; fi

test: install browser
	$(VENV)/bin/python -m pytest -q

lint: install
	$(VENV)/bin/ruff check omoide tests bench
	$(VENV)/bin/ruff format --check omoide tests bench
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy --strict omoide

fmt: install
	$(VENV)/bin/ruff format omoide tests bench
	$(VENV)/bin/ruff check --fix omoide tests bench

bench: install
	$(PY) bench/locomo.py
	$(PY) bench/scale.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
