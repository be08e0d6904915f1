"""Deploy-safe settings, a staff-only API map, and login throttling."""

import os
import subprocess
import sys

import pytest
from django.core.management import call_command
from django.test import Client

from tests.conftest import REPO_ROOT

DEPLOY_ENV = {"DEBUG": "0", "SECRET_KEY": "k" * 20 + "-deploy-check-" + "q7" * 20, "ALLOWED_HOSTS": "label.example.org"}
# what the test run itself sets (pyproject's pytest env) must not leak into the "deploy" process
_NOT_INHERITED = {
    "DEBUG",
    "SECRET_KEY",
    "ALLOWED_HOSTS",
    "DATABASE_URL",
    "REDIS_URL",
    "DJANGO_ALLOW_ASYNC_UNSAFE",
    "ANNOTATOR_FAST_PATH",  # the suite runs both ways; these check the defaults
}


def _run(code: list[str], **overrides: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in _NOT_INHERITED and not k.startswith("SECURE_")}
    environment.update(overrides)
    return subprocess.run(
        [sys.executable, *code], cwd=REPO_ROOT, env=environment, capture_output=True, text=True, timeout=120
    )


def _settings(expression: str, **overrides: str) -> str:
    code = f"import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'config.settings'); django.setup(); from django.conf import settings as s; print(repr(({expression})))"
    result = _run(["-c", code], **overrides)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


# --- Deploy-safe by default ---------------------------------------------------------------------


def test_debug_off_with_a_key_and_hosts_passes_the_deploy_check():
    result = _run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], **DEPLOY_ENV)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_each_https_default_is_switchable_for_a_plain_http_intranet():
    plain = {"SECURE_SSL_REDIRECT": "0", "SECURE_COOKIES": "0", "SECURE_HSTS_SECONDS": "0"}
    result = _run(["manage.py", "check", "--deploy"], **DEPLOY_ENV, **plain)
    found = result.stdout + result.stderr
    for check in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert check in found, check


def test_debug_mode_keeps_plain_http_for_local_development():
    values = _settings(
        "s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_HSTS_SECONDS", DEBUG="1"
    )
    assert values == "(False, False, False, 0)"


def test_http_is_redirected_to_https_except_the_health_check(settings, db):
    settings.SECURE_SSL_REDIRECT = True
    client = Client()  # its handler reads the setting now
    response = client.get("/corpus/")
    assert response.status_code == 301 and response["Location"] == "https://testserver/corpus/"
    assert client.get("/healthz").status_code == 200
    secure = client.get("/healthz", secure=True)
    assert "max-age=31536000" in secure["Strict-Transport-Security"]


# --- Sessions in a store every process shares ---------------------------------------------------


def test_without_redis_sessions_live_in_the_database():
    assert _settings("s.SESSION_ENGINE, s.CACHES['default']['BACKEND']", DEBUG="1") == (
        "('config.sessions.db', 'django.core.cache.backends.locmem.LocMemCache')"
    )


def test_with_redis_the_shared_redis_cache_is_the_default_cache():
    url = "redis://127.0.0.1:6379/4"
    values = _settings(
        "s.SESSION_ENGINE, s.CACHES['default']['BACKEND'], s.CACHES['default']['LOCATION']", DEBUG="1", REDIS_URL=url
    )
    assert values == f"('config.sessions.cached_db', 'django.core.cache.backends.redis.RedisCache', '{url}')"


def test_a_bad_redis_url_stops_the_start():
    result = _run(["-c", "import config.settings"], DEBUG="1", REDIS_URL="127.0.0.1:6379")
    assert result.returncode != 0 and "REDIS_URL='127.0.0.1:6379' must start with" in result.stderr


# --- The API's map is staff-only ----------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/api/schema/", "/api/docs/"])
def test_the_schema_and_swagger_ui_are_for_staff_only(client, researcher, annotators, url):
    assert client.get(url).status_code in (401, 403)
    client.force_login(annotators[0])
    assert client.get(url).status_code == 403
    client.force_login(researcher)
    assert client.get(url).status_code == 200


# --- Login throttling ---------------------------------------------------------------------------


def _log_in(client: Client, password: str, username: str = "researcher"):
    return client.post("/accounts/login/", {"username": username, "password": password})


@pytest.mark.django_db
def test_ten_failed_logins_lock_the_username_from_that_address(researcher):
    browser = Client(REMOTE_ADDR="203.0.113.5")
    codes = [_log_in(browser, f"wrong-{n}").status_code for n in range(10)]
    assert codes[:9] == [200] * 9  # the form again, with its error
    assert codes[9] == 429
    locked = _log_in(browser, "pw-researcher")  # even the right password, for 15 minutes
    assert locked.status_code == 429
    assert "Too many failed logins" in locked.content.decode() and "15 minutes" in locked.content.decode()
    assert "_auth_user_id" not in browser.session
    # another address is not locked out, nor is another username from this address
    assert _log_in(Client(REMOTE_ADDR="198.51.100.1"), "pw-researcher").status_code == 302


@pytest.mark.django_db
def test_nine_failures_then_the_right_password_signs_in(researcher):
    browser = Client(REMOTE_ADDR="203.0.113.5")
    for n in range(9):
        _log_in(browser, f"wrong-{n}")
    assert _log_in(browser, "pw-researcher").status_code == 302


@pytest.mark.django_db
def test_the_unlock_command_lifts_the_lock(researcher):
    browser = Client(REMOTE_ADDR="203.0.113.5")
    for n in range(10):
        _log_in(browser, f"wrong-{n}")
    assert _log_in(browser, "pw-researcher").status_code == 429
    call_command("axes_reset_username", "researcher")
    assert _log_in(browser, "pw-researcher").status_code == 302
