"""CPU per annotator request, measured in-process (no HTTP, no gunicorn): the stable figure.

    .venv/bin/python bench/labeling_profile.py [--hits 6] [--profile next|autosave|submit|claim|screen] [--webhooks]

Fills a fresh PostgreSQL database (`bench_labeling_profile` on 127.0.0.1 by default, like
bench/labeling_load.py), then walks annotators through whole HITs, sending what the browser sends
with htmx (claim, which shows the first screen (older servers: a redirect, then the first screen), autosave + Next per screen,
submit) straight to Django's WSGI handler, as gunicorn does once it has parsed the request: the
production middleware, CSRF checks and session cookies, nothing of the test Client. It reports
the process CPU milliseconds of each kind of request (Django, templates and the database driver;
PostgreSQL's own work is not counted), its SQL statements and, with --profile KIND, the cProfile
top functions of that kind.

CPU per answered screen: every request of a HIT (claim, first screen, autosave and Next per
screen, submit; a redirect too, should the server send one) over its screens, the figure that decides how many screens/s the site
serves per core. The home page, sent once per annotator visit, is reported but not counted.

--compare-study-flow measures the campaign's study flow (labeling.study_flow: the demo's consent,
instructions and practice, done by every annotator before) off against on in one run and one
database: --rounds rounds of a phase off then a phase on, each phase one HIT per annotator, and
ends with
    study_flow_off_cpu_per_screen_ms= study_flow_on_cpu_per_screen_ms= study_flow_cpu_ratio=<on / off>
    claim_sql_off= claim_sql_on= claim_cpu_off_ms= claim_cpu_on_ms=
--webhooks registers an endpoint that wants every webhook event first, so each submission also
inserts its events and deliveries after its commit (jobs.webhooks.events): run it with and without.

Ends with one line:
    cpu_per_screen_ms=<ms> next_cpu_ms= autosave_cpu_ms= screen_cpu_ms= submit_cpu_ms= claim_cpu_ms=
    database_cpu_per_screen_ms= submit_sql=<statements per submit> webhooks=on|off
The machine is shared: CPU time is steadier than wall time, but still noisy.
"""

import argparse
import cProfile
import io
import os
import pstats
import random
import statistics
import sys
import tempfile
import time
import urllib.parse
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from labeling_load import ASSIGNMENT, CHOICE, HEADING, fill_database, recreate_database, setup_django

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_labeling_profile"
SHOW_SQL: list[str | None] = [None]  # --sql KIND: the kind whose statements are kept
LAST_SQL: dict[str, list[str]] = {}  # the statements of the last of its longest requests
PROFILER = cProfile.Profile(time.process_time)  # CPU time; one for all simulated annotators: they take turns


@dataclass
class Reply:
    status: int
    headers: dict
    text: str


class Measured:
    """One annotator's browser calling the WSGI application in-process: a cookie jar, CSRF header,
    htmx header; each request timed in process CPU and its SQL statements counted, per kind."""

    def __init__(self, app, session_key: str, profile_kind: str | None) -> None:
        self.app = app
        self.cookies = {"sessionid": session_key}
        self.cpu_ms: dict[str, list[float]] = defaultdict(list)
        self.queries: dict[str, list[int]] = defaultdict(list)
        self.database_ms: dict[str, list[float]] = defaultdict(list)  # the PostgreSQL backend's CPU
        self.profile_kind = profile_kind
        self.profiler = PROFILER

    def send(self, kind: str, method: str, path: str, form: dict | None = None, htmx: bool = False) -> Reply:
        from django.db import connection

        body = urllib.parse.urlencode(form or {}).encode() if method == "POST" else b""
        environ = wsgi_environ(method, path, self.cookies, body=body)
        if method == "POST":
            environ["HTTP_X_CSRFTOKEN"] = self.cookies.get("csrftoken", "")
        if htmx:
            environ["HTTP_HX_REQUEST"] = "true"
        started_response: list = []
        counted = [0]

        def count(execute, sql, params, many, context):
            counted[0] += 1
            if kind != SHOW_SQL[0]:
                return execute(sql, params, many, context)
            before = _backend_cpu_ns(connection)
            result = execute(sql, params, many, context)
            after = _backend_cpu_ns(connection)
            spent = f"{(after[1] - before[1]) / 1000:6.0f} us  " if before and after and before[0] == after[0] else ""
            statements.append(spent + " ".join(sql.split())[:160])
            return result

        statements: list[str] = []

        profiling = kind == self.profile_kind
        database_before = _backend_cpu_ns(connection)
        with connection.execute_wrapper(count):
            started = time.process_time()
            if profiling:
                self.profiler.enable()
            chunks = self.app(
                environ, lambda status, headers, exc_info=None: started_response.append((status, headers))
            )
            content = b"".join(chunks)
            if hasattr(chunks, "close"):
                chunks.close()  # request_finished: what gunicorn does after sending the body
            if profiling:
                self.profiler.disable()
            self.cpu_ms[kind].append((time.process_time() - started) * 1000)
        database_after = _backend_cpu_ns(connection)
        if database_before is not None and database_after is not None:
            self.database_ms[kind].append((database_after[1] - database_before[1]) / 1e6)
        self.queries[kind].append(counted[0])
        if statements and len(statements) >= len(LAST_SQL.get(kind, [])):
            LAST_SQL[kind] = statements
        status, headers = started_response[0]
        keep_cookies(headers, self.cookies)
        return Reply(int(status.split()[0]), dict(headers), content.decode())


