"""Logging out ends the session in every server process, not only in the one that served the logout.

Two real server processes run against the test database; a staff session is used on both (so each
has had every chance to cache it), logged out on one, and its cookie must then be refused by both.
With the old per-process session cache (cached_db over LocMemCache) the second process kept
accepting the cookie.
"""

import http.client
import os
import socket
import subprocess
import sys
import time
from http.cookies import SimpleCookie

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.db import connection

from tests.conftest import REPO_ROOT

pytestmark = [
    pytest.mark.slow,
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="two processes share PostgreSQL (set DATABASE_URL)"),
]

PASSWORD = "two-servers-pw"
STAFF_URL = "/api/campaigns/"


class Browser:
    """A cookie jar over plain http.client: it keeps Secure cookies too, as a browser on https would."""

    def __init__(self) -> None:
        self.cookies: dict[str, str] = {}

    def request(self, port: int, method: str, path: str, body: str = "", headers: dict | None = None):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        sent = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items()), **(headers or {})}
        if body:
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        conn.request(method, path, body=body, headers=sent)
        response = conn.getresponse()
        response.read()
        for header in response.headers.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(header).items():
                if morsel.value:
                    self.cookies[name] = morsel.value
                else:
                    self.cookies.pop(name, None)
        conn.close()
        return response.status

    def post(self, port: int, path: str, fields: dict) -> int:
        from urllib.parse import urlencode

        return self.request(port, "POST", path, urlencode(fields), {"X-CSRFToken": self.cookies.get("csrftoken", "")})


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _database_url() -> str:
    return os.environ["DATABASE_URL"].rsplit("/", 1)[0] + "/" + connection.settings_dict["NAME"]


def _start_server(port: int, extra_env: dict) -> subprocess.Popen:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("SECURE_", "REDIS_URL"))}
    environment.update(
        DEBUG="0",
        SECRET_KEY="two-servers-share-this-secret-key-for-the-test-only-0123456789",
        ALLOWED_HOSTS="127.0.0.1",
        DATABASE_URL=_database_url(),
        SECURE_SSL_REDIRECT="0",  # plain HTTP on loopback; the cookies stay Secure (the jar ignores it)
        **extra_env,
    )
    command = [sys.executable, "manage.py", "runserver", "--noreload", "--skip-checks", f"127.0.0.1:{port}"]
    return subprocess.Popen(
        command, cwd=REPO_ROOT, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )


def _wait_until_up(server: subprocess.Popen, port: int, deadline: float) -> None:
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"server on {port} exited: {server.stderr.read()[-2000:]}")
        try:
            if Browser().request(port, "GET", "/healthz") == 200:
                return
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"server on {port} did not answer within the time limit")


@pytest.fixture(params=[{}, {"REDIS_URL": "redis://127.0.0.1:6379/4"}], ids=["database-sessions", "redis-cache"])
def two_servers(request, transactional_db, django_user_model):
    if request.param and not _redis_is_up():
        pytest.skip("no Redis at 127.0.0.1:6379")
    user = django_user_model.objects.create(username="staff2", is_staff=True)
    django_user_model.objects.filter(pk=user.pk).update(password=_server_hash(PASSWORD))
    ports = [_free_port(), _free_port()]
    servers = [_start_server(port, request.param) for port in ports]
    try:
        deadline = time.monotonic() + 90
        for server, port in zip(servers, ports, strict=True):
            _wait_until_up(server, port, deadline)
        yield ports
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()


def _server_hash(password: str) -> str:
    # the servers run with Django's default hashers (the test run swaps in a fast one)
    hasher = PBKDF2PasswordHasher()
    return hasher.encode(password, hasher.salt())


def _redis_is_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=1):
            return True
    except OSError:
        return False


def test_a_logout_on_one_process_ends_the_session_on_both(two_servers):
    first, second = two_servers
    browser = Browser()
    assert browser.request(first, "GET", "/accounts/login/") == 200
    assert browser.post(first, "/accounts/login/", {"username": "staff2", "password": PASSWORD}) == 302
    stolen = dict(browser.cookies)  # what an attacker copied before the logout
    for port in (first, second, first, second):
        assert browser.request(port, "GET", STAFF_URL) == 200  # both processes have served (and seen) it
    assert browser.post(second, "/accounts/logout/", {}) == 302
    attacker = Browser()
    attacker.cookies = stolen
    for port in (first, second, first, second):
        assert attacker.request(port, "GET", STAFF_URL) == 403, port
