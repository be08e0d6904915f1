"""`make demo`'s setup, idempotent: the demo accounts, the generated demo corpus (plus the
hand-written films in demo/subtitles) ingested, and the whole loop built by one `demo_build` job
(mlworkers/chain/demo.py): weak labeler → quiz pool (imported from the corpus's truth) → demo campaign →
simulated crowd → aggregation and payments → gold split → SBERT expansion → self-labeling rounds → bulk annotation → exports.

It returns only when that job has finished. When no worker picks the job up within a few seconds
it starts one of its own for the time (`--with-worker` starts it at once) and stops it after, also
when it is interrupted (Ctrl-C, SIGTERM, SIGHUP) or fails; killed outright, its worker dies with it.
Run again, it finds the finished job and only prints where to click.
"""

import contextlib
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import BaseCommand, CommandError, call_command
from django.utils import timezone

from annotation.demo_corpus.generator import DEFAULT_SEED, DEFAULT_SIZE, TRUTH_FILE, generate, write_corpus
from jobs.follow import follow
from jobs.models import JobRun
from jobs.runtime import start_job

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "demo-researcher"
DEMO_ANNOTATORS = [(f"annotator{i}", f"demo-annotator{i}") for i in (1, 2, 3)]
WORKER_GRACE_SECONDS = 5.0


def generated_corpus_dir() -> Path:
    return Path(settings.MEDIA_ROOT) / "demo" / "corpus"


class Command(BaseCommand):
    help = "Build the demo: accounts, corpus, campaign with a simulated crowd, models, exports."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--size", type=int, default=DEFAULT_SIZE, help=f"dialogues generated ({DEFAULT_SIZE})")
        parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="corpus seed")
        parser.add_argument("--per-label", type=int, default=9, help="campaign candidates per label (9)")
        parser.add_argument("--with-worker", action="store_true", help="start a worker at once, stop it after")
        parser.add_argument("--no-wait", action="store_true", help="queue the demo job and return")
        parser.add_argument(
            "--campaign-only",
            action="store_true",
            help="stop once the demo campaign's HITs are built, before the simulated crowd (bench/quiz_tells.py)",
        )

    def handle(self, *args, **options):
        started = time.perf_counter()
        self._create_user(DEMO_USERNAME, DEMO_PASSWORD, is_staff=True)
        for username, password in DEMO_ANNOTATORS:
            self._create_user(username, password, is_staff=False)
        folder = self._corpus(options["size"], options["seed"])
        for source in (Path(settings.BASE_DIR) / "demo" / "subtitles", folder):
            call_command("ingest", str(source), "--genre", "Drama", stdout=_Quiet(self.stdout))
        job = self._demo_job(folder, options)
        if job.status != JobRun.SUCCEEDED and not options["no_wait"]:
            job = self._wait(job, start_worker=options["with_worker"])
        self._hints(job, time.perf_counter() - started)

    def _corpus(self, size: int, seed: int) -> Path:
        folder = generated_corpus_dir()
        written = write_corpus(generate(size, seed), folder)
        self.stdout.write(f"demo corpus: {size} dialogues (seed {seed}) in {folder}, {len(written)} files written")
        return folder

    def _demo_job(self, folder: Path, options) -> JobRun:
        done = JobRun.objects.filter(kind="demo_build").exclude(status__in=[JobRun.FAILED, JobRun.CANCELLED])
        same = (j for j in done.order_by("-pk") if j.parameters.get("campaign_only", False) == options["campaign_only"])
        job = next(same, None)
        if job is not None:
            self.stdout.write(f"demo job {job.pk} is {job.status}: not queued again")
            return job
        parameters = {"truth_path": str(folder / TRUTH_FILE), "per_label": options["per_label"]}
        parameters["campaign_only"] = options["campaign_only"]
        user = get_user_model().objects.get(username=DEMO_USERNAME)
        job = start_job("demo_build", parameters, user=user)
        self.stdout.write(f"queued the demo job as job {job.pk} (follow it on /jobs/{job.pk}/)")
        return job

    def _wait(self, job: JobRun, *, start_worker: bool) -> JobRun:
        worker = self._start_worker() if start_worker else None
        finished = False
        try:
            with _stopped_by_signals():
                deadline = time.monotonic() + WORKER_GRACE_SECONDS
                while worker is None and not _worker_on(job):
                    if time.monotonic() > deadline:
                        worker = self._start_worker()
                    else:
                        time.sleep(0.5)
                job = follow(job.pk, self.stdout.write, interval=2.0)
                finished = True
        finally:
            if worker is not None:
                # interrupted, the worker is stopped at once: a warm shutdown would first finish the
                # demo job in hand (minutes); the job is resumable and the next demo_setup goes on
                _stop(worker, grace=30.0 if finished else 3.0)
        if job.status != JobRun.SUCCEEDED:
            raise CommandError(f"demo job {job.pk} {job.status}: {job.error or job.message}")
        return job

    def _start_worker(self) -> subprocess.Popen:
        command = [sys.executable, "manage.py", "run_worker", "--pool", "solo", "--loglevel", "WARNING"]
        # its own session: a Ctrl-C in the terminal reaches this command, which then stops the worker
        # (not the worker first, whose warm shutdown would finish the demo job before it stops); and
        # it dies with this process, however this process ends (a kill -9 included)
        worker = subprocess.Popen(command, cwd=settings.BASE_DIR, start_new_session=True, preexec_fn=_die_with_parent)
        if worker.poll() is not None:
            raise CommandError("the worker did not start")
        self.stdout.write(f"started worker {worker.pid} for the demo job (stopped when the job is done or this stops)")
        return worker

    def _create_user(self, username: str, password: str, *, is_staff: bool) -> None:
        User = get_user_model()
        user, created = User.objects.get_or_create(
            username=username, defaults={"is_staff": is_staff, "email": f"{username}@example.org"}
        )
        if created:
            user.set_password(password)
            user.save()

    def _hints(self, job: JobRun, seconds: float) -> None:
        from labeling.models import Campaign

        campaign = Campaign.objects.filter(pk=(job.result or {}).get("campaign")).first()
        base = "http://127.0.0.1:8000"
        dashboard = f"{base}/labeling/campaigns/{campaign.pk}/" if campaign else f"{base}/labeling/campaigns/"
        state = "ready" if job.status == JobRun.SUCCEEDED else f"job {job.pk} {job.status}"
        lines = [
            f"Demo {state} in {seconds:.0f} s. Start here:",
            f"  1. {base}/accounts/login/  as {DEMO_USERNAME} / {DEMO_PASSWORD} (researcher)",
            f"  2. {dashboard}  the demo campaign: agreement, workers, quiz, payments, how often the suggestions win",
            f"  3. {base}/jobs/  every step of the loop; {base}/models/  the trained models and their calibration",
            f"  4. {base}/corpus/analysis/  statistics, flows, examples, evaluation, skills, export",
            f"     {base}/labeling/campaigns/  also a pairwise campaign: the BotsTalk dialogues against the subtitles",
            f"  5. {base}/labeling/  as annotator1 / demo-annotator1 (or 2, 3): label a HIT yourself; the demo",
            "     campaign's study flow comes first: consent, instructions, three practice items with feedback,",
            "     then the work, a three-question exit survey and the completion code (Accept-Language: ar for Arabic)",
        ]
        self.stdout.write(self.style.SUCCESS(lines[0]))
        for line in lines[1:]:
            self.stdout.write(line)


