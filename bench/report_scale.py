"""The researcher's pages on big campaigns: the figures computed on every view (REPORT_CACHE=0, the
old path) against the stored figures (REPORT_CACHE=1: computed by the refresh job, stale while
revalidate; labeling/reports/cache.py), in one run; and the campaign's downloads.

    .venv/bin/python bench/report_scale.py [--sizes 30000,300000] [--repeats 20] [--uncached-repeats 3]

What it does:
1. (re)creates the PostgreSQL database `bench_report_scale` on 127.0.0.1 (--database-url), migrates
   it, and builds one campaign per size, in the same database (the smaller ones stay as the other
   campaigns of a real site): `size` answers of site workers, 3 per dialogue item, 20 items a HIT,
   one worker per 200 answers, each answer its item's gold label with probability 0.7, and one
   aggregated label per item (bulk inserts, then ANALYZE);
2. signs a staff user in (Django's test client, in this process: the page's own cost, no server) and
   times three pages per campaign: the report (the dashboard's figures, labeling:campaign_report),
   the dashboard (labeling:campaign_detail) and the worker table (the API's campaigns/<pk>/workers/);
3. first with REPORT_CACHE=0 (every view computes the figures), --uncached-repeats views of each
   page; then with REPORT_CACHE=1 and the refresh job queued but not run by a worker: one first view
   (nothing stored: "computing…"), the job's work (refresh_figures, timed: what a worker spends in
   the background), --repeats views with nothing changed, and --repeats views after a change (a
   worker blocked: the pages show the last figures, labelled, while the job is queued);
4. times each download (the label campaign's export as CSV and JSONL, labels.csv): its first chunk,
   the whole download, and the most memory Python held streaming it, against the export built as
   one string (what the views did before).

Prints per size the p50/p95 of every page in each phase, the downloads, and a line per size, and
ends with one line, every value a comma-separated list over the sizes:
    answers= report_p95_ms= dashboard_p95_ms= worker_table_p95_ms= uncached_report_p95_ms=
    uncached_worker_table_p95_ms= first_view_ms= stale_view_ms= stale_dashboard_p95_ms= refresh_ms=
    export_first_chunk_ms= export_streamed_peak_mb= export_whole_file_peak_mb= report_ratio=
(report_ratio: uncached p95 / stored p95 of the report; stale_view_ms: p95 of the report page after
a change). A ratio of two paths measured minutes apart in one process; the machine is shared, so
absolute times are noisy. Only 127.0.0.1 is contacted.
"""

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.labeling_load import recreate_database, setup_django

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_report_scale"
WORKERS_PER_ITEM = 3
ITEMS_PER_HIT = 20
ANSWERS_PER_WORKER = 200
LABELS = ("Angry", "Sad", "Joyful")
BATCH = 10_000
PAGES = ("report", "dashboard", "worker_table")


