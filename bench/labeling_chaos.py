"""Chaos mode of the annotator load bench: the load held while servers fail under it.

    .venv/bin/python bench/labeling_chaos.py [--annotators 30] [--duration 150] [--think 1.0]

What it does:
1. starts its OWN servers on spare ports in a scratch folder, never the shared ones: redis-server
   (--save '', nothing persisted) and PostgreSQL (initdb + pg_ctl, trust auth, fsync off; run as the
   `postgres` user when this runs as root, which initdb requires);
2. fills a database there as bench/labeling_load.py does (one open campaign of --hits HITs of 20
   screens, 3 workers each; one signed-in session per annotator) and starts gunicorn (gthread) and
   one Celery worker (`manage.py run_worker --pool solo`) against them; this process queues a
   `labeling.aggregate_campaign` job every --job-every seconds through the same Redis;
3. runs --annotators simulated annotators over HTTP, each as the page does it: claim, first
   screen, then per screen the autosave (go=stay) on --linger-share of the screens (default 0.2:
   the page sends a pick on its own only after AUTOSAVE_DELAY_MS), Next (go=next) with the answer,
   which saves it, then submit;
   a request that fails (connection refused or reset, or a 5xx) is what the page shows as
   "Not saved yet ... trying again" (static/labeling/hit.js): counted in errors_shown, then sent
   again after Retry-After or 1, 2, 4... s (retries), for at most --give-up seconds;
4. meanwhile, spread over the run: SIGKILL one gunicorn worker (the master starts another),
   SIGKILL the Celery worker (started again 2 s later), restart Redis (killed, started again
   empty), restart PostgreSQL (pg_ctl restart -m immediate: crash recovery), SIGKILL another
   gunicorn worker;
5. checks the database: every answer the client got a success for is stored as sent (else lost),
   no answer is stored twice or without being sent (doubled), every submit answered with success
   is submitted, no HIT has more than its 3 submitted assignments; and every queued job finished;
6. stops everything it started and deletes the scratch folder, also on Ctrl-C or an error.

Ends with one line:
chaos=1 annotators=N events=<n> lost=<n> doubled=<n> errors_shown=<n> retries=<n> p95_ms=<n>
p95_ms is over every request kind, each timed from its first try to its answer (retries included).
Only 127.0.0.1 is contacted. The machine is shared: timings are noisy.
"""

import argparse
import http.client
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.labeling_load import (
    ASSIGNMENT,
    CHOICE,
    HEADING,
    HOST,
    Browser,
    fill_database,
    percentile,
    recreate_database,
    setup_django,
)

PG_BIN = Path("/usr/lib/postgresql/15/bin")
KINDS = ("claim", "screen", "autosave", "next", "submit")


