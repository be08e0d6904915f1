"""A database (or job broker) that is briefly away (restarting, failing over) answers 503.

PostgreSQL restarting under a running site breaks every open connection: the next query raises
django.db.OperationalError (or InterfaceError on a connection psycopg already closed). Uncaught,
that is a 500 with a traceback in the log and, for an annotator, an answer that seems lost. This
middleware turns exactly those two errors, raised by a view, into 503 Service Unavailable with
Retry-After: a short message for htmx requests (static/labeling/hit.js shows it and sends the
request again, the answer still on the screen), and a page that needs no database otherwise.
Django closes the broken connection when the request ends (errors_occurred), so the next request
connects afresh. The same for kombu's OperationalError: the job broker (Redis) away when a view
queues a job. Every other error (IntegrityError, a bug) is left alone.
"""

import logging

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.utils.html import escape
from django.utils.translation import gettext_lazy
from kombu.exceptions import OperationalError as BrokerUnavailable

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 2
MESSAGE = gettext_lazy("The server is briefly unavailable. Nothing you already saved is lost: try again in a moment.")


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, OperationalError | InterfaceError | BrokerUnavailable):
            return None
        logger.warning("database or broker unavailable on %s %s: %s", request.method, request.path, exception)
        return unavailable_response(request)


def unavailable_response(request: HttpRequest) -> HttpResponse:
    """The 503 itself. Rendered without the request's context (no user, no session: both need the
    database that is away)."""
    if request.headers.get("HX-Request") == "true":
        body = f'<span class="bad" role="alert">{escape(MESSAGE)}</span>'
    else:
        body = render_to_string("503.html", {"message": MESSAGE, "retry_after": RETRY_AFTER_SECONDS})
    response = HttpResponse(body, status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
    return response
