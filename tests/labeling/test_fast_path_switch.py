"""ANNOTATOR_FAST_PATH: with it off nothing of the annotator fast path runs (labeling.fast_path,
config.rows, its session store and auth backend), and a whole HIT is claimed, autosaved, answered
and submitted through Django's own session store, auth backend and the ORM alone. Hand-written
SQL in labeling/ and config/ lives in the fast path only."""

import os
import re
import subprocess
import sys

import pytest
from django.urls import reverse

from config import auth as fast_auth
from config import rows
from labeling import fast_path, fast_pick, fast_seat
from labeling.hits import build_hits
from labeling.models import Assignment, Response
from tests.conftest import REPO_ROOT
from tests.labeling.hit_factory import make_dialogues, open_campaign

# the HITs here take their quiz screens from the built-in one-turn quiz bank
pytestmark = pytest.mark.usefixtures("quiz_demo_bank")

HTMX = {"HTTP_HX_REQUEST": "true"}
DJANGO_BACKEND = "django.contrib.auth.backends.ModelBackend"
DJANGO_AUTH_MIDDLEWARE = "django.contrib.auth.middleware.AuthenticationMiddleware"


def _settings(flag: str) -> str:
    """(session engine, auth backends, the landing's backend, the auth middleware) as settings read
    them with ANNOTATOR_FAST_PATH=flag, in a fresh process (all are chosen at start-up)."""
    code = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'config.settings'; django.setup(); "
        "from django.conf import settings as s; "
        "auth = [m for m in s.MIDDLEWARE if m.endswith('AuthenticationMiddleware')]; "
        "print(repr((s.SESSION_ENGINE, s.AUTHENTICATION_BACKENDS, s.MODEL_BACKEND, auth)))"
    )
    environment = {k: v for k, v in os.environ.items() if k != "REDIS_URL"} | {"ANNOTATOR_FAST_PATH": flag}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=environment, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_off_the_settings_name_djangos_own_session_store_and_backend():
    axes = "axes.backends.AxesStandaloneBackend"
    off = ("django.contrib.sessions.backends.db", [axes, DJANGO_BACKEND], DJANGO_BACKEND, [DJANGO_AUTH_MIDDLEWARE])
    assert _settings("0") == repr(off)
    on = "config.auth.ModelBackend"
    assert _settings("1") == repr(("config.sessions.db", [axes, on], on, ["config.auth.AuthenticationMiddleware"]))


@pytest.fixture
def fast_path_off(settings, monkeypatch):
    """The settings ANNOTATOR_FAST_PATH=0 gives, and every entry of the fast path refusing to run."""
    settings.ANNOTATOR_FAST_PATH = False
    settings.SESSION_ENGINE = settings.SESSION_ENGINE.replace("config.sessions", "django.contrib.sessions.backends")
    settings.MODEL_BACKEND = DJANGO_BACKEND
    settings.AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", DJANGO_BACKEND]
    settings.MIDDLEWARE = [
        DJANGO_AUTH_MIDDLEWARE if name.endswith("AuthenticationMiddleware") else name for name in settings.MIDDLEWARE
    ]

    def refuse(*args, **kwargs):
        raise AssertionError("the fast path ran with ANNOTATOR_FAST_PATH off")

    for name in ("fetch_one", "fetch_one_joined", "build"):
        monkeypatch.setattr(rows, name, refuse)
    monkeypatch.setattr(fast_auth, "_get_user", refuse)
    for name in (
        "worker_of",
        "own_assignment",
        "own_assignment_with_answers",
        "stored_answers",
        "active_label_named",
        "response_to",
        "route_of",
        "set_free_seats",
        "instances",
    ):
        monkeypatch.setattr(fast_path, name, refuse)
    for name in ("save_pick", "next_with_pick"):
        monkeypatch.setattr(fast_pick, name, refuse)
    monkeypatch.setattr(fast_seat, "take_seat", refuse)
    monkeypatch.setattr(fast_path.ClaimSearch, "first", refuse)
    monkeypatch.setattr(fast_path.ClaimSearch, "count", refuse)
    for name in ("sql", "rows", "first_row", "count"):
        monkeypatch.setattr(fast_path.Compiled, name, refuse)


def test_with_it_off_a_whole_hit_runs_through_the_orm_alone(fast_path_off, client, annotators):
    campaign = open_campaign(dialogues_per_hit=3, quiz_per_hit=1)
    build_hits(campaign, make_dialogues(3), seed=3)
    client.force_login(annotators[0])
    assert "Start a HIT" in client.get(reverse("labeling:worker_home")).content.decode()
    claimed = client.post(reverse("labeling:claim"))
    assignment = Assignment.objects.get(pk=int(re.search(r"/assignments/(\d+)/", claimed["Location"]).group(1)))
    assert client.get(claimed["Location"]).status_code == 200
    items = list(assignment.hit.items.order_by("position"))
    for item in items:
        url = reverse("labeling:answer_item", args=[assignment.pk, item.position])
        assert "Saved" in client.post(url, {"go": "stay", "answer": item.choices[1]}, **HTMX).content.decode()
        assert client.post(url, {"go": "next", "answer": item.choices[1], "seconds": "2"}, **HTMX).status_code == 200
    submitted = client.post(reverse("labeling:assignment_submit", args=[assignment.pk]))
    assert submitted.status_code == 302 and "feedback" in submitted["Location"]
    saved = Response.objects.filter(assignment=assignment)
    # the autosave and Next of each screen store one answer, once
    assert sorted(saved.values_list("item_id", "label__name")) == sorted((i.pk, i.choices[1]) for i in items)
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.SUBMITTED


# hand-written SQL: a cursor, or a table name quoted by hand to put into one
HAND_WRITTEN_SQL = re.compile(r"\.cursor\(|connection\.ops\.quote_name|\.raw\(|RawSQL\(")
# where it may be: the fast path (its reads, its writes of a pick and of a seat, and config/rows.py,
# the helper of its config side), /healthz's SELECT 1, and the SQLite backend's flush (config/sqlite:
# it reads the row triggers it lifts and restores, a database backend's own business)
FENCE = {
    "labeling/fast_path.py", "labeling/fast_pick.py", "labeling/fast_seat.py", "config/rows.py", "config/web/views.py",
    "config/sqlite/base.py",
}  # fmt: skip


def test_hand_written_sql_in_labeling_and_config_lives_in_the_fast_path_only():
    sources = [*(REPO_ROOT / "labeling").rglob("*.py"), *(REPO_ROOT / "config").rglob("*.py")]
    found = {
        path.relative_to(REPO_ROOT).as_posix()
        for path in sources
        if "migrations" not in path.parts and HAND_WRITTEN_SQL.search(path.read_text(encoding="utf-8"))
    }
    assert found == FENCE
