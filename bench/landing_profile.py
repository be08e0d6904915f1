"""CPU of one crowd-platform landing, measured in-process (no HTTP, no gunicorn): issue 37.

    .venv/bin/python bench/landing_profile.py [--landings 60] [--pending-polls 3] [--repo PATH]
        [--profile KIND] [--sql KIND]   (KIND: mturk, prolific_first, prolific_pending, prolific_poll)

Fills a fresh PostgreSQL database (`land_bench` on 127.0.0.1 by default), publishes one campaign
on the MTurk stand-in (as bench/labeling_load.py --landing mturk does) and one on Prolific (its
study recorded, the Prolific stand-in installed in this process, every participant's session an
active submission), then sends each landing URL straight to Django's WSGI handler, each from an
address of its own, as gunicorn would once it parsed the request. It reports each kind's process
CPU milliseconds (Django, templates, the database driver; PostgreSQL's own work is not counted)
and SQL statements, with --profile the cProfile top functions of that kind, and with --sql the
statements of the last request of that kind.

A Prolific landing whose check is a job (this tree) answers 202 at once and queues it; its page then
polls --pending-polls times while the check waits (`prolific_pending`: what each waiting participant
sends every CHECK_AGAIN_SECONDS, so 200 waiting send about 100 a second); the bench
then runs the job in-process (as a worker would; timed apart, `prolific_job_cpu_ms`) and sends the
poll that lands. An older tree asks the stand-in inside the request and lands at once. The
landing's whole cost is `prolific_landing_cpu_ms` (first request + the poll that lands).

--repo runs the same bench against another checkout's code (e.g. /work/main, the code before a
change), for a ratio measured in the same sequence: the harness (this file, labeling_profile's
request helpers, labeling_load's database filling) is this checkout's, the product the other's. The first --warmup landings of each kind are
not counted. Ends with one line:
    mturk_landing_cpu_ms= mturk_landing_sql= prolific_landing_cpu_ms= prolific_first_cpu_ms=
    prolific_poll_cpu_ms= prolific_job_cpu_ms= prolific_pending_cpu_ms= prolific_pending_sql= repo=
"""

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
import urllib.parse
from collections import defaultdict
from pathlib import Path

from labeling_profile import keep_cookies, wsgi_environ

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/land_bench"
PROLIFIC_STUDY = "60benchstudy0000000000000"
PROFILER = cProfile.Profile(time.process_time)
KINDS = ["mturk", "prolific_first", "prolific_pending", "prolific_poll"]


class Sender:
    """Requests to the WSGI application in-process, each timed in process CPU with its SQL counted."""

    def __init__(self, app, profile_kind: str | None, sql_kind: str | None = None) -> None:
        self.app, self.profile_kind, self.sql_kind = app, profile_kind, sql_kind
        self.cpu_ms: dict[str, list[float]] = defaultdict(list)
        self.queries: dict[str, list[int]] = defaultdict(list)
        self.last_sql: list[str] = []  # the statements of the last request of --sql's kind

    def get(self, kind: str, url: str, address: str, cookies: dict) -> tuple[int, dict]:
        from django.db import connection

        environ = wsgi_environ("GET", url, cookies, address=address)
        replies: list = []
        counted = [0]
        statements: list[str] = []

        def count(execute, sql, params, many, context):
            counted[0] += 1
            if kind == self.sql_kind:
                statements.append(" ".join(sql.split())[:160])
            return execute(sql, params, many, context)

        with connection.execute_wrapper(count):
            started = time.process_time()
            if kind == self.profile_kind:
                PROFILER.enable()
            chunks = self.app(environ, lambda status, headers, exc_info=None: replies.append((status, headers)))
            b"".join(chunks)
            if hasattr(chunks, "close"):
                chunks.close()
            if kind == self.profile_kind:
                PROFILER.disable()
            self.cpu_ms[kind].append((time.process_time() - started) * 1000)
        self.queries[kind].append(counted[0])
        if kind == self.sql_kind:
            self.last_sql = statements
        status, headers = replies[0]
        keep_cookies(headers, cookies)
        return int(status.split()[0]), dict(headers)

    def drop_first(self, count: int) -> None:
        """Forget each kind's first `count` requests (the profile keeps them: a few in 60)."""
        for values in (*self.cpu_ms.values(), *self.queries.values()):
            del values[:count]


