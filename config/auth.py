"""Django's ModelBackend and AuthenticationMiddleware for the annotator fast path: the signed-in
user is the one the session store read with the session row (config.sessions.store, one
statement for both), or else read by SQL written once (config.rows). Same checks as Django's:
the user must exist and be active, and django.contrib.auth.get_user still verifies the
session's hash against the password (and the fallback secret keys) afterwards."""

from contextlib import contextmanager
from contextvars import ContextVar
from functools import partial

from django.contrib import auth
from django.contrib.auth import backends, get_user_model
from django.contrib.auth import middleware as django_middleware
from django.utils.functional import SimpleLazyObject

from config import rows

# The session of the request whose user auth.get_user is finding, set only while it runs: a user
# read with another request's session (and so possibly stale) is never handed out.
_session_being_authenticated = ContextVar("session_being_authenticated", default=None)


@contextmanager
def authenticating(session):
    """Offer `session`'s user, read with it, to ModelBackend.get_user while the block runs."""
    token = _session_being_authenticated.set(session)
    try:
        yield
    finally:
        _session_being_authenticated.reset(token)


def _get_user(request):
    with authenticating(request.session):
        return auth.get_user(request)


async def _aget_user(request):
    with authenticating(request.session):
        return await auth.aget_user(request)


def _cached_user(request):
    if not hasattr(request, "_cached_user"):
        request._cached_user = _get_user(request)
    return request._cached_user


async def _acached_user(request):
    if not hasattr(request, "_acached_user"):
        request._acached_user = await _aget_user(request)
    return request._acached_user


class AuthenticationMiddleware(django_middleware.AuthenticationMiddleware):
    """Django's (request.user lazy, request.auser), finding the user through _get_user."""

    def process_request(self, request):
        super().process_request(request)  # its check that sessions come first
        request.user = SimpleLazyObject(lambda: _cached_user(request))
        request.auser = partial(_acached_user, request)


def _prefetched_user(user_id):
    """The user the session being authenticated was read with, if it is the user `user_id`."""
    user = getattr(_session_being_authenticated.get(), "prefetched_user", None)
    return user if user is not None and user.pk == user_id else None


class ModelBackend(backends.ModelBackend):
    def get_user(self, user_id):
        user = _prefetched_user(user_id) or self._read_user(user_id)
        return user if user is not None and self.user_can_authenticate(user) else None

    def _read_user(self, user_id):
        try:
            return rows.fetch_one(get_user_model(), "t.id = %s", [int(user_id)])
        except (TypeError, ValueError):
            return None
