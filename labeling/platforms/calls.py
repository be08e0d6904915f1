"""Every call to a crowd platform goes through `call`: one place for retries, backoff and logging.

Retries are narrow. A call is tried again only after an error that says the platform did not do
the work: throttling (MTurk's Throttling codes, HTTP 429) or a connection that never opened. An
error that leaves the outcome unknown (a read timeout, a dropped connection, a 5xx) is retried
only for a call marked `repeatable`: one the platform itself makes idempotent (MTurk calls with a
UniqueRequestToken, reads, setting an absolute number of places). Prolific's bonus pay call is
NOT repeatable: paying the same bulk bonus twice pays twice (its documentation says so).

Logs name the platform, the operation and the error code; never parameters, headers or bodies
(they can hold tokens and worker ids). The platform's own text (an HTTP body, an AWS error message,
a client exception's words) is scrubbed of every secret the project holds (config.scrub) where it
enters: PlatformHTTPError and PlatformCallError keep only the scrubbed text, which is what sync
stores and the pages show.
"""

import logging
import random
import time
from collections.abc import Callable
from typing import TypeVar

from django.conf import settings

from config.scrub import scrub
from labeling.platforms.base import PlatformError

logger = logging.getLogger("labeling.platforms")
T = TypeVar("T")

AWS_THROTTLING = {"Throttling", "ThrottlingException", "RequestLimitExceeded", "TooManyRequestsException"}
AWS_UNKNOWN_OUTCOME = {"ServiceFault", "ServiceUnavailable", "InternalError"}
HTTP_UNKNOWN_OUTCOME = {500, 502, 503, 504}
MAX_DELAY_SECONDS = 30.0
sleep = time.sleep  # tests replace it


class PlatformHTTPError(Exception):
    """A platform's HTTP answer outside 2xx (raised by the REST adapters for `call` to classify)."""

    def __init__(self, status: int, detail: str, retry_after: str | None = None) -> None:
        detail = scrub(detail)
        super().__init__(f"HTTP {status}: {detail[:300]}")
        self.status, self.detail = status, detail
        self.retry_after = retry_after  # a 429's Retry-After header (seconds), waited before the next try


class PlatformCallError(PlatformError):
    """A platform call that failed for good: `code` is the platform's error code (or HTTP status)
    and `detail` its message, for callers that recognise an answer such as "already done"."""

    def __init__(self, platform: str, operation: str, code: str, detail: str) -> None:
        code, detail = scrub(code), scrub(detail)
        super().__init__(f"{platform} {operation} failed: {code}: {detail[:300]}")
        self.platform, self.operation, self.code, self.detail = platform, operation, code, detail


def call(platform: str, operation: str, fn: Callable[[], T], *, repeatable: bool) -> T:
    """Run `fn` (one request to the platform), retrying the errors above with exponential backoff
    and full jitter: at most PLATFORM_RETRY_ATTEMPTS tries. Any failure leaves as PlatformCallError."""
    attempts = max(1, int(getattr(settings, "PLATFORM_RETRY_ATTEMPTS", 4)))
    base = float(getattr(settings, "PLATFORM_RETRY_BASE_SECONDS", 1.0))
    for attempt in range(1, attempts + 1):
        try:
            return fn()
        except Exception as error:  # classified below; anything unknown is re-raised as is
            code, detail, retry = classify(error, repeatable=repeatable)
            if code is None:
                raise
            if not retry or attempt == attempts:
                logger.warning("%s %s failed: %s (attempt %d of %d)", platform, operation, code, attempt, attempts)
                raise PlatformCallError(platform, operation, code, detail) from error
            delay = max(random.uniform(0, min(MAX_DELAY_SECONDS, base * 2 ** (attempt - 1))), _retry_after(error))
            logger.info("%s %s: %s, try %d of %d in %.1fs", platform, operation, code, attempt + 1, attempts, delay)
            sleep(delay)
    raise AssertionError("unreachable")


def _retry_after(error: Exception) -> float:
    """The wait a 429 asks for (Retry-After in seconds, RFC 9110 section 10.2.3), capped; 0 when none."""
    value = getattr(error, "retry_after", None)
    try:
        return min(MAX_DELAY_SECONDS, max(0.0, float(value))) if value else 0.0
    except ValueError:  # an HTTP date: the backoff's own delay then
        return 0.0


def classify(error: Exception, *, repeatable: bool) -> tuple[str | None, str, bool]:
    """(code, detail, retry) for a platform error; code None for an error that is not one."""
    from botocore import exceptions as aws
    from requests import exceptions as http

    if isinstance(error, aws.ClientError):
        info = error.response.get("Error", {})
        code = info.get("Code", "ClientError")
        return code, info.get("Message", ""), code in AWS_THROTTLING or (repeatable and code in AWS_UNKNOWN_OUTCOME)
    if isinstance(error, aws.EndpointConnectionError | aws.ConnectTimeoutError):
        return type(error).__name__, str(error), True  # the request never left
    if isinstance(error, aws.ConnectionClosedError | aws.ReadTimeoutError | aws.ConnectionError):
        return type(error).__name__, str(error), repeatable
    if isinstance(error, PlatformHTTPError):
        retry = error.status == 429 or (repeatable and error.status in HTTP_UNKNOWN_OUTCOME)
        return str(error.status), error.detail, retry
    if isinstance(error, http.ConnectTimeout):
        return "ConnectTimeout", str(error), True
    if isinstance(error, http.ConnectionError | http.Timeout):
        return type(error).__name__, str(error), repeatable
    return None, "", False
