"""What the fast path's two session engines share: the session row read with SQL written once
(config.rows), its user by the same statement, and the user's id kept on the row when it is saved."""

from django.contrib.auth import SESSION_KEY, get_user_model
from django.core.exceptions import ValidationError
from django.utils import timezone

from config import rows


def signed_in_user_id(data: dict):
    """The user id session data names (django.contrib.auth's key, as auth.get_user reads it), or None."""
    try:
        return get_user_model()._meta.pk.to_python(data[SESSION_KEY])
    except (KeyError, ValidationError):
        return None


class ReadOnceMixin:
    # The user the session row named, read with it by this store (so in this request: a store
    # lives for one request); None before the read, or when the row names no user that exists.
    prefetched_user = None

    @classmethod
    def get_model_class(cls):
        from config.sessions.models import UserSession

        return UserSession

    def _get_session_from_db(self):
        self.prefetched_user = None
        if not self.session_key:
            self._session_key = None
            return None
        session, self.prefetched_user = rows.fetch_one_joined(
            self.model, "user", "t.session_key = %s AND t.expire_date > %s", [self.session_key, timezone.now()]
        )
        if session is None:
            self._session_key = None
        return session

    def create_model_instance(self, data):
        session = super().create_model_instance(data)
        session.user_id = signed_in_user_id(data)
        return session

    async def acreate_model_instance(self, data):
        session = await super().acreate_model_instance(data)
        session.user_id = signed_in_user_id(data)
        return session
