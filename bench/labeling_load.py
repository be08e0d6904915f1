"""Load test of the annotator pages: N simulated annotators over HTTP against gunicorn.

    .venv/bin/python bench/labeling_load.py [--annotators 100] [--hits-per-annotator 2] [--think 1.0]
        [--arrival burst|ramp|poisson] [--ramp 30] [--landing site|mturk|prolific]
        [--prolific-latency-ms 300] [--landing-concurrency N] [--broker-url redis://127.0.0.1:6379/0]

What it does:
1. (re)creates the PostgreSQL database `bench_labeling` on 127.0.0.1 (override with --database-url),
   migrates it, and fills it: one open campaign of HITs (15 dialogues + 5 quiz questions each,
   3 workers per HIT) sized to the annotators: `--hits-per-annotator` HITs each (default 2, so
   ceil(2 N / 3) HITs), or `--hits` when given, refused when it has fewer seats than annotators
   (nobody is left out silently); `--annotators` site accounts with a signed-in session each;
2. starts gunicorn on 127.0.0.1 (--worker-class, --workers, --threads; default sync x 2) with DATABASE_URL,
   SECRET_KEY and DB_CONN_MAX_AGE (persistent connections, 600 s unless set, so every backend
   lives through the run and its CPU is counted) in its environment; --threads goes to gthread
   only (gunicorn runs a sync worker given threads > 1 as gthread: runs before 2026-11-27 16:50 UTC
   that say "sync x 4" ran gthread 4 x 8);
3. runs one thread per annotator, arriving as --arrival says (burst: every one in the first second,
   as when a platform shows a new study to everyone at once; ramp: evenly over --ramp seconds;
   poisson: exponential gaps at the rate giving the same mean span), sending what the browser sends with htmx: POST claim, GET the
   first screen, then per screen "think" (about --think seconds), POST the pick (the autosave,
   go=stay) on the screens where the annotator stays past AUTOSAVE_DELAY_MS after picking
   (--linger-share of them, default 0.2; --per-pick-autosave: every screen, what the browser sent
   before the delay existed; --no-autosave: none) and POST Next with the answer (go=next: the
   next-item request, which saves the pick and is answered with the next screen's partial), then
   POST submit; and again until no HIT is left or --duration runs out;
4. prints p50/p95/max latency of every kind of request (claim, screen: the GET of a HIT's first
   screen, autosave, next, submit; each timed around its own request and response only),
   submits/s, the CPU per request of the gunicorn workers, the PostgreSQL backends and this
   client (its share, as it runs on the same cores), and checks against the database that every
   answer sent is stored exactly once and every HIT has exactly 3 submitted assignments.

bench/labeling_profile.py measures the same requests in-process (CPU ms and SQL statements per
kind, optional cProfile): the steadier figure on a shared machine.

Ends with one line:
    annotators=N p95_ms=<the worst kind's p95> claim_p95_ms= screen_p95_ms= autosave_p95_ms=
    next_p95_ms= submit_p95_ms= submits_per_s= lost= doubled=

--landing prolific (bench/prolific_landing.py): each participant opens the campaign's Prolific
study link, its session an ACTIVE submission of the published study on the project's Prolific
stand-in, served in a process of its own (bench/prolific_standin_server.py) answering after
--prolific-latency-ms; the landing check runs on the Procfile's `landing` worker, which the bench
starts with gunicorn, on the Redis broker --broker-url (use a database of your own). Each
participant polls the "Checking" page at its own refresh interval until it holds a HIT, then
works through it. One HIT each (a Prolific participant takes a study once): the campaign is sized
to one seat per participant unless --hits says otherwise. Ends with
    landing=prolific annotators=N latency_ms= hit_p95_s= hit_p50_s= hit_max_s= held= lost=
    answers_lost= doubled=
(hit_*_s: seconds from a participant's first GET to the answer that holds a HIT; lost: the
participants who never held one).

--compare-fast-path measures the annotator fast path (ANNOTATOR_FAST_PATH, labeling/fast_path/compiled.py)
on against off in one run: --rounds rounds (default 2) of off then on, each on a fresh database
filled alike (same seed, same annotators) and a fresh gunicorn with the setting in its
environment. It prints every run as above, the p95s of each round side by side, and ends with
    annotators=N rounds=R off_p95_ms= on_p95_ms= fast_path_p95_ratio=<off / on, worst kind, pooled>
    claim_ratio= screen_ratio= autosave_ratio= next_ratio= submit_ratio= round_ratios= lost= doubled=
A ratio, not an absolute time: only runs minutes apart on one machine compare.

--compare-webhooks measures a participant's requests with outgoing webhooks off against on (an
endpoint wanting every event kind, at a receiver that answers after --webhook-delay seconds, and
a stand-in worker in this process sending the deliveries during the run), --rounds rounds, and ends with
    annotators=N rounds=R webhook_delay_s= off_p95_ms= on_p95_ms= webhooks_p95_ratio=<on / off>
    claim_ratio= ... submit_ratio= events=<per on run> lost= doubled=

--compare-study-flow measures the campaign's study flow (labeling.study_flow: the demo's consent,
instructions and practice, with a version of every label's name and description for the browsers'
language) on against off: --rounds rounds of on then off (on, off, on, off by default), each a
fresh database filled alike and a fresh gunicorn; before each run every annotator is taken through
the flow's steps by the writers its pages call (none with it off), so the load measured is the
work: claims past the flow's gate, the screens (their label names the researcher's), submits. It
prints every run as above, the gunicorn CPU per answered screen of each run, and ends with
    annotators=N rounds=R on_cpu_ms_per_screen= off_cpu_ms_per_screen= on_runs=<ms,...>
    off_runs=<ms,...> round_ratios=<on / off per round> on_database_cpu_ms_per_screen=
    off_database_cpu_ms_per_screen= lost= doubled= study_flow_cpu_ratio=<on / off, pooled>
Like --compare-fast-path, a same-run ratio: only runs minutes apart on one machine compare.

Building blocks other benches reuse (bench/labeling_chaos.py): recreate_database, setup_django,
fill_database, hits_needed, gunicorn_env, start_gunicorn, Browser, Tally, annotate,
run_annotators, check_database, percentile.
The machine is shared: figures are noisy. Only 127.0.0.1 is contacted.
"""

import argparse
import http.client
import math
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import prolific_landing  # bench/ is on the path (above)

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_labeling"
HOST = "127.0.0.1"
WORKERS_PER_HIT = 3  # the campaign default the bench keeps
KINDS = ("claim", "screen", "autosave", "next", "submit")  # every request an annotator sends, timed
CHOICE = re.compile(r'name="answer" value="([^"]+)" data-key="\d"')
HEADING = re.compile(r"Dialog (\d+)/(\d+)")
ASSIGNMENT = re.compile(r"/labeling/assignments/(\d+)/")
LANDINGS = ("site", "mturk", "prolific")
MTURK_SUBMIT_TO = "https://workersandbox.mturk.com"  # one of the landing's accepted turkSubmitTo hosts


