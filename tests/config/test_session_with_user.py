"""The fast path's session engines read a session and its user in one statement, and hand that
user to authentication with every check Django makes: an active user, the session's hash against
the password (and the fallback secret keys). Logout, deactivation, a password change and a deleted
user still end a session at the next request; with the fast path off Django's own table serves."""

from importlib import import_module

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from config.auth import ModelBackend, authenticating
from config.sessions.models import UserSession

pytestmark = pytest.mark.django_db

HOME = reverse("labeling:worker_home")
DJANGO_AUTH_MIDDLEWARE = "django.contrib.auth.middleware.AuthenticationMiddleware"


def signed_in(client: Client) -> bool:
    """Whether the worker home page (login required) sees the client's user."""
    response = client.get(HOME)
    assert response.status_code in (200, 302)
    return response.status_code == 200


def session_and_user_reads(queries) -> list[str]:
    tables = ('"fast_sessions_session"', '"django_session"', '"auth_user"')
    return [q["sql"] for q in queries.captured_queries if any(f"FROM {table}" in q["sql"] for table in tables)]


@pytest.fixture
def annotator(fast_path_only, client, annotators):
    """Signed in with the settings' engine: the fast path's (the suite skips these with it off)."""
    client.force_login(annotators[0])
    return client


def test_a_request_reads_its_session_and_user_in_one_statement(annotator, annotators):
    with CaptureQueriesContext(connection) as queries:
        assert signed_in(annotator)
    (read,) = session_and_user_reads(queries)
    assert 'FROM "fast_sessions_session" t LEFT JOIN "auth_user" r' in read


def test_the_session_row_names_its_user_and_forgets_it_at_logout(annotator, annotators):
    row = UserSession.objects.get()
    assert row.user_id == annotators[0].pk
    annotator.post(reverse("logout"))
    assert not UserSession.objects.filter(user_id=annotators[0].pk).exists()
    assert not Session.objects.exists()  # Django's own table is not used with the fast path


def test_a_logged_out_session_cookie_is_refused(annotator):
    cookie = annotator.cookies["sessionid"].value
    annotator.post(reverse("logout"))
    annotator.cookies["sessionid"] = cookie
    assert not signed_in(annotator)


def test_a_deactivated_user_is_anonymous_on_the_next_request(annotator, annotators):
    assert signed_in(annotator)
    get_user_model().objects.filter(pk=annotators[0].pk).update(is_active=False)
    assert not signed_in(annotator)


def test_a_password_change_ends_the_other_sessions(annotator, annotators):
    other = Client()
    other.force_login(annotators[0])
    assert signed_in(annotator) and signed_in(other)
    annotators[0].set_password("a-new-password")
    annotators[0].save()
    assert not signed_in(annotator) and not signed_in(other)


def test_a_session_signed_under_a_retired_secret_key_still_has_its_hash_checked(annotator, annotators, settings):
    """The hash is checked with the fallback keys and brought up to the new key: auth.get_user ran."""
    old_hash = annotator.session["_auth_user_hash"]
    settings.SECRET_KEY_FALLBACKS = [settings.SECRET_KEY]
    settings.SECRET_KEY = "a-new-secret-key-for-this-test-only-0123456789-abcdefghijklmnop"
    assert signed_in(annotator)
    assert annotator.session["_auth_user_hash"] not in ("", old_hash)
    settings.SECRET_KEY_FALLBACKS = []
    get_user_model().objects.filter(pk=annotators[0].pk).update(password="changed")
    assert not signed_in(annotator)


def test_a_session_whose_user_row_is_gone_is_anonymous(annotator, annotators):
    """The LEFT JOIN finds no user: the row is deleted as the ORM never would (no cascade here)."""
    with connection.cursor() as cursor:
        cursor.execute('DELETE FROM "auth_user" WHERE id = %s', [annotators[0].pk])
    assert UserSession.objects.filter(user_id=annotators[0].pk).exists()
    assert not signed_in(annotator)