def spare_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def wait_for(check, what: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{what} did not come up within {seconds:.0f} s")


def port_open(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex((HOST, port)) == 0


def kill(process: subprocess.Popen | None, sig: int = signal.SIGTERM, wait: float = 15) -> None:
    """Stop a server this bench started, with its children: each runs in a session of its own
    (Servers._spawn), so its process group is its pid. By its own Popen, never by name."""
    if process is None or process.poll() is not None:
        return
    try:
        os.killpg(process.pid, sig)
        process.wait(timeout=wait)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=5)
    except ProcessLookupError:
        pass


# --- The servers this bench owns --------------------------------------------------------------------


class Servers:
    """Redis, PostgreSQL, gunicorn and a Celery worker, all on spare ports under one scratch folder."""

    def __init__(self, scratch: Path, gunicorn_workers: int, threads: int) -> None:
        self.scratch = scratch
        self.logs = scratch / "logs"
        self.logs.mkdir()
        self.redis_port, self.pg_port, self.web_port = spare_port(), spare_port(), spare_port()
        self.gunicorn_workers, self.threads = gunicorn_workers, threads
        self.pg_data = scratch / "pgdata"
        self.pg_socket = scratch / "pgsocket"
        self.as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        self.redis: subprocess.Popen | None = None
        self.gunicorn: subprocess.Popen | None = None
        self.worker: subprocess.Popen | None = None
        self.pg_started = False
        self.env: dict[str, str] = {}
        self.spawned: list[subprocess.Popen] = []  # every server process started, restarted ones too

    @property
    def database_url(self) -> str:
        return f"postgres://postgres@{HOST}:{self.pg_port}/bench_chaos"

    @property
    def broker_url(self) -> str:
        return f"redis://{HOST}:{self.redis_port}/0"

    def _log(self, name: str):
        return open(self.logs / f"{name}.log", "ab")

    def _spawn(self, name: str, command: list[str], **options) -> subprocess.Popen:
        """Start a server with its output in logs/<name>.log (the child keeps the file open), in a
        session of its own: a Ctrl-C reaches this bench only, which then stops it."""
        with self._log(name) as log:
            process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, **options)
        self.spawned.append(process)
        return process

    # Redis
    def start_redis(self) -> None:
        command = ["redis-server", "--port", str(self.redis_port), "--bind", HOST, "--save", "", "--appendonly", "no"]
        command += ["--dir", str(self.scratch)]
        self.redis = self._spawn("redis", command)
        wait_for(lambda: port_open(self.redis_port), f"redis-server on port {self.redis_port}")

    def restart_redis(self) -> None:
        kill(self.redis, signal.SIGKILL)
        time.sleep(1)
        self.start_redis()

    # PostgreSQL
    def _pg(self, *arguments: str, check: bool = True) -> subprocess.CompletedProcess:
        with self._log("pg_ctl") as log:
            return subprocess.run(
                self.as_postgres + list(arguments), stdout=log, stderr=subprocess.STDOUT, check=check,
                start_new_session=True,  # the postmaster it starts is not in this bench's Ctrl-C group
            )  # fmt: skip

    def start_postgres(self) -> None:
        for folder in (self.pg_data, self.pg_socket):
            folder.mkdir()
        if self.as_postgres:
            shutil.chown(self.scratch, "postgres")
            for folder in (self.pg_data, self.pg_socket, self.logs):
                shutil.chown(folder, "postgres")
            for log in ("pg_ctl", "postgres"):
                (self.logs / f"{log}.log").touch()
                shutil.chown(self.logs / f"{log}.log", "postgres")
        initdb = [str(PG_BIN / "initdb"), "-D", str(self.pg_data), "-U", "postgres", "--auth=trust"]
        self._pg(*initdb, "-E", "UTF8", "--no-sync")
        options = (
            f"-p {self.pg_port} -c listen_addresses={HOST} -c unix_socket_directories={self.pg_socket} "
            "-c fsync=off -c full_page_writes=off -c max_connections=100"
        )
        self._pg(str(PG_BIN / "pg_ctl"), "-D", str(self.pg_data), "-o", options, "-l", str(self.logs / "postgres.log"),
                 "-w", "start")  # fmt: skip
        self.pg_started = True

    def restart_postgres(self) -> None:
        """An immediate stop (no checkpoint, every backend killed: a crash as far as clients can
        tell), then a start with crash recovery; pg_ctl keeps the options of the last start."""
        self._pg(str(PG_BIN / "pg_ctl"), "-D", str(self.pg_data), "-m", "immediate", "-w", "restart")

    def stop_postgres(self) -> None:
        if self.pg_started:
            self._pg(str(PG_BIN / "pg_ctl"), "-D", str(self.pg_data), "-m", "fast", "-w", "stop", check=False)
            self.pg_started = False

    # gunicorn and the Celery worker
    def start_gunicorn(self) -> None:
        command = [str(REPO / ".venv" / "bin" / "gunicorn"), "config.wsgi:application", f"--bind={HOST}:{self.web_port}",
                   f"--workers={self.gunicorn_workers}", "--worker-class=gthread", f"--threads={self.threads}",
                   "--keep-alive=5", "--timeout=60", "--log-level=warning"]  # fmt: skip
        self.gunicorn = self._spawn("gunicorn", command, cwd=REPO, env=self.env)

        def healthy() -> bool:
            connection = http.client.HTTPConnection(HOST, self.web_port, timeout=2)
            connection.request("GET", "/healthz")
            return connection.getresponse().status == 200

        wait_for(healthy, f"gunicorn on port {self.web_port}")

    def gunicorn_worker_pids(self) -> list[int]:
        master = self.gunicorn.pid
        try:
            return [int(pid) for pid in Path(f"/proc/{master}/task/{master}/children").read_text().split()]
        except OSError:
            return []

    def start_worker(self) -> None:
        command = [str(REPO / ".venv" / "bin" / "python"), "manage.py", "run_worker", "--queues", "default",
                   "--pool", "solo", "--loglevel", "INFO"]  # fmt: skip
        self.worker = self._spawn("worker", command, cwd=REPO, env=self.env)

    def stop_all(self) -> None:
        stopped = []
        for name, process in (("Celery worker", self.worker), ("gunicorn", self.gunicorn), ("Redis", self.redis)):
            if process is None:
                continue
            try:
                kill(process)
                stopped.append(f"{name} {process.pid} ({process.returncode})")
            except Exception as error:  # go on: every other server still has to stop
                print(f"stopping {name} {process.pid}: {error!r}", file=sys.stderr)
        for process in self.spawned:  # anything left over (a server restarted while stopping)
            kill(process, signal.SIGKILL)
        self.stop_postgres()
        print("stopped:", ", ".join(stopped + ["PostgreSQL"]), flush=True)


