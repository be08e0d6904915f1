"""Who may open a page: one guard for every app's staff-only and reviewer pages.

An anonymous visitor goes to the site's own login page (settings.LOGIN_URL, with ?next= back to
the page); a signed-in user the rule refuses gets the site's one refusal page (403.html, which
extends refusal.html; see config.web.pages) with a 403, never a login loop and never the Django
admin's login, which is for the admin alone (`staff_member_required` sends there).

A guarded view carries `access_rule` (the rule's name), so a test can walk the URL resolver and
check every guarded page, not a hand-kept list.
"""

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

STAFF = "staff only"


def gate(allowed: Callable, rule: str) -> Callable:
    """A view decorator that lets in the signed-in users `allowed` accepts; `rule` names them
    (shown on the refusal page and kept on the view as `access_rule`)."""

    def decorate(view: Callable) -> Callable:
        @wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not allowed(request.user):
                raise PermissionDenied(rule)
            return view(request, *args, **kwargs)

        wrapper.access_rule = rule
        return wrapper

    return decorate


def is_staff(user) -> bool:
    return user.is_active and user.is_staff


staff_required = gate(is_staff, STAFF)
