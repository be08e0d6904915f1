"""Two page patterns every app shares: a confirmation step before an action that cannot be undone,
and the one refusal page (templates/refusal.html) for every "no": 400, 403, 404, 409, 429, a
closed HIT or campaign, a locked-out login.

The confirmation works without JavaScript: the button posts its form as usual; a view whose action
cannot be undone answers a POST without confirm=yes with a page that says what will happen and
posts the same fields again with confirm=yes (CSRF-checked like any form). The API does not ask.
"""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

CONFIRM_FIELD = "confirm"
CONFIRM_VALUE = "yes"
_NOT_REPOSTED = {"csrfmiddlewaretoken", CONFIRM_FIELD}


def confirmed(request: HttpRequest) -> bool:
    return request.POST.get(CONFIRM_FIELD) == CONFIRM_VALUE


def confirmation_page(
    request: HttpRequest, *, title: str, consequence: str, action: str, cancel_url: str
) -> HttpResponse:
    """The page that asks: `title` as its heading, `consequence` says what cannot be undone,
    `action` labels the button that does it, `cancel_url` leads back without doing it."""
    fields = [(name, value) for name, values in request.POST.lists() if name not in _NOT_REPOSTED for value in values]
    context = {
        "title": title,
        "consequence": consequence,
        "action": action,
        "action_url": request.get_full_path(),
        "fields": fields,
        "confirm_field": CONFIRM_FIELD,
        "confirm_value": CONFIRM_VALUE,
        "cancel_url": cancel_url,
    }
    return render(request, "confirm.html", context)


def refusal(
    request: HttpRequest,
    title: str,
    message: str,
    *,
    status: int,
    next_url: str = "",
    next_label: str = "",
) -> HttpResponse:
    """The refusal page: what was refused and why, and where to go from here."""
    context = {"title": title, "message": message, "next_url": next_url, "next_label": next_label}
    return render(request, "refusal.html", context, status=status)
