"""Jobs through a real worker process (`tests.jobs.slow_worker`, i.e. `manage.py run_worker`), on the
embedded filesystem broker and on Redis: a queued job runs there, not here; a worker killed with
SIGKILL in the middle of bulk_annotate or weak_apply leaves a stale job that a second worker
requeues and finishes with no Prediction missing or doubled. PostgreSQL only (the worker process
must share the test database); the Redis cases need Redis at CELERY_TEST_BROKER_URL."""

import os
import signal
import subprocess
import sys
import time
from unittest import mock
from urllib.parse import quote

import pytest
from django.db import connection

from annotation.models import Label, ModelVersion, Prediction, Turn
from annotation.taxonomy import LABEL_NAMES
from jobs.models import JobRun
from jobs.runtime import start_job
from labeling.models import HITItem
from tests.conftest import REPO_ROOT
from tests.mlworkers.pipeline_support import last_turn, make_corpus

BROKER_URL = os.environ.get("CELERY_TEST_BROKER_URL", "redis://127.0.0.1:6379/15")
# One xdist worker runs this whole file: the Redis cases share CELERY_TEST_BROKER_URL's queues (each
# purges them), so a worker process started by one test must never see another test's messages.
# `make test` runs it after the parallel run, alone (mark `alone`): beside the rest of the suite its
# kill-and-recover cases failed once in two runs (a requeued job left queued), alone never.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.postgres,
    pytest.mark.alone,
    pytest.mark.django_db(transaction=True),
    pytest.mark.xdist_group("celery_test_broker"),
]


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


def _forget_connections(app) -> None:
    """Drop the app's cached connection and producer pools, so the next publish connects to the
    broker configured now, not to one an earlier test set up."""
    app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture(params=["embedded", "redis"])
def broker(request, tmp_path):
    """Point this process's Celery app at the broker (never eager) and give the worker's environment."""
    from config.celery import app

    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: a worker process cannot share pytest's SQLite test database")
    if request.param == "redis":
        if not _redis_answers(BROKER_URL):
            pytest.skip(f"Redis does not answer at {BROKER_URL} (set CELERY_TEST_BROKER_URL)")
        url, options, env = BROKER_URL, {}, {"CELERY_BROKER_URL": BROKER_URL}
    else:
        folder = tmp_path / "broker"
        url, env = "filesystem://", {"CELERY_BROKER_URL": "", "BROKER_DIR": str(folder)}
        options = {"data_folder_in": str(folder / "messages"), "data_folder_out": str(folder / "messages"),
                   "control_folder": str(folder / "control"), "polling_interval": 0.5}  # fmt: skip
        for key in ("data_folder_in", "control_folder"):
            os.makedirs(options[key], exist_ok=True)
    keys = ("broker_url", "broker_transport_options", "task_always_eager")
    saved = {key: app.conf[key] for key in keys}
    app.conf.update(broker_url=url, broker_transport_options=options, task_always_eager=False)
    _forget_connections(app)
    if request.param == "redis":
        with app.connection_for_write() as purging:
            app.control.purge(connection=purging)
    yield env
    app.conf.update(saved)
    _forget_connections(app)


@pytest.fixture
def start_worker(broker, tmp_path, settings):
    """Start worker processes (each its own process group, so SIGKILL takes the whole worker)."""
    started = []
    settings.MEDIA_ROOT = tmp_path / "media"

    def start(name: str, slow_chunk_seconds: float = 0.0) -> tuple[subprocess.Popen, object]:
        env = os.environ | broker | {
            "DATABASE_URL": _test_database_url(), "DEBUG": "1", "MEDIA_ROOT": str(settings.MEDIA_ROOT),
            "ML_DEVICE": "cpu", "TEST_SLOW_CHUNK_SECONDS": str(slow_chunk_seconds), "OMP_NUM_THREADS": "1",
            "JOB_HEARTBEAT_SECONDS": "1", "JOB_STALE_SECONDS": "4", "JOB_SWEEP_SECONDS": "1",
            # as in this process (tests/conftest.py): the test database has no quiz pool
            "QUIZ_DEMO_BANK": "1", "QUIZ_ITEMS_PER_SEAT": "0",
        }  # fmt: skip
        env.pop("CELERY_RESULT_BACKEND", None)
        log = tmp_path / f"{name}.log"
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.jobs.slow_worker"], cwd=REPO_ROOT, env=env,
            stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        started.append(process)
        return process, log

    yield start
    for process in started:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def wait_for(job: JobRun, condition, log, seconds: float = 180) -> JobRun:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        job.refresh_from_db()
        if condition(job):
            return job
        time.sleep(0.3)
    raise AssertionError(
        f"job {job.status} {job.progress_done}/{job.progress_total}: {job.error}\n{log.read_text()[-3000:]}"
    )


