"""The shared cast: a researcher, three annotators, an outsider, and a tiny corpus."""

import os
from pathlib import Path

import pytest

# shared fixtures that live beside the tests using them (the `clock` that moves timezone.now on,
# `quiz_demo_bank` for a test that names it)
pytest_plugins = ["tests.labeling.clock", "tests.labeling.quiz_settings"]

EDOS_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "edos"
EDOS_CSV = EDOS_DIR / "MTurk_groundtruth_labels_9K.csv"
REPO_ROOT = Path(__file__).resolve().parents[1]


def _share_the_cpus_between_xdist_workers() -> None:
    """Under pytest-xdist (`make test` runs `-n auto`) the workers share the CPUs: each worker's torch
    gets its share of them, not all of them, or the workers' thread pools fight over every core.
    Runs as this file is imported, before any test module imports torch; a value already set wins."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers > 1:
        share = str(max(1, len(os.sched_getaffinity(0)) // workers))
        for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "ML_NUM_THREADS"):
            os.environ.setdefault(variable, share)


_share_the_cpus_between_xdist_workers()


@pytest.fixture
def edos_csv() -> Path:
    if not EDOS_CSV.exists():
        pytest.skip(f"real EDOS data not present at {EDOS_CSV}")
    return EDOS_CSV


@pytest.fixture
def researcher(django_user_model):
    return django_user_model.objects.create_user("researcher", password="pw-researcher", is_staff=True)


@pytest.fixture
def annotators(django_user_model):
    return [django_user_model.objects.create_user(f"annotator{i}", password=f"pw-annotator{i}") for i in (1, 2, 3)]


@pytest.fixture
def outsider(django_user_model):
    return django_user_model.objects.create_user("outsider", password="pw-outsider")


@pytest.fixture
def tiny_corpus(db):
    """Two movies, four dialogues of two or three turns each (hand-written)."""
    from annotation.models import Dialogue, Movie, Turn

    lines = [
        ["Where were you the whole night?", "I was at the station, waiting for you.", "You could have called."],
        ["We won the cup!", "I knew you could do it."],
        ["The bridge is out.", "Then we take the ferry.", "Fine, let's go."],
        ["I miss the old house.", "So do I, every single day."],
    ]
    movies = [Movie.objects.create(title="Night Train", year=1999), Movie.objects.create(title="Harbour", year=2004)]
    dialogues = []
    for index, turns in enumerate(lines):
        dialogue = Dialogue.objects.create(
            movie=movies[index % 2], position=index, content_hash=f"tiny-{index}", turn_count=len(turns)
        )
        for position, text in enumerate(turns):
            Turn.objects.create(
                dialogue=dialogue,
                position=position,
                text=text,
                start=position * 2.0,
                end=position * 2.0 + 1.5,
                token_count=len(text.split()),
            )
        dialogues.append(dialogue)
    return dialogues


@pytest.fixture(autouse=True)
def _queued_jobs_run_in_this_process():
    """Tests only: a job queued by `start_job` runs in this process when its on-commit callback
    fires (Celery eager mode), so tests need no worker. The product never does this: settings keep
    CELERY_TASK_ALWAYS_EAGER off and every job goes to a worker (tests/jobs/test_worker.py)."""
    from config.celery import app

    saved = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager, app.conf.task_eager_propagates = True, True
    yield
    app.conf.task_always_eager, app.conf.task_eager_propagates = saved


@pytest.fixture
def run_jobs_at_once(monkeypatch):
    """Tests only: run a queued job at once, not after the (test-wrapped, never committed)
    transaction, for commands that queue a job and then follow it."""
    from jobs import runtime
    from jobs.tasks import run_job_task

    monkeypatch.setattr(runtime, "_queue", lambda job_id, queue: run_job_task.apply(args=[job_id]))


@pytest.fixture(autouse=True)
def _fast_password_hasher(settings):
    # PBKDF2 costs ~0.4 s a user on this machine; tests don't need slow hashes.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _no_process_cache_outlives_its_test():
    """A test's database rolls back and (on SQLite) hands the same ids out again, so what a process
    cached by id (an assignment's route, a HIT's screens, a campaign's label set, the event kinds
    webhook endpoints want) is forgotten after
    each test: no state leaks from one test into the next. Settings are untouched."""
    yield
    from labeling.fast_path import compiled as fast_path
    from labeling.fast_path import screen as screens
    from labeling.task_types.last_turn_label import screen

    fast_path.forget_routes()
    screens.forget()
    screen.forget_labels()
    from django.core.cache import cache

    from jobs.webhooks.endpoints import WANTED_KINDS_CACHE_KEY

    cache.delete(WANTED_KINDS_CACHE_KEY)  # the kinds some webhook endpoint wants, read from rows rolled back


def seed_reference_data() -> None:
    """Put back the rows data migrations seed (the 41 labels, the built-in quiz bank).

    A transactional test ends with a flush that empties every table, data migrations' rows
    included, so transactional tests re-run the seeding functions first (both are idempotent)
    instead of relying on serialized rollback, which collides with the content types the flush
    re-creates.
    """
    from importlib import import_module

    from django.apps import apps

    import_module("annotation.migrations.0002_seed_labels").seed_labels(apps, None)
    import_module("labeling.migrations.0003_seed_quiz_questions").seed_quiz(apps, None)


@pytest.fixture(autouse=True)
def _reference_data_in_transactional_tests(request):
    """A test marked transactional, or one with a live server (which runs on a transactional
    database too, after whatever flushed it last), starts with the reference rows."""
    marker = request.node.get_closest_marker("django_db")
    transactional = marker is not None and marker.kwargs.get("transaction")
    if not transactional and "live_server" not in request.fixturenames:
        return
    request.getfixturevalue("transactional_db")
    seed_reference_data()


@pytest.fixture
def fast_path_only(settings):
    """For a test of the annotator fast path's own workings (labeling.fast_path.compiled): skipped when
    the suite runs with ANNOTATOR_FAST_PATH=0, where none of it runs."""
    if not settings.ANNOTATOR_FAST_PATH:
        pytest.skip("ANNOTATOR_FAST_PATH=0: the fast path does not run")
