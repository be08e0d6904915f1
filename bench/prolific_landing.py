"""`--landing prolific` of bench/labeling_load.py: participants arrive through the campaign's
Prolific study link and are proven by the landing check, as on a live study.

- The campaign's Prolific study is recorded as published (its Publication, as publishing would
  leave it; publishing itself is bench/platform_soak.py's) and the campaign opened.
- The project's stateful Prolific stand-in runs in a process of its own
  (bench/prolific_standin_server.py), reached over HTTP(S) on 127.0.0.1 and answering every call
  after `--prolific-latency-ms`; the study is ACTIVE on it with one place per participant, and
  each participant has taken a place and opened the study (an ACTIVE submission: a proven
  participant). The adapter has no base-URL setting (labeling.platforms.prolific.API is fixed),
  so gunicorn and the landing worker are pointed at the stand-in through `requests`' own
  environment (HTTPS_PROXY, REQUESTS_CA_BUNDLE): no product code is changed or patched.
- The landing check's worker is started from the Procfile's `landing` line (its own queue and
  pool), on a Redis broker (CELERY_BROKER_URL, --broker-url), as gunicorn is started.
- Each participant GETs its landing URL; while the answer is the "Checking" page (202) it waits
  the page's own refresh interval (its <meta http-equiv="refresh">) and GETs it again, as the
  browser does, until the landing redirects to a HIT: the time from the first GET to that answer
  is the participant's time to hold a HIT.
"""

import json
import re
import shlex
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"
STUDY = "60loadbench0000000000000"  # 24 characters, as Prolific's ids
REFRESH = re.compile(r'<meta http-equiv="refresh" content="(\d+(?:\.\d+)?)')
DEFAULT_BROKER = "redis://127.0.0.1:6379/0"


def participants(annotators: int) -> list[tuple[str, str]]:
    """(PROLIFIC_PID, SESSION_ID) of each participant, 24 characters each as Prolific's."""
    return [(f"5f{index:022d}", f"64{index:022d}") for index in range(annotators)]


def record_study(campaign) -> None:
    """The campaign's study recorded as published on Prolific, and the campaign opened."""
    from labeling.models import Campaign, Worker
    from labeling.platforms.publications import publication_for
    from labeling.services.campaigns import set_campaign_status

    publication_for(campaign, Worker.PROLIFIC, external_id=STUDY)
    set_campaign_status(campaign, Campaign.OPEN)


def landing_urls(annotators: int) -> list[list[str]]:
    """Per participant, the one study link Prolific fills in for them (a participant takes a study once)."""
    from labeling.models import Campaign, Worker
    from labeling.services.entry_tokens import publication_token

    campaign = Campaign.objects.get(name="Load test")
    token = publication_token(campaign, Worker.PROLIFIC)
    urls = []
    for participant, session in participants(annotators):
        params = {
            "campaign": campaign.pk,
            "token": token,
            "PROLIFIC_PID": participant,
            "STUDY_ID": STUDY,
            "SESSION_ID": session,
        }
        urls.append([f"/labeling/platform/prolific/?{urllib.parse.urlencode(params)}"])
    return urls


def refresh_seconds(page: str, default: float = 2.0) -> float:
    """The "Checking" page's own refresh interval (labeling.pages.landings.CHECK_AGAIN_SECONDS)."""
    found = REFRESH.search(page)
    return float(found.group(1)) if found else default


def _procfile_landing_line() -> tuple[dict[str, str], list[str]]:
    """The Procfile's `landing` line: its leading NAME=value settings (the shell honcho runs it in
    reads them) and its command's words."""
    line = next(
        line.split(":", 1)[1] for line in (REPO / "Procfile").read_text().splitlines() if line.startswith("landing:")
    )
    words = shlex.split(line)
    settings = {}
    while "=" in words[0]:
        name, value = words.pop(0).split("=", 1)
        settings[name] = value
    return settings, words


def procfile_landing_command(concurrency: int | None) -> list[str]:
    """The Procfile's `landing` command, run with this interpreter (and --landing-concurrency, if
    given); its settings are procfile_landing_environment's."""
    words = _procfile_landing_line()[1]
    if words[0] == "python":
        words[0] = sys.executable
    if concurrency is not None:
        at = words.index("--concurrency")
        words[at + 1] = str(concurrency)
    return words


def procfile_landing_environment() -> dict[str, str]:
    """The NAME=value settings the Procfile's `landing` line starts its command with."""
    return _procfile_landing_line()[0]


def _post(url: str, payload: dict) -> dict:
    request = urllib.request.Request(url, json.dumps(payload).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


def _wait_for_line(process: subprocess.Popen, log: Path, needle: str, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited ({process.returncode}): {log.read_text()[-2000:]}")
        if needle in log.read_text(errors="replace"):
            return
        time.sleep(0.3)
    raise RuntimeError(f"{what} not ready within {timeout:.0f} s: {log.read_text()[-2000:]}")


class Services:
    """The stand-in's server and the landing worker of one run; `env`: what gunicorn needs too."""

    def __init__(self, port: int, latency_ms: float, annotators: int, broker_url: str) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="bench-prolific-"))
        self.port, self.broker_url = port, broker_url
        self.processes: list[subprocess.Popen] = []
        self._start_standin(latency_ms, annotators)
        self.env = {
            "HTTPS_PROXY": f"http://{HOST}:{port}",
            "https_proxy": f"http://{HOST}:{port}",
            "REQUESTS_CA_BUNDLE": str(self.folder / "prolific.pem"),
            "PROLIFIC_API_TOKEN": "bench-token-not-a-secret",
            "CELERY_BROKER_URL": broker_url,
        }

    def _start_standin(self, latency_ms: float, annotators: int) -> None:
        log = self.folder / "standin.log"
        command = [sys.executable, str(REPO / "bench" / "prolific_standin_server.py")]
        command += ["--port", str(self.port), "--latency-ms", str(latency_ms), "--cert-dir", str(self.folder)]
        server = subprocess.Popen(command, cwd=REPO, stdout=log.open("w"), stderr=subprocess.STDOUT)
        self.processes.append(server)
        _wait_for_line(server, log, "ready port=", "the Prolific stand-in")
        published = _post(
            f"http://{HOST}:{self.port}/bench/study",
            {"study": STUDY, "participants": [list(pair) for pair in participants(annotators)]},
        )
        if published["active"] != annotators:
            raise RuntimeError(f"the stand-in holds {published['active']} active submissions, not {annotators}")

    def start_worker(self, env: dict, concurrency: int | None) -> list[str]:
        """The landing worker, as the Procfile starts it, with gunicorn's environment; its command."""
        command = procfile_landing_command(concurrency)
        log = self.folder / "worker.log"
        env = env | procfile_landing_environment()
        worker = subprocess.Popen(command, cwd=REPO, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)
        self.processes.append(worker)
        _wait_for_line(worker, log, " ready.", "the landing worker")
        return command

    def stats(self) -> dict:
        with urllib.request.urlopen(f"http://{HOST}:{self.port}/bench/stats", timeout=10) as answer:
            return json.loads(answer.read())

    def stop(self) -> None:
        for process in reversed(self.processes):
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
