"""A job through a real Celery worker over Redis: a `celery -A config worker` subprocess on the
default and ml queues, pointed at this test database, runs rank_candidates and builds a campaign's
HITs. PostgreSQL only (the worker process must share the test database) and Redis must answer."""

import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from django.db import connection

from annotation.models import Label, ModelVersion, Prediction
from labeling.models import HITItem
from mlworkers import jobs
from mlworkers.models import JobRun
from tests.mlworkers.pipeline_support import last_turn, make_corpus

BROKER_URL = os.environ.get("CELERY_TEST_BROKER_URL", "redis://127.0.0.1:6379/15")
REPO_ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.postgres]


def _redis_answers(url: str) -> bool:
    try:
        import redis

        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except Exception:
        return False


def _test_database_url() -> str:
    s = connection.settings_dict
    credentials = quote(s["USER"] or "") + (f":{quote(s['PASSWORD'])}" if s.get("PASSWORD") else "")
    return f"postgres://{credentials}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


@pytest.fixture
def real_broker():
    """Point this process's Celery app at Redis (not eager) for the test, then restore it."""
    from config.celery import app

    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: a worker process cannot share pytest's SQLite test database")
    if not _redis_answers(BROKER_URL):
        pytest.skip(f"Redis does not answer at {BROKER_URL} (set CELERY_TEST_BROKER_URL)")
    saved = {key: app.conf[key] for key in ("broker_url", "task_always_eager")}
    app.conf.update(broker_url=BROKER_URL, task_always_eager=False)
    _forget_connections(app)
    app.control.purge()
    yield app
    app.conf.update(saved)
    _forget_connections(app)


def _forget_connections(app) -> None:
    """Drop the app's cached connection and producer pools (as Celery does after a fork), so the
    next publish connects to the broker configured now, not to one an earlier test set up."""
    if app._pool is not None:
        app._pool.force_close_all()
    app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture
def worker(real_broker, tmp_path):
    env = os.environ | {"CELERY_BROKER_URL": BROKER_URL, "DATABASE_URL": _test_database_url(), "DEBUG": "1"}
    env.pop("CELERY_RESULT_BACKEND", None)
    log = (tmp_path / "worker.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "default,ml", "--concurrency", "1",
         "--pool", "prefork", "--loglevel", "INFO", "--without-gossip", "--without-mingle", "--without-heartbeat"],
        cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    yield process, tmp_path / "worker.log"
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    log.close()


def _weak_predictions(dialogues) -> ModelVersion:
    """A weak model version's predictions written directly: ranking reads rows, not the model."""
    version = ModelVersion.objects.create(kind=ModelVersion.WEAK, name="weak (rows only)", base_model="none")
    labels = {label.name: label for label in Label.objects.filter(name__in=["Joyful", "Sad", "Neutral"])}
    for dialogue in dialogues:
        Prediction.objects.create(
            turn=last_turn(dialogue), model_version=version, label=labels["Joyful"], confidence=0.95,
            top_k=[["Joyful", 0.95], ["Sad", 0.03], ["Neutral", 0.02]],
        )  # fmt: skip
    return version


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_runs_a_queued_job_to_success(worker):
    process, log_path = worker
    dialogues = make_corpus()
    _weak_predictions(dialogues)
    job = jobs.start_job("rank_candidates", {"campaign_name": "Through the worker"})
    assert JobRun.objects.get(pk=job.pk).status == JobRun.QUEUED  # nothing ran in this process

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if job.is_finished or process.poll() is not None:
            break
        time.sleep(0.5)
    log = log_path.read_text()
    assert job.status == JobRun.SUCCEEDED, f"job {job.status}: {job.error}\n--- worker log ---\n{log[-3000:]}"
    assert job.result["candidates"] == len(dialogues) and job.result["hits"] == 1
    items = HITItem.objects.filter(hit__campaign__name="Through the worker", dialogue__isnull=False)
    assert items.count() == len(dialogues)
    assert all(item.choices == ["Joyful", "Sad", "Neutral"] for item in items)
    assert "run_job_task" in log  # the worker, not this process, ran it