def test_deleting_a_user_deletes_its_sessions(annotator, annotators):
    annotators[0].delete()
    assert not UserSession.objects.exists()
    assert not signed_in(annotator)


def test_the_backend_serves_only_the_user_read_with_the_session_being_authenticated(fast_path_only, annotators):
    """Outside a request's authentication, or for another id, the user is read from the database."""
    with CaptureQueriesContext(connection) as queries:
        assert ModelBackend().get_user(annotators[1].pk) == annotators[1]
    assert len(session_and_user_reads(queries)) == 1


def test_the_backend_serves_the_user_read_with_the_session_for_that_users_id_only(annotator, annotators, settings):
    store = import_module(settings.SESSION_ENGINE).SessionStore(annotator.cookies["sessionid"].value)
    store.load()
    assert store.prefetched_user == annotators[0]
    with authenticating(store), CaptureQueriesContext(connection) as queries:
        assert ModelBackend().get_user(annotators[0].pk) is store.prefetched_user
        assert ModelBackend().get_user(annotators[1].pk) == annotators[1]
    assert len(session_and_user_reads(queries)) == 1  # the other user's


def test_the_cached_db_engine_keeps_the_user_column_and_signs_in(client, annotators, settings):
    settings.SESSION_ENGINE = "config.sessions.cached_db"
    client.force_login(annotators[1])
    assert UserSession.objects.get().user_id == annotators[1].pk
    assert signed_in(client)
    client.post(reverse("logout"))
    assert not signed_in(client)


def test_with_the_fast_path_off_djangos_table_and_middleware_serve(client, annotators, settings):
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.db"
    settings.AUTHENTICATION_BACKENDS = [
        "axes.backends.AxesStandaloneBackend",
        "django.contrib.auth.backends.ModelBackend",
    ]
    settings.MIDDLEWARE = [
        DJANGO_AUTH_MIDDLEWARE if m.endswith("AuthenticationMiddleware") else m for m in settings.MIDDLEWARE
    ]
    client.force_login(annotators[0])
    with CaptureQueriesContext(connection) as queries:
        assert signed_in(client)
    session_read, user_read = session_and_user_reads(queries)
    assert 'FROM "django_session"' in session_read and 'FROM "auth_user"' in user_read
    assert Session.objects.count() == 1 and not UserSession.objects.exists()


@pytest.mark.parametrize(
    ("engine", "model"), [("config.sessions.db", UserSession), ("django.contrib.sessions.backends.db", Session)]
)
def test_clearsessions_clears_the_engines_table(settings, engine, model):
    settings.SESSION_ENGINE = engine
    for expiry in (-60, 3600):
        store = import_module(engine).SessionStore()
        store["kept"] = expiry > 0
        store.set_expiry(expiry)
        store.create()
    call_command("clearsessions")
    assert [model.get_decoded() for model in model.objects.all()] == [{"kept": True, "_session_expiry": 3600}]
    assert all(row.expire_date > timezone.now() for row in model.objects.all())


def test_the_migration_carries_djangos_live_sessions_over_with_their_users(annotators, settings):
    """Switching to the fast path's table signs nobody out: live sessions are copied, expired ones not."""
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.db"
    browser = Client()
    browser.force_login(annotators[2])
    expired = import_module(settings.SESSION_ENGINE).SessionStore()
    expired["_auth_user_id"] = str(annotators[1].pk)
    expired.set_expiry(-60)
    expired.create()
    migration = import_module("config.sessions.migrations.0002_carry_over_django_sessions")
    migration.carry_over(apps, None)
    migration.carry_over(apps, None)  # run again, copies nothing twice
    assert list(UserSession.objects.values_list("session_key", "user_id")) == [
        (browser.cookies["sessionid"].value, annotators[2].pk)
    ]
    settings.SESSION_ENGINE = "config.sessions.db"
    assert browser.get(HOME).status_code == 200  # the same cookie, read from the new table
