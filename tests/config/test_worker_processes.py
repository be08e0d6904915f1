"""Processes that behave on a shared machine: every process of the project starts with OpenMP
waiting passively (its threads sleep instead of spinning), and a command that starts a worker
stops it when it stops: at the end, on a signal, or killed outright.

Real processes: marked `alone` (make test runs them after the parallel run, with nothing beside them).
"""

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

pytestmark = [pytest.mark.alone, pytest.mark.slow]

# a torch process that does a little parallel work, then waits, twenty times: the CPU it burns per
# second of wall clock is what its idle OpenMP threads cost the other processes on the machine
IDLE_COST = """
import config, os, resource, time, torch
torch.set_num_threads(2)
values = torch.randn(1_000_000)
start, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
for _ in range(20):
    torch.exp(values)
    time.sleep(0.05)
after = resource.getrusage(resource.RUSAGE_SELF)
cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
print(os.environ["OMP_WAIT_POLICY"], cpu / (time.perf_counter() - start))
"""


def _environment(**overrides: str) -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if k not in {"OMP_WAIT_POLICY", "DATABASE_URL"}}
    environment.update(overrides)
    return environment


def _idle_cost(**overrides: str) -> tuple[str, float]:
    result = subprocess.run([sys.executable, "-c", IDLE_COST], cwd=REPO_ROOT, env=_environment(**overrides),
                            capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
    policy, cost = result.stdout.split()
    return policy, float(cost)


def test_every_process_waits_passively_unless_its_environment_says_otherwise():
    passive_policy, passive = _idle_cost()
    active_policy, active = _idle_cost(OMP_WAIT_POLICY="ACTIVE")
    assert (passive_policy, active_policy) == ("PASSIVE", "ACTIVE")
    # spinning threads burn a core while they wait; passive ones sleep
    assert passive < 0.5 * active, (passive, active)
    for entry in ("import config.wsgi", "from config.celery import app"):
        code = f"{entry}; import os; print(os.environ['OMP_WAIT_POLICY'])"
        shown = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True,
                               env=_environment(DEBUG="1"), timeout=120, check=True)  # fmt: skip
        assert shown.stdout.split()[-1] == "PASSIVE"


@pytest.fixture(scope="module")
def migrated_database(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("demo-db")
    database = folder / "db.sqlite3"
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"], cwd=REPO_ROOT, check=True,
                   env=_environment(DEBUG="1", DATABASE_URL=f"sqlite:///{database}"), capture_output=True,
                   timeout=300)  # fmt: skip
    return database


def _demo_setup(migrated_database: Path, folder: Path) -> tuple[subprocess.Popen, int]:
    """demo_setup with its own worker on a copy of the migrated database; returns it and its worker's pid."""
    database = folder / "db.sqlite3"
    shutil.copy(migrated_database, database)
    environment = _environment(
        DEBUG="1", DATABASE_URL=f"sqlite:///{database}", MEDIA_ROOT=str(folder / "media"),
        BROKER_DIR=str(folder / "broker"), PYTHONUNBUFFERED="1",
    )  # fmt: skip
    command = [sys.executable, "manage.py", "demo_setup", "--with-worker", "--size", "60", "--per-label", "1"]
    setup = subprocess.Popen(command, cwd=REPO_ROOT, env=environment, stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    for line in setup.stdout:
        if line.startswith("started worker "):
            return setup, int(line.split()[2])
        assert time.monotonic() < deadline, "demo_setup started no worker"
    raise AssertionError(f"demo_setup ended (exit {setup.wait()}) without starting a worker")


def _gone(pid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state in ("Z", "X"):  # ended, not yet reaped by whoever adopted it
            return True
        time.sleep(0.2)
    return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_demo_setup_stops_its_worker_however_it_is_stopped(migrated_database, tmp_path, how):
    setup, worker = _demo_setup(migrated_database, tmp_path)
    try:
        time.sleep(1.0)  # the worker is up and at the demo job
        assert not _gone(worker, within=0.1)
        setup.send_signal(how)
        setup.wait(timeout=60)
        assert _gone(worker, within=30), f"worker {worker} outlived demo_setup stopped by {how.name}"
    finally:
        for pid in (setup.pid, worker):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        setup.stdout.close()
