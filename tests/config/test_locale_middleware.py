"""config.web.locale.LocaleMiddleware picks the language Django's own rule picks (the language cookie,
else Accept-Language, else LANGUAGE_CODE), remembers each choice in a bounded cache, and marks the
response as Django's does."""

import pytest
from django.http import HttpRequest, HttpResponse
from django.test import RequestFactory, override_settings
from django.utils import translation

from config.web.locale import CHOICES_KEPT, LocaleMiddleware, chosen_language

COOKIE = "django_language"


def django_choice(cookie, accept) -> str:
    request = HttpRequest()
    if cookie is not None:
        request.COOKIES[COOKIE] = cookie
    if accept:
        request.META["HTTP_ACCEPT_LANGUAGE"] = accept
    return translation.get_language_from_request(request)


@pytest.mark.parametrize(
    "cookie, accept, expected",
    [
        (None, "", "en"),
        (None, "ar", "ar"),
        (None, "ar-EG,ar;q=0.9,en;q=0.8", "ar"),
        (None, "de-DE,de;q=0.9,es;q=0.5", "es"),
        (None, "fr", "en"),
        (None, "*", "en"),
        (None, "garbage;;;q=x", "en"),
        ("es", "ar", "es"),
        ("xx", "ar", "ar"),
        ("es-MX", "", "es"),
    ],
)
def test_the_choice_is_djangos_own(cookie, accept, expected):
    assert chosen_language(cookie, accept) == django_choice(cookie, accept) == expected


def test_the_choices_kept_are_bounded_whatever_the_headers_sent():
    chosen_language.cache_clear()
    for n in range(CHOICES_KEPT * 3):
        chosen_language(None, f"x{n}")
    assert chosen_language.cache_info().currsize == CHOICES_KEPT


def test_a_change_of_languages_is_seen_at_once():
    assert chosen_language(None, "es") == "es"
    with override_settings(LANGUAGES=[("en", "English"), ("ar", "Arabic")]):
        assert chosen_language(None, "es") == "en"
    assert chosen_language(None, "es") == "es"


def test_the_request_runs_in_the_language_and_the_response_says_so():
    seen = {}

    def view(request):
        seen["active"], seen["request"] = translation.get_language(), request.LANGUAGE_CODE
        return HttpResponse("ok")

    try:
        response = LocaleMiddleware(view)(RequestFactory().get("/labeling/", HTTP_ACCEPT_LANGUAGE="ar"))
    finally:
        translation.activate("en")
    assert seen == {"active": "ar", "request": "ar"}
    assert response["Content-Language"] == "ar" and "Accept-Language" in response["Vary"]
