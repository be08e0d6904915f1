"""Sharded bulk annotation across workers: the same job on 1 worker and on 2 (one torch thread
each), against PostgreSQL and Redis, each worker a real `run_worker` process.

    .venv/bin/python bench/shards.py [--dialogues 600] [--shards 4] [--max-workers 2]

Makes a scratch database (bench_shards, dropped first), writes synthetic dialogues (the generator
of bench/inference.py) and an untrained packaged-MiniLM dialogue classifier, then for 1..max workers:
deletes the predictions, starts the workers, queues `bulk_annotate` with `shards`, and times it
from queueing to the parent job's success. Every turn must be labeled once.

Ends with one line: speedup=<t1/t2> one_worker_s= two_workers_s= turns=
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
DATABASE = "bench_shards"


def prepare_environment(folder: Path, broker: str) -> dict:
    env = os.environ | {
        "DEBUG": "1",
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{DATABASE}",
        "CELERY_BROKER_URL": broker,
        "MEDIA_ROOT": str(folder / "media"),
        "ML_NUM_THREADS": "1",
        "ML_DEVICE": "cpu",
        "SECURE_SSL_REDIRECT": "0",
    }
    os.environ.update(env)
    return env


def recreate_database() -> None:
    import psycopg

    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        connection.execute(f"CREATE DATABASE {DATABASE}")


def make_corpus(dialogues: int) -> int:
    from annotation.models import Dialogue, Movie, Turn
    from bench.inference import synthetic_dialogues

    movie = Movie.objects.create(title="Synthetic", year=2000)
    rows = []
    for position, turns in enumerate(synthetic_dialogues(dialogues * 10, seed=5)):
        if position == dialogues:
            break
        rows.append(
            (Dialogue(movie=movie, position=position, content_hash=f"bench-{position}", turn_count=len(turns)), turns)
        )
    Dialogue.objects.bulk_create([dialogue for dialogue, _ in rows])
    saved = dict(Dialogue.objects.values_list("content_hash", "pk"))
    Turn.objects.bulk_create(
        Turn(dialogue_id=saved[dialogue.content_hash], position=index, text=text, start=2.0 * index, end=2.0 * index + 1,
             token_count=len(text.split()))
        for dialogue, turns in rows
        for index, text in enumerate(turns)
    )  # fmt: skip
    return Turn.objects.count()


def make_model():
    from annotation.models import ModelVersion
    from annotation.taxonomy import LABEL_NAMES
    from mlworkers.ml.dialogue_classifier import TrainConfig, build_classifier
    from mlworkers.registry import register_model_version

    clf = build_classifier(list(LABEL_NAMES), TrainConfig(device="cpu"))
    return register_model_version(ModelVersion.DIALOGUE, "bench (untrained)", clf)


def timed_run(env: dict, workers: int, version, shards: int, folder: Path) -> float:
    from annotation.models import Prediction, Turn
    from jobs.models import JobRun
    from jobs.runtime import start_job

    Prediction.objects.all().delete()
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "manage.py",
                "run_worker",
                "--queues",
                "ml",
                "--pool",
                "solo",
                "--hostname",
                f"bench{n}@%h",
            ],
            cwd=REPO,
            env=env,
            stdout=(folder / f"worker{workers}-{n}.log").open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        for n in range(workers)
    ]
    try:
        time.sleep(8)  # the workers import torch and connect
        started = time.perf_counter()
        job = start_job("bulk_annotate", {"model_version_id": version.pk, "shards": shards, "chunk_size": 500})
        while True:
            job.refresh_from_db()
            if job.is_finished:
                break
            time.sleep(0.5)
        seconds = time.perf_counter() - started
    finally:
        for process in processes:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=60)
    if job.status != JobRun.SUCCEEDED:
        raise SystemExit(f"bulk_annotate ended {job.status}: {job.error}")
    labeled = Prediction.objects.filter(model_version=version).count()
    if labeled != Turn.objects.count() or Prediction.objects.values("turn").distinct().count() != labeled:
        raise SystemExit(f"{labeled} predictions for {Turn.objects.count()} turns")
    print(
        f"{workers} worker(s): {seconds:.1f} s for {labeled} turns ({labeled / seconds:.1f} turns/s), {shards} shards"
    )
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dialogues", type=int, default=600)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--max-workers", type=int, default=2)
    parser.add_argument("--broker", default="redis://127.0.0.1:6379/12")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="shards-bench-"))
    env = prepare_environment(folder, args.broker)
    recreate_database()
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    turns = make_corpus(args.dialogues)
    version = make_model()
    times = {
        workers: timed_run(env, workers, version, args.shards, folder) for workers in range(1, args.max_workers + 1)
    }
    one, two = times[1], times.get(2, times[1])
    print(f"speedup={one / two:.2f} one_worker_s={one:.1f} two_workers_s={two:.1f} turns={turns}")


if __name__ == "__main__":
    main()
