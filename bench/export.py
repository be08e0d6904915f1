"""Benchmark: stream a gold export of many synthetic turns; rows/s and peak memory at two sizes.

    .venv/bin/python bench/export.py                 # 1,000,000 turns, measured at 100k and 1M
    .venv/bin/python bench/export.py --rows 200000   # smaller
    .venv/bin/python bench/export.py --database-url postgres://postgres@127.0.0.1:5432/bench_export

The turns go into a dedicated bench database (a fresh SQLite file by default, never the project's),
inserted with raw multi-row SQL. The export runs through the same `export_to_path` as the command,
the job and the API. Memory is the peak resident-set growth during the export, sampled every 20 ms,
and the tracemalloc peak of Python allocations (--tracemalloc, slower): both should stay flat as the
row count grows tenfold, since rows are streamed and never collected.
"""

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TURNS_PER_DIALOGUE = 4
BATCH = 20_000
WORDS = [
    "we",
    "never",
    "said",
    "it",
    "was",
    "going",
    "to",
    "be",
    "easy",
    "but",
    "here",
    "we",
    "are",
    "again",
    "tonight",
]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="turns at the larger size (default 1M)")
    parser.add_argument("--small", type=int, help="turns at the smaller size (default rows / 10)")
    parser.add_argument("--format", default="csv", choices=["csv", "jsonl", "hf"])
    parser.add_argument("--database-url", help="a dedicated bench database (default: a new SQLite file in /tmp)")
    parser.add_argument("--tracemalloc", action="store_true", help="also measure Python allocations (slower)")
    return parser.parse_args()


