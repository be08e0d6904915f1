"""config.web.messages: Django's MessageMiddleware with the message store made on first use. A
message added is still shown on the next page; a request that never touches messages makes no
store, writes no cookie and leaves the session alone; the admin still finds its middleware."""

import re

import pytest
from django.contrib import messages
from django.contrib.messages import middleware as django_messages
from django.contrib.sessions.middleware import SessionMiddleware
from django.core import checks
from django.http import HttpResponse
from django.test import RequestFactory, override_settings
from django.urls import reverse
from django.utils.functional import empty

from config.web.messages import MessageMiddleware
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import make_dialogues, open_campaign, screen_item
from tests.labeling.test_annotator_views import answer, item_url, start_hit

REFUSED = "Answer every item before submitting (still open: 1, 2, 3, 4)."


def never_made(request) -> bool:
    """Whether the request's message store is still the lazy stand-in, never built."""
    return request._messages._wrapped is empty


# --- through the middleware alone ---------------------------------------------------------------


def through_the_middleware(view, cookies: dict | None = None):
    request = RequestFactory().get("/")
    request.COOKIES.update(cookies or {})
    response = SessionMiddleware(MessageMiddleware(view))(request)
    return request, response


def adds(request):
    messages.success(request, "Saved it")
    return HttpResponse("added")


def shows(request):
    return HttpResponse(" | ".join(str(m) for m in messages.get_messages(request)))


def ignores(request):
    return HttpResponse("nothing")


def test_a_message_added_is_kept_and_shown_once_on_the_next_request(db):
    request, response = through_the_middleware(adds)
    assert not never_made(request)
    kept = response.cookies["messages"].value
    assert kept
    _, shown = through_the_middleware(shows, {"messages": kept})
    assert shown.content.decode() == "Saved it"
    assert shown.cookies["messages"]["max-age"] == 0  # shown: the cookie is cleared


def test_a_request_that_never_touches_messages_writes_nothing(db):
    request, response = through_the_middleware(ignores)
    assert never_made(request)
    assert "messages" not in response.cookies
    assert not request.session.modified and not request.session.accessed
    assert "Cookie" not in response.get("Vary", "")


def test_a_message_waiting_in_its_cookie_outlives_a_request_that_ignores_it(db):
    _, added = through_the_middleware(adds)
    kept = added.cookies["messages"].value
    request, ignored = through_the_middleware(ignores, {"messages": kept})
    assert never_made(request) and "messages" not in ignored.cookies  # the browser keeps it
    _, shown = through_the_middleware(shows, {"messages": kept})
    assert shown.content.decode() == "Saved it"


def admin_errors() -> set[str]:
    return {message.id for message in checks.run_checks() if message.id.startswith("admin.")}


def test_it_is_djangos_middleware_and_the_admin_still_finds_it(settings):
    """The admin asks for a subclass of Django's MessageMiddleware in MIDDLEWARE (admin.E409;
    E410 is the session middleware before the auth one, which stays in place too)."""
    assert issubclass(MessageMiddleware, django_messages.MessageMiddleware)
    assert "config.web.messages.MessageMiddleware" in settings.MIDDLEWARE
    assert not admin_errors() & {"admin.E408", "admin.E409", "admin.E410"}


def test_the_admins_check_would_see_the_middleware_missing(settings):
    """The check above can fail: without a message middleware the admin reports E409."""
    without = [name for name in settings.MIDDLEWARE if name != "config.web.messages.MessageMiddleware"]
    with override_settings(MIDDLEWARE=without):
        assert "admin.E409" in admin_errors()


# --- through the annotator's pages --------------------------------------------------------------


@pytest.fixture
def campaign(db):
    campaign = open_campaign(dialogues_per_hit=4, quiz_per_hit=0)
    build_hits(campaign, make_dialogues(4), seed=11)
    return campaign


@pytest.fixture
def annotator(client, annotators):
    client.force_login(annotators[0])
    return client


def shown_messages(page: str) -> list[str]:
    found = re.search(r'<ul class="messages">(.*?)</ul>', page, re.S)
    return re.findall(r"<li[^>]*>(.*?)</li>", found.group(1)) if found else []


def test_a_refused_submit_says_why_on_the_next_page_even_after_an_autosave(annotator, campaign):
    assignment = start_hit(annotator)
    refused = annotator.post(reverse("labeling:assignment_submit", args=[assignment.pk]))
    assert refused.status_code == 302 and refused.cookies["messages"].value
    first = screen_item(assignment, 1)
    saved = answer(annotator, assignment, 1, answer=first.choices[0])  # never looks at messages
    assert "Saved" in saved.content.decode()
    assert never_made(saved.wsgi_request) and "messages" not in saved.cookies
    assert not saved.wsgi_request.session.modified
    moved = answer(annotator, assignment, 1, go="next", answer=first.choices[0])  # an htmx Next: a partial
    assert never_made(moved.wsgi_request) and "messages" not in moved.cookies
    page = annotator.get(item_url(assignment, 2)).content.decode()
    assert shown_messages(page) == [REFUSED]
    again = annotator.get(item_url(assignment, 2)).content.decode()
    assert shown_messages(again) == []


def test_a_whole_page_makes_the_store_to_look_for_messages(annotator, campaign):
    """base.html asks for `messages` on every page, so a page makes the store (and shows none)."""
    assignment = start_hit(annotator)
    page = annotator.get(item_url(assignment, 1))
    assert not never_made(page.wsgi_request) and shown_messages(page.content.decode()) == []