def address(n: int) -> str:
    """An address of its own per landing (the landing caps count per address)."""
    return f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256 + 1}"


def prolific_campaign(hits: int, participants: int):
    """A second campaign, its study recorded as published on Prolific, and the Prolific stand-in
    installed with an active submission per participant; returns (campaign, landing URLs)."""
    from annotation.models import Dialogue, Turn
    from labeling.models import Campaign, Worker
    from labeling.platforms import standin
    from labeling.platforms.publications import publication_for
    from labeling.platforms.standin.prolific import ProlificStandIn, Submission
    from labeling.services.campaigns import create_campaign, set_campaign_status
    from labeling.services.entry_tokens import publication_token
    from labeling.work.hits import build_hits

    campaign = create_campaign("Landing bench", fallback_choices=["Neutral", "Joyful", "Sad"], time_limit_minutes=60)
    dialogues = []
    for index in range(hits * campaign.dialogues_per_hit):
        dialogue = Dialogue.objects.create(position=10_000 + index, content_hash=f"land-{index}", turn_count=2)
        Turn.objects.create(dialogue=dialogue, position=0, text=f"Did you bring the map, number {index}?")
        Turn.objects.create(dialogue=dialogue, position=1, text="I thought you had it.")
        dialogues.append(dialogue)
    build_hits(campaign, dialogues, seed=2)
    publication_for(campaign, Worker.PROLIFIC, external_id=PROLIFIC_STUDY)
    set_campaign_status(campaign, Campaign.OPEN)
    platform = ProlificStandIn()
    standin.install(platform)
    token = publication_token(campaign, Worker.PROLIFIC)
    urls = []
    for index in range(participants):
        participant, session = f"5f{index:022d}", f"64{index:022d}"
        platform.submissions[session] = Submission(session, PROLIFIC_STUDY, participant, status="ACTIVE")
        params = {
            "campaign": campaign.pk,
            "token": token,
            "PROLIFIC_PID": participant,
            "STUDY_ID": PROLIFIC_STUDY,
            "SESSION_ID": session,
        }
        urls.append((session, f"/labeling/platform/prolific/?{urllib.parse.urlencode(params)}"))
    return campaign, urls