def setup_django(database_url: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def insert_turns(first_dialogue: int, last_dialogue: int) -> None:
    """Dialogues first..last-1 with 4 turns each and one crowd label per turn, as raw multi-row SQL."""
    from django.db import connection, transaction

    from annotation.models import Label

    label_ids = list(Label.objects.order_by("position").values_list("pk", flat=True))
    provenance = '{"campaign": 1, "votes": {"Sad": 2, "Neutral": 1}, "workers": 3, "agreement": 0.667}'
    now = "2026-01-01 00:00:00"
    with transaction.atomic(), connection.cursor() as cursor:
        for start in range(first_dialogue, last_dialogue, BATCH // TURNS_PER_DIALOGUE):
            stop = min(last_dialogue, start + BATCH // TURNS_PER_DIALOGUE)
            dialogues = [(d, 0, f"bench-{d}", "", TURNS_PER_DIALOGUE) for d in range(start, stop)]
            turns, labels = [], []
            for d in range(start, stop):
                for p in range(TURNS_PER_DIALOGUE):
                    turn_id = d * TURNS_PER_DIALOGUE + p
                    text = " ".join(WORDS[(d + p + k) % len(WORDS)] for k in range(8 + p))
                    turns.append((turn_id, d, p, text, 8 + p))
                    labels.append((turn_id, label_ids[(d * 7 + p) % len(label_ids)], "crowd", provenance, "", now))
            _insert(cursor, "annotation_dialogue", "id, position, content_hash, external_id, turn_count", dialogues)
            _insert(cursor, "annotation_turn", "id, dialogue_id, position, text, token_count", turns)
            _insert(cursor, "annotation_turnlabel", "turn_id, label_id, source, provenance, split, created_at", labels)


def _insert(cursor, table: str, columns: str, rows: list[tuple]) -> None:
    width = len(rows[0])
    per_statement = 900 // width  # SQLite allows 999 parameters per statement
    for i in range(0, len(rows), per_statement):
        chunk = rows[i : i + per_statement]
        values = ", ".join(["(" + ", ".join(["%s"] * width) + ")"] * len(chunk))
        cursor.execute(f"INSERT INTO {table} ({columns}) VALUES {values}", [v for row in chunk for v in row])


class PeakRSS:
    """Samples the resident set size in a thread; `peak_growth` is the most it rose above the start."""

    def __init__(self, interval: float = 0.02):
        import psutil

        self.process, self.interval = psutil.Process(), interval
        self.start = self.peak = self.process.memory_info().rss
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.process.memory_info().rss)
            time.sleep(self.interval)

    def __enter__(self) -> "PeakRSS":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.process.memory_info().rss)

    @property
    def peak_growth_mb(self) -> float:
        return (self.peak - self.start) / 1e6


def measure(fmt: str, out_dir: Path, use_tracemalloc: bool) -> dict[str, float]:
    import gc
    import tracemalloc

    from annotation.export.query import ExportFilters, export_to_path

    gc.collect()
    out = out_dir / f"gold.{fmt}" if fmt != "hf" else out_dir / "gold-hf"
    if use_tracemalloc:
        tracemalloc.start()
    started = time.perf_counter()
    with PeakRSS() as rss:
        summary = export_to_path("gold", fmt, out, ExportFilters())
    seconds = time.perf_counter() - started
    figures = {
        "rows": summary.rows,
        "seconds": seconds,
        "rows_per_s": summary.rows / seconds,
        "rss_mb": rss.peak_growth_mb,
    }
    if use_tracemalloc:
        figures["py_peak_mb"] = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
    figures.update(measure_statistics())
    return figures


def measure_statistics() -> dict[str, float]:
    """The statistics page's one-pass Table 3/Table 9 over the same gold rows."""
    from annotation.analysis.queries import labeled_turns
    from annotation.analysis.statistics import dataset_statistics

    started = time.perf_counter()
    with PeakRSS() as rss:
        stats = dataset_statistics(labeled_turns("gold"))
    seconds = time.perf_counter() - started
    return {"stats_rows_per_s": stats.sizes.turns / seconds, "stats_rss_mb": rss.peak_growth_mb}


def main() -> None:
    args = parse_args()
    small = args.small or max(TURNS_PER_DIALOGUE, args.rows // 10)
    work = Path(tempfile.mkdtemp(prefix="bench-export-"))
    database_url = args.database_url or f"sqlite:///{work / 'bench.sqlite3'}"
    setup_django(database_url)
    from django.db import connection

    if args.database_url:
        with connection.cursor() as cursor:  # a dedicated bench database: start it empty
            cursor.execute("TRUNCATE annotation_turnlabel, annotation_turn, annotation_dialogue CASCADE")
    print(f"bench database: {connection.vendor} {connection.settings_dict['NAME']}")

    results = []
    built = 0
    for size in (small, args.rows):
        dialogues = size // TURNS_PER_DIALOGUE
        started = time.perf_counter()
        insert_turns(built, dialogues)
        print(f"inserted turns up to {size:,} in {time.perf_counter() - started:.1f}s")
        built = dialogues
        figures = measure(args.format, work, args.tracemalloc)
        results.append(figures)
        extra = f", python peak {figures['py_peak_mb']:.1f} MB" if "py_peak_mb" in figures else ""
        print(
            f"export {args.format} of {figures['rows']:,} rows: {figures['seconds']:.1f}s, "
            f"{figures['rows_per_s']:,.0f} rows/s, peak RSS growth {figures['rss_mb']:.1f} MB{extra}; "
            f"statistics pass {figures['stats_rows_per_s']:,.0f} rows/s, peak RSS growth {figures['stats_rss_mb']:.1f} MB"
        )
    small_run, large_run = results
    line = {
        "rows_small": small_run["rows"],
        "rows_large": large_run["rows"],
        "rows_per_s": round(large_run["rows_per_s"]),
        "peak_rss_mb_small": round(small_run["rss_mb"], 1),
        "peak_rss_mb_large": round(large_run["rss_mb"], 1),
        "stats_rows_per_s": round(large_run["stats_rows_per_s"]),
    }
    if args.tracemalloc:
        line["py_peak_mb_small"] = round(small_run["py_peak_mb"], 1)
        line["py_peak_mb_large"] = round(large_run["py_peak_mb"], 1)
    print(f"(shared machine: timings are noisy; bench files in {work})")
    print(" ".join(f"{key}={value}" for key, value in line.items()))


if __name__ == "__main__":
    main()
