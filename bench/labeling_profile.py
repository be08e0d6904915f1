"""CPU per annotator request, measured in-process (no HTTP, no gunicorn): the stable figure.

    .venv/bin/python bench/labeling_profile.py [--hits 6] [--profile next|autosave|submit|claim]

Fills a fresh PostgreSQL database (`bench_labeling_profile` on 127.0.0.1 by default, like
bench/labeling_load.py), then walks annotators through whole HITs with Django's test Client,
sending what the browser sends with htmx (claim, first screen, autosave + Next per screen,
submit), with CSRF checks enforced and the same middleware as in production. It reports the
process CPU milliseconds of each kind of request (Django, templates and the database driver;
PostgreSQL's own work is not counted) and, with --profile KIND, the cProfile top functions of
that kind.

Ends with one line: next_cpu_ms=<ms> autosave_cpu_ms=<ms> submit_cpu_ms=<ms> claim_cpu_ms=<ms>
The machine is shared: CPU time is steadier than wall time, but still noisy.
"""

import argparse
import cProfile
import os
import pstats
import random
import statistics
import sys
import tempfile
import time
import urllib.parse
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from labeling_load import ASSIGNMENT, CHOICE, HEADING, fill_database, recreate_database, setup_django

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_labeling_profile"
PROFILER = cProfile.Profile(time.process_time)  # CPU time; one for all simulated annotators: they take turns


class Measured:
    """A test Client whose requests are timed in process CPU, one list per kind."""

    def __init__(self, session_key: str, profile_kind: str | None) -> None:
        from django.test import Client

        self.client = Client(enforce_csrf_checks=True)
        self.client.cookies["sessionid"] = session_key
        self.cpu_ms: dict[str, list[float]] = defaultdict(list)
        self.queries: dict[str, list[int]] = defaultdict(list)
        self.profile_kind = profile_kind
        self.profiler = PROFILER

    def send(self, kind: str, method: str, path: str, form: dict | None = None, htmx: bool = False):
        headers = {"HX-Request": "true"} if htmx else {}
        token = self.client.cookies.get("csrftoken")
        if method == "POST":
            headers["X-CSRFToken"] = token.value if token else ""
        from django.db import connection

        profiling = kind == self.profile_kind
        counted = [0]

        def count(execute, sql, params, many, context):
            counted[0] += 1
            return execute(sql, params, many, context)

        wrapper = connection.execute_wrapper(count)
        wrapper.__enter__()
        started = time.process_time()
        if profiling:
            self.profiler.enable()
        if method == "POST":
            # form-encoded, as htmx and browsers send it (the test Client's default is multipart)
            body = urllib.parse.urlencode(form or {})
            response = self.client.post(path, body, content_type="application/x-www-form-urlencoded", headers=headers)
        else:
            response = self.client.get(path, headers=headers)
        if profiling:
            self.profiler.disable()
        self.cpu_ms[kind].append((time.process_time() - started) * 1000)
        wrapper.__exit__(None, None, None)
        self.queries[kind].append(counted[0])
        return response


def walk_one_hit(browser: Measured, rng: random.Random) -> bool:
    browser.send("home", "GET", "/labeling/")  # also sets the CSRF cookie, as in a browser
    response = browser.send("claim", "POST", "/labeling/claim/")
    found = ASSIGNMENT.search(response.get("Location", ""))
    if response.status_code != 302 or not found:
        return False
    assignment = int(found.group(1))
    first = browser.client.get(response["Location"])
    page = browser.send("first screen", "GET", first["Location"]).content.decode()
    while (heading := HEADING.search(page)) is not None:
        position = int(heading.group(1))
        label = rng.choice(CHOICE.findall(page))
        url = f"/labeling/assignments/{assignment}/items/{position}/answer/"
        saved = browser.send("autosave", "POST", url, {"go": "stay", "answer": label}, htmx=True)
        assert saved.status_code == 200, saved.status_code
        response = browser.send("next", "POST", url, {"go": "next", "answer": label, "seconds": "1"}, htmx=True)
        assert response.status_code == 200, response.status_code
        page = response.content.decode()
    response = browser.send("submit", "POST", f"/labeling/assignments/{assignment}/submit/")
    assert response.status_code == 302 and "feedback" in response["Location"], response.status_code
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hits", type=int, default=6, help="HITs of 20 screens, 3 workers each")
    parser.add_argument("--annotators", type=int, default=6)
    parser.add_argument("--profile", choices=["next", "autosave", "submit", "claim", "first screen", "home"])
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    args = parser.parse_args()
    if urllib.parse.urlsplit(args.database_url).hostname not in ("127.0.0.1", "localhost"):
        parser.error("the bench only talks to a database on 127.0.0.1")

    recreate_database(args.database_url)
    os.environ.setdefault("STATIC_ROOT", tempfile.mkdtemp(prefix="bench-static-"))
    setup_django(args.database_url, "bench-only-secret-key-" + "x" * 32)
    from django.conf import settings

    settings.ALLOWED_HOSTS = ["testserver", *settings.ALLOWED_HOSTS]
    sessions = fill_database(args.annotators, args.hits, seed=1)
    rng = random.Random(1)
    browsers = [Measured(key, args.profile) for key in sessions]
    # A first HIT per annotator warms imports, template and label caches; not counted.
    for browser in browsers:
        walk_one_hit(browser, rng)
        browser.cpu_ms.clear()
        browser.queries.clear()
    PROFILER.clear()
    for browser in browsers:
        while walk_one_hit(browser, rng):
            pass

    merged: dict[str, list[float]] = defaultdict(list)
    queries: dict[str, list[int]] = defaultdict(list)
    for browser in browsers:
        for kind, values in browser.cpu_ms.items():
            merged[kind] += values
            queries[kind] += browser.queries[kind]
    for kind, values in merged.items():
        print(
            f"{kind:>12}: {len(values):5d} requests, CPU median {statistics.median(values):6.2f} ms, "
            f"mean {statistics.fmean(values):6.2f} ms, SQL statements mean {statistics.fmean(queries[kind]):5.2f}"
        )
    if args.profile:
        stats = pstats.Stats(PROFILER)
        stats.sort_stats("cumulative").print_stats(args.top)
        stats.sort_stats("tottime").print_stats(args.top)

    def median(kind: str) -> str:
        return f"{statistics.median(merged[kind]):.2f}" if merged[kind] else "nan"

    print(
        f"next_cpu_ms={median('next')} autosave_cpu_ms={median('autosave')} "
        f"submit_cpu_ms={median('submit')} claim_cpu_ms={median('claim')}"
    )


if __name__ == "__main__":
    main()