# --- Faults --------------------------------------------------------------------------------------


@dataclass
class Event:
    at: float  # seconds into the run
    name: str
    outcome: str = ""


def fault_plan(servers: Servers, duration: float) -> list[tuple[float, str, object]]:
    def kill_gunicorn_worker() -> str:
        pids = servers.gunicorn_worker_pids()
        if not pids:
            return "no gunicorn worker found"
        victim = random.Random(len(pids)).choice(pids)
        os.kill(victim, signal.SIGKILL)
        return f"SIGKILL gunicorn worker {victim}"

    def kill_celery_worker() -> str:
        victim = servers.worker.pid
        kill(servers.worker, signal.SIGKILL)
        time.sleep(2)
        servers.start_worker()
        return f"SIGKILL Celery worker {victim}, started {servers.worker.pid}"

    def restart_redis() -> str:
        started = time.monotonic()
        servers.restart_redis()
        return f"Redis killed and started again (empty) in {time.monotonic() - started:.1f} s"

    def restart_postgres() -> str:
        started = time.monotonic()
        servers.restart_postgres()
        return f"PostgreSQL restarted -m immediate in {time.monotonic() - started:.1f} s"

    return [
        (0.15 * duration, "kill the Celery worker", kill_celery_worker),
        (0.30 * duration, "kill a gunicorn worker", kill_gunicorn_worker),
        (0.45 * duration, "restart Redis", restart_redis),
        (0.60 * duration, "restart PostgreSQL", restart_postgres),
        (0.75 * duration, "kill a gunicorn worker", kill_gunicorn_worker),
    ]


def run_faults(plan, started: float, stop: threading.Event, events: list[Event]) -> None:
    for at, name, action in plan:
        if stop.wait(max(0.0, started + at - time.monotonic())):
            return
        event = Event(round(time.monotonic() - started, 1), name)
        try:
            event.outcome = action()
        except Exception as error:
            event.outcome = f"FAILED: {error!r}"
        events.append(event)
        print(f"  t={event.at:5.1f}s {name}: {event.outcome}", flush=True)


