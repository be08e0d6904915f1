# Two commands do everything on a fresh machine:
#   make demo   set up, migrate, ingest the demo subtitles, create the demo researcher, serve the site
#   make test   set up and run the whole test suite
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install demo serve test lint format bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

install: $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	# torch is pinned to the CPU build first so nothing pulls the CUDA wheels
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev]'

demo: install
	DEBUG=1 $(BIN)/python manage.py migrate --noinput
	DEBUG=1 $(BIN)/python manage.py demo_setup
	@echo "Serving on http://$(HOST):$(PORT)/  (researcher: demo / demo-researcher)"
	DEBUG=1 $(BIN)/python manage.py runserver $(HOST):$(PORT)

test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) db.sqlite3 media staticfiles .pytest_cache .ruff_cache
