"""config.scrub: every secret the project holds, and what looks like a credential, out of a text."""

import logging
import sys

import pytest

from config.scrub import MARK, ScrubSecrets, known_secrets, scrub

RATER_KEY = "opaque-rater-key-7f3a9c"
HUB_TOKEN = "opaque-hub-token-1b2c3d"
PROLIFIC = "opaque-prolific-token-4e5f"
AWS_SECRET = "opaque/aws+secret=key9"


@pytest.fixture
def secrets_set(settings, monkeypatch):
    settings.MODEL_RATER_API_KEY = RATER_KEY
    settings.HUB_TOKEN = HUB_TOKEN
    monkeypatch.setenv("PROLIFIC_API_TOKEN", PROLIFIC)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
    settings.REDIS_URL = "redis://:opaque-redis-pass@cache:6379/0"


def test_every_configured_secret_is_replaced(secrets_set):
    text = f"401: key {RATER_KEY} / {HUB_TOKEN} / {PROLIFIC} / {AWS_SECRET} / opaque-redis-pass"
    cleaned = scrub(text)
    for secret in (RATER_KEY, HUB_TOKEN, PROLIFIC, AWS_SECRET, "opaque-redis-pass"):
        assert secret not in cleaned
    assert cleaned.count(MARK) == 5 and cleaned.startswith("401: key ")


def test_a_secret_as_a_url_or_form_carries_it_is_replaced(secrets_set):
    assert "aws%2Bsecret" not in scrub("body: key=opaque%2Faws%2Bsecret%3Dkey9")


def test_a_key_the_caller_holds_is_replaced_too(settings):
    settings.MODEL_RATER_API_KEY = ""
    assert scrub("echo: per-endpoint-key-123", also=["per-endpoint-key-123", None, ""]) == f"echo: {MARK}"


@pytest.mark.parametrize(
    ("text", "gone", "kept"),
    [
        ("Authorization: Bearer abc.def-ghi_jkl", "abc.def-ghi_jkl", "Authorization: Bearer"),
        ("Authorization: Token a1b2c3d4e5f6g7h8i9", "a1b2c3d4e5f6g7h8i9", "Token"),
        ("Basic dXNlcjpwYXNz", "dXNlcjpwYXNz", "Basic"),
        ('{"api_key": "zzz-unknown-999"}', "zzz-unknown-999", '"api_key"'),
        ("https://x/?access_token=qwerty12345&model=m", "qwerty12345", "model=m"),
        ("password=hunter2 rest", "hunter2", "rest"),
        ("hf_AbCdEfGhIjKlMnOpQrStUv is invalid", "hf_AbCdEfGhIjKlMnOpQrStUv", "is invalid"),
        ("Incorrect API key provided: sk-proj-abcdefghijklmnop1234", "sk-proj-abcdefghijklmnop1234", "API key"),
        ("The AWS Access Key Id AKIAIOSFODNN7EXAMPLE does not exist", "AKIAIOSFODNN7EXAMPLE", "does not exist"),
    ],
)
def test_what_looks_like_a_credential_is_replaced_whatever_its_value(settings, text, gone, kept):
    cleaned = scrub(text)
    assert gone not in cleaned and kept in cleaned and MARK in cleaned


@pytest.mark.parametrize(
    "text",
    [
        "HTTP 429: rate limit reached for requests",
        "Token expired, sign in again",
        "prompt_tokens: 40, completion_tokens: 2",
        "study 60aaaaaaaaaaaaaaaaaaaaaa is still publishing",
        "no label in the reply: 'Sad.'",
    ],
)
def test_ordinary_words_stay(settings, text):
    assert scrub(text) == text


def test_short_values_are_not_secrets(settings, monkeypatch):
    """An unset or tiny value (a test's "x") would otherwise scrub letters out of every message."""
    settings.MODEL_RATER_API_KEY = "x"
    monkeypatch.delenv("PROLIFIC_API_TOKEN", raising=False)
    assert "x" not in known_secrets() and scrub("a text with x") == "a text with x"


def test_the_longest_secret_goes_first(settings, monkeypatch):
    settings.MODEL_RATER_API_KEY = "shared-prefix"
    settings.HUB_TOKEN = "shared-prefix-and-more"
    assert scrub("shared-prefix-and-more") == MARK


def test_the_log_filter_scrubs_message_arguments_and_traceback(secrets_set):
    try:
        raise RuntimeError(f"refused {RATER_KEY}")
    except RuntimeError:
        record = logging.getLogger("t").makeRecord(
            "t", logging.ERROR, __file__, 1, "endpoint said %s", (HUB_TOKEN,), sys.exc_info()
        )
    ScrubSecrets().filter(record)
    printed = logging.Formatter().format(record)
    assert HUB_TOKEN not in printed and RATER_KEY not in printed and "RuntimeError" in printed


def test_the_shipped_log_handler_carries_the_filter():
    from django.conf import settings

    assert "scrub_secrets" in settings.LOGGING["handlers"]["console"]["filters"]
    assert any(isinstance(f, ScrubSecrets) for h in logging.getLogger().handlers for f in h.filters)