# --- Jobs queued through the same Redis -------------------------------------------------------------


def queue_jobs(campaign_id: int, every: float, stop: threading.Event, tally: "Tally") -> None:
    from django.db import close_old_connections, connection

    from jobs.runtime import start_job

    while not stop.wait(every):
        try:
            tally.job_ids.append(start_job("labeling.aggregate_campaign", {"campaign_id": campaign_id}).pk)
        except Exception as error:  # Redis or PostgreSQL away: like a page, say so and try at the next tick
            tally.jobs_not_queued.append(f"{type(error).__module__}.{type(error).__name__}")
            connection.close()
        finally:
            close_old_connections()


# --- One annotator, retrying like the page ---------------------------------------------------------


class GaveUp(Exception):
    pass


@dataclass
class Tally:
    ms: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    sent: dict[tuple[int, int], str] = field(default_factory=dict)  # answers acknowledged with success
    tried: dict[tuple[int, int], str] = field(default_factory=dict)  # answers sent at least once
    submitted: list[int] = field(default_factory=list)  # submits acknowledged with success
    errors_shown: int = 0
    retries: int = 0
    silent_resends: int = 0
    http_500: int = 0
    failures: Counter = field(default_factory=Counter)
    gave_up: list[str] = field(default_factory=list)
    job_ids: list[int] = field(default_factory=list)
    jobs_not_queued: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class CountingBrowser(Browser):
    """labeling_load's Browser, counting the requests it resends at once on a fresh connection
    (the server closed the kept-alive one, or the worker holding it was killed), as browsers do
    without showing anything."""

    def __init__(self, port: int, session_key: str, tally: "Tally") -> None:
        super().__init__(port, session_key)
        self.tally = tally

    def request(self, method: str, path: str, form: dict | None = None, htmx: bool = False):
        connection = self.connection
        answer = super().request(method, path, form, htmx)
        if self.connection is not connection:
            with self.tally.lock:
                self.tally.silent_resends += 1
        return answer