# --- Setting up the database ---------------------------------------------------------------------


def recreate_database(database_url: str) -> None:
    import psycopg

    parts = urllib.parse.urlsplit(database_url)
    name = parts.path.lstrip("/")
    admin_url = urllib.parse.urlunsplit(parts._replace(path="/postgres", query=""))
    with psycopg.connect(admin_url, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')


def setup_django(database_url: str, secret_key: str) -> None:
    os.environ.update(
        DATABASE_URL=database_url,
        SECRET_KEY=secret_key,
        DEBUG="0",
        SECURE_SSL_REDIRECT="0",  # plain HTTP on loopback and in the test client
        DJANGO_SETTINGS_MODULE="config.settings",
        QUIZ_DEMO_BANK="1",  # a load test, not a quiz: the built-in bank suffices
    )
    import django

    django.setup()


def hits_needed(annotators: int, hits_per_annotator: float = 2.0) -> int:
    """HITs that give each of `annotators` about `hits_per_annotator` HITs (3 seats a HIT)."""
    return max(1, math.ceil(annotators * hits_per_annotator / WORKERS_PER_HIT))


def check_hits_serve(annotators: int, hits: int) -> str | None:
    """Why `hits` HITs cannot give every annotator work, or None when they can."""
    seats = hits * WORKERS_PER_HIT
    if seats < annotators:
        return (
            f"--hits {hits} has {seats} seats ({WORKERS_PER_HIT} per HIT), fewer than --annotators {annotators}: "
            f"give --hits {hits_needed(annotators, 1)} or more, or leave --hits out to size the campaign"
        )
    return None


def fill_database(
    annotators: int,
    hits: int,
    seed: int,
    *,
    auth_backend: str | None = None,
    landing: str = "site",
    session_engine: str | None = None,
) -> list[str]:
    """Migrate, build the campaign, and return one session key per annotator, signed in with
    `auth_backend` (default: the settings' MODEL_BACKEND; the server's settings must list it).
    With `landing` "mturk" the campaign is published on MTurk (its stand-in, in this process) and
    the annotators are not made here: each lands through the platform URL (an empty list)."""
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import transaction

    from annotation.models import Dialogue, Turn
    from labeling.models import Campaign
    from labeling.services.campaigns import create_campaign, set_campaign_status
    from labeling.work.hits import build_hits

    call_command("migrate", verbosity=0)
    campaign = create_campaign("Load test", fallback_choices=["Neutral", "Joyful", "Sad"], time_limit_minutes=60)
    if landing == "site":
        set_campaign_status(campaign, Campaign.OPEN)
    with transaction.atomic():
        dialogues = []
        for index in range(hits * campaign.dialogues_per_hit):
            dialogue = Dialogue.objects.create(position=index, content_hash=f"bench-{index}", turn_count=2)
            Turn.objects.bulk_create(
                [
                    Turn(dialogue=dialogue, position=0, text=f"Is that your boat out there, number {index}?"),
                    Turn(dialogue=dialogue, position=1, text="It was my father's. Now it is mine."),
                ]
            )
            dialogues.append(dialogue)
    build_hits(campaign, dialogues, seed=seed)
    if landing == "mturk":
        publish_on_mturk_standin(campaign)
        return []
    if landing == "prolific":
        prolific_landing.record_study(campaign)
        return []

    users = get_user_model().objects
    sessions = []
    for index in range(annotators):
        user = users.create(username=f"bench{index}")
        user.set_unusable_password()  # no PBKDF2 cost: the bench signs in by session, not by form
        user.save()
        # the engine the server reads: the settings', or the one its ANNOTATOR_FAST_PATH picks
        store = import_module(session_engine or settings.SESSION_ENGINE).SessionStore()
        store.update(
            {
                "_auth_user_id": str(user.pk),
                "_auth_user_backend": auth_backend or settings.MODEL_BACKEND,
                "_auth_user_hash": user.get_session_auth_hash(),
            }
        )
        store.create()
        sessions.append(store.session_key)
    return sessions


def publish_on_mturk_standin(campaign) -> None:
    """Publish every HIT of the campaign on the MTurk stand-in (labeling.platforms.standin, in this
    process: the server never asks MTurk at a landing), through the product's own publish_campaign,
    which records MTurk's HIT ids and opens the campaign."""
    from django.test import override_settings

    from labeling.platforms import get_platform, publish_campaign

    with override_settings(PLATFORM_STANDIN=True):
        publish_campaign(campaign, get_platform("mturk"), "https://bench.invalid")  # MTurk links are https only


def mturk_landing_urls(annotators: int, hits_per_annotator: int) -> list[list[str]]:
    """Per annotator, the MTurk landing URL of each HIT MTurk would hand them: seat s = round x
    annotators + annotator sits on HIT s // 3, so a HIT's 3 places go to 3 different workers and
    nobody lands twice on one HIT (each landing its own assignmentId, as MTurk's)."""
    from labeling.models import Campaign, Worker
    from labeling.services.entry_tokens import publication_token

    campaign = Campaign.objects.get(name="Load test")
    token = publication_token(campaign, Worker.MTURK)
    hit_ids = list(campaign.hits.order_by("position").values_list("external_id", flat=True))
    urls: list[list[str]] = [[] for _ in range(annotators)]
    for round_number in range(hits_per_annotator):
        for index in range(annotators):
            seat = round_number * annotators + index
            if seat // WORKERS_PER_HIT >= len(hit_ids):
                continue
            params = {
                "campaign": campaign.pk,
                "token": token,
                "workerId": f"A{index:06d}BENCH",
                "assignmentId": f"3BENCH{index:06d}R{round_number}",
                "hitId": hit_ids[seat // WORKERS_PER_HIT],
                "turkSubmitTo": MTURK_SUBMIT_TO,
            }
            urls[index].append(f"/labeling/platform/mturk/?{urllib.parse.urlencode(params)}")
    return urls


# --- The server ---------------------------------------------------------------------------------


def start_gunicorn(port: int, workers: int, threads: int, worker_class: str, env: dict) -> subprocess.Popen:
    command = [
        str(REPO / ".venv" / "bin" / "gunicorn"),
        "config.wsgi:application",
        f"--bind={HOST}:{port}",
        f"--workers={workers}",
        f"--worker-class={worker_class}",
        # threads > 1 turns the sync worker into gthread (gunicorn's `threads` setting:
        # https://gunicorn.org/reference/settings/#threads): only gthread is given threads
        f"--threads={threads if worker_class == 'gthread' else 1}",
        "--keep-alive=5",
        "--log-level=warning",
    ]
    server = subprocess.Popen(command, cwd=REPO, env=env)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            connection = http.client.HTTPConnection(HOST, port, timeout=2)
            connection.request("GET", "/healthz")
            if connection.getresponse().status == 200:
                return server
        except OSError:
            time.sleep(0.2)
    server.terminate()
    raise RuntimeError(f"gunicorn did not answer on {HOST}:{port} within 30 s")


# --- One simulated annotator --------------------------------------------------------------------


@dataclass
class Tally:
    """What every annotator did, shared by all threads (appends are atomic under the GIL)."""

    next_ms: list[float] = field(default_factory=list)
    next_sent_at: list[float] = field(default_factory=list)  # time.monotonic() of each next-item request
    submit_ms: list[float] = field(default_factory=list)
    claim_ms: list[float] = field(default_factory=list)
    screen_ms: list[float] = field(
        default_factory=list
    )  # GET of a first screen a claim redirected to (none when the claim shows it)
    autosave_ms: list[float] = field(default_factory=list)
    sent: dict[tuple[int, int], str] = field(default_factory=dict)  # (assignment, position) -> label
    submitted: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    served: set[int] = field(default_factory=set)  # annotators (by index) that got at least one HIT
    turned_away: list[int] = field(default_factory=list)  # annotators whose first claim found no HIT
    hold_s: list[float] = field(default_factory=list)  # per landing: seconds from its first GET to a HIT
    checking_pages: list[int] = field(default_factory=list)  # per landing: "Checking" pages (202) before it

    def of(self, kind: str) -> list[float]:
        """The latencies (ms) of one kind of request, one of KINDS."""
        return getattr(self, f"{kind}_ms")


class Browser:
    """A keep-alive HTTP connection with the session and CSRF cookies of one annotator."""

    def __init__(self, port: int, session_key: str | None) -> None:
        self.port = port
        self.cookies = {"sessionid": session_key} if session_key else {}
        self.headers: dict[str, str] = {}  # sent with every request (a landing's own address)
        self.connection = http.client.HTTPConnection(HOST, port, timeout=30)

    def request(self, method: str, path: str, form: dict | None = None, htmx: bool = False) -> tuple[int, dict, str]:
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items()), **self.headers}
        body = None
        if form is not None:
            body = urllib.parse.urlencode(form)
            headers |= {
                "Content-Type": "application/x-www-form-urlencoded",
                "X-CSRFToken": self.cookies.get("csrftoken", ""),
            }
        if htmx:
            headers["HX-Request"] = "true"
        for attempt in (1, 2):
            try:
                self.connection.request(method, path, body=body, headers=headers)
                response = self.connection.getresponse()
                break
            except (http.client.RemoteDisconnected, ConnectionError):
                # the server closed an idle keep-alive connection before this request was read
                self.connection = http.client.HTTPConnection(HOST, self.port, timeout=30)
                if attempt == 2:
                    raise
        for name, value in response.getheaders():
            if name.lower() == "set-cookie":
                key, _, rest = value.partition("=")
                self.cookies[key] = rest.split(";", 1)[0]
        return response.status, dict(response.getheaders()), response.read().decode()