def build_campaign(answers: int, seed: int):
    """A closed-to-nobody open campaign holding `answers` submitted answers (bulk inserts)."""
    from django.db import transaction
    from django.utils import timezone

    from annotation.models import Dialogue, Label, Turn
    from labeling.models import Assignment, HITItem, Response, Worker
    from labeling.services.campaigns import create_campaign
    from labeling.services.workers import imported_workers
    from labeling.work.hits import write_hits

    rng = random.Random(seed)
    items = answers // WORKERS_PER_ITEM
    now = timezone.now()
    label_ids = {label.name: label.pk for label in Label.objects.filter(name__in=LABELS)}
    campaign = create_campaign(f"Scale {answers}", fallback_choices=list(LABELS))
    with transaction.atomic():
        dialogues = Dialogue.objects.bulk_create(
            [Dialogue(position=i, content_hash=f"scale-{answers}-{i}", turn_count=1) for i in range(items)],
            batch_size=BATCH,
        )
        turns = Turn.objects.bulk_create(
            [Turn(dialogue=d, position=0, text=f"Line {i} of the scale bench.") for i, d in enumerate(dialogues)],
            batch_size=BATCH,
        )
        # through the product's writers: workers as a results file's (labeling.services.workers), HITs and
        # their screens in bulk (labeling.work.hits.write_hits); assignments and answers in bulk here
        people = imported_workers(
            Worker.SITE, [f"scale-{answers}-{i}" for i in range(max(WORKERS_PER_ITEM, answers // ANSWERS_PER_WORKER))]
        )
        screens = [
            [
                HITItem(dialogue=dialogues[i], target_turn=turns[i], choices=list(LABELS))
                for i in range(start, min(start + ITEMS_PER_HIT, items))
            ]
            for start in range(0, items, ITEMS_PER_HIT)
        ]
        hit_rows = write_hits(campaign, screens, required_workers=WORKERS_PER_ITEM)
        item_rows = [item for bundle in screens for item in bundle]
        assignments = Assignment.objects.bulk_create(
            [
                Assignment(
                    hit=hit,
                    worker=people[(h * WORKERS_PER_ITEM + seat) % len(people)],
                    status=Assignment.SUBMITTED,
                    expires_at=now,
                    submitted_at=now,
                )
                for h, hit in enumerate(hit_rows)
                for seat in range(WORKERS_PER_ITEM)
            ],
            batch_size=BATCH,
        )
        gold = [rng.choice(LABELS) for _ in range(items)]
        rows = []
        for i, item in enumerate(item_rows):
            for seat in range(WORKERS_PER_ITEM):
                name = gold[i] if rng.random() < 0.7 else rng.choice(LABELS)
                rows.append(
                    Response(
                        assignment=assignments[(i // ITEMS_PER_HIT) * WORKERS_PER_ITEM + seat],
                        item=item,
                        label_id=label_ids[name],
                        method=Response.TOP3,
                        seconds_spent=rng.uniform(2, 20),
                    )
                )
            if len(rows) >= BATCH:
                Response.objects.bulk_create(rows)
                rows = []
        Response.objects.bulk_create(rows)
    return campaign


def analyze() -> None:
    """Fresh planner statistics after the bulk inserts, as autovacuum's analyze would give a site
    that grew to this size: without them PostgreSQL plans for empty tables (seconds a query)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def time_pages(client, campaign, repeats: int) -> dict[str, list[float]]:
    from django.urls import reverse

    urls = {
        "report": reverse("labeling:campaign_report", args=[campaign.pk]),
        "dashboard": reverse("labeling:campaign_detail", args=[campaign.pk]),
        "worker_table": f"/api/campaigns/{campaign.pk}/workers/",
    }
    times: dict[str, list[float]] = {page: [] for page in PAGES}
    for _ in range(repeats):
        for page, url in urls.items():
            started = time.perf_counter()
            response = client.get(url)
            times[page].append((time.perf_counter() - started) * 1000)
            if response.status_code not in (200, 202):  # 202: the API while the first figures are computed
                raise RuntimeError(f"{page} answered {response.status_code}")
    return times


def p95(values: list[float]) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[94]


def measure(client, campaign, args) -> dict:
    """Every page computed per view (REPORT_CACHE=0), then with the stored figures: the first view
    (nothing stored: "computing…"), the refresh job's work, views with nothing changed, and views
    after a change (the last figures, labelled, while the job is queued)."""
    from unittest import mock

    from django.core.cache import cache
    from django.test import override_settings

    from labeling.models import Assignment
    from labeling.reports.cache import refresh_figures
    from labeling.services.workers import set_blocked

    with override_settings(REPORT_CACHE=False):
        uncached = time_pages(client, campaign, args.uncached_repeats)
    with override_settings(REPORT_CACHE=True), mock.patch("labeling.reports.cache.refresh_report.delay") as queued:
        # the job is queued, not run: a worker would take it (its work is timed on its own below)
        cache.clear()
        first = time_pages(client, campaign, 1)
        started = time.perf_counter()
        refresh_figures(campaign.pk)
        refresh_ms = [(time.perf_counter() - started) * 1000]
        cached = time_pages(client, campaign, args.repeats)
        worker = Assignment.objects.filter(hit__campaign=campaign).order_by("pk").first().worker
        set_blocked(worker, True, reason="bench: a change while the researcher reloads")
        stale = time_pages(client, campaign, args.repeats)
        set_blocked(worker, False, reason="bench")
        jobs = queued.call_count
    return {
        "uncached": uncached,
        "first": first,
        "cached": cached,
        "stale": stale,
        "refresh": {"report": refresh_ms},
        "jobs": jobs,
    }


def add_aggregated_labels(campaign) -> None:
    """One aggregated label per item, as aggregate_campaign leaves them (bulk, for the exports)."""
    from labeling.models import AggregatedLabel, HITItem

    items = HITItem.objects.filter(hit__campaign=campaign, quiz_question__isnull=True).values_list(
        "dialogue_id", "target_turn_id"
    )
    rows = [
        AggregatedLabel(
            campaign=campaign,
            dialogue_id=dialogue_id,
            turn_id=turn_id,
            label_text=LABELS[turn_id % len(LABELS)],
            status="majority",
            answer_count=WORKERS_PER_ITEM,
            agreement=2 / 3,
            dawid_skene_label=LABELS[turn_id % len(LABELS)],
        )
        for dialogue_id, turn_id in items.iterator(chunk_size=BATCH)
    ]
    AggregatedLabel.objects.bulk_create(rows, batch_size=BATCH)


def measure_exports(client, campaign) -> dict[str, dict[str, float]]:
    """Each campaign download: the first chunk's time, the whole download's, and the most memory
    Python held while streaming it (tracemalloc, a second download), against the whole file built
    as one string (what the views did before)."""
    import tracemalloc

    from django.urls import reverse

    from labeling import task_types

    urls = {
        "export_csv": reverse("labeling:campaign_export", args=[campaign.pk, "csv"]),
        "export_jsonl": reverse("labeling:campaign_export", args=[campaign.pk, "jsonl"]),
        "labels_csv": reverse("labeling:campaign_labels_csv", args=[campaign.pk]),
    }
    found = {}
    for name, url in urls.items():
        started = time.perf_counter()
        response = client.get(url)
        chunks = iter(response.streaming_content)
        size = len(next(chunks))
        first_ms = (time.perf_counter() - started) * 1000
        size += sum(len(chunk) for chunk in chunks)
        total_ms = (time.perf_counter() - started) * 1000
        tracemalloc.start()
        for _ in client.get(url).streaming_content:
            pass
        streamed_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        whole = task_types.of(campaign).export(campaign, "jsonl" if name.endswith("jsonl") else "csv").text
        whole_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        del whole
        found[name] = {
            "first_chunk_ms": first_ms,
            "total_ms": total_ms,
            "mb": size / 1e6,
            "streamed_peak_mb": streamed_peak / 1e6,
            "whole_file_peak_mb": whole_peak / 1e6,
        }
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="30000,300000", help="answers per campaign, comma-separated")
    parser.add_argument("--repeats", type=int, default=20, help="cached views of each page")
    parser.add_argument("--uncached-repeats", type=int, default=3, help="views of each page with REPORT_CACHE=0")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    args = parser.parse_args()
    if urllib.parse.urlsplit(args.database_url).hostname not in ("127.0.0.1", "localhost"):
        parser.error("the bench only talks to a database on 127.0.0.1")
    try:
        sizes = [int(size) for size in args.sizes.split(",")]
    except ValueError:
        parser.error("--sizes: whole numbers separated by commas, e.g. 30000,300000")
    if any(size < WORKERS_PER_ITEM for size in sizes) or args.repeats < 1 or args.uncached_repeats < 1:
        parser.error("--sizes: at least 3 answers each; --repeats and --uncached-repeats: at least 1")

    recreate_database(args.database_url)
    os.environ.setdefault("STATIC_ROOT", tempfile.mkdtemp(prefix="bench-static-"))  # no warning per page
    setup_django(args.database_url, "bench-only-secret-key-" + "x" * 32)
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client, override_settings

    call_command("migrate", verbosity=0)
    staff = get_user_model().objects.create(username="researcher", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(staff)
    print(f"cache backend: {settings.CACHES['default']['BACKEND']}", flush=True)
    results = []
    with override_settings(ALLOWED_HOSTS=["testserver"]):
        for size in sizes:
            started = time.perf_counter()
            campaign = build_campaign(size, args.seed)
            add_aggregated_labels(campaign)
            analyze()
            print(f"built {size} answers in {time.perf_counter() - started:.0f} s", flush=True)
            result = measure(client, campaign, args)
            result["exports"] = measure_exports(client, campaign)
            results.append((size, result))
            for name, figures in result["exports"].items():
                print(f"{size:>8} {name}: " + " ".join(f"{k} {v:.1f}" for k, v in figures.items()), flush=True)
            print(f"{size:>8} refresh jobs queued: {result['jobs']}", flush=True)
            for mode in ("uncached", "first", "cached", "stale"):
                cells = "  ".join(
                    f"{page} p50 {statistics.median(result[mode][page]):8.1f} p95 {p95(result[mode][page]):8.1f} ms"
                    for page in PAGES
                )
                print(f"{size:>8} {mode:>8}: {cells}", flush=True)
            cached = {page: p95(result["cached"][page]) for page in PAGES}
            uncached = {page: p95(result["uncached"][page]) for page in PAGES}
            print(
                f"answers={size} refresh_ms={result['refresh']['report'][0]:.0f} "
                + " ".join(f"{page}_p95_ms={cached[page]:.1f}" for page in PAGES)
                + " "
                + " ".join(f"uncached_{page}_p95_ms={uncached[page]:.1f}" for page in PAGES),
                flush=True,
            )

    def column(mode: str, page: str) -> str:
        return ",".join(f"{p95(result[mode][page]):.1f}" for _, result in results)

    def exports(name: str, key: str) -> str:
        return ",".join(f"{result['exports'][name][key]:.1f}" for _, result in results)

    ratios = ",".join(
        f"{p95(result['uncached']['report']) / p95(result['cached']['report']):.1f}" for _, result in results
    )
    print(
        f"answers={','.join(str(size) for size, _ in results)} report_p95_ms={column('cached', 'report')} "
        f"dashboard_p95_ms={column('cached', 'dashboard')} worker_table_p95_ms={column('cached', 'worker_table')} "
        f"uncached_report_p95_ms={column('uncached', 'report')} "
        f"uncached_worker_table_p95_ms={column('uncached', 'worker_table')} "
        f"first_view_ms={column('first', 'report')} stale_view_ms={column('stale', 'report')} "
        f"stale_dashboard_p95_ms={column('stale', 'dashboard')} refresh_ms={column('refresh', 'report')} "
        f"export_first_chunk_ms={exports('export_csv', 'first_chunk_ms')} "
        f"export_streamed_peak_mb={exports('export_csv', 'streamed_peak_mb')} "
        f"export_whole_file_peak_mb={exports('export_csv', 'whole_file_peak_mb')} report_ratio={ratios}"
    )


if __name__ == "__main__":
    main()
