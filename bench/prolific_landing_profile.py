"""CPU per request of a Prolific landing, measured in-process (no HTTP, no gunicorn): what the
burst of bench/labeling_load.py --landing prolific spends per request, steadier than its wall times.

    .venv/bin/python bench/prolific_landing_profile.py [--participants 40] [--polls 5]
        [--profile first|pending|claim] [--sql first|pending|claim] [--broker-url redis://127.0.0.1:6379/9]

Fills a fresh PostgreSQL database (`bench_prolific_profile` on 127.0.0.1 by default) with the
campaign bench/labeling_load.py makes for --landing prolific (one seat per participant, its study
recorded as published), then, per participant, each from an address of its own, sends straight to
Django's WSGI handler (as gunicorn does: the production middleware, sessions, CSRF):
- first:   the first GET of the study link (makes the session's check and queues its job on the
           broker, which nobody reads here: the queue is emptied at the end);
- pending: --polls GETs of the link while the check waits (what the "Checking" page's refresh sends
           every CHECK_AGAIN_SECONDS: 200 waiting participants send about 100 of these a second);
then every check is answered by the landing job's own function (labeling.prolific_checks.run_check)
against the in-process Prolific stand-in (PLATFORM_STANDIN=1), each session an ACTIVE submission
of the study, and
- claim:   the GET that finds the answer, signs in and claims the HIT (a redirect to it).
It reports per kind the process CPU milliseconds (median and p90; PostgreSQL's own work is not
counted), the PostgreSQL backend's CPU and the SQL statements; --profile KIND prints cProfile's
top functions of that kind, --sql KIND the statements of one request of it. Ends with one line:
    prolific_landing first_cpu_ms= pending_cpu_ms= claim_cpu_ms= first_sql= pending_sql= claim_sql=
The machine is shared: CPU time is steadier than wall time, but still noisy.
"""

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import prolific_landing
from labeling_load import fill_database, recreate_database, setup_django
from labeling_profile import _backend_cpu_ns, keep_cookies, wsgi_environ

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_prolific_profile"
KINDS = ("first", "pending", "claim")


class Participant:
    """One participant's browser calling the WSGI application in-process, from its own address."""

    def __init__(self, app, url: str, address: str) -> None:
        self.app, self.url, self.address = app, url, address
        self.cookies: dict[str, str] = {}

    def get(self, kind: str, tally: "Tally") -> int:
        from django.db import connection

        statements: list[str] = []

        def count(execute, sql, params, many, context):
            statements.append(" ".join(sql.split())[:200])
            return execute(sql, params, many, context)

        environ = wsgi_environ("GET", self.url, self.cookies, address=self.address)
        started_response: list = []
        database_before = _backend_cpu_ns(connection)
        with connection.execute_wrapper(count):
            profiling = kind == tally.profile_kind
            started = time.process_time()
            if profiling:
                tally.profiler.enable()
            chunks = self.app(environ, lambda status, headers, exc_info=None: started_response.append((status, headers)))
            b"".join(chunks)
            if hasattr(chunks, "close"):
                chunks.close()  # request_finished, as gunicorn after sending the body
            if profiling:
                tally.profiler.disable()
            tally.cpu_ms[kind].append((time.process_time() - started) * 1000)
        database_after = _backend_cpu_ns(connection)
        if database_before and database_after and database_before[0] == database_after[0]:
            tally.database_ms[kind].append((database_after[1] - database_before[1]) / 1e6)
        tally.sql[kind].append(len(statements))
        tally.statements[kind] = statements
        status, headers = started_response[0]
        keep_cookies(headers, self.cookies)
        return int(status.split()[0])


class Tally:
    def __init__(self, profile_kind: str | None) -> None:
        self.cpu_ms: dict[str, list[float]] = defaultdict(list)
        self.database_ms: dict[str, list[float]] = defaultdict(list)
        self.sql: dict[str, list[int]] = defaultdict(list)
        self.statements: dict[str, list[str]] = {}
        self.profile_kind = profile_kind
        self.profiler = cProfile.Profile(time.process_time)


