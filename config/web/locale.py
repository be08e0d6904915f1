"""The participant's language for each request (docs/crowd/languages.md): Django's LocaleMiddleware
without the work this site never needs, on every request of the annotator's too.

Django's reads the language from the URL's path twice a request (a regular expression, then a
refused lookup of the path's first segment as a language) for i18n_patterns, which this site does
not use, and parses the cookie and Accept-Language anew each time. Here the choice (the language
cookie, else Accept-Language, else LANGUAGE_CODE: Django's own rule, get_language_from_request) is
remembered per pair of header values in a bounded cache (the headers are the client's: made-up
values only push others out). The response says what it varies on and its language, as Django's.
"""

from functools import lru_cache

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpRequest
from django.utils import translation
from django.utils.cache import patch_vary_headers

CHOICES_KEPT = 512  # distinct (cookie, Accept-Language) pairs remembered per process


class LocaleMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest):
        cookie = request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME)
        language = chosen_language(cookie, request.META.get("HTTP_ACCEPT_LANGUAGE", ""))
        translation.activate(language)
        request.LANGUAGE_CODE = language
        response = self.get_response(request)
        patch_vary_headers(response, ("Accept-Language",))
        response.headers.setdefault("Content-Language", translation.get_language())
        return response


@lru_cache(maxsize=CHOICES_KEPT)
def chosen_language(cookie: str | None, accept_language: str) -> str:
    """The language Django's get_language_from_request picks for a request with this language
    cookie and Accept-Language header."""
    request = HttpRequest()
    if cookie is not None:
        request.COOKIES[settings.LANGUAGE_COOKIE_NAME] = cookie
    if accept_language:
        request.META["HTTP_ACCEPT_LANGUAGE"] = accept_language
    return translation.get_language_from_request(request)


@receiver(setting_changed)
def _forget_choices(*, setting: str, **kwargs) -> None:
    """A test that changes the languages gets choices made under them (as Django's own caches)."""
    if setting in {"LANGUAGES", "LANGUAGE_CODE", "LANGUAGE_COOKIE_NAME"}:
        chosen_language.cache_clear()