def _worker_on(job: JobRun) -> bool:
    """Whether some worker has the job in hand: it left the queue and, if running, its heartbeat
    is fresh (a job whose demo_setup was killed stays "running" with an old heartbeat until a
    worker's stale-job sweep queues it again)."""
    job.refresh_from_db()
    if job.status == JobRun.QUEUED:
        return False
    if job.status != JobRun.RUNNING:
        return True
    fresh = timedelta(seconds=2 * int(getattr(settings, "JOB_HEARTBEAT_SECONDS", 15)))
    return job.heartbeat_at is not None and timezone.now() - job.heartbeat_at < fresh


def _stop(worker: subprocess.Popen, grace: float) -> None:
    """Ask the worker to stop (a warm shutdown finishes the job in hand), kill it after `grace` s."""
    if worker.poll() is not None:
        return
    worker.terminate()
    try:
        worker.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait(timeout=10)


def _die_with_parent() -> None:
    """In the worker, before it runs: the kernel sends it SIGKILL when its parent dies (Linux's
    PR_SET_PDEATHSIG; elsewhere the signal handlers and `finally` above stop it)."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG


class _Stopped(Exception):
    pass


@contextlib.contextmanager
def _stopped_by_signals():
    """SIGTERM and SIGHUP (a closed terminal, `kill`) end the command as Ctrl-C does, through the
    `finally` that stops its worker, instead of ending the process where it stands."""

    def stop(signum, frame):
        raise _Stopped(f"stopped by signal {signal.Signals(signum).name}")

    saved = {signum: signal.signal(signum, stop) for signum in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    except _Stopped as stopped:
        raise CommandError(str(stopped)) from None
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)


class _Quiet:
    """Keeps the ingest command's per-file report short: its summary lines only."""

    def __init__(self, stdout) -> None:
        self.stdout = stdout

    def write(self, text: str, *args, **kwargs) -> None:
        summary = [line for line in text.splitlines() if "file(s)" in line]
        if summary:
            self.stdout.write(summary[0])

    def flush(self) -> None:
        pass