def annotate(
    browser: Browser,
    tally: Tally,
    think: float,
    deadline: float,
    rng: random.Random,
    autosave: float,
    index: int = 0,
    landings: list[str] | None = None,
) -> None:
    """One annotator's whole session: the home page, then claim, first screen, (autosave +) Next
    per screen, submit, and again until no HIT is left or `deadline` (time.monotonic) passes.
    `autosave`: the share of screens on which the browser sends the autosave before Next (the
    annotator stayed past AUTOSAVE_DELAY_MS after picking; 1 or True: every screen).
    With `landings` (platform landing URLs, one per HIT) each HIT is claimed by opening its landing
    URL instead (timed as the claim: the landing signs in and claims), with no home page first.
    Raises RuntimeError on an answer the browser would not expect."""
    if landings is None:
        status, _, _ = browser.request("GET", "/labeling/")
        if status != 200:
            raise RuntimeError(f"home page answered {status}")
    else:
        landings = list(landings)
    while time.monotonic() < deadline:
        if landings is not None and not landings:
            return  # every HIT the platform handed this annotator is done
        started = time.perf_counter()
        if landings is None:
            # as the home page's button sends it: with htmx, which a server that serves the first
            # screen in the claim's own answer (HX-Push-Url) uses; an older one redirects
            status, headers, page = browser.request("POST", "/labeling/claim/", form={}, htmx=True)
        else:
            status, headers, page, started = open_landing(browser, landings.pop(0), tally, deadline)
        tally.claim_ms.append((time.perf_counter() - started) * 1000)
        shown = status == 200 and ASSIGNMENT.search(headers.get("HX-Push-Url", ""))
        found = shown or (status == 302 and ASSIGNMENT.search(headers.get("Location", "")))
        if not found:
            if index not in tally.served:
                tally.turned_away.append(index)
            return  # no HIT left for this annotator
        tally.served.add(index)
        assignment = int(found.group(1))
        if not shown:  # the first screen is a redirect away (through the assignment, on older servers)
            location = headers["Location"]
            while "/items/" not in location:
                _, headers, _ = browser.request("GET", location)
                location = headers["Location"]
            started = time.perf_counter()
            status, _, page = browser.request("GET", location)
            tally.screen_ms.append((time.perf_counter() - started) * 1000)
            if status != 200:
                raise RuntimeError(f"first screen of {assignment} answered {status}")
        while (heading := HEADING.search(page)) is not None and time.monotonic() < deadline:
            position = int(heading.group(1))
            label = rng.choice(CHOICE.findall(page))
            time.sleep(think * rng.uniform(0.5, 1.5))
            answer_url = f"/labeling/assignments/{assignment}/items/{position}/answer/"
            if autosave and rng.random() < autosave:  # the pick saved on its own, before Next
                started = time.perf_counter()
                status, _, _ = browser.request("POST", answer_url, form={"go": "stay", "answer": label}, htmx=True)
                tally.autosave_ms.append((time.perf_counter() - started) * 1000)
                if status != 200:
                    raise RuntimeError(f"autosave {assignment}/{position} answered {status}")
            started = time.perf_counter()
            status, _, page = browser.request(
                "POST",
                answer_url,
                form={"go": "next", "answer": label, "seconds": "1"},
                htmx=True,
            )
            tally.next_ms.append((time.perf_counter() - started) * 1000)
            tally.next_sent_at.append(time.monotonic())
            if status != 200:
                raise RuntimeError(f"answer {assignment}/{position} answered {status}")
            tally.sent[(assignment, position)] = label
        if "Review and submit" not in page:
            return  # out of time in the middle of a HIT: it stays accepted and is reported
        time.sleep(think * rng.uniform(0.5, 1.5))
        started = time.perf_counter()
        status, headers, _ = browser.request("POST", f"/labeling/assignments/{assignment}/submit/", form={})
        tally.submit_ms.append((time.perf_counter() - started) * 1000)
        if status != 302 or not any(end in headers.get("Location", "") for end in ("feedback", "platform/return")):
            raise RuntimeError(f"submit of {assignment} answered {status} {headers.get('Location')}")
        tally.submitted.append(assignment)


