# Two commands do everything on a fresh machine:
#   make demo   set up, migrate, build the demo (corpus, crowd, models, exports), serve the site
#   make test   set up, build the manual (--strict) and run the whole test suite
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
# where pip finds torch (empty: the default index, PyPI); e.g. PyTorch's CPU wheel index
TORCH_INDEX_URL ?=

.PHONY: install browser-deps gettext-deps messages demo demo-build demo-check test lint format clean docs docs-check docs-serve

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

install: $(VENV)/.installed

# A stamp: pip runs again only when pyproject.toml changed (a second `make demo` starts in seconds).
$(VENV)/.installed: pyproject.toml client/pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	# torch first, from TORCH_INDEX_URL when given (PyTorch's CPU wheel index avoids the CUDA build,
	# several GB, that the default index serves on Linux; see the README)
	$(BIN)/pip install --quiet $(if $(TORCH_INDEX_URL),--index-url $(TORCH_INDEX_URL)) torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev]'
	# the API's typed client, a package of its own (client/, docs/api.md)
	$(BIN)/pip install --quiet -e ./client
	touch $@

# demo_setup builds the whole demo (corpus, campaign with a simulated crowd, models, exports) in
# one job on a worker of its own and prints where to click first; run again it only prints that.
# Then honcho (Procfile) runs the web server and a worker together, and Ctrl-C stops both.
demo: demo-build
	@echo "Serving on http://$(HOST):$(PORT)/  (researcher: demo / demo-researcher; annotators: annotator1 / demo-annotator1)"
	DEBUG=1 HOST=$(HOST) PORT=$(PORT) PATH="$(abspath $(BIN)):$$PATH" $(BIN)/honcho start --env /dev/null

demo-build: install
	DEBUG=1 $(BIN)/python manage.py migrate --noinput
	DEBUG=1 $(BIN)/python manage.py demo_setup --with-worker

# What CI runs before the suite: the demo exactly as `make demo` builds it (shipped settings, SQLite,
# the embedded broker), served as the Procfile serves it (its web and worker commands), and a
# newcomer's first steps through it over HTTP (sign in as annotator1, claim a HIT of the demo
# campaign, answer a screen, see the next one: .ci/demo_smoke.py), then a researcher's script through
# the typed client (sign in as demo, read the demo campaign's progress and study report:
# .ci/client_smoke.py). The server and the worker stop afterwards, whatever the outcome. First, the
# figures on the manual's demo page are checked against the demo as built (demo_figures --check).
SMOKE_PORT ?= 8765
demo-check: demo-build
	DEBUG=1 $(BIN)/python manage.py demo_figures --check docs/benchmarks/demo.md
	mkdir -p var
	DEBUG=1 $(BIN)/python manage.py runserver 127.0.0.1:$(SMOKE_PORT) --noreload > var/demo-check-server.log 2>&1 & \
	server=$$!; \
	DEBUG=1 $(BIN)/python manage.py run_worker --pool solo --loglevel WARNING > var/demo-check-worker.log 2>&1 & \
	worker=$$!; \
	$(BIN)/python .ci/demo_smoke.py http://127.0.0.1:$(SMOKE_PORT) && \
	$(BIN)/python .ci/client_smoke.py http://127.0.0.1:$(SMOKE_PORT); status=$$?; \
	kill $$server $$worker; wait $$server $$worker 2>/dev/null; \
	[ $$status -eq 0 ] || { tail -n 40 var/demo-check-server.log var/demo-check-worker.log; exit $$status; }

# The suite runs on every CPU (pytest-xdist, one test database per worker; tests that share an outside
# resource carry an xdist_group mark and run on one worker). `make test PYTEST_XDIST=` runs it serially.
# Tests marked `alone` (the real-worker tests) run afterwards with nothing beside them; exit status 5
# is pytest's "nothing selected" (PYTEST_ARGS naming other tests).
# The annotator's tests run a second time with the fast path off (ANNOTATOR_FAST_PATH=0: the ORM
# alone), so both paths stay right; skipped when PYTEST_ARGS names tests of its own. The audit log's
# guard, a database trigger, is also checked on SQLite, the shipped default (the suite runs on
# DATABASE_URL's database).
PYTEST_XDIST ?= -n auto --dist loadgroup
ANNOTATOR_TESTS = tests/labeling/test_claim.py tests/labeling/test_claim_concurrency.py \
	tests/labeling/test_annotator_views.py tests/labeling/test_annotator_permissions.py \
	tests/labeling/test_save_pick.py tests/labeling/test_submit.py tests/labeling/test_attacker_walkthrough.py \
	tests/labeling/test_identity_and_integrity.py tests/labeling/test_one_writer.py \
	tests/labeling/test_fast_path_switch.py tests/labeling/test_platform_landing.py \
	tests/labeling/test_qualification.py tests/labeling/test_task_types.py tests/config/test_session_with_user.py

test: install browser-deps gettext-deps docs-check
	$(BIN)/python -m pytest $(PYTEST_XDIST) -m "not alone" $(PYTEST_ARGS)
	[ -n "$(PYTEST_ARGS)" ] || ANNOTATOR_FAST_PATH=0 $(BIN)/python -m pytest $(PYTEST_XDIST) -m "not alone" $(ANNOTATOR_TESTS)
	[ -n "$(PYTEST_ARGS)" ] || { mkdir -p var && DATABASE_URL=sqlite:///$(CURDIR)/var/test-audit.sqlite3 \
		$(BIN)/python -m pytest -q tests/annotation/test_audit_append_only.py; }
	$(BIN)/python -m pytest -m alone $(PYTEST_ARGS) || [ $$? -eq 5 ]

# The participant's pages in their language (docs/languages.md). The compiled catalogs (.mo) are
# committed, so `make demo` needs no gettext tools; `make messages` (after changing a marked string,
# then translating the new entries) and tests/config/test_translations.py's check that the catalogs
# hold exactly what the code marks need xgettext and msgfmt, which gettext-deps installs like browser-deps.
MESSAGES_IGNORE = --ignore=tests --ignore=bench --ignore=docs --ignore=site --ignore=var --ignore=media --ignore=staticfiles
messages: install gettext-deps
	DEBUG=1 $(BIN)/python manage.py makemessages --all --add-location=file $(MESSAGES_IGNORE)
	DEBUG=1 $(BIN)/python manage.py compilemessages --ignore=$(VENV) --ignore=site

gettext-deps:
	@if ! command -v xgettext >/dev/null && command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gettext >/dev/null; \
	fi

# Debian's chromium for the browser test (a test tool's own browser download cannot work offline).
# Installed when we can (root with apt-get); otherwise the browser test skips and says why.
browser-deps:
	@if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi

# The manual (mkdocs.yml, docs/): the reference pages are written from the code first (commands'
# --help, the job registry's schemas, the settings and .env.example), then the site is built with
# --strict into site/, so a broken link, a missing page or a page left out of the nav fails.
# `make test` runs docs-check: the same build, but committed reference pages that are out of date fail
# (run `make docs` or `python manage.py docs_reference` and commit them).
MKDOCS = NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs

docs: install
	DEBUG=1 $(BIN)/python manage.py docs_reference
	$(MKDOCS) build --strict

docs-check: install
	DEBUG=1 $(BIN)/python manage.py docs_reference --check
	$(MKDOCS) build --strict

docs-serve: docs
	$(MKDOCS) serve --dev-addr 127.0.0.1:8001

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) db.sqlite3 media staticfiles site .pytest_cache .ruff_cache