class Annotator:
    def __init__(self, port: int, session_key: str, tally: Tally, give_up: float) -> None:
        self.browser = CountingBrowser(port, session_key, tally)
        self.tally, self.give_up = tally, give_up
        self.linger_share = 1.0  # share of screens with an autosave before Next

    def call(self, kind: str, method: str, path: str, form: dict | None = None, htmx: bool = False):
        """One request as the page sends it: on a network error or a 5xx it shows "Not saved yet"
        and sends it again after Retry-After or 1, 2, 4... s (at most 16), for --give-up seconds."""
        started = time.perf_counter()
        attempt = 0
        while True:
            try:
                status, headers, body = self.browser.request(method, path, form, htmx)
                if status < 500:
                    self.tally.ms[kind].append((time.perf_counter() - started) * 1000)
                    return status, headers, body
                reason = f"HTTP {status}"
            except (OSError, http.client.HTTPException) as error:
                headers, reason = {}, type(error).__name__
                self.browser.connection.close()
                self.browser.connection = http.client.HTTPConnection(HOST, self.browser.port, timeout=30)
            attempt += 1
            with self.tally.lock:
                self.tally.errors_shown += 1
                self.tally.failures[f"{kind}: {reason}"] += 1
                self.tally.http_500 += reason == "HTTP 500"
            if time.perf_counter() - started > self.give_up:
                raise GaveUp(f"{kind} {path}: still failing after {attempt} tries ({reason})")
            retry_after = headers.get("Retry-After", "")
            delay = float(retry_after) if retry_after.isdigit() else min(2 ** (attempt - 1), 16)
            time.sleep(min(delay, 30))
            with self.tally.lock:
                self.tally.retries += 1

    def run(self, think: float, deadline: float, rng: random.Random) -> None:
        tally = self.tally
        self.call("screen", "GET", "/labeling/")
        while time.monotonic() < deadline:
            # with htmx, as the home page's button sends it: the first screen comes in the claim's
            # answer (HX-Push-Url); a claim replayed after a lost answer resumes the same HIT
            status, headers, page = self.call("claim", "POST", "/labeling/claim/", form={}, htmx=True)
            target = headers.get("HX-Push-Url") or headers.get("HX-Redirect") or headers.get("Location", "")
            found = ASSIGNMENT.search(target)
            if status not in (200, 204, 302) or not found:
                return  # no HIT left for this annotator
            assignment = int(found.group(1))
            if status != 200:  # the review (every screen answered before a lost answer), or a redirect
                page = self.follow(target)
            while (heading := HEADING.search(page)) is not None and time.monotonic() < deadline:
                position = int(heading.group(1))
                label = rng.choice(CHOICE.findall(page))
                time.sleep(think * rng.uniform(0.5, 1.5))
                url = f"/labeling/assignments/{assignment}/items/{position}/answer/"
                tally.tried[(assignment, position)] = label
                if rng.random() < self.linger_share:  # the pick saved on its own before Next
                    status, _, body = self.call(
                        "autosave", "POST", url, form={"go": "stay", "answer": label}, htmx=True
                    )
                    if status != 200 or "Saved" not in body:
                        raise RuntimeError(f"autosave {assignment}/{position} answered {status}: {body[:200]}")
                form = {"go": "next", "answer": label, "seconds": "1"}
                status, _, page = self.call("next", "POST", url, form=form, htmx=True)
                if status != 200:
                    raise RuntimeError(f"next {assignment}/{position} answered {status}: {page[:200]}")
                tally.sent[(assignment, position)] = label
            if "Review and submit" not in page:
                return  # out of time in the middle of a HIT: it stays accepted
            time.sleep(think * rng.uniform(0.5, 1.5))
            submit = f"/labeling/assignments/{assignment}/submit/"
            status, headers, _ = self.call("submit", "POST", submit, form={}, htmx=True)
            target = headers.get("HX-Redirect", "")
            if status == 204 and target.endswith(f"/{assignment}/"):
                # refused: a replay of a submit that went through ends on the assignment's page,
                # which sends a submitted assignment to its feedback
                _, headers, _ = self.call("screen", "GET", target)
                target = headers.get("Location", "")
            if status != 204 or "feedback" not in target:
                raise RuntimeError(f"submit of {assignment} answered {status} {target!r}")
            tally.submitted.append(assignment)

    def follow(self, location: str) -> str:
        """GET through redirects (the assignment's page sends to its first open screen)."""
        for _ in range(5):
            status, headers, body = self.call("screen", "GET", location)
            if status not in (301, 302):
                return body
            location = headers["Location"]
        raise RuntimeError(f"too many redirects from {location}")


def run_annotators(port: int, sessions: list[str], tally: Tally, args) -> list[str]:
    deadline = time.monotonic() + args.duration
    errors: list[str] = []

    def body(index: int) -> None:
        rng = random.Random(args.seed * 1000 + index)
        time.sleep(rng.uniform(0, args.think))
        try:
            annotator = Annotator(port, sessions[index], tally, args.give_up)
            annotator.linger_share = args.linger_share
            annotator.run(args.think, deadline, rng)
        except GaveUp as error:
            tally.gave_up.append(f"annotator {index}: {error}")
        except Exception as error:
            errors.append(f"annotator {index}: {error!r}")

    threads = [threading.Thread(target=body, args=(i,), daemon=True) for i in range(len(sessions))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=args.duration + args.give_up + 120)
    return errors


# --- The end check --------------------------------------------------------------------------------