def open_landing(browser: Browser, url: str, tally: Tally, deadline: float) -> tuple[int, dict, str, float]:
    """GET a platform landing URL as the browser does: while it answers the "Checking" page (202,
    a Prolific landing whose check is still with the landing worker), wait the page's own refresh
    interval and GET it again. Records the seconds from the first GET to the answer that holds a
    HIT (a redirect to an assignment) and how many "Checking" pages came first; returns the last
    answer and when its request was sent (time.perf_counter: `claim_ms` times that last request
    only, the one that signs in and claims)."""
    arrived = sent = time.perf_counter()
    checking = 0
    status, headers, page = browser.request("GET", url)
    while status == 202 and time.monotonic() < deadline:
        checking += 1
        time.sleep(prolific_landing.refresh_seconds(page))
        sent = time.perf_counter()
        status, headers, page = browser.request("GET", url)
    if status == 302 and ASSIGNMENT.search(headers.get("Location", "")):
        tally.hold_s.append(time.perf_counter() - arrived)
        tally.checking_pages.append(checking)
    elif status != 202:
        tally.errors.append(f"landing answered {status}: {page[:200]!r}")
    return status, headers, page, sent


ARRIVALS = ("burst", "ramp", "poisson")


def arrival_offsets(arrival: str, annotators: int, ramp: float, seed: int) -> list[float]:
    """Seconds after the start at which each annotator arrives.
    burst: every one within the first second (a study shown to everyone at once);
    ramp: evenly spread over `ramp` seconds;
    poisson: exponential inter-arrival times at the rate (annotators / ramp) that gives the ramp's
    mean span, so the two profiles compare: same mean rate, bursts and gaps by chance."""
    if arrival == "burst":
        rng = random.Random(seed)
        return [rng.uniform(0, 1.0) for _ in range(annotators)]
    if arrival == "ramp":
        return [ramp * index / annotators for index in range(annotators)]
    if arrival == "poisson":
        rng = random.Random(seed)
        rate = annotators / ramp if ramp > 0 else float("inf")
        offsets, at = [], 0.0
        for _ in range(annotators):
            offsets.append(at)
            at += rng.expovariate(rate) if rate != float("inf") else 0.0
        return offsets
    raise ValueError(f"arrival: one of {', '.join(ARRIVALS)}, not {arrival!r}")


def run_annotators(
    port: int,
    sessions: list[str],
    think: float,
    duration: float,
    seed: int,
    autosave: float,
    ramp: float,
    arrival: str = "ramp",
    landings: list[list[str]] | None = None,
) -> tuple[Tally, float]:
    """One thread per annotator (`sessions`: a signed-in session key each, or None per annotator
    with `landings`: the platform landing URLs of each)."""
    tally = Tally()
    deadline = time.monotonic() + duration
    offsets = arrival_offsets(arrival, len(sessions), ramp, seed)

    def body(index: int) -> None:
        rng = random.Random(seed * 1000 + index)
        time.sleep(offsets[index])
        try:
            mine = landings[index] if landings is not None else None
            browser = Browser(port, sessions[index])
            if landings is not None:
                # each platform worker from an address of its own, as through a proxy that names it
                # (TRUST_X_FORWARDED_FOR): the per-address cap on new platform workers sees people
                browser.headers["X-Forwarded-For"] = f"10.{index >> 16 & 255}.{index >> 8 & 255}.{index & 255}"
            annotate(browser, tally, think, deadline, rng, autosave, index, mine)
        except Exception as error:
            tally.errors.append(f"annotator {index}: {error!r}")

    threads = [threading.Thread(target=body, args=(i,), daemon=True) for i in range(len(sessions))]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=duration + 60)
    return tally, time.monotonic() - started


# --- Checking the database ----------------------------------------------------------------------


def check_database(tally: Tally) -> dict:
    """Compare what the annotators sent with what the database holds."""
    from labeling.models import HIT, Assignment, Response

    stored = defaultdict(list)
    for assignment_id, position, label in Response.objects.values_list(
        "assignment_id", "item__position", "label__name"
    ):
        stored[(assignment_id, position)].append(label)
    lost = sum(1 for key, label in tally.sent.items() if label not in stored.get(key, []))
    doubled = sum(len(labels) - 1 for labels in stored.values() if len(labels) > 1)
    doubled += sum(1 for key in stored if key not in tally.sent)  # stored but never sent
    per_hit = Counter(Assignment.objects.filter(status=Assignment.SUBMITTED).values_list("hit_id", flat=True))
    hit_ids = list(HIT.objects.values_list("pk", flat=True))
    return {
        "lost": lost,
        "doubled": doubled,
        "hits": len(hit_ids),
        "hits_with_exactly_3": sum(1 for pk in hit_ids if per_hit.get(pk) == 3),
        "hits_over_3": sum(1 for pk in hit_ids if per_hit.get(pk, 0) > 3),
        "submitted_in_db": sum(per_hit.values()),
        "accepted_left": Assignment.objects.filter(status=Assignment.ACCEPTED).count(),
    }


def worker_cpu_seconds(master_pid: int) -> dict[int, float]:
    """CPU seconds used so far by each gunicorn worker (Linux /proc; empty elsewhere)."""
    ticks = os.sysconf("SC_CLK_TCK")
    try:
        children = Path(f"/proc/{master_pid}/task/{master_pid}/children").read_text().split()
    except OSError:
        return {}
    used = {}
    for pid in map(int, children):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        used[pid] = (int(fields[11]) + int(fields[12])) / ticks  # utime + stime
    return used


def postgres_backend_cpu_seconds() -> float:
    """CPU seconds used by the PostgreSQL backends serving this database, other than this
    process's own (Linux /proc, PostgreSQL on this machine; 0 when unreadable). gunicorn keeps
    its connections (DB_CONN_MAX_AGE), so their backends live through the whole run."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        pids = [row[0] for row in cursor.fetchall()]
    ticks = os.sysconf("SC_CLK_TCK")
    used = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        used += (int(fields[11]) + int(fields[12])) / ticks
    return used


def _cpu_seconds(usage) -> float:
    return usage.ru_utime + usage.ru_stime


def percentile(values: list[float], share: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(share * 100) - 1]


def print_by_phase(tally: Tally, window: float = 10.0) -> None:
    """next-item p95 per window of the run: shows whether the tail comes from the arrival burst
    (every home page, claim and first screen at once) or from the steady state."""
    if not tally.next_sent_at:
        return
    first = min(tally.next_sent_at)
    phases: dict[int, list[float]] = defaultdict(list)
    for sent_at, ms in zip(tally.next_sent_at, tally.next_ms, strict=True):
        phases[int((sent_at - first) // window)].append(ms)
    cells = [
        f"{index * window:.0f}-{(index + 1) * window:.0f}s: {percentile(values, 0.95):.0f} ms ({len(values)})"
        for index, values in sorted(phases.items())
    ]
    print("next-item p95 by phase (requests):", "; ".join(cells))


def gunicorn_env(database_url: str, secret_key: str) -> dict:
    """The environment gunicorn runs in: this one, plus the bench's database and settings."""
    # whitenoise serves static files from the finders; an empty STATIC_ROOT keeps it from warning
    static_root = tempfile.mkdtemp(prefix="bench-static-")
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "SECRET_KEY": secret_key,
        "DEBUG": "0",
        "SECURE_SSL_REDIRECT": "0",  # plain HTTP on loopback (the cookie jar here ignores Secure)
        "STATIC_ROOT": static_root,
        # persistent connections, kept past --duration: a backend closed at its 60 s age (the
        # settings' default) takes its CPU with it, and the run's PostgreSQL figure read too low
        "DB_CONN_MAX_AGE": os.environ.get("DB_CONN_MAX_AGE", "600"),
    }