def land_prolific(sender: Sender, session: str, url: str, where: str, pending_polls: int = 0) -> None:
    cookies: dict = {}
    status, _ = sender.get("prolific_first", url, where, cookies)
    for _ in range(pending_polls if status == 202 else 0):  # the page's polls while the job waits
        status, _ = sender.get("prolific_pending", url, where, cookies)
        assert status == 202, f"a poll of a waiting check got {status}"
    if status == 202:  # the check is a job: a worker runs it, then the page's poll lands
        from labeling.platforms.prolific_checks import run_check

        started = time.process_time()
        run_check(session)
        sender.cpu_ms["prolific_job"].append((time.process_time() - started) * 1000)
        status, _ = sender.get("prolific_poll", url, where, cookies)
    assert status == 302, f"a Prolific landing got {status}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--landings", type=int, default=60, help="landings of each platform")
    parser.add_argument("--warmup", type=int, default=10, help="first landings of each kind not counted")
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parents[1]), help="the checkout to run")
    parser.add_argument(
        "--pending-polls",
        type=int,
        default=3,
        help="polls of each Prolific landing while its check waits (the 'Checking' page's refresh)",
    )
    parser.add_argument("--profile", choices=KINDS)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument(
        "--sql", choices=KINDS, help="print the SQL statements (shortened) of the last request of this kind"
    )
    parser.add_argument("--callees", help="with --profile: also print what the functions matching this regex call")
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    args = parser.parse_args()
    if urllib.parse.urlsplit(args.database_url).hostname not in ("127.0.0.1", "localhost"):
        parser.error("the bench only talks to a database on 127.0.0.1")
    repo = Path(args.repo).resolve()
    sys.path[:0] = [str(repo), str(repo / "bench")]
    os.chdir(repo)

    from labeling_load import fill_database, mturk_landing_urls, recreate_database, setup_django

    recreate_database(args.database_url)
    os.environ.setdefault("STATIC_ROOT", tempfile.mkdtemp(prefix="bench-static-"))
    os.environ.setdefault("BROKER_DIR", tempfile.mkdtemp(prefix="bench-broker-"))
    os.environ["PLATFORM_NEW_WORKERS_PER_CAMPAIGN_PER_HOUR"] = str(10 * args.landings)
    setup_django(args.database_url, "bench-only-secret-key-" + "x" * 32)
    from django.core.handlers.wsgi import WSGIHandler

    import labeling

    assert Path(labeling.__file__).resolve().is_relative_to(repo), labeling.__file__
    hits = max(1, -(-args.landings // 3))
    fill_database(args.landings, hits, seed=1, landing="mturk")
    mturk_urls = [urls[0] for urls in mturk_landing_urls(args.landings, 1) if urls]
    _campaign, prolific_urls = prolific_campaign(hits, args.landings)
    sender = Sender(WSGIHandler(), args.profile, args.sql)

    for n, url in enumerate(mturk_urls):
        status, _ = sender.get("mturk", url, address(n), {})
        assert status == 302, f"an MTurk landing got {status}"
    for n, (session, url) in enumerate(prolific_urls):
        land_prolific(sender, session, url, address(100_000 + n), args.pending_polls)
    sender.drop_first(args.warmup)  # imports, templates and caches warmed by then

    from labeling.models import Assignment, Worker

    landed = Assignment.objects.filter(worker__platform__in=(Worker.MTURK, Worker.PROLIFIC)).count()
    print(f"repo={repo} landings={args.landings} (first {args.warmup} of each kind not counted); assignments {landed}")
    for kind, values in sorted(sender.cpu_ms.items()):
        sql = sender.queries.get(kind)
        print(
            f"{kind:>15}: {len(values):4d}, CPU median {statistics.median(values):7.2f} ms, "
            f"mean {statistics.fmean(values):7.2f} ms" + (f", SQL mean {statistics.fmean(sql):5.1f}" if sql else "")
        )
    if args.sql:
        print(f"--- the {len(sender.last_sql)} statements of the last {args.sql} request")
        print("\n".join(sender.last_sql))
    if args.profile:
        stats = pstats.Stats(PROFILER)
        stats.sort_stats("cumulative").print_stats(args.top)
        stats.sort_stats("tottime").print_stats(args.top)
        if args.callees:
            stats.sort_stats("cumulative").print_callees(args.callees)

    def median(kind: str) -> float:
        return statistics.median(sender.cpu_ms[kind]) if sender.cpu_ms.get(kind) else 0.0

    prolific_total = median("prolific_first") + median("prolific_poll")
    print(
        f"mturk_landing_cpu_ms={median('mturk'):.2f} mturk_landing_sql={statistics.fmean(sender.queries['mturk']):.1f} "
        f"prolific_landing_cpu_ms={prolific_total:.2f} prolific_first_cpu_ms={median('prolific_first'):.2f} "
        f"prolific_poll_cpu_ms={median('prolific_poll'):.2f} prolific_job_cpu_ms={median('prolific_job'):.2f} "
        f"prolific_pending_cpu_ms={median('prolific_pending'):.2f} "
        f"prolific_pending_sql={statistics.fmean(sender.queries.get('prolific_pending') or [0]):.1f} "
        f"repo={repo.name}"
    )


if __name__ == "__main__":
    main()