def check_database(tally: Tally) -> dict:
    from django.db import connection

    from labeling.models import HIT, Assignment, Response

    connection.close()  # this process's connection died with the PostgreSQL restart
    stored = defaultdict(list)
    for key in Response.objects.values_list("assignment_id", "item__position", "label__name"):
        stored[key[:2]].append(key[2])
    lost_answers = sum(1 for key, label in tally.sent.items() if stored.get(key) != [label])
    duplicates = sum(len(labels) - 1 for labels in stored.values())
    never_sent = sum(1 for key in stored if key not in tally.tried)
    status = dict(Assignment.objects.filter(pk__in=tally.submitted).values_list("pk", "status"))
    lost_submits = sum(1 for pk in tally.submitted if status.get(pk) != Assignment.SUBMITTED)
    per_hit = Counter(Assignment.objects.done().values_list("hit_id", flat=True))
    seats = dict(HIT.objects.values_list("pk", "campaign__workers_per_hit"))
    over = sum(max(0, count - seats[hit]) for hit, count in per_hit.items())
    return {
        "lost_answers": lost_answers,
        "lost_submits": lost_submits,
        "duplicate_rows": duplicates,
        "stored_never_sent": never_sent,
        "submitted_over_seats": over,
        "hits": len(seats),
        "hits_full": sum(1 for hit, count in per_hit.items() if count >= seats[hit]),
        "submitted_in_db": sum(per_hit.values()),
    }


def wait_for_jobs(seconds: float) -> tuple[Counter, list[str]]:
    """Wait for every recorded job (also those whose queueing raised: their row exists) to finish;
    the statuses, and what each unfinished or failed one says."""
    from django.db import connection

    from jobs.models import JobRun

    deadline = time.monotonic() + seconds
    while True:
        connection.close()
        statuses = Counter(JobRun.objects.values_list("status", flat=True))
        unfinished = JobRun.objects.unfinished()
        if not unfinished.exists() or time.monotonic() > deadline:
            left = unfinished | JobRun.objects.filter(status=JobRun.FAILED)
            return statuses, [f"job {job.pk} {job.status}: {job.error or job.message}" for job in left]
        time.sleep(1)


# --- main -------------------------------------------------------------------------------------------