@dataclass
class Run:
    """One run of the annotators against a fresh gunicorn: what they saw and what it cost."""

    tally: Tally
    elapsed: float
    checks: dict
    server_cpu: float
    database_cpu: float
    client_cpu: float
    env: dict

    def p95(self) -> dict[str, float]:
        return {kind: percentile(self.tally.of(kind), 0.95) for kind in KINDS}


def run_once(
    args,
    secret_key: str,
    *,
    extra_env: dict | None = None,
    auth_backend: str | None = None,
    session_engine: str | None = None,
    prepare=None,
) -> Run:
    """Fill a fresh database, start gunicorn (with `extra_env` in its environment), run the
    annotators and check the database. Django must be set up (setup_django) already. `prepare`,
    when given, runs after the fill and returns a callable that stops what it started."""
    from django.db import connections

    connections.close_all()  # the database is dropped under this process's own connection
    recreate_database(args.database_url)
    sessions = fill_database(
        args.annotators,
        args.hits,
        args.seed,
        auth_backend=auth_backend,
        landing=args.landing,
        session_engine=session_engine,
    )
    stop_prepared = prepare() if prepare else None
    landings = None
    if args.landing == "mturk":
        landings = mturk_landing_urls(args.annotators, math.ceil(args.hits * WORKERS_PER_HIT / args.annotators))
        sessions = [None] * args.annotators
    elif args.landing == "prolific":
        landings = prolific_landing.landing_urls(args.annotators)
        sessions = [None] * args.annotators
    env = gunicorn_env(args.database_url, secret_key) | (extra_env or {})
    services = None
    if args.landing == "prolific":
        # the stand-in in its own process; gunicorn and the landing worker reach it as Prolific
        services = prolific_landing.Services(args.port + 1, args.prolific_latency_ms, args.annotators, args.broker_url)
        env |= services.env
    if args.landing in ("mturk", "prolific"):
        # the annotators' own addresses (see run_annotators); the campaign's hourly cap on new
        # platform workers (a safety net against made-up ids, 300) raised to the bench's crowd
        landings_made = args.hits * WORKERS_PER_HIT
        env |= {
            "TRUST_X_FORWARDED_FOR": "1",
            "PLATFORM_NEW_WORKERS_PER_CAMPAIGN_PER_HOUR": str(max(300, 2 * landings_made)),
        }
    try:
        if services is not None:
            args.landing_worker = " ".join(services.start_worker(env, args.landing_concurrency)[1:])
        server = start_gunicorn(args.port, args.workers, args.threads, args.worker_class, env)
    except BaseException:
        if services is not None:
            services.stop()
        raise
    time.sleep(3)  # let every gunicorn worker finish importing the project before counting CPU
    client_cpu_before = resource.getrusage(resource.RUSAGE_SELF)
    server_cpu_before = worker_cpu_seconds(server.pid)
    try:
        tally, elapsed = run_annotators(
            args.port,
            sessions,
            args.think,
            args.duration,
            args.seed,
            args.linger_share,
            args.ramp,
            args.arrival,
            landings,
        )
        server_cpu = sum(worker_cpu_seconds(server.pid).values()) - sum(server_cpu_before.values())
        database_cpu = postgres_backend_cpu_seconds()
    finally:
        client_cpu = _cpu_seconds(resource.getrusage(resource.RUSAGE_SELF)) - _cpu_seconds(client_cpu_before)
        server.terminate()
        server.wait(timeout=30)
        if services is not None:
            args.standin_stats = services.stats()
            services.stop()
        if stop_prepared:
            stop_prepared()
    return Run(tally, elapsed, check_database(tally), server_cpu, database_cpu, client_cpu, env)


def report(args, run: Run) -> None:
    """Every figure of one run, ending with its key=value line."""
    tally, elapsed, checks, env = run.tally, run.elapsed, run.checks, run.env
    print(
        f"annotators={args.annotators} hits={args.hits} think={args.think}s linger_share={args.linger_share:g} "
        f"landing={args.landing} arrival={args.arrival}"
        f"{'' if args.arrival == 'burst' else f' over {args.ramp:g}s'} gunicorn={args.worker_class} {args.workers} workers"
        f"{f' x {args.threads} threads' if args.worker_class == 'gthread' else ''} "
        f"DB_CONN_MAX_AGE={env['DB_CONN_MAX_AGE']} REDIS_URL={'set' if env.get('REDIS_URL') else 'unset'}"
        f"{f' ANNOTATOR_FAST_PATH={env[FAST_PATH]}' if FAST_PATH in env else ''}"
    )
    print(
        f"elapsed {elapsed:.1f} s, {len(tally.next_ms)} next-item requests, {len(tally.submit_ms)} submits; "
        f"annotators served {len(tally.served)} of {args.annotators}"
    )
    for kind in KINDS:
        values = tally.of(kind)
        print(
            f"{kind:>9}: {len(values):6d} requests  p50 {percentile(values, 0.5):7.1f} ms  "
            f"p95 {percentile(values, 0.95):7.1f} ms  max {max(values, default=0):7.1f} ms"
        )
    print_by_phase(tally)
    requests = sum(len(tally.of(kind)) for kind in KINDS)
    total_cpu = run.server_cpu + run.database_cpu + run.client_cpu
    print(
        f"CPU per request: gunicorn workers {run.server_cpu / max(requests, 1) * 1000:.1f} ms, "
        f"PostgreSQL backends {run.database_cpu / max(requests, 1) * 1000:.1f} ms, "
        f"client {run.client_cpu / max(requests, 1) * 1000:.1f} ms "
        f"(client share {run.client_cpu / max(total_cpu, 1e-9) * 100:.0f}%; "
        f"{total_cpu / elapsed:.2f} of {os.cpu_count()} cores busy with the bench; "
        f"load average now {os.getloadavg()[0]:.1f})"
    )
    screens = max(len(tally.sent), 1)
    print(
        f"CPU per answered screen (every request of the run / answers sent): gunicorn "
        f"{run.server_cpu / screens * 1000:.1f} ms, PostgreSQL {run.database_cpu / screens * 1000:.1f} ms"
    )
    print(f"answers sent {len(tally.sent)}; checks: {checks}")
    every_hit_full = checks["hits_with_exactly_3"] == checks["hits"]
    print(f"every HIT has exactly 3 submitted assignments: {'yes' if every_hit_full else 'NO'}")
    if tally.turned_away:
        print(f"annotators that got no HIT at all: {len(tally.turned_away)} (the campaign ran out)")
    for error in tally.errors[:10]:
        print("error:", error)
    if args.landing == "prolific":
        report_prolific(args, run)
        return
    p95 = run.p95()
    print(
        f"annotators={args.annotators} p95_ms={_worst(p95):.1f} "
        + " ".join(f"{kind}_p95_ms={p95[kind]:.1f}" for kind in KINDS)
        + f" submits_per_s={len(tally.submitted) / elapsed:.2f} lost={checks['lost']} doubled={checks['doubled']}"
    )


