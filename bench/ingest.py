"""Ingestion throughput and memory: the whole pure pipeline against `srt.parse` alone.

    .venv/bin/python bench/ingest.py [--cues 100000] [--rounds 7] [--db]

Generates SubRip files (25k, 50k and the full count of cues) and an OPUS XML file in a temp dir,
then reports cues/s of srt.parse alone (read + parse) and of the whole pipeline (read + parse +
clean + segment + split; the pipeline calls srt.parse itself, so the ratio cannot pass 1), and the
peak traced memory of each pipeline run in a fresh subprocess, so flat memory shows as the same
peak at every size. The two sides run alternately, `--rounds` times, and the best run of each
counts, on two clocks: CPU time of this process (what `ratio=` reports: time spent waiting for a
core on a shared machine is not counted) and wall time (`ratio_wall=`). `--db` also times the
database write on a throw-away SQLite database. `--svm-rounds` (default 2; 0 skips it) times the
pipeline with the trained SVM turn segmenter, on a tiny model trained here on another generated
file; it prints `svm_cues_per_s=... svm_ratio=...` (CPU time, against srt.parse) before the last line.
Ends with `ratio=<pipeline/parse, CPU time> ratio_wall=<the same, wall time> peak_mb=<MB at the
largest size>`. Figures on a shared machine are noisy, wall time most.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LINES = [
    "Where were you last night?",
    "I waited at the station until the last train.",
    "You could have called me, you know.",
    "I'm sorry, I lost my phone.",
    "That's what you always say.",
    "We won the match!",
    "I knew you could do it.",
    "Don't leave me here alone.",
    "I'll be back before dawn, I promise.",
    "Is somebody out there?",
    "Get behind me and stay quiet.",
    "I told you that",
    "you would regret it.",
    "I was going to...",
    "...tell you everything.",
]
DECORATED = [
    "- {a}\n- {b}",
    "<i>{a}</i>",
    "JOHN: {a}",
    "[door slams]\n{a}",
    "{a}\n{b}",
    "{a}",
    "{a}",
    "{a}",
]


def stamp(seconds: float) -> str:
    millis = int(seconds * 1000)
    hours, millis = divmod(millis, 3_600_000)
    minutes, millis = divmod(millis, 60_000)
    secs, millis = divmod(millis, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d},{millis:03d}"


def write_srt(path: Path, cues: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    clock = 10.0
    with open(path, "w", encoding="utf-8") as handle:
        for number in range(1, cues + 1):
            text = rng.choice(DECORATED).format(a=rng.choice(LINES), b=rng.choice(LINES))
            duration = rng.uniform(1.0, 3.5)
            handle.write(f"{number}\n{stamp(clock)} --> {stamp(clock + duration)}\n{text}\n\n")
            clock += duration + (rng.uniform(6, 15) if rng.random() < 0.12 else rng.uniform(0.1, 1.2))


def write_opus(path: Path, sentences: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    clock = 10.0
    with open(path, "w", encoding="utf-8") as handle:
        handle.write('<?xml version="1.0" encoding="utf-8"?>\n<document id="1">\n')
        for number in range(1, sentences + 1):
            tokens = rng.choice(LINES).replace("...", " ... ").replace(",", " ,").replace("?", " ?").split()
            duration = rng.uniform(1.0, 3.5)
            words = "".join(f'<w id="{number}.{i}">{t}</w>' for i, t in enumerate(tokens, 1))
            handle.write(
                f'<s id="{number}"><time id="T{number}S" value="{stamp(clock)}"/>{words}'
                f'<time id="T{number}E" value="{stamp(clock + duration)}"/></s>\n'
            )
            clock += duration + (rng.uniform(6, 15) if rng.random() < 0.12 else rng.uniform(0.1, 1.2))
        handle.write("<meta><source><genre>Drama</genre><year>2001</year></source></meta>\n</document>\n")


def parse_only(path: Path) -> int:
    import srt

    with open(path, encoding="utf-8") as handle:
        return sum(1 for _ in srt.parse(handle.read()))


def pipeline(path: Path) -> int:
    from annotation.ingest import FileRun

    run = FileRun(path)
    for _ in run.dialogues():
        pass
    return run.stats.dialogues


def train_tiny_model(workdir: Path):
    """A segmenter trained on a generated file of 5k cues (its dashed cues are the weak labels)."""
    from annotation.ingest.segmenter_training import train_on_files

    path = workdir / "svm_train.srt"
    write_srt(path, 5000, seed=2)
    return train_on_files([(path, "drama")]).model


def svm_pipeline_seconds(path: Path, model, rounds: int) -> float:
    """Best CPU time of the whole pipeline with the SVM segmenter, over `rounds` runs."""
    from annotation.ingest import FileRun, PipelineConfig
    from annotation.ingest.svm_segmenter import SvmSegmenter

    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        run = FileRun(path, PipelineConfig(segmenter=SvmSegmenter(model, "drama", "en")))
        for _ in run.dialogues():
            pass
        best = min(best, time.process_time() - started)
    return best


def timed(fn, path: Path, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        fn(path)
        best = min(best, time.perf_counter() - started)
    return best


def timed_pair(path: Path, rounds: int) -> dict[str, tuple[float, float]]:
    """Best of `rounds` for parse-only and the pipeline, alternated so machine noise hits both alike,
    on two clocks: wall time, and this process's CPU time, which a shared machine disturbs far less
    (time spent waiting for a core is not counted). Both sides are single-threaded pure Python, so
    on an idle machine the two agree. Returns {"wall": (parse, pipeline), "cpu": (parse, pipeline)}."""
    best = {(clock, side): float("inf") for clock in ("wall", "cpu") for side in ("parse", "pipeline")}
    for _ in range(rounds):
        for side, fn in (("parse", parse_only), ("pipeline", pipeline)):
            wall_started, cpu_started = time.perf_counter(), time.process_time()
            fn(path)
            cpu, wall = time.process_time() - cpu_started, time.perf_counter() - wall_started
            best["wall", side] = min(best["wall", side], wall)
            best["cpu", side] = min(best["cpu", side], cpu)
    return {clock: (best[clock, "parse"], best[clock, "pipeline"]) for clock in ("wall", "cpu")}


def child(kind: str, path: str) -> None:
    """Run once in this fresh process and print the traced peak and the max RSS."""
    import resource

    fn = {"parse": parse_only, "pipeline": pipeline}[kind]
    tracemalloc.start()
    fn(Path(path))
    _, peak = tracemalloc.get_traced_memory()
    rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"peak_mb": peak / 2**20, "rss_mb": rss_kb / 1024}))


def measure_memory(kind: str, path: Path) -> dict:
    output = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(path)], check=True, capture_output=True, text=True
    ).stdout
    return json.loads(output.strip().splitlines()[-1])


def db_write(path: Path, workdir: Path) -> float:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only")
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir / 'bench.sqlite3'}"
    import django

    django.setup()
    from django.core.management import call_command

    from annotation.ingestion import IngestOptions, ingest_file

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    outcome = ingest_file(path, IngestOptions())
    elapsed = time.perf_counter() - started
    print(f"db write: {outcome.dialogues} dialogues, {outcome.turns} turns stored")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cues", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=7, help="alternated timing rounds; the best counts")
    parser.add_argument("--db", action="store_true", help="also time the database write (temp SQLite)")
    parser.add_argument("--svm-rounds", type=int, default=2, help="timed runs with the SVM segmenter (0: skip)")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        sizes = sorted({args.cues // 4, args.cues // 2, args.cues})
        peaks = {}
        for size in sizes:
            path = workdir / f"bench_{size}.srt"
            write_srt(path, size)
            pipeline_memory = measure_memory("pipeline", path)
            parse_memory = measure_memory("parse", path)
            peaks[size] = pipeline_memory["peak_mb"]
            print(
                f"{size:>7} cues ({path.stat().st_size / 2**20:.1f} MB): pipeline peak {pipeline_memory['peak_mb']:.1f} MB "
                f"traced / {pipeline_memory['rss_mb']:.0f} MB RSS; srt.parse of the whole text peak "
                f"{parse_memory['peak_mb']:.1f} MB traced / {parse_memory['rss_mb']:.0f} MB RSS"
            )
        largest = workdir / f"bench_{args.cues}.srt"
        timings = timed_pair(largest, args.rounds)
        ratios = {}
        for clock, (parse_seconds, pipeline_seconds) in timings.items():
            parse_rate, pipeline_rate = args.cues / parse_seconds, args.cues / pipeline_seconds
            ratios[clock] = pipeline_rate / parse_rate
            print(
                f"[{clock:>4} time, best of {args.rounds}] srt.parse alone: {parse_rate:,.0f} cues/s "
                f"({parse_seconds:.2f} s); whole pipeline: {pipeline_rate:,.0f} cues/s ({pipeline_seconds:.2f} s); "
                f"ratio {ratios[clock]:.2f}"
            )
        ratio = ratios["cpu"]
        print(f"{pipeline(largest)} dialogues; ratio pipeline/parse (CPU time): {ratio:.2f}")
        opus = workdir / "bench.xml"
        for size in sizes:
            write_opus(opus, size)
            memory = measure_memory("pipeline", opus)
            seconds = timed(pipeline, opus, repeats=1)
            print(
                f"OPUS {size:>7} sentences: {size / seconds:,.0f} sentences/s, peak {memory['peak_mb']:.1f} MB traced"
            )
        if args.db:
            seconds = db_write(largest, workdir)
            print(f"pipeline + db write (SQLite): {args.cues / seconds:,.0f} cues/s ({seconds:.2f} s)")
        if args.svm_rounds > 0:
            svm_seconds = svm_pipeline_seconds(largest, train_tiny_model(workdir), args.svm_rounds)
            svm_rate, parse_rate = args.cues / svm_seconds, args.cues / timings["cpu"][0]
            print(f"pipeline with the SVM turn segmenter (CPU time, best of {args.svm_rounds}): {svm_rate:,.0f} cues/s")
            print(f"svm_cues_per_s={svm_rate:.0f} svm_ratio={svm_rate / parse_rate:.2f}")
        print(f"ratio={ratio:.2f} ratio_wall={ratios['wall']:.2f} peak_mb={peaks[args.cues]:.1f}")


if __name__ == "__main__":
    main()
