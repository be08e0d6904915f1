"""The fast path's session stores check a stored session's signature once per process for each
text it holds (config.sessions.store._verified): every request still gets objects of its own, a
tampered or corrupt text is an empty session as with Django's decode, and a rotated secret key
is a new entry (an old session stops checking once its key leaves SECRET_KEY and the fallbacks)."""

from unittest import mock

import pytest
from django.core import signing
from django.test import override_settings

from config.sessions import db as fast_db
from config.sessions.store import _verified


@pytest.fixture
def store():
    _verified.cache_clear()
    yield fast_db.SessionStore()
    _verified.cache_clear()


def test_a_text_decodes_to_what_was_encoded_with_objects_of_its_own(store):
    text = store.encode({"_auth_user_id": "7", "seen": [1, 2]})
    first = store.decode(text)
    first["seen"].append(3)  # a request changing its session in place
    first["new"] = True
    second = store.decode(text)
    assert second == {"_auth_user_id": "7", "seen": [1, 2]}
    assert second is not first and second["seen"] is not first["seen"]


def test_the_signature_is_checked_once_per_text(store):
    text = store.encode({"_auth_user_id": "7"})
    other = store.encode({"_auth_user_id": "8"})
    with mock.patch("config.sessions.store.signing.loads", wraps=signing.loads) as loads:
        for _ in range(5):
            assert store.decode(text) == {"_auth_user_id": "7"}
        assert store.decode(other) == {"_auth_user_id": "8"}
    assert loads.call_count == 2  # once for each text


def test_a_tampered_or_corrupt_text_is_an_empty_session_every_time(store, caplog):
    text = store.encode({"_auth_user_id": "7"})
    tampered = text[:-3] + ("aaa" if not text.endswith("aaa") else "bbb")
    for _ in range(2):
        assert store.decode(tampered) == {}
        assert store.decode("not a session at all") == {}
    assert store.decode(text) == {"_auth_user_id": "7"}
    assert "Session data corrupted" in caplog.text  # Django's decode logs it, as without the memo


def test_a_rotated_key_is_a_new_entry(store):
    with override_settings(SECRET_KEY="the-old-key-" * 4):
        text = fast_db.SessionStore().encode({"_auth_user_id": "7"})
        assert store.decode(text) == {"_auth_user_id": "7"}  # checked and kept under the old key
    with override_settings(SECRET_KEY="the-new-key-" * 4, SECRET_KEY_FALLBACKS=[]):
        assert store.decode(text) == {}  # the kept check is not the new key's
    with override_settings(SECRET_KEY="the-new-key-" * 4, SECRET_KEY_FALLBACKS=["the-old-key-" * 4]):
        assert store.decode(text) == {"_auth_user_id": "7"}  # the old key as a fallback


def test_the_memo_is_bounded(store):
    assert _verified.cache_info().maxsize == 8192
