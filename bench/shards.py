"""Sharded jobs across workers: the same job on 1 worker and on 2 (one torch thread each), against
PostgreSQL and Redis, each worker a real `run_worker` process.

    .venv/bin/python bench/shards.py [--dialogues 600] [--shards 4] [--max-workers 2]
    .venv/bin/python bench/shards.py --job ingest [--files 400] [--files-per-shard 50]

Makes a scratch database (bench_shards, dropped first), then for 1..max workers starts the workers,
queues the job and times it from queueing to the parent job's success:
- `bulk_annotate` (default): synthetic dialogues (the generator of bench/inference.py) and an
  untrained packaged-MiniLM dialogue classifier; the predictions are deleted before each run; the
  job splits into `--shards` dialogue id ranges. Every turn must be labeled once.
- `ingest`: `--files` synthetic SubRip files (one movie per folder, dialogues 6 s apart, written
  here) in a scratch folder; everything ingested is deleted before each run; the job splits into
  shards of `--files-per-shard` files. Every file must be stored once, with the same dialogues and
  turns on every run.

Ends with one line: speedup=<t1/t2> one_worker_s= two_workers_s= turns=  (ingest: also files=)
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
    from mlworkers.ml.classifier.dialogue_classifier import build_classifier
    from mlworkers.ml.classifier.model import TrainConfig
    from mlworkers.registry import register_model_version

    clf = build_classifier(list(LABEL_NAMES), TrainConfig(device="cpu"))
    return register_model_version(ModelVersion.DIALOGUE, "bench (untrained)", clf)


def write_subtitles(folder: Path, files: int) -> Path:
    """`files` SubRip files, one per movie folder: dialogues of synthetic lines, 6 s apart (a new
    dialogue each time), the turns of one dialogue 2.5 s apart."""
    from bench.inference import synthetic_dialogues

    root = folder / "subtitles"
    dialogues = synthetic_dialogues(files * 200, seed=11)
    for number in range(files):
        movie = root / f"movie-{number:05d}"
        movie.mkdir(parents=True)
        cues, clock = [], 10.0
        for _ in range(40):
            for text in next(dialogues):
                cues.append(f"{len(cues) + 1}\n{_stamp(clock)} --> {_stamp(clock + 2.0)}\n- {text}\n")
                clock += 2.5
            clock += 6.0
        (movie / f"Synthetic Movie {number} (2001).srt").write_text("\n".join(cues), encoding="utf-8")
    return root


def _stamp(seconds: float) -> str:
    millis = round(seconds * 1000)
    return f"{millis // 3_600_000:02d}:{millis // 60_000 % 60:02d}:{millis // 1000 % 60:02d},{millis % 1000:03d}"


def ingested() -> tuple[int, int, int]:
    """(subtitle files, dialogues, turns) stored; a file stored twice fails the bench."""
    from django.db.models import Count

    from annotation.models import Dialogue, SubtitleFile, Turn

    doubled = SubtitleFile.objects.values("sha256").annotate(n=Count("id")).filter(n__gt=1).count()
    if doubled:
        raise SystemExit(f"{doubled} subtitle files stored more than once")
    return SubtitleFile.objects.count(), Dialogue.objects.count(), Turn.objects.count()


def start_workers(env: dict, workers: int, queue: str, folder: Path) -> list[subprocess.Popen]:
    return [
        subprocess.Popen(
            [
                sys.executable,
                "manage.py",
                "run_worker",
                "--queues",
                queue,
                "--pool",
                "solo",
                "--hostname",
                f"bench{n}@%h",
            ],
            cwd=REPO,
            env=env,
            stdout=(folder / f"{queue}-worker{workers}-{n}.log").open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        for n in range(workers)
    ]


def run_and_wait(processes: list[subprocess.Popen], kind: str, parameters: dict) -> float:
    from jobs.models import JobRun
    from jobs.runtime import start_job

    try:
        time.sleep(8)  # the workers import torch and connect
        started = time.perf_counter()
        job = start_job(kind, parameters)
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
        raise SystemExit(f"{kind} ended {job.status}: {job.error}")
    return seconds


def timed_ingest(env: dict, workers: int, root: Path, files_per_shard: int, folder: Path) -> tuple[float, tuple]:
    from annotation.models import Movie, SubtitleFile

    SubtitleFile.objects.all().delete()
    Movie.objects.all().delete()
    parameters = {"paths": [str(root)], "files_per_shard": files_per_shard, "chunk_size": 10}
    seconds = run_and_wait(start_workers(env, workers, "default", folder), "ingest", parameters)
    stored = ingested()
    print(f"{workers} worker(s): {seconds:.1f} s for {stored[0]} files, {stored[1]} dialogues, {stored[2]} turns")
    return seconds, stored


def timed_run(env: dict, workers: int, version, shards: int, folder: Path) -> float:
    from annotation.models import Prediction, Turn

    Prediction.objects.all().delete()
    parameters = {"model_version_id": version.pk, "shards": shards, "chunk_size": 500}
    seconds = run_and_wait(start_workers(env, workers, "ml", folder), "bulk_annotate", parameters)
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
    parser.add_argument("--job", choices=["bulk_annotate", "ingest"], default="bulk_annotate")
    parser.add_argument("--files", type=int, default=400, help="ingest: synthetic subtitle files")
    parser.add_argument("--files-per-shard", type=int, default=50, help="ingest: files per shard")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="shards-bench-"))
    env = prepare_environment(folder, args.broker)
    recreate_database()
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    if args.job == "ingest":
        return ingest_main(args, env, folder)
    turns = make_corpus(args.dialogues)
    version = make_model()
    times = {
        workers: timed_run(env, workers, version, args.shards, folder) for workers in range(1, args.max_workers + 1)
    }
    one, two = times[1], times.get(2, times[1])
    print(f"speedup={one / two:.2f} one_worker_s={one:.1f} two_workers_s={two:.1f} turns={turns}")


def ingest_main(args: argparse.Namespace, env: dict, folder: Path) -> None:
    root = write_subtitles(folder, args.files)
    runs = {
        workers: timed_ingest(env, workers, root, args.files_per_shard, folder)
        for workers in range(1, args.max_workers + 1)
    }
    if len({stored for _, stored in runs.values()}) != 1:
        raise SystemExit(f"the runs stored different things: {runs}")
    (files, _, turns) = runs[1][1]
    if files != args.files:
        raise SystemExit(f"{files} of {args.files} files stored")
    one, two = runs[1][0], runs.get(2, runs[1])[0]
    print(f"speedup={one / two:.2f} one_worker_s={one:.1f} two_workers_s={two:.1f} turns={turns} files={files}")


if __name__ == "__main__":
    main()
