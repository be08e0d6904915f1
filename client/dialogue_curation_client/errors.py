"""What the client raises: a 4xx answer becomes an ApiError subclass carrying the server's own
message (DRF's `detail`, or each field with its errors), a 5xx one that outlasted the retries a
ServerError."""

from typing import Any


class ApiError(Exception):
    """An answer the server refused: its HTTP status, its message and its JSON body (if any)."""

    def __init__(self, status: int, message: str, body: Any = None, *, method: str = "", url: str = "") -> None:
        super().__init__(f"{method} {url}: HTTP {status}: {message}".strip())
        self.status = status
        self.message = message
        self.body = body

    @property
    def field_errors(self) -> dict[str, list[str]]:
        """The errors per field of a 400 (empty when the server named no field)."""
        if not isinstance(self.body, dict):
            return {}
        return {k: _strings(v) for k, v in self.body.items() if k != "detail"}


class BadRequest(ApiError):
    """400: the request named a bad field (see `field_errors`)."""


class PermissionDenied(ApiError):
    """401 or 403: not signed in, or not staff (the API is for researchers)."""


class NotFound(ApiError):
    """404."""


class Conflict(ApiError):
    """409: the thing is in a state that refuses the action (a finished job cancelled)."""


class ServerError(ApiError):
    """5xx, after the retries a GET gets."""


class SignInRefused(Exception):
    """The sign-in page refused the username and password (or the account is locked out)."""


class JobFailed(Exception):
    """A job the client waited for ended failed or cancelled."""

    def __init__(self, job: Any) -> None:
        super().__init__(f"job {job.id} ({job.kind}) {job.status}: {job.error or job.message}")
        self.job = job


class NotReady(Exception):
    """The server is still computing what was asked (a 202 that outlasted the wait)."""


BY_STATUS: dict[int, type[ApiError]] = {400: BadRequest, 401: PermissionDenied, 403: PermissionDenied}
BY_STATUS |= {404: NotFound, 409: Conflict}


def error_for(status: int, body: Any, *, method: str, url: str) -> ApiError:
    kind = BY_STATUS.get(status, ServerError if status >= 500 else ApiError)
    return kind(status, message_of(body), body, method=method, url=url)


def message_of(body: Any) -> str:
    """DRF's `detail`, else "field: error; field: error", else the text itself (shortened)."""
    if isinstance(body, dict):
        if "detail" in body and len(body) == 1:
            return str(body["detail"])
        return "; ".join(f"{field}: {' '.join(_strings(errors))}" for field, errors in body.items())
    if isinstance(body, list):
        return " ".join(_strings(body))
    return str(body or "")[:500]


def _strings(value: Any) -> list[str]:
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    if isinstance(value, dict):
        return [f"{k}: {' '.join(_strings(v))}" for k, v in value.items()]
    return [str(value)]
