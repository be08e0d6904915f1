"""Secrets out of every text an outside service sends back, before it is saved, logged or shown.

A model endpoint may echo the bearer key it refused in its 401 body; a platform's error may quote
a header; a client library's exception may print its request. Each adapter's error path (the
model endpoint, Prolific and MTurk through labeling.platforms.calls, the Hub push) and the job
runner's failure record pass such text through `scrub` first, and the log handlers carry
`ScrubSecrets` as a second net.

`scrub` replaces two things with MARK:
- every secret the project holds: the settings and environment variables named below (API keys,
  tokens, the platform credentials boto3 and the Prolific adapter read from the environment, the
  passwords inside the database, cache and broker URLs), and any value a caller hands it (a key it
  was given that is not a setting);
- what looks like a credential whatever its value: a bearer or token header value, an
  `api_key=...` pair, a Hugging Face (`hf_...`), OpenAI-style (`sk-...`) or AWS (`AKIA...`) key.
No setting stores a per-endpoint key on a row (the model rater's key is MODEL_RATER_API_KEY), so
settings and the environment are every secret there is; a caller with another passes it in `also`.
"""

import logging
import os
import re
from collections.abc import Iterable
from urllib.parse import quote, urlsplit

from django.conf import settings

MARK = "[secret removed]"
MIN_SECRET_CHARS = 6  # a shorter value would scrub ordinary words out of every message
SECRET_SETTINGS = ("MODEL_RATER_API_KEY", "HUB_TOKEN", "SECRET_KEY")
URL_SETTINGS = ("REDIS_URL", "CELERY_BROKER_URL", "DATABASE_URL")
SECRET_ENVIRONMENT = (
    "MODEL_RATER_API_KEY",
    "HUB_TOKEN",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "PROLIFIC_API_TOKEN",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
)
# (pattern, replacement): the credential's name stays, its value goes
CREDENTIAL_SHAPES = (
    (re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=:-]{4,}"), rf"\1\2{MARK}"),
    # Prolific's "Authorization: Token <token>": a value long enough, with a digit, to be no word
    (re.compile(r"(?i)\b(token)(\s+)(?=[A-Za-z0-9._-]*\d)[A-Za-z0-9._-]{16,}"), rf"\1\2{MARK}"),
    (
        re.compile(
            r"(?i)\b(api[_-]?key|access[_-]?key|secret[_-]?(?:access[_-]?)?key|access[_-]?token|auth[_-]?token"
            r"|token|password|secret)(\"?'?\s*[:=]\s*\"?'?)(?!\[secret)[^\s\"'&,;}]{4,}"
        ),
        rf"\1\2{MARK}",
    ),
    (re.compile(r"\bhf_[A-Za-z0-9]{16,}"), MARK),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"), MARK),
    (re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), MARK),
)


def known_secrets(also: Iterable[str | None] = ()) -> list[str]:
    """Every secret value the project holds now, longest first (so no part of one is left)."""
    values = [getattr(settings, name, "") for name in SECRET_SETTINGS]
    values += [os.environ.get(name, "") for name in SECRET_ENVIRONMENT]
    values += [_password(getattr(settings, name, None)) for name in URL_SETTINGS]
    values += [database.get("PASSWORD", "") for database in getattr(settings, "DATABASES", {}).values()]
    values += list(also)
    found = {str(value) for value in values if value and len(str(value)) >= MIN_SECRET_CHARS}
    found |= {quote(value, safe="") for value in found}  # as a URL or a form body would carry it
    return sorted(found, key=len, reverse=True)


def scrub(text, also: Iterable[str | None] = ()) -> str:
    """`text` (anything; str() is taken) without a secret of the project or a credential's value."""
    cleaned = "" if text is None else str(text)
    for secret in known_secrets(also):
        cleaned = cleaned.replace(secret, MARK)
    for pattern, replacement in CREDENTIAL_SHAPES:
        cleaned = pattern.sub(replacement, cleaned)
    return cleaned


def _password(url: str | None) -> str:
    try:
        return urlsplit(url).password or "" if url else ""
    except ValueError:
        return ""


class ScrubSecrets(logging.Filter):
    """A log handler's filter: the record's message, formatted, without secrets, and its
    traceback's text too (formatted here: a formatter prints the text it finds, `exc_text`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = scrub(record.getMessage()), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = scrub(record.exc_text)
        return True
