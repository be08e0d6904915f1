"""A sign-in writes what it must once (issue 46: every participant of a study's launch burst signs
in at once): a first sign-in's session row is inserted once, with no lookup of its key first and
no update after; a session that exists is still rotated (no fixation); a key drawn twice gets
another. django-axes still logs and resets a password account's sign-in, and skips a sign-in
without a password (a platform landing's), which it has nothing to guard."""

import pytest
from axes.models import AccessAttempt, AccessLog
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from config.sessions import store
from config.sessions.models import SessionStore, UserSession

pytestmark = pytest.mark.django_db

LOGIN = reverse("login")
HOME = reverse("labeling:worker_home")


@pytest.fixture
def fast_path_only(settings):
    if not settings.ANNOTATOR_FAST_PATH:
        pytest.skip("the fast path's session engine (ANNOTATOR_FAST_PATH=1)")


def session_statements(queries) -> list[str]:
    return [q["sql"] for q in queries.captured_queries if '"fast_sessions_session"' in q["sql"]]


def test_a_first_sign_in_inserts_its_session_row_once(fast_path_only, annotators):
    browser = Client()
    with CaptureQueriesContext(connection) as queries:
        response = browser.post(LOGIN, {"username": "annotator1", "password": "pw-annotator1"})
    assert response.status_code == 302
    statements = session_statements(queries)
    assert len(statements) == 1 and statements[0].startswith("INSERT"), statements
    row = UserSession.objects.get()
    assert row.user_id == annotators[0].pk and browser.cookies["sessionid"].value == row.session_key
    assert browser.get(HOME).status_code == 200  # signed in by that row


def test_a_sign_in_over_an_existing_session_rotates_its_key(fast_path_only, annotators):
    browser = Client()
    session = SessionStore()
    session["before"] = "kept"
    session.create()
    old_key = session.session_key
    browser.cookies["sessionid"] = old_key
    browser.post(LOGIN, {"username": "annotator1", "password": "pw-annotator1"})
    new_key = browser.cookies["sessionid"].value
    assert new_key != old_key
    assert not UserSession.objects.filter(session_key=old_key).exists()  # a fixed key is no use
    assert SessionStore(new_key).load()["before"] == "kept"  # what it held goes with it, as Django's


def test_a_key_drawn_that_is_taken_is_drawn_again(fast_path_only, annotators, monkeypatch):
    taken = SessionStore()
    taken.create()
    draws = iter([taken.session_key, "b" * 32])
    monkeypatch.setattr(store, "get_random_string", lambda *args: next(draws))
    browser = Client()
    browser.post(LOGIN, {"username": "annotator1", "password": "pw-annotator1"})
    assert browser.cookies["sessionid"].value == "b" * 32
    assert UserSession.objects.get(session_key="b" * 32).user_id == annotators[0].pk
    assert UserSession.objects.get(session_key=taken.session_key).user_id is None  # not taken over


def test_axes_logs_and_resets_a_password_sign_in(annotators):
    browser = Client()
    browser.post(LOGIN, {"username": "annotator1", "password": "wrong"})
    assert AccessAttempt.objects.filter(username="annotator1").count() == 1
    browser.post(LOGIN, {"username": "annotator1", "password": "pw-annotator1"})
    assert AccessLog.objects.filter(username="annotator1").count() == 1
    assert not AccessAttempt.objects.filter(username="annotator1").exists()  # AXES_RESET_ON_SUCCESS


def test_axes_skips_a_sign_in_without_a_password():
    user = get_user_model().objects.create(username="prolific-P1-S1")
    user.set_unusable_password()
    user.save()
    browser = Client()
    with CaptureQueriesContext(connection) as queries:
        browser.force_login(user)
    assert not AccessLog.objects.exists()
    assert not [q for q in queries.captured_queries if "axes_" in q["sql"]]
    assert browser.get(HOME).status_code == 200