def report_prolific(args, run: Run) -> None:
    """The Prolific landings: seconds from arrival to holding a HIT, and the line the run ends with.
    held: participants whose landing reached a HIT; lost: the others (a refusal, or still on the
    "Checking" page when --duration ran out)."""
    tally, checks = run.tally, run.checks
    held = len(tally.hold_s)
    stats = getattr(args, "standin_stats", {})
    print(
        f"Prolific stand-in: latency {args.prolific_latency_ms:g} ms, {stats.get('api_requests', '?')} API calls "
        f"{stats.get('by_route', {})}; landing worker: {getattr(args, 'landing_worker', '?')}"
    )
    print(
        f"arrival to holding a HIT: p50 {percentile(tally.hold_s, 0.5):.2f} s  p95 {percentile(tally.hold_s, 0.95):.2f} s  "
        f"max {max(tally.hold_s, default=float('nan')):.2f} s; 'Checking' pages before the HIT: "
        f"p50 {percentile(tally.checking_pages, 0.5):g} max {max(tally.checking_pages, default=0)}; "
        f"within 10 s: {sum(1 for s in tally.hold_s if s <= 10)} of {args.annotators}"
    )
    print(
        f"landing=prolific annotators={args.annotators} latency_ms={args.prolific_latency_ms:g} "
        f"hit_p95_s={percentile(tally.hold_s, 0.95):.2f} hit_p50_s={percentile(tally.hold_s, 0.5):.2f} "
        f"hit_max_s={max(tally.hold_s, default=float('nan')):.2f} held={held} lost={args.annotators - held} "
        f"answers_lost={checks['lost']} doubled={checks['doubled']}"
    )


def _worst(p95: dict[str, float]) -> float:
    return max(p95.values(), key=lambda value: -1 if math.isnan(value) else value)


# --- Fast path on against off, in one run ---------------------------------------------------------

FAST_PATH = "ANNOTATOR_FAST_PATH"
# the backend each mode's settings sign in with (config/settings.py MODEL_BACKEND): a session
# names it, and Django ignores a session whose backend the settings do not list
BACKENDS = {"0": "django.contrib.auth.backends.ModelBackend", "1": "config.auth.ModelBackend"}
# the session store each mode's server reads (config/settings.py: _SESSIONS): sessions made through
# this process's own engine (the fast path's) were not found by an off server, whose annotators
# all met the sign-in redirect (found in issue 49)
SESSION_PACKAGES = {"0": "django.contrib.sessions.backends", "1": "config.sessions"}


def session_engine(mode: str) -> str:
    from django.conf import settings

    return f"{SESSION_PACKAGES[mode]}.{settings.SESSION_ENGINE.rsplit('.', 1)[1]}"


def compare_fast_path(args, secret_key: str) -> None:
    """`--rounds` rounds of fast path off and on (in turn off-on and on-off), each a fresh database
    filled alike and a fresh gunicorn with ANNOTATOR_FAST_PATH in its environment (and the sessions
    made in the store that setting picks); then the off/on ratio of the p95s."""
    runs: dict[str, list[Run]] = {"0": [], "1": []}
    for round_number in range(1, args.rounds + 1):
        # off, on, then on, off: a load that rises or falls through the run weighs on both alike
        for mode in ("0", "1") if round_number % 2 else ("1", "0"):
            print(f"--- round {round_number} of {args.rounds}, {FAST_PATH}={mode}, load average {_load()}", flush=True)
            run = run_once(
                args,
                secret_key,
                extra_env={FAST_PATH: mode},
                auth_backend=BACKENDS[mode],
                session_engine=session_engine(mode),
            )
            report(args, run)
            runs[mode].append(run)
    print("--- fast path on against off (p95 ms; ratio = off / on, above 1: the fast path is faster)")
    for index in range(args.rounds):
        off, on = runs["0"][index].p95(), runs["1"][index].p95()
        cells = " ".join(f"{kind} {off[kind]:.1f}/{on[kind]:.1f}" for kind in KINDS)
        print(f"round {index + 1}: off/on {cells}; worst kind {_worst(off) / _worst(on):.2f}x")
    pooled = {
        mode: {kind: percentile([v for r in runs[mode] for v in r.tally.of(kind)], 0.95) for kind in KINDS}
        for mode in runs
    }
    ratios = {kind: pooled["0"][kind] / pooled["1"][kind] for kind in KINDS}
    per_round = [_worst(off.p95()) / _worst(on.p95()) for off, on in zip(runs["0"], runs["1"], strict=True)]
    checks = [run.checks for mode in runs for run in runs[mode]]
    print(
        f"annotators={args.annotators} rounds={args.rounds} off_p95_ms={_worst(pooled['0']):.1f} "
        f"on_p95_ms={_worst(pooled['1']):.1f} fast_path_p95_ratio={_worst(pooled['0']) / _worst(pooled['1']):.2f} "
        + " ".join(f"{kind}_ratio={ratios[kind]:.2f}" for kind in KINDS)
        + f" round_ratios={','.join(f'{r:.2f}' for r in per_round)}"
        + f" lost={sum(c['lost'] for c in checks)} doubled={sum(c['doubled'] for c in checks)}"
    )


# --- Webhooks on against off, in one run -----------------------------------------------------------


