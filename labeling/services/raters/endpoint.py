"""A chat model behind an OpenAI-compatible endpoint: one call per item, with retries.

Checked against the Chat Completions API reference,
https://platform.openai.com/docs/api-reference/chat/create (found through
https://hexdocs.pm/openai_ex/OpenaiEx.Chat.Completions.html, which links it): POST
`{base}/chat/completions` with `model` and `messages` (role, content), the key as a Bearer token;
the answer is `choices[0].message.content`, the tokens `usage.prompt_tokens` and
`usage.completion_tokens`. A 429 is a rate limit: wait what its Retry-After header says, then retry.

Every outcome is an `EndpointReply` with a status, never an exception: a timeout, a 429 after the
retries, another HTTP error, a body that is no chat completion. The key is never logged or stored:
`detail` holds only the status code and the body's start, scrubbed of every secret the project
holds and of this endpoint's key (config.scrub) before it is cut, as some servers echo the bearer
key they refuse in a 401 body. `chat`'s transport is `requests.post`, the one point tests replace.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass

import requests

from config.scrub import scrub

DETAIL_CHARS = 500
MAX_RETRY_AFTER_SECONDS = 60.0  # a longer Retry-After is waited this long at most
DEFAULT_BACKOFF_SECONDS = 1.0  # a 429 or timeout without a Retry-After header


@dataclass(frozen=True)
class EndpointReply:
    status: str  # RaterAnswer's: ok (content holds the reply), timeout, rate-limited, http-error, malformed
    content: str = ""
    detail: str = ""
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class Endpoint:
    url: str  # the API base, before /chat/completions
    model: str
    key: str
    timeout: float
    max_retries: int

    def __repr__(self) -> str:  # the key stays out of every log line and traceback
        return f"Endpoint(url={self.url!r}, model={self.model!r})"


def chat(endpoint: Endpoint, messages: list[dict], *, sleep: Callable[[float], None] = time.sleep) -> EndpointReply:
    started = time.perf_counter()
    calls, outcome = 0, None
    for _attempt in range(endpoint.max_retries + 1):
        calls += 1
        outcome, wait = _call_once(endpoint, messages)
        if wait is None:
            break
        if _attempt < endpoint.max_retries:
            sleep(wait)
    return EndpointReply(**{**outcome, "calls": calls, "seconds": round(time.perf_counter() - started, 3)})


def _call_once(endpoint: Endpoint, messages: list[dict]) -> tuple[dict, float | None]:
    """(the reply's fields, seconds to wait before a retry or None when this outcome is final)."""
    try:
        response = requests.post(
            f"{endpoint.url.rstrip('/')}/chat/completions",
            json={"model": endpoint.model, "messages": messages, "temperature": 0},
            headers={"Authorization": f"Bearer {endpoint.key}"},
            timeout=endpoint.timeout,
        )
    except requests.Timeout:
        return {"status": "timeout", "detail": f"no answer within {endpoint.timeout:g} s"}, DEFAULT_BACKOFF_SECONDS
    except requests.RequestException as error:
        return {"status": "http-error", "detail": type(error).__name__}, None
    if response.status_code == 429:
        detail = f"HTTP 429: {_body(response, endpoint, 200)}"
        return {"status": "rate-limited", "detail": detail}, _retry_after(response.headers.get("Retry-After"))
    if response.status_code != 200:
        return {
            "status": "http-error",
            "detail": f"HTTP {response.status_code}: {_body(response, endpoint, 200)}",
        }, None
    return _completion(response, endpoint), None


def _body(response: requests.Response, endpoint: Endpoint, chars: int) -> str:
    """The start of the body the endpoint sent, without a secret (scrubbed whole, then cut, so no
    part of a key survives at the cut)."""
    return scrub(response.text, also=(endpoint.key,))[:chars]


def _retry_after(value: str | None) -> float:
    try:
        seconds = float(value) if value is not None else DEFAULT_BACKOFF_SECONDS
    except ValueError:
        seconds = DEFAULT_BACKOFF_SECONDS  # an HTTP date: wait the default
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_SECONDS)


def _completion(response: requests.Response, endpoint: Endpoint) -> dict:
    try:
        body = response.json()
        content = body["choices"][0]["message"]["content"]
        usage = body.get("usage") or {}
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return {"status": "malformed", "detail": f"not a chat completion: {_body(response, endpoint, DETAIL_CHARS)}"}
    if not isinstance(content, str):
        shown = scrub(content, also=(endpoint.key,))[:DETAIL_CHARS]
        return {"status": "malformed", "detail": f"content is not text: {shown}"}
    return {
        "status": "ok",
        "content": content,
        "prompt_tokens": _tokens(usage, "prompt_tokens"),
        "completion_tokens": _tokens(usage, "completion_tokens"),
    }


def _tokens(usage, key: str) -> int:
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and value >= 0 else 0
