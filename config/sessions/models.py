"""The session table of the fast path's session engines: Django's columns plus the signed-in
user's id, so a request reads its session and its user in one statement (config.sessions.store).

Django's documented way to extend a database-backed session engine ("How to use sessions",
section "Extending database-backed session engines",
https://docs.djangoproject.com/en/5.2/topics/http/sessions/#extending-database-backed-session-engines):
a model on AbstractBaseSession, returned by the store's get_model_class, filled by its
create_model_instance. The model and its database store name each other, so they live in one
module, as in that documentation's example (the engine module `db` names the store for
SESSION_ENGINE; `cached_db`'s store reads this model too). With ANNOTATOR_FAST_PATH off Django's
own engine and django_session are used and this table stays empty."""

from django.conf import settings
from django.contrib.sessions.backends import db
from django.contrib.sessions.base_session import AbstractBaseSession
from django.db import models

from config.sessions.store import ReadOnceMixin


class UserSession(AbstractBaseSession):
    # No database constraint: a session saved as its user is deleted must not fail the request;
    # the read's LEFT JOIN finds no user then, and the ORM's cascade deletes a deleted user's sessions.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.CASCADE, db_constraint=False, related_name="+"
    )

    class Meta(AbstractBaseSession.Meta):
        db_table = "fast_sessions_session"

    @classmethod
    def get_session_store_class(cls):
        return SessionStore


class SessionStore(ReadOnceMixin, db.SessionStore):
    """The `db` engine's store (config.sessions.db): Django's, reading this table once per request."""

    @classmethod
    def get_model_class(cls):
        return UserSession