def slow_endpoint(delay: float):
    """A receiver on 127.0.0.1 that takes `delay` seconds to answer each delivery: (url, stop)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Slow(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            time.sleep(delay)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer((HOST, 0), Slow)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://{HOST}:{server.server_address[1]}/hook", server


def webhooks_on(delay: float, sent: list[int]):
    """Register an endpoint that wants every kind at a slow receiver, and run a stand-in worker
    here that sends the due deliveries while the annotators work (as `run_worker` would)."""
    from django.db import connection

    from jobs.webhooks import delivery
    from jobs.webhooks.endpoints import create_endpoint
    from jobs.webhooks.models import EVENT_KINDS, WebhookDelivery

    url, server = slow_endpoint(delay)
    create_endpoint(url, list(EVENT_KINDS), description="bench: slow receiver")
    stopping = threading.Event()

    def worker() -> None:
        while not stopping.is_set():
            due = list(WebhookDelivery.objects.filter(status=WebhookDelivery.PENDING).values_list("pk", flat=True)[:50])
            for pk in due:
                if stopping.is_set():
                    break
                if delivery.send(pk).get("ok"):
                    sent.append(pk)
            stopping.wait(0.5)
        connection.close()

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()

    def stop() -> None:
        stopping.set()
        thread.join(timeout=max(30.0, 3 * delay))  # at most one delivery is still in flight
        server.shutdown()

    return stop


def compare_webhooks(args, secret_key: str) -> None:
    """`--rounds` rounds of webhooks off and on, in turn off-on and on-off (an endpoint wanting every
    kind, answering after --webhook-delay seconds), each a fresh database and gunicorn: the
    annotators' p95s and the server's CPU per answered screen side by side."""
    from jobs.webhooks.models import WebhookEvent

    runs: dict[str, list[Run]] = {"off": [], "on": []}
    recorded = []
    for round_number in range(1, args.rounds + 1):
        # off, on, then on, off: a load that rises or falls through the run weighs on both alike
        for mode in ("off", "on") if round_number % 2 else ("on", "off"):
            print(f"--- round {round_number} of {args.rounds}, webhooks {mode}, load average {_load()}", flush=True)
            sent: list[int] = []
            prepare = (lambda sent=sent: webhooks_on(args.webhook_delay, sent)) if mode == "on" else None
            run = run_once(args, secret_key, prepare=prepare)
            report(args, run)
            if mode == "on":
                events = WebhookEvent.objects.count()
                recorded.append(events)
                print(f"webhook events recorded {events}, deliveries sent during the run {len(sent)}")
            runs[mode].append(run)
    pooled = {
        mode: {kind: percentile([v for r in runs[mode] for v in r.tally.of(kind)], 0.95) for kind in KINDS}
        for mode in runs
    }
    ratios = {kind: pooled["on"][kind] / pooled["off"][kind] for kind in KINDS}
    checks = [run.checks for mode in runs for run in runs[mode]]
    # the server's CPU per answered screen (gunicorn + PostgreSQL): what a participant's requests
    # cost, steadier than a latency percentile on a machine others share
    cpu = {
        mode: [cpu_ms_per_screen([run]) + cpu_ms_per_screen([run], database=True) for run in runs[mode]]
        for mode in runs
    }
    for mode in runs:
        print(f"CPU per answered screen, webhooks {mode}: " + ", ".join(f"{v:.2f} ms" for v in cpu[mode]))
    print(
        f"annotators={args.annotators} rounds={args.rounds} webhook_delay_s={args.webhook_delay:g} "
        f"cpu_per_screen_ratio={statistics.median(cpu['on']) / statistics.median(cpu['off']):.2f} "
        f"off_p95_ms={_worst(pooled['off']):.1f} on_p95_ms={_worst(pooled['on']):.1f} "
        f"webhooks_p95_ratio={_worst(pooled['on']) / _worst(pooled['off']):.2f} "
        + " ".join(f"{kind}_ratio={ratios[kind]:.2f}" for kind in KINDS)
        + f" events={','.join(str(n) for n in recorded)}"
        + f" lost={sum(c['lost'] for c in checks)} doubled={sum(c['doubled'] for c in checks)}"
    )


# --- The study flow on against off, in one run ----------------------------------------------------


def study_flow_flow() -> dict:
    """The flow of an on run: the demo's consent, instructions and practice (with their Arabic
    texts), and a version of every offered label's name, description and examples for the
    browsers' language (en: the bench sends no Accept-Language), so each screen shows the
    researcher's names as a participant in another language sees them."""
    from annotation.models import Label
    from labeling.study_flow.demo import DEMO_FLOW

    flow = {step: DEMO_FLOW[step] for step in ("consent", "instructions", "practice")}
    arabic = {key: value for key, value in DEMO_FLOW["translations"]["ar"].items() if key != "survey"}
    labels = {
        label.name: {
            "name": f"{label.name} (the researcher's)",
            "description": f"{label.description} (in the researcher's words)"[:300],
            "examples": label.examples[:5],
        }
        for label in Label.objects.offered()
    }
    return {**flow, "translations": {"ar": arabic, "en": {"labels": labels}}}


def study_flow_prepared(on: bool) -> None:
    """Before a run: every bench annotator's Worker row made (on and off alike, so neither run makes
    them during the load); with `on`, the campaign's study flow set (study_flow_flow) and every
    annotator taken through its steps before the work by the writers the flow's pages call."""
    from django.contrib.auth import get_user_model

    from labeling.models import Campaign
    from labeling.services.campaigns import change_campaign_settings
    from labeling.services.workers import worker_for_user
    from labeling.study_flow.progress import walk_as_simulated

    campaign = Campaign.objects.get(name="Load test")
    if on:
        change_campaign_settings(campaign, {"study_flow": study_flow_flow()}, "bench: the study flow on")
    for user in get_user_model().objects.filter(username__startswith="bench"):
        worker = worker_for_user(user)
        if on:
            walk_as_simulated(worker, campaign)


def cpu_ms_per_screen(runs: list[Run], *, database: bool = False) -> float:
    """gunicorn's (or PostgreSQL's) CPU ms per answered screen over `runs`, pooled."""
    cpu = sum(run.database_cpu if database else run.server_cpu for run in runs)
    return cpu / max(sum(len(run.tally.sent) for run in runs), 1) * 1000