def answer_checks(participants: int) -> None:
    """Every session an ACTIVE submission of the study on the in-process stand-in, and each check
    answered by the landing job's function, as the landing worker would."""
    from labeling.platforms.standin import shared
    from labeling.platforms.standin.prolific import ACTIVE, Study
    from labeling.prolific_checks import run_check

    standin = shared("prolific")
    standin.studies[prolific_landing.STUDY] = Study(
        prolific_landing.STUDY, {"name": "bench study", "total_available_places": participants}, status=ACTIVE
    )
    for participant, session in prolific_landing.participants(participants):
        made = standin.reserve(prolific_landing.STUDY, participant)
        submission = standin.submissions.pop(made)
        submission.id = session
        standin.submissions[session] = submission
        standin.start(session)
        answer = run_check(session)
        if not answer.get("proven"):
            raise RuntimeError(f"the check of {session} did not prove it: {answer}")


def empty_queue(broker_url: str) -> None:
    """The landing jobs queued on the bench's broker: nobody runs them here."""
    import redis

    redis.Redis.from_url(broker_url).delete("landing")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--participants", type=int, default=40)
    parser.add_argument("--polls", type=int, default=5, help="pending polls per participant")
    parser.add_argument("--profile", choices=KINDS)
    parser.add_argument("--sql", choices=KINDS)
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    parser.add_argument("--broker-url", default="redis://127.0.0.1:6379/9")
    args = parser.parse_args()
    os.environ.update(PLATFORM_STANDIN="1", CELERY_BROKER_URL=args.broker_url)
    os.environ["PLATFORM_NEW_WORKERS_PER_CAMPAIGN_PER_HOUR"] = str(max(300, 2 * args.participants))
    recreate_database(args.database_url)
    setup_django(args.database_url, "bench-only-secret-key-" + "x" * 32)
    fill_database(args.participants, max(1, -(-args.participants // 3)), 7, landing="prolific")

    from django.core.wsgi import get_wsgi_application

    app = get_wsgi_application()
    urls = prolific_landing.landing_urls(args.participants)
    people = [Participant(app, url[0], f"10.9.{i >> 8 & 255}.{i & 255}") for i, url in enumerate(urls)]
    tally = Tally(args.profile)
    try:
        for kind, rounds, expected in (("first", 1, 202), ("pending", args.polls, 202)):
            for _ in range(rounds):
                for person in people:
                    if (status := person.get(kind, tally)) != expected:
                        raise RuntimeError(f"{kind} landing answered {status}, not {expected}")
        answer_checks(args.participants)
        for person in people:
            if (status := person.get("claim", tally)) != 302:
                raise RuntimeError(f"the landing after the answer answered {status}, not 302")
    finally:
        empty_queue(args.broker_url)
    report(tally, args)


def report(tally: Tally, args) -> None:
    def median(values: list[float]) -> float:
        return statistics.median(values) if values else float("nan")

    for kind in KINDS:
        cpu = sorted(tally.cpu_ms[kind])
        print(
            f"{kind:8s} n={len(cpu):4d} cpu_ms p50={median(cpu):6.2f} p90={cpu[int(0.9 * (len(cpu) - 1))]:6.2f} "
            f"postgres_ms p50={median(tally.database_ms[kind]):5.2f} sql={median(tally.sql[kind]):.0f}"
        )
    if args.sql:
        print(f"\nSQL of one {args.sql} request:")
        for statement in tally.statements[args.sql]:
            print("   ", statement)
    if args.profile:
        out = io.StringIO()
        pstats.Stats(tally.profiler, stream=out).sort_stats("cumulative").print_stats(40)
        print(out.getvalue())
    print(
        "prolific_landing "
        + " ".join(f"{kind}_cpu_ms={median(tally.cpu_ms[kind]):.2f}" for kind in KINDS)
        + " "
        + " ".join(f"{kind}_sql={median(tally.sql[kind]):.0f}" for kind in KINDS)
    )


if __name__ == "__main__":
    main()
