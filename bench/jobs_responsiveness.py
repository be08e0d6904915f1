"""The web stays responsive while a job runs: the embedded default (SQLite + filesystem broker),
`runserver` and `run_worker` as `make demo` starts them, in a scratch folder.

    .venv/bin/python bench/jobs_responsiveness.py [--kind run_pipeline] [--port 8765]

Migrates a fresh SQLite database, ingests the demo subtitles, starts the web server and a worker,
queues the demo pipeline (weak labeler on the seed set → weak labels → ranking → campaign) from the
Jobs page as the researcher, and requests the Jobs page and the job's status partial in a loop until
the job ends. Reports the statuses the page showed and the request times while the job ran.

Ends with one line: job_status=<status> job_s=<s> requests=<n> p50_ms=<ms> max_ms=<ms> seen=<statuses>
"""

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run(args: list[str], env: dict) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL)


def start(args: list[str], env: dict, log: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "manage.py", *args], cwd=REPO, env=env, stdout=log.open("w"),
                            stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip


class Browser:
    def __init__(self, base: str):
        self.base, self.jar = base, CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def get(self, path: str) -> tuple[str, float]:
        started = time.perf_counter()
        body = self.opener.open(self.base + path, timeout=30).read().decode()
        return body, time.perf_counter() - started

    def post(self, path: str, data: dict) -> str:
        token = next(c.value for c in self.jar if c.name == "csrftoken")
        request = urllib.request.Request(self.base + path, urllib.parse.urlencode(data, doseq=True).encode(),
                                         headers={"X-CSRFToken": token, "Referer": self.base + path})  # fmt: skip
        response = self.opener.open(request, timeout=30)
        return response.geturl()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8765)
    options = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="jobs-bench-"))
    env = os.environ | {"DEBUG": "1", "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}", "CELERY_BROKER_URL": "",
                        "BROKER_DIR": str(folder / "broker"), "MEDIA_ROOT": str(folder / "media")}  # fmt: skip
    run(["migrate", "--noinput"], env)
    run(["ingest", str(REPO / "demo" / "subtitles")], env)
    code = "from django.contrib.auth.models import User; User.objects.create_user('bench', password='bench-pw', is_staff=True)"
    run(["shell", "-c", code], env)
    web = start(["runserver", f"127.0.0.1:{options.port}", "--noreload"], env, folder / "web.log")
    worker = start(["run_worker", "--pool", "solo"], env, folder / "worker.log")
    try:
        measure(Browser(f"http://127.0.0.1:{options.port}"))
    finally:
        for process in (web, worker):
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)


def measure(browser: Browser) -> None:
    for _ in range(60):
        try:
            browser.get("/accounts/login/")
            break
        except OSError:
            time.sleep(0.5)
    browser.post("/accounts/login/", {"username": "bench", "password": "bench-pw"})
    browser.get("/jobs/")
    data = {"kind": "run_pipeline", "run_pipeline-steps": ["weak_train", "weak_apply", "rank_candidates"],
            "run_pipeline-campaign_name": "Bench campaign", "run_pipeline-min_confidence": "0.5"}  # fmt: skip
    job_id = int(re.search(r"/jobs/(\d+)/", browser.post("/jobs/start/", data)).group(1))
    started, times, seen = time.perf_counter(), [], []
    while True:
        _, page_s = browser.get("/jobs/")
        body, status_s = browser.get(f"/jobs/{job_id}/status/")
        times += [page_s, status_s]
        status = re.search(r'data-status="(\w+)"', body).group(1)
        if not seen or seen[-1] != status:
            seen.append(status)
        if status in ("succeeded", "failed", "cancelled"):
            break
        time.sleep(0.5)
    job_s = time.perf_counter() - started
    ms = sorted(1000 * t for t in times)
    print(f"job_status={status} job_s={job_s:.1f} requests={len(ms)} p50_ms={statistics.median(ms):.0f} "
          f"max_ms={ms[-1]:.0f} seen={'>'.join(seen)}")  # fmt: skip


if __name__ == "__main__":
    main()
