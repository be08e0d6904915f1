"""Benchmark: BotsTalk on the example files at several alphas; the paper's diagnostics per run.

    .venv/bin/python bench/botstalk.py                        # alphas 0, 6 (the default), 1000
    .venv/bin/python bench/botstalk.py --alpha 0 --alpha 3.5 --turns 8
    .venv/bin/python bench/botstalk.py --database-url postgres://postgres@127.0.0.1:5432/bench_botstalk

Trains the example skill classifier and small NLI (jobs skill_train, nli_train), then runs the
botstalk job once per alpha, all in this process through `jobs.runtime.run_job`, in a dedicated
bench database (a fresh SQLite file by default, never the project's) with models in a temporary
MEDIA_ROOT. Prints per run the dialogues stored, the moderator's refusal share per context type,
mic passes and the KL quantiles (consecutive utterances, offers); the last line is for the
default alpha. Runs after the first may drop a dialogue identical to an earlier run's.
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT_ALPHA = 6.0


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--alpha", type=float, action="append", help="repeatable; default 0, 6 and 1000")
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--database-url", help="a dedicated bench database (default: a new SQLite file in /tmp)")
    return parser.parse_args()


def setup_django(database_url: str, media_root: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ["MEDIA_ROOT"] = media_root
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def run(kind: str, parameters: dict) -> dict:
    from jobs.models import JobRun
    from jobs.runtime import run_job, start_job

    started = time.perf_counter()
    job = start_job(kind, parameters)
    run_job(job.pk, heartbeat=False)
    job.refresh_from_db()
    if job.status != JobRun.SUCCEEDED:
        sys.exit(f"{kind} {job.status}: {job.error}")
    print(f"{kind} {json.dumps(parameters)}: {time.perf_counter() - started:.1f} s")
    return job.result


def report(alpha: float, result: dict) -> dict:
    diagnostics = result["diagnostics"]
    figures = {key: diagnostics[key] for key in ("turns", "mic_passes", "mic_pass_share", "refused_share")}
    print(
        f"  stored {result['dialogues_stored']}, duplicates {result['duplicates_dropped']}, ranker {result['ranker']}"
    )
    print(f"  {json.dumps(figures)} turns_by_skill {json.dumps(diagnostics['turns_by_skill'])}")
    print(f"  refused_share_by_context {json.dumps(diagnostics['refused_share_by_context'])}")
    for name in ("kl_consecutive", "kl_offered"):
        summary = diagnostics[name]
        if summary["count"]:
            print(f"  {name} {json.dumps(summary['quantiles'])} histogram {summary['histogram']['counts']}")
    return figures


def main() -> None:
    args = parse_args()
    folder = tempfile.mkdtemp(prefix="bench-botstalk-")
    setup_django(args.database_url or f"sqlite:///{folder}/bench.sqlite3", f"{folder}/media")
    run("skill_train", {})
    print(f"  training accuracy of the NLI: {run('nli_train', {})['training_accuracy']}")
    last = {}
    for alpha in args.alpha or [0.0, DEFAULT_ALPHA, 1000.0]:
        result = run("botstalk", {"alpha": alpha, "turns": args.turns, "seed": args.seed})
        figures = report(alpha, result)
        if alpha == DEFAULT_ALPHA or not last:
            last = {"alpha": alpha, **figures}
    print(
        f"alpha={last['alpha']} mic_pass_share={last['mic_pass_share']} refused_share={last['refused_share']} "
        f"turns={last['turns']}"
    )


if __name__ == "__main__":
    main()