def _weak_predictions(dialogues) -> ModelVersion:
    """A weak model version's predictions written directly: ranking reads rows, not the model."""
    version = ModelVersion.objects.create(kind=ModelVersion.WEAK, name="weak (rows only)", base_model="none")
    joyful = Label.objects.get(name="Joyful")
    for dialogue in dialogues:
        Prediction.objects.create(
            turn=last_turn(dialogue), model_version=version, label=joyful, confidence=0.95,
            top_k=[["Joyful", 0.95], ["Sad", 0.03], ["Neutral", 0.02]],
        )  # fmt: skip
    return version


def test_a_real_worker_runs_a_queued_job_to_success(start_worker):
    process, log = start_worker("worker")
    dialogues = make_corpus()
    _weak_predictions(dialogues)
    job = start_job("rank_candidates", {"campaign_name": "Through the worker"})
    assert JobRun.objects.get(pk=job.pk).status == JobRun.QUEUED  # nothing ran in this process
    wait_for(job, lambda j: j.is_finished or process.poll() is not None, log)
    assert job.status == JobRun.SUCCEEDED, f"{job.error}\n{log.read_text()[-3000:]}"
    assert job.result["candidates"] == len(dialogues) and job.result["hits"] == 1
    assert HITItem.objects.filter(hit__campaign__name="Through the worker", dialogue__isnull=False).count() == 12
    assert "jobs.run_job" in log.read_text()  # the worker, not this process, ran it


def test_a_job_whose_message_the_broker_lost_runs_once_a_worker_connects(start_worker):
    """A broker restarted without its data (Redis with no persistence) has forgotten the message:
    the job is queued and the broker holds nothing. A worker republishes every queued job whenever
    it connects to the broker (jobs.worker.RepublishOnConnect), so the job still runs."""
    dialogues = make_corpus()
    _weak_predictions(dialogues)
    with mock.patch("jobs.runtime._queue"):  # recorded as queued; its message never reaches the broker
        job = start_job("rank_candidates", {"campaign_name": "Lost message"})
    process, log = start_worker("worker")
    wait_for(job, lambda j: j.is_finished or process.poll() is not None, log)
    assert job.status == JobRun.SUCCEEDED, f"{job.error}\n{log.read_text()[-3000:]}"
    assert "republished" in log.read_text()


def _dialogue_classifier() -> ModelVersion:
    from mlworkers.ml.classifier.dialogue_classifier import build_classifier
    from mlworkers.ml.classifier.model import TrainConfig
    from mlworkers.registry import register_model_version
    from tests.mlworkers.tiny_models import tiny_encoder_path

    clf = build_classifier(list(LABEL_NAMES), TrainConfig(base_model=tiny_encoder_path(), device="cpu", seed=7))
    return register_model_version(ModelVersion.DIALOGUE, "tiny EB+", clf)


def _weak_labeler(tmp_path, settings) -> ModelVersion:
    from jobs.runtime import run_job
    from tests.mlworkers.tiny_models import tiny_encoder_path

    settings.WEAK_LABELER_MODEL, settings.ML_DEVICE = tiny_encoder_path(), "cpu"
    seed = tmp_path / "seed.csv"
    seed.write_text("text,label\n" + "".join(f"a line said in a {n.lower()} way,{n}\n" for n in LABEL_NAMES))
    job = JobRun.objects.create(kind="weak_train", parameters={"data_path": str(seed)})
    run_job(job.pk, heartbeat=False)  # set-up only: the job under test runs in the worker
    return ModelVersion.objects.get(kind=ModelVersion.WEAK)


@pytest.mark.parametrize("kind", ["bulk_annotate", "weak_apply"])
def test_a_worker_killed_mid_job_leaves_it_to_another_that_finishes_with_nothing_missing_or_doubled(
    start_worker, kind, tmp_path, settings
):
    make_corpus(prefix="a")
    make_corpus(prefix="b")
    version = _dialogue_classifier() if kind == "bulk_annotate" else _weak_labeler(tmp_path, settings)
    first, log = start_worker("first", slow_chunk_seconds=1.0)
    job = start_job(kind, {"model_version_id": version.pk, "chunk_size": 2})
    wait_for(job, lambda j: j.status == JobRun.RUNNING and 0 < j.progress_done < j.progress_total, log)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    job.refresh_from_db()
    assert job.status == JobRun.RUNNING and job.progress_done < job.progress_total  # killed in the middle

    second, second_log = start_worker("second")
    wait_for(job, lambda j: j.is_finished, second_log)
    assert job.status == JobRun.SUCCEEDED, job.error
    assert job.attempts == 2 and "worker lost" not in job.error
    predicted = list(Prediction.objects.filter(model_version=version).values_list("turn_id", flat=True))
    assert sorted(predicted) == sorted(Turn.objects.values_list("pk", flat=True))  # none missing, none twice
