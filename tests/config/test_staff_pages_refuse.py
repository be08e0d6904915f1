"""Every staff-only page, found by walking the URL resolver: an anonymous visitor goes to the
site's login with ?next= back, an annotator gets the site's refusal page with a 403, and no page
outside the admin sends anyone to the Django admin's login."""

import re
from urllib.parse import quote

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from config.web.access import STAFF

pytestmark = pytest.mark.django_db

# the admin has its own login; the API answers in JSON (DRF's permission classes)
NOT_PAGES = ("admin/", "api/")
SAMPLE_ARGUMENT = {"int": "1", "str": "x", "slug": "x", "path": "x", "uuid": "00000000-0000-0000-0000-000000000000"}


def _route(prefix: str, pattern) -> str | None:
    """The pattern's path with a sample value per converter; None for a regex pattern (the admin)."""
    route = getattr(pattern.pattern, "_route", None)
    if route is None:
        return None
    return prefix + re.sub(r"<(?:(\w+):)?\w+>", lambda m: SAMPLE_ARGUMENT[m.group(1) or "str"], route)


def site_pages(resolver=None, prefix: str = "") -> list[tuple[str, object]]:
    """(url, view) for every page of the site, outside the admin and the API."""
    pages = []
    for pattern in (resolver or get_resolver()).url_patterns:
        route = _route(prefix, pattern)
        if route is None or route.startswith(NOT_PAGES):
            continue
        if isinstance(pattern, URLResolver):
            pages += site_pages(pattern, route)
        elif isinstance(pattern, URLPattern):
            pages.append(("/" + route, pattern.callback))
    return pages


def staff_pages() -> list[str]:
    return [url for url, view in site_pages() if getattr(view, "access_rule", None) == STAFF]


def ask(client, url: str):
    """GET, or POST where the page only takes a POST (the guard answers either)."""
    response = client.get(url)
    return client.post(url) if response.status_code == 405 else response


def test_the_walk_finds_the_researcher_pages_of_every_app():
    found = staff_pages()
    for page in ("/jobs/", "/models/", "/corpus/", "/corpus/analysis/flows/", "/labeling/campaigns/"):
        assert page in found
    assert "/labeling/" not in found  # the annotator's home is not staff-only


def test_an_anonymous_visitor_is_sent_to_the_sites_login_and_back(client):
    for url in staff_pages():
        response = ask(client, url)
        assert response.status_code == 302, url
        assert response["Location"] == f"/accounts/login/?next={quote(url)}", url


def test_an_annotator_gets_the_refusal_page_with_a_403(client, annotators):
    client.force_login(annotators[0])
    for url in staff_pages():
        response = ask(client, url)
        assert response.status_code == 403, url
        assert [t.name for t in response.templates][:2] == ["403.html", "refusal.html"], url
        assert 'id="refusal"' in response.content.decode() and "staff only" in response.content.decode(), url


def test_a_researcher_passes_the_guard(client, researcher):
    client.force_login(researcher)
    assert ask(client, "/jobs/").status_code == 200 and ask(client, "/corpus/").status_code == 200


@pytest.mark.parametrize("who", ["anonymous", "annotator"])
def test_no_page_outside_the_admin_sends_anyone_to_the_admin_login(client, annotators, who):
    if who == "annotator":
        client.force_login(annotators[0])
    for url, _view in site_pages():
        response = ask(client, url)
        assert "/admin/login/" not in response.get("Location", ""), url
