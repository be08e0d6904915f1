"""bench/prolific_standin_server.py: the Prolific stand-in over HTTPS on 127.0.0.1, reached through
`requests`' own proxy and certificate settings, as bench/labeling_load.py --landing prolific points
gunicorn and the landing worker at it (the adapter itself has no base-URL setting)."""

import importlib.util
import shutil
import ssl
import sys
import threading
import time

import pytest
import requests

from labeling.pages.landings import CHECK_AGAIN_SECONDS
from labeling.platforms.prolific import ProlificPlatform, landing_submission
from tests.conftest import REPO_ROOT


def _bench_module(name: str):
    """A module of bench/, loaded from its file (bench/ is not put on sys.path: its names are generic)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO_ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


prolific_landing = _bench_module("prolific_landing")
server_module = _bench_module("prolific_standin_server")

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")


@pytest.fixture
def standin(tmp_path, monkeypatch):
    certificate, key = server_module.make_certificate(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate, key)
    state = server_module.State(latency_ms=200)
    server = server_module.Server(("127.0.0.1", 0), server_module.handler_for(state, context))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    published = requests.post(f"{base}/bench/study", json={"study": "60study", "participants": [["5fa", "64a"]]})
    assert published.json() == {"study": "60study", "active": 1}
    # what the bench gives gunicorn and the landing worker: `requests` reads both from the environment
    for name in ("NO_PROXY", "no_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", base)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(certificate))
    yield base, requests.Session()
    server.shutdown()
    server.server_close()


def test_the_adapter_proves_an_active_session_through_the_proxy_after_the_latency(standin):
    _, session = standin
    started = time.monotonic()
    answer = landing_submission(ProlificPlatform(session=session), "64a")
    assert time.monotonic() - started >= 0.2
    assert (answer["study_id"], answer["participant_id"], answer["status"]) == ("60study", "5fa", "ACTIVE")


def test_an_unknown_session_is_a_404_and_the_stats_count_every_call(standin):
    base, session = standin
    assert landing_submission(ProlificPlatform(session=session), "64nobody") is None
    assert requests.get(f"{base}/bench/stats").json()["api_requests"] == 1


def test_the_proxy_reaches_no_other_host(standin):
    _, session = standin
    with pytest.raises(requests.exceptions.ProxyError):
        session.get("https://example.com/", timeout=5)


def test_the_bench_waits_the_checking_pages_own_refresh_and_runs_the_procfiles_landing_worker():
    page = f'<meta http-equiv="refresh" content="{CHECK_AGAIN_SECONDS}">'
    assert prolific_landing.refresh_seconds(page) == CHECK_AGAIN_SECONDS
    command = prolific_landing.procfile_landing_command(concurrency=None)
    assert command[0] == sys.executable
    assert command[command.index("--queues") + 1] == "landing"
    widened = prolific_landing.procfile_landing_command(concurrency=32)
    assert widened[widened.index("--concurrency") + 1] == "32"
    assert prolific_landing.procfile_landing_environment() == {"DB_POOL_MAX_SIZE": "16"}


def test_loading_the_bench_in_the_projects_process_leaves_the_stand_in_package_whole():
    """Loaded in a test's process before anything imported the stand-ins, the bench once left a bare
    `labeling.platforms.standin` in sys.modules, and every later test in that worker lost
    `standin.installed` and the stand-ins (CI's stop 50)."""
    import subprocess

    code = (
        "import django, importlib.util, os, sys\n"
        "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'config.settings')\n"
        "django.setup()\n"
        "import labeling.platforms.prolific\n"
        "assert 'labeling.platforms.standin' not in sys.modules\n"
        "spec = importlib.util.spec_from_file_location('b', 'bench/prolific_standin_server.py')\n"
        "spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
        "from labeling.platforms import standin\n"
        "print(callable(standin.installed), standin.MTurkStandIn.__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "MTurkStandIn"]