def compare_study_flow(args, secret_key: str) -> None:
    """`--rounds` rounds of the study flow on and off, in turn on-off and off-on, each a fresh database filled alike and a
    fresh gunicorn; then the on/off ratio of gunicorn's CPU per answered screen."""
    from labeling.models import StudyStep

    runs: dict[str, list[Run]] = {"on": [], "off": []}
    for round_number in range(1, args.rounds + 1):
        # on, off, then off, on: a load that rises or falls through the run weighs on both alike
        for mode in ("on", "off") if round_number % 2 else ("off", "on"):
            print(f"--- round {round_number} of {args.rounds}, study flow {mode}, load average {_load()}", flush=True)
            run = run_once(args, secret_key, prepare=lambda on=(mode == "on"): study_flow_prepared(on))
            report(args, run)
            started = StudyStep.objects.filter(step="work").count()
            print(f"study flow {mode}: {started} annotators recorded at the work step; CPU per answered screen "
                  f"gunicorn {cpu_ms_per_screen([run]):.2f} ms, PostgreSQL {cpu_ms_per_screen([run], database=True):.2f} ms")  # fmt: skip
            if mode == "on" and started < len(run.tally.served):
                raise SystemExit("the study flow's gate held annotators back: the on run measured no work")
            runs[mode].append(run)
    per_run = {mode: [cpu_ms_per_screen([run]) for run in runs[mode]] for mode in runs}
    round_ratios = [on / off for on, off in zip(per_run["on"], per_run["off"], strict=True)]
    print("--- study flow on against off (gunicorn CPU ms per answered screen; ratio = on / off)")
    for index, ratio in enumerate(round_ratios):
        print(f"round {index + 1}: on {per_run['on'][index]:.2f} off {per_run['off'][index]:.2f} ratio {ratio:.3f}")
    for mode in runs:
        values = per_run[mode]
        print(f"{mode}: runs {', '.join(f'{v:.2f}' for v in values)} ms; spread {min(values):.2f}-{max(values):.2f} "
              f"({(max(values) - min(values)) / statistics.fmean(values) * 100:.0f}% of the mean)")  # fmt: skip
    on, off = cpu_ms_per_screen(runs["on"]), cpu_ms_per_screen(runs["off"])
    checks = [run.checks for mode in runs for run in runs[mode]]
    print(
        f"annotators={args.annotators} rounds={args.rounds} on_cpu_ms_per_screen={on:.2f} off_cpu_ms_per_screen={off:.2f} "
        f"on_runs={','.join(f'{v:.2f}' for v in per_run['on'])} off_runs={','.join(f'{v:.2f}' for v in per_run['off'])} "
        f"round_ratios={','.join(f'{r:.3f}' for r in round_ratios)} "
        f"on_database_cpu_ms_per_screen={cpu_ms_per_screen(runs['on'], database=True):.2f} "
        f"off_database_cpu_ms_per_screen={cpu_ms_per_screen(runs['off'], database=True):.2f} "
        f"lost={sum(c['lost'] for c in checks)} doubled={sum(c['doubled'] for c in checks)} "
        f"study_flow_cpu_ratio={on / off:.3f}"
    )


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--annotators", type=int, default=100)
    parser.add_argument(
        "--hits",
        type=int,
        help="HITs of 20 screens, 3 workers each (default: sized by --hits-per-annotator; "
        "refused when fewer seats than annotators)",
    )
    parser.add_argument(
        "--hits-per-annotator", type=float, default=2.0, help="HITs each annotator gets when --hits is left out"
    )
    parser.add_argument("--think", type=float, default=1.0, help="mean seconds between two answers")
    parser.add_argument("--duration", type=float, default=240, help="hard limit in seconds")
    parser.add_argument(
        "--arrival",
        choices=ARRIVALS,
        help="how the annotators arrive: burst (all in the first second: a study shown to everyone at once; "
        "the default), ramp (evenly over --ramp seconds), poisson (exponential gaps, mean span --ramp); "
        "--ramp alone means ramp",
    )
    parser.add_argument(
        "--landing",
        choices=LANDINGS,
        default="site",
        help="how annotators come in: site (signed-in site accounts, claiming from the home page), mturk "
        "(the campaign published on the MTurk stand-in; each HIT claimed by opening its MTurk landing URL) or "
        "prolific (each participant opens the study's Prolific link and polls the 'Checking' page until the "
        "landing worker proved the session with the Prolific stand-in, served in its own process: "
        "bench/prolific_landing.py)",
    )
    parser.add_argument(
        "--prolific-latency-ms",
        type=float,
        default=300,
        help="with --landing prolific: added to every answer of the Prolific stand-in (e.g. 300 typical, 3000 slow)",
    )
    parser.add_argument(
        "--landing-concurrency",
        type=int,
        help="with --landing prolific: the landing worker's --concurrency (default: the Procfile's landing line)",
    )
    parser.add_argument(
        "--broker-url",
        default=prolific_landing.DEFAULT_BROKER,
        help="with --landing prolific: the Redis broker gunicorn queues the landing checks on and the worker reads",
    )
    parser.add_argument("--ramp", type=float, help="seconds over which ramp and poisson arrivals spread (default 30)")
    # sync x 2 (one thread each: gunicorn makes a sync worker given threads gthread): on the 2-core
    # machine on 2026-11-27, with claims and screens as cheap as issue 37 made them, 2 workers used
    # 4.0-4.8 ms of gunicorn CPU per answered screen against 5.0 for 3 and 5.5 for 4 (more processes
    # than cores contend for them) and answered the burst's claims at p95 0.60-0.64 s against 0.97;
    # gthread 2 x 1 or 2 x 2: 5.1-5.3 ms (docs/benchmarks/annotator-load.md)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=8, help="threads per gunicorn worker (gthread)")
    parser.add_argument("--worker-class", default="sync", help="gunicorn worker class (sync, gthread)")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--linger-share",
        type=float,
        default=0.2,
        help="share of screens where the annotator stays past AUTOSAVE_DELAY_MS after picking, so "
        "the browser sends the autosave before Next (default 0.2)",
    )
    parser.add_argument(
        "--per-pick-autosave",
        dest="linger_share",
        action="store_const",
        const=1.0,
        help="an autosave with every pick (what the browser sent before AUTOSAVE_DELAY_MS; AUTOSAVE_DELAY_MS=0 today)",
    )
    parser.add_argument(
        "--no-autosave", dest="linger_share", action="store_const", const=0.0, help="never an autosave before Next"
    )
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    parser.add_argument(
        "--compare-fast-path",
        action="store_true",
        help=f"run --rounds rounds of {FAST_PATH}=0 then =1 (fresh database and gunicorn each) and print their p95 ratio",
    )
    parser.add_argument(
        "--compare-study-flow",
        action="store_true",
        help="run --rounds rounds of the campaign's study flow on then off (every annotator through it before "
        "the work; fresh database and gunicorn each) and print their ratio of gunicorn CPU per answered screen",
    )
    parser.add_argument("--rounds", type=int, default=2, help="rounds of off and on for the --compare-* modes")
    parser.add_argument(
        "--compare-webhooks",
        action="store_true",
        help="run --rounds rounds of webhooks off then on (an endpoint wanting every event at a slow receiver)",
    )
    parser.add_argument("--webhook-delay", type=float, default=2.0, help="seconds the slow receiver takes to answer")
    args = parser.parse_args()
    if urllib.parse.urlsplit(args.database_url).hostname not in ("127.0.0.1", "localhost"):
        parser.error("the bench only talks to a database on 127.0.0.1")
    if args.annotators < 1:
        parser.error("--annotators: at least 1")
    if args.hits is None and args.landing == "prolific":
        args.hits = hits_needed(args.annotators, 1)  # a Prolific participant takes the study once: one HIT
    elif args.hits is None:
        if args.hits_per_annotator < 1:
            parser.error("--hits-per-annotator: at least 1, or some annotators get no HIT")
        args.hits = hits_needed(args.annotators, args.hits_per_annotator)
    elif (reason := check_hits_serve(args.annotators, args.hits)) is not None:
        parser.error(reason)

    if args.arrival is None:
        args.arrival = "burst" if args.ramp is None else "ramp"
    if args.ramp is None:
        args.ramp = 30.0
    if args.ramp <= 0 and args.arrival != "burst":
        parser.error("--ramp: more than 0 seconds for ramp and poisson arrivals")

    secret_key = "bench-only-secret-key-" + "x" * 32
    recreate_database(args.database_url)
    setup_django(args.database_url, secret_key)
    if args.compare_fast_path:
        compare_fast_path(args, secret_key)
    elif args.compare_webhooks:
        compare_webhooks(args, secret_key)
    elif args.compare_study_flow:
        compare_study_flow(args, secret_key)
    else:
        report(args, run_once(args, secret_key))


if __name__ == "__main__":
    main()
