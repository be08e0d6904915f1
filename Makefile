# Two commands do everything on a fresh machine:
#   make demo   set up, migrate, ingest the demo subtitles, create the demo researcher, serve the site
#   make test   set up and run the whole test suite
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install browser-deps demo test lint format clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

install: $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	# torch is pinned to the CPU build first so nothing pulls the CUDA wheels
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev]'

# demo_setup queues the demo pipeline and runs it on a worker of its own; then honcho (Procfile)
# runs the web server and a worker together, and Ctrl-C stops both.
demo: install
	DEBUG=1 $(BIN)/python manage.py migrate --noinput
	DEBUG=1 $(BIN)/python manage.py demo_setup --with-worker
	@echo "Serving on http://$(HOST):$(PORT)/  (researcher: demo / demo-researcher)"
	DEBUG=1 HOST=$(HOST) PORT=$(PORT) PATH="$(abspath $(BIN)):$$PATH" $(BIN)/honcho start

test: install browser-deps
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# Debian's chromium for the browser test (a test tool's own browser download cannot work offline).
# Installed when we can (root with apt-get); otherwise the browser test skips and says why.
browser-deps:
	@if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) db.sqlite3 media staticfiles .pytest_cache .ruff_cache