def wsgi_environ(method: str, url: str, cookies: dict, *, body: bytes = b"", address: str = "127.0.0.1") -> dict:
    """The WSGI environ gunicorn hands Django for one request (`url` with its query string) from
    `address`, sending `cookies`; a body is a posted form."""
    path, _, query = url.partition("?")
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8765",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "127.0.0.1:8765",
        "REMOTE_ADDR": address,
        "HTTP_COOKIE": "; ".join(f"{key}={value}" for key, value in cookies.items()),
        "wsgi.input": io.BytesIO(body),
        "wsgi.url_scheme": "http",
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        "wsgi.version": (1, 0),
    }
    if body:
        environ |= {"CONTENT_TYPE": "application/x-www-form-urlencoded", "CONTENT_LENGTH": str(len(body))}
    return environ


def keep_cookies(headers, cookies: dict) -> None:
    """Put the Set-Cookie headers of an answer into the browser's `cookies`, as a browser does."""
    for name, value in headers:
        if name.lower() == "set-cookie":
            key, _, rest = value.partition("=")
            cookies[key.strip()] = rest.split(";", 1)[0]


def _backend_cpu_ns(connection) -> tuple[int, int] | None:
    """(pid, CPU ns so far) of the PostgreSQL backend serving Django's connection, from
    /proc/<pid>/schedstat (nanoseconds, unlike /proc/<pid>/stat's 10 ms ticks); None when there is
    no open connection or the server is not on this machine. Read outside the timed window."""
    if connection.connection is None:
        return None
    pid = connection.connection.info.backend_pid
    try:
        with open(f"/proc/{pid}/schedstat") as stat:
            return pid, int(stat.read().split()[0])
    except OSError:
        return None


