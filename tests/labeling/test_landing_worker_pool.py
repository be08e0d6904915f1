"""The landing worker's threads share a pool of database connections (DB_POOL_MAX_SIZE, the
Procfile's and compose's `landing` worker) and hold none while a check waits on Prolific
(labeling.platforms.prolific_checks.run_check): 200 checks of a launch burst wait at once on as
many threads while PostgreSQL sees at most the pool's connections (issue 46)."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from labeling.platforms import prolific_checks

REPO = Path(__file__).resolve().parents[2]


class FakeConnection:
    def __init__(self, *, pool, in_atomic_block=False):
        self.pool, self.in_atomic_block, self.closed = pool, in_atomic_block, 0

    def close(self):
        self.closed += 1


@pytest.mark.parametrize(("pool", "atomic", "released"), [(object(), False, 1), (None, False, 0), (object(), True, 0)])
def test_a_check_gives_its_pooled_connection_back_while_it_waits(monkeypatch, pool, atomic, released):
    fake = FakeConnection(pool=pool, in_atomic_block=atomic)
    monkeypatch.setattr(prolific_checks, "connection", fake)
    prolific_checks._release_pooled_connection()
    assert fake.closed == released


@pytest.mark.skipif(
    not os.environ.get("DATABASE_URL", "").startswith("postgres"), reason="the pool is PostgreSQL's (DATABASE_URL)"
)
def test_many_threads_waiting_share_a_pool_of_two_connections():
    """Twelve threads each query, give the connection back, wait and query again: every one is
    served, and PostgreSQL never sees more than the pool's two connections from them."""
    script = textwrap.dedent(
        """
        import threading, time, django
        django.setup()
        from django.db import connection
        from labeling.platforms.prolific_checks import _release_pooled_connection

        assert connection.settings_dict["OPTIONS"]["pool"]["max_size"] == 2
        assert connection.settings_dict["CONN_MAX_AGE"] == 0
        results, peak = [], [0]

        def backends():
            with connection.cursor() as cursor:
                cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pool-test'")
                return cursor.fetchone()[0]

        def check():
            peak[0] = max(peak[0], backends())
            _release_pooled_connection()  # what run_check does before it asks Prolific
            assert connection.connection is None
            time.sleep(0.3)  # Prolific answering
            results.append(backends())
            connection.close()  # what Celery's Django fixup does after each task

        threads = [threading.Thread(target=check) for _ in range(12)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        print("served", len(results), "peak", max(peak[0], *results))
        """
    )
    env = os.environ | {"DB_POOL_MAX_SIZE": "2", "DJANGO_SETTINGS_MODULE": "config.settings"}
    url = env["DATABASE_URL"]
    env["DATABASE_URL"] = url + ("&" if "?" in url else "?") + "application_name=pool-test"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    served, peak = done.stdout.split()[1], int(done.stdout.split()[3])
    assert served == "12" and 1 <= peak <= 2, done.stdout
