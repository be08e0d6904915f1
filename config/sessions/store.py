"""What the fast path's two session engines share: the session row read with SQL written once
(config.rows), its user by the same statement, the user's id kept on the row when it is saved, and
the row's signature checked once per process for each value it holds."""

import functools

from django.conf import settings
from django.contrib.auth import SESSION_KEY, get_user_model
from django.contrib.sessions.backends.base import VALID_KEY_CHARS, CreateError
from django.core import signing
from django.core.exceptions import ValidationError
from django.utils import timezone
from django.utils.crypto import get_random_string

from config import rows


def signed_in_user_id(data: dict):
    """The user id session data names (django.contrib.auth's key, as auth.get_user reads it), or None."""
    try:
        return get_user_model()._meta.pk.to_python(data[SESSION_KEY])
    except (KeyError, ValidationError):
        return None


@functools.lru_cache(maxsize=8192)
def _verified(session_data: str, key_salt: str, serializer, keys: tuple) -> bytes | None:
    """The session data as its serializer writes it, once its signature is checked (None: it does
    not check, or does not decode). Keyed by the stored text and the signing keys (`keys`, only a
    key here: signing reads them from the settings), so a changed session or a rotated key is a
    new entry. SessionBase.decode's HMAC and base64 were 1.8 % of a gunicorn worker's CPU in a
    study's first minute, every request of a session checking the same text again (issue 37).
    The text comes from the session's row, never from the client."""
    try:
        return serializer().dumps(signing.loads(session_data, salt=key_salt, serializer=serializer))
    except Exception:  # SessionBase.decode's rule: a corrupt session is an empty one
        return None


class ReadOnceMixin:
    """A database-backed store's read of the session row and its user, and its writes. Each store
    class names its model (get_model_class: the `db` engine's in config.sessions.models, the
    `cached_db` engine's in config.sessions.cached_db), so this module imports no model."""

    # The user the session row named, read with it by this store (so in this request: a store
    # lives for one request); None before the read, or when the row names no user that exists.
    prefetched_user = None

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

    def decode(self, session_data):
        """Django's decode, the signature checked once per stored text: each call still gets
        objects of its own (loaded again from the checked text), so a request that changes its
        session in place changes nothing another request sees. What does not check goes to
        Django's decode, which logs it and gives an empty session."""
        keys = (settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS)
        text = _verified(session_data, self.key_salt, self.serializer, keys)
        if text is None:
            return super().decode(session_data)
        return self.serializer().loads(text)

    # A new session's key, and a first sign-in's row written once. Django's store looks each new
    # key up before it inserts it (SessionBase._get_new_session_key), and a sign-in in a browser
    # with no session yet (django.contrib.auth.login's cycle_key) inserts an empty row that the
    # response's save then updates: three statements where one does, on every arrival of a study's
    # launch burst (issue 46). The INSERT that creates the row (save(must_create=True)) is what
    # keeps keys unique, as in Django's own create(): a key already taken raises CreateError there
    # and another is drawn.
    _insert_pending = False

    def _get_new_session_key(self):
        return get_random_string(32, VALID_KEY_CHARS)

    def cycle_key(self):
        """Django's, but with no row stored yet: the new key is drawn now (a signal handler of the
        sign-in may read it) and the row inserted once, by the save that ends the request."""
        if self.session_key is not None:
            return super().cycle_key()
        data = self._session
        self._session_key = self._get_new_session_key()
        self._session_cache = data
        self._insert_pending = self.modified = True
        return None

    def save(self, must_create=False):
        if not self._insert_pending or must_create or self.session_key is None:
            return super().save(must_create=must_create)
        self._insert_pending = False
        try:
            return super().save(must_create=True)
        except CreateError:  # the key drawn is taken: another, as Django's create() does
            return self.create()

    def create_model_instance(self, data):
        session = super().create_model_instance(data)
        session.user_id = signed_in_user_id(data)
        return session

    async def acreate_model_instance(self, data):
        session = await super().acreate_model_instance(data)
        session.user_id = signed_in_user_id(data)
        return session