def walk_one_hit(browser: Measured, rng: random.Random, linger_share: float = 1.0, campaign: int | None = None) -> int:
    """One HIT, as bench/labeling_load.py's annotators send it (the autosave before Next on
    `linger_share` of the screens); returns the screens answered (0 when no HIT was left).
    `campaign`: the claim names it, as the home page's Start button does (default: none)."""
    browser.send("home", "GET", "/labeling/")  # also sets the CSRF cookie, as in a browser
    # with htmx, as the home page's button sends it: the claim shows the first screen itself
    # (HX-Push-Url); an older server redirects to it
    form = {"campaign": str(campaign)} if campaign else None
    claimed = browser.send("claim", "POST", "/labeling/claim/", form, htmx=True)
    shown = claimed.status == 200 and ASSIGNMENT.search(claimed.headers.get("HX-Push-Url", ""))
    found = shown or (claimed.status == 302 and ASSIGNMENT.search(claimed.headers.get("Location", "")))
    if not found:
        return 0
    assignment = int(found.group(1))
    page = claimed.text
    if not shown:
        location = claimed.headers["Location"]  # the first screen (older servers: the assignment, a redirect)
        while True:
            reply = browser.send("screen" if "/items/" in location else "redirect", "GET", location)
            if reply.status != 302:
                break
            location = reply.headers["Location"]
        page = reply.text
    screens = 0
    while (heading := HEADING.search(page)) is not None:
        position = int(heading.group(1))
        label = rng.choice(CHOICE.findall(page))
        url = f"/labeling/assignments/{assignment}/items/{position}/answer/"
        if rng.random() < linger_share:
            saved = browser.send("autosave", "POST", url, {"go": "stay", "answer": label}, htmx=True)
            assert saved.status == 200, saved.status
        response = browser.send("next", "POST", url, {"go": "next", "answer": label, "seconds": "1"}, htmx=True)
        assert response.status == 200, response.status
        page = response.text
        screens += 1
    response = browser.send("submit", "POST", f"/labeling/assignments/{assignment}/submit/")
    assert response.status == 302 and "feedback" in response.headers["Location"], response.status
    return screens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hits", type=int, default=6, help="HITs of 20 screens, 3 workers each")
    parser.add_argument("--annotators", type=int, default=6)
    parser.add_argument("--profile", choices=["next", "autosave", "submit", "claim", "redirect", "screen", "home"])
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument(
        "--sql",
        choices=["next", "autosave", "submit", "claim", "redirect", "screen", "home"],
        help="print the SQL statements (shortened) of the request of this kind that sent the most",
    )
    parser.add_argument(
        "--linger-share",
        type=float,
        default=0.2,
        help="share of screens with an autosave before Next (as bench/labeling_load.py; 1: every screen)",
    )
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    parser.add_argument("--compare-study-flow", action="store_true", help="the study flow off against on, in turns")
    parser.add_argument("--rounds", type=int, default=3, help="--compare-study-flow: rounds of off then on")
    parser.add_argument(
        "--webhooks",
        action="store_true",
        help="register a webhook endpoint wanting every event kind first (a submission then inserts its "
        "events and deliveries; nothing is sent here): run with and without to compare",
    )
    args = parser.parse_args()
    if urllib.parse.urlsplit(args.database_url).hostname not in ("127.0.0.1", "localhost"):
        parser.error("the bench only talks to a database on 127.0.0.1")

    SHOW_SQL[0] = args.sql
    recreate_database(args.database_url)
    os.environ.setdefault("STATIC_ROOT", tempfile.mkdtemp(prefix="bench-static-"))
    setup_django(args.database_url, "bench-only-secret-key-" + "x" * 32)
    from django.core.handlers.wsgi import WSGIHandler

    sessions = fill_database(args.annotators, args.hits, seed=1)
    if args.webhooks:
        from jobs.webhooks.endpoints import create_endpoint
        from jobs.webhooks.models import EVENT_KINDS

        create_endpoint("http://127.0.0.1:9/hook", list(EVENT_KINDS), description="bench: never called")
    app = WSGIHandler()
    rng = random.Random(1)
    browsers = [Measured(app, key, args.profile) for key in sessions]
    # A first HIT per annotator warms imports, template and label caches; not counted.
    for browser in browsers:
        walk_one_hit(browser, rng, args.linger_share)
        browser.cpu_ms.clear()
        browser.queries.clear()
        browser.database_ms.clear()
    PROFILER.clear()
    if args.compare_study_flow:
        compare_study_flow(browsers, rng, args)
        return
    screens = 0
    for browser in browsers:
        while answered := walk_one_hit(browser, rng, args.linger_share):
            screens += answered

    merged: dict[str, list[float]] = defaultdict(list)
    queries: dict[str, list[int]] = defaultdict(list)
    database: dict[str, list[float]] = defaultdict(list)
    for browser in browsers:
        for kind, values in browser.cpu_ms.items():
            merged[kind] += values
            queries[kind] += browser.queries[kind]
            database[kind] += browser.database_ms[kind]
    for kind, values in merged.items():
        print(
            f"{kind:>9}: {len(values):5d} requests, CPU median {statistics.median(values):6.2f} ms, "
            f"mean {statistics.fmean(values):6.2f} ms, SQL statements mean {statistics.fmean(queries[kind]):5.2f}, "
            f"PostgreSQL CPU mean {statistics.fmean(database[kind]) if database[kind] else float('nan'):5.2f} ms"
        )
    per_hit = sum(sum(values) for kind, values in merged.items() if kind != "home")
    per_screen = per_hit / max(screens, 1)
    database_per_screen = sum(sum(v) for k, v in database.items() if k != "home") / max(screens, 1)
    print(
        f"CPU per answered screen: {per_screen:.2f} ms ({screens} screens; every request of their HITs, "
        f"home page aside); SQL statements per screen "
        f"{sum(sum(v) for k, v in queries.items() if k != 'home') / max(screens, 1):.2f}; "
        f"PostgreSQL CPU per screen {database_per_screen:.2f} ms"
    )
    if args.profile:
        stats = pstats.Stats(PROFILER)
        stats.sort_stats("cumulative").print_stats(args.top)
        stats.sort_stats("tottime").print_stats(args.top)
        if os.environ.get("PROFILE_CALLERS"):
            stats.print_callers(os.environ["PROFILE_CALLERS"])

    def median(kind: str) -> str:
        return f"{statistics.median(merged[kind]):.2f}" if merged[kind] else "nan"

    for kind, statements in LAST_SQL.items():
        print(f"SQL of the longest {kind} request ({len(statements)} statements):")
        for statement in statements:
            print(f"  {statement}")
    print(
        f"cpu_per_screen_ms={per_screen:.2f} next_cpu_ms={median('next')} autosave_cpu_ms={median('autosave')} "
        f"screen_cpu_ms={median('screen')} submit_cpu_ms={median('submit')} claim_cpu_ms={median('claim')} "
        f"database_cpu_per_screen_ms={database_per_screen:.2f} submit_sql={statistics.fmean(queries['submit']):.2f} "
        f"webhooks={'on' if args.webhooks else 'off'}"
    )


