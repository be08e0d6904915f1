"""A real site for the client's tests: the Django server and a job worker (`manage.py runserver`,
`manage.py run_worker`) on the test database, each a process of its own on a free port, the jobs on
the embedded broker in a folder of the test's own. PostgreSQL only: pytest's SQLite test database
lives in this process's memory, out of the server's reach."""

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import requests
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.db import connection

from tests.conftest import REPO_ROOT

CLIENT_DIR = REPO_ROOT / "client"
UP_WITHIN_S = 120
PASSWORD = "pw-client-researcher"  # the researcher's and the annotator's (tests/client/conftest.py)


@dataclass(frozen=True)
class Site:
    url: str
    env: dict[str, str]  # what a process that runs the client needs (PYTHONPATH naming the client)


def server_hash(password: str) -> str:
    """The servers run with Django's default hashers (the test run swaps in a fast one)."""
    hasher = PBKDF2PasswordHasher()
    return hasher.encode(password, hasher.salt())


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_database_url() -> str:
    s = connection.settings_dict
    credentials = quote(s["USER"] or "") + (f":{quote(s['PASSWORD'])}" if s.get("PASSWORD") else "")
    return f"postgres://{credentials}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def site_environment(folder: Path) -> dict[str, str]:
    """Shipped settings but for what a plain-HTTP loopback site needs (the documented intranet
    settings: no https redirect, cookies not Secure), the demo quiz bank, few report resamples."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("SECURE_", "REDIS_URL", "CELERY_"))}
    return environment | {
        "DEBUG": "0", "SECRET_KEY": "client-tests-secret-key-for-this-test-only-0123456789abcdef",
        "ALLOWED_HOSTS": "127.0.0.1", "DATABASE_URL": test_database_url(), "SECURE_SSL_REDIRECT": "0",
        "SECURE_COOKIES": "0", "SECURE_HSTS_SECONDS": "0", "BROKER_DIR": str(folder / "broker"),
        "MEDIA_ROOT": str(folder / "media"), "QUIZ_DEMO_BANK": "1", "QUIZ_ITEMS_PER_SEAT": "0",
        "STUDY_REPORT_RESAMPLES": "50", "ML_DEVICE": "cpu", "OMP_NUM_THREADS": "1",
    }  # fmt: skip


@contextmanager
def running_site(folder: Path) -> Iterator[Site]:
    environment, port = site_environment(folder), free_port()
    logs = {name: (folder / f"{name}.log").open("w") for name in ("server", "worker")}
    commands = {
        "server": ["manage.py", "runserver", "--noreload", "--skip-checks", f"127.0.0.1:{port}"],
        "worker": ["manage.py", "run_worker", "--pool", "solo"],
    }
    processes = {
        name: subprocess.Popen(
            [sys.executable, *command],
            cwd=REPO_ROOT,
            env=environment,
            stdout=logs[name],
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        for name, command in commands.items()
    }
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_until_up(processes["server"], url, folder / "server.log")
        pythonpath = os.pathsep.join(filter(None, [str(CLIENT_DIR), os.environ.get("PYTHONPATH")]))
        yield Site(url, {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": pythonpath})
    finally:
        for process in processes.values():
            _stop(process)
        for log in logs.values():
            log.close()


def _wait_until_up(server: subprocess.Popen, url: str, log: Path) -> None:
    deadline = time.monotonic() + UP_WITHIN_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"the server exited:\n{log.read_text()[-3000:]}")
        try:
            if requests.get(url + "/healthz", timeout=5).status_code == 200:
                return
        except requests.ConnectionError:
            time.sleep(0.3)
    raise AssertionError(f"the server at {url} did not answer within {UP_WITHIN_S} s:\n{log.read_text()[-3000:]}")


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
