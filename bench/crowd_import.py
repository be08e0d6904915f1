"""Importing the real EDOS crowd results, aggregating them and building the dashboard's report.

    .venv/bin/python bench/crowd_import.py [--file PATH]

Runs on a throw-away SQLite database (migrated first, not timed): the import (parse, bulk inserts,
aggregation with Dawid-Skene, all in one transaction), a second aggregation (the idempotent
re-run) and the campaign report. Prints the file's figures, what was stored and the dashboard's
agreement block, then one line `seconds_import=… seconds_reaggregate=… seconds_report=… majority=…
kappa=… stored_dialogues=… stored_majority=… dashboard_majority_rate=…` (`majority` follows the
paper's rule; the stored and dashboard majorities normalise typed labels). Timings on a shared
machine are noisy.
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
DEFAULT_FILE = ROOT.parent / "shared" / "data" / "edos" / "MTurk_groundtruth_labels_9K.csv"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE)
    args = parser.parse_args()
    if not args.file.exists():
        sys.exit(f"no crowd file at {args.file}")
    workdir = tempfile.mkdtemp(prefix="crowd-bench-")
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir}/bench.sqlite3"
    os.environ.setdefault("SECRET_KEY", "bench-only")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from annotation.models import Dialogue
    from labeling.models import Campaign
    from labeling.reports.campaign import campaign_report
    from labeling.services.importers.edos import import_edos_mturk
    from labeling.task_types.last_turn_label.aggregation import aggregate_campaign

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    result = import_edos_mturk(args.file)
    seconds_import = time.perf_counter() - started
    campaign = Campaign.objects.get(pk=result["stored"]["campaign"])
    started = time.perf_counter()
    aggregate_campaign(campaign)
    seconds_reaggregate = time.perf_counter() - started
    started = time.perf_counter()
    report = campaign_report(campaign)
    seconds_report = time.perf_counter() - started
    print(json.dumps(result, indent=2))
    print("dashboard agreement:", json.dumps(report["agreement"]))
    print(
        f"seconds_import={seconds_import:.1f} seconds_reaggregate={seconds_reaggregate:.1f} "
        f"seconds_report={seconds_report:.1f} majority={result['majority']} kappa={result['fleiss_kappa']} "
        f"stored_dialogues={Dialogue.objects.count()} stored_majority={result['stored']['aggregated']['majority']} "
        f"dashboard_majority_rate={report['agreement']['majority_rate']}"
    )


if __name__ == "__main__":
    main()