def stop_like_ctrl_c(signum, frame) -> None:
    """SIGTERM stops the bench like Ctrl-C: through main's finally, which stops every server."""
    raise KeyboardInterrupt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--annotators", type=int, default=30)
    parser.add_argument("--hits", type=int, help="HITs of 20 screens, 3 workers each (default: enough for the run)")
    parser.add_argument("--think", type=float, default=1.0, help="mean seconds between two answers")
    parser.add_argument("--duration", type=float, default=150, help="seconds of annotating; faults spread over it")
    parser.add_argument("--give-up", type=float, default=90, help="seconds one request is retried before giving up")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=4, help="threads per gunicorn worker")
    parser.add_argument("--job-every", type=float, default=5, help="seconds between two queued aggregation jobs")
    parser.add_argument(
        "--linger-share",
        type=float,
        default=0.2,
        help="share of screens with the autosave before Next (the page saves a pick on its own only after "
        "AUTOSAVE_DELAY_MS; elsewhere Next carries it); 1: every pick sent at once, as the page did before",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder (logs) for a look afterwards")
    args = parser.parse_args()
    if args.annotators < 1 or args.duration <= 0:
        parser.error("--annotators and --duration must be positive")
    missing = [tool for tool in ("redis-server",) if shutil.which(tool) is None]
    missing += [str(PG_BIN / tool) for tool in ("initdb", "pg_ctl") if not (PG_BIN / tool).exists()]
    if missing:
        sys.exit(f"labeling_chaos needs {', '.join(missing)}")
    # Each annotator finishes a HIT in about 20 screens x (think + two requests); 3 seats per HIT.
    hits = args.hits or max(4, int(args.annotators * args.duration / (20 * args.think * 1.2) / 3) + 2)

    signal.signal(signal.SIGTERM, stop_like_ctrl_c)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # also when started in the background
    scratch = Path(tempfile.mkdtemp(prefix="labeling-chaos-"))
    servers = Servers(scratch, args.workers, args.threads)
    stop = threading.Event()
    try:
        servers.start_redis()
        servers.start_postgres()
        secret_key = "bench-only-secret-key-" + "c" * 32
        recreate_database(servers.database_url)
        fast_jobs = {"JOB_HEARTBEAT_SECONDS": "2", "JOB_STALE_SECONDS": "8", "JOB_SWEEP_SECONDS": "3"}
        os.environ.update(CELERY_BROKER_URL=servers.broker_url, **fast_jobs)
        setup_django(servers.database_url, secret_key)
        sessions = fill_database(args.annotators, hits, args.seed)
        from labeling.models import Campaign

        campaign_id = Campaign.objects.get().pk
        static_root = scratch / "static"
        static_root.mkdir()
        servers.env = {**os.environ, "STATIC_ROOT": str(static_root), "DB_CONN_MAX_AGE": "60"}
        servers.start_gunicorn()
        servers.start_worker()
        print(
            f"chaos bench: {args.annotators} annotators, {hits} HITs, think {args.think}s, {args.duration:.0f} s; "
            f"own Redis :{servers.redis_port}, PostgreSQL :{servers.pg_port}, gunicorn :{servers.web_port} "
            f"({args.workers} workers x {args.threads} threads), 1 Celery worker; scratch {scratch}",
            flush=True,
        )

        tally = Tally()
        events: list[Event] = []
        started = time.monotonic()
        faults = threading.Thread(
            target=run_faults, args=(fault_plan(servers, args.duration), started, stop, events), daemon=True
        )
        jobs = threading.Thread(target=queue_jobs, args=(campaign_id, args.job_every, stop, tally), daemon=True)
        faults.start()
        jobs.start()
        errors = run_annotators(servers.web_port, sessions, tally, args)
        elapsed = time.monotonic() - started
        stop.set()
        faults.join(timeout=60)
        jobs.join(timeout=30)
        job_statuses, unfinished_jobs = wait_for_jobs(60)
        checks = check_database(tally)
    finally:
        stop.set()
        servers.stop_all()
        if args.keep:
            print(f"scratch folder kept: {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)

    print(
        f"elapsed {elapsed:.1f} s; answers acknowledged {len(tally.sent)}, submits acknowledged {len(tally.submitted)}"
    )
    for kind in KINDS:
        values = tally.ms[kind]
        print(
            f"{kind:>9}: {len(values):5d} requests  p50 {percentile(values, 0.5):7.1f} ms  "
            f"p95 {percentile(values, 0.95):7.1f} ms  max {max(values, default=0):8.1f} ms"
        )
    print("failed tries (shown as 'Not saved yet', then retried):", dict(tally.failures.most_common()) or "none")
    print(
        f"HTTP 500 answers: {tally.http_500}; requests given up: {len(tally.gave_up)}; resent at once on a "
        f"new connection (not shown, as a browser does): {tally.silent_resends}"
    )
    print(
        f"jobs: {sum(job_statuses.values())} recorded, {dict(job_statuses)}; queueing raised "
        f"{len(tally.jobs_not_queued)} times (broker or database away): {Counter(tally.jobs_not_queued)}"
    )
    for line in unfinished_jobs[:5]:
        print("not succeeded:", line)
    print(f"checks: {checks}")
    for error in (tally.gave_up + errors)[:10]:
        print("error:", error)
    lost = checks["lost_answers"] + checks["lost_submits"]
    doubled = checks["duplicate_rows"] + checks["stored_never_sent"] + checks["submitted_over_seats"]
    p95 = percentile([ms for kind in KINDS for ms in tally.ms[kind]], 0.95)
    print(
        f"chaos=1 annotators={args.annotators} events={len(events)} lost={lost} doubled={doubled} "
        f"errors_shown={tally.errors_shown} retries={tally.retries} p95_ms={p95:.0f}"
    )


if __name__ == "__main__":
    main()