def compare_study_flow(browsers: list, rng: random.Random, args) -> None:
    """Phases of one HIT per annotator, the campaign's study flow off then on, --rounds times; every
    annotator has done the flow's steps before the work (as the demo's crowd does, through its
    writers), so the figure is what a participant who finished the flow costs per request."""
    from django.contrib.auth import get_user_model

    from labeling.models import Campaign
    from labeling.services.campaigns import change_campaign_settings
    from labeling.services.workers import worker_for_user
    from labeling.study_flow.demo import DEMO_FLOW
    from labeling.study_flow.progress import walk_as_simulated

    campaign = Campaign.objects.get(name="Load test")
    change_campaign_settings(campaign, {"study_flow": DEMO_FLOW})
    for user in get_user_model().objects.filter(username__startswith="bench"):
        walk_as_simulated(worker_for_user(user), campaign)
    figures: dict[str, list[tuple[float, float, float]]] = {"off": [], "on": []}
    for _round in range(args.rounds):
        for phase in ("off", "on"):
            change_campaign_settings(campaign, {"study_flow": DEMO_FLOW if phase == "on" else {}})
            figures[phase].append(_one_phase(browsers, rng, args.linger_share, campaign.pk))
            print(f"round {_round + 1} flow {phase}: cpu_per_screen_ms={figures[phase][-1][0]:.2f} "
                  f"claim_cpu_ms={figures[phase][-1][2]:.2f} claim_sql={figures[phase][-1][1]:.2f}")  # fmt: skip
    off, on = (statistics.median(row[0] for row in figures[p]) for p in ("off", "on"))
    claim_sql = {p: statistics.fmean(row[1] for row in figures[p]) for p in figures}
    claim_cpu = {p: statistics.median(row[2] for row in figures[p]) for p in figures}
    print(
        f"study_flow_off_cpu_per_screen_ms={off:.2f} study_flow_on_cpu_per_screen_ms={on:.2f} "
        f"study_flow_cpu_ratio={on / off:.3f} claim_sql_off={claim_sql['off']:.2f} claim_sql_on={claim_sql['on']:.2f} "
        f"claim_cpu_off_ms={claim_cpu['off']:.2f} claim_cpu_on_ms={claim_cpu['on']:.2f}"
    )


def _one_phase(browsers: list, rng: random.Random, linger_share: float, campaign: int) -> tuple[float, float, float]:
    """One HIT per annotator, each claim naming the campaign as the home page's Start button does:
    (CPU ms per answered screen, SQL statements per claim, claim CPU ms)."""
    for browser in browsers:
        browser.cpu_ms.clear()
        browser.queries.clear()
        browser.database_ms.clear()
    screens = sum(walk_one_hit(browser, rng, linger_share, campaign) for browser in browsers)
    if not screens:
        raise SystemExit("no HIT left: give --hits enough for (1 + 2 x rounds) HITs per annotator")
    cpu = sum(sum(v) for b in browsers for k, v in b.cpu_ms.items() if k != "home")
    claims = [q for b in browsers for q in b.queries["claim"]]
    claim_cpu = [ms for b in browsers for ms in b.cpu_ms["claim"]]
    return cpu / screens, statistics.fmean(claims), statistics.median(claim_cpu)


if __name__ == "__main__":
    main()
