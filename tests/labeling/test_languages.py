"""The participant's pages in their language (docs/languages.md): the browser's Accept-Language by
default, the switcher's choice over it, <html lang dir> right on every page, and each answer
recording the interface language it was given in, on the full path and the fast path alike."""

import csv
import io
import re

import pytest
from django.conf import settings
from django.test import Client, RequestFactory
from django.urls import reverse
from django.utils import timezone, translation

from config.web.db_unavailable import unavailable_response
from labeling.models import Assignment, Response
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import make_dialogues, open_campaign

pytestmark = [pytest.mark.usefixtures("quiz_demo_bank"), pytest.mark.django_db]

HTMX = {"HTTP_HX_REQUEST": "true"}
# a word of each page in each shipped language, from the catalogs (locale/<code>/LC_MESSAGES)
HOME = {"en": "Annotate dialogues", "ar": "توسيم الحوارات", "es": "Anotar diálogos"}
SCREEN = {"en": "Next →", "ar": "التالي ←", "es": "Siguiente →"}
QUESTION = {"en": "What is the emotion or intent", "ar": "ما العاطفة أو النية", "es": "¿Cuál es la emoción"}
DONE = {"en": "Your completion code:", "ar": "رمز الإتمام الخاص بك:", "es": "Tu código de finalización:"}
CLOSED = {"en": "This HIT is closed", "ar": "هذه المهمة مغلقة", "es": "Este HIT está cerrado"}
LOGIN = {"en": "Log in", "ar": "تسجيل الدخول", "es": "Iniciar sesión"}
NOT_FOUND = {"en": "Not found", "ar": "غير موجود", "es": "No encontrado"}
SAVED = {"en": "Saved", "ar": "حُفظت", "es": "Guardado"}
DIRECTION = {"en": "ltr", "ar": "rtl", "es": "ltr"}


@pytest.fixture(autouse=True)
def _the_default_language_after_each_test():
    """LocaleMiddleware leaves the last request's language active in this thread: put the
    default back, so a test after one of these reads English outside a request."""
    yield
    translation.activate(settings.LANGUAGE_CODE)


@pytest.fixture
def campaign(db):
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=1)
    build_hits(campaign, make_dialogues(2), seed=5)
    return campaign


def browser(user, language: str | None) -> Client:
    """A signed-in browser that asks for `language` (Accept-Language), or for none."""
    client = Client(**({"HTTP_ACCEPT_LANGUAGE": language} if language else {}))
    if user is not None:
        client.force_login(user)
    return client


def html_tag(page: str) -> tuple[str, str]:
    tag = re.search(r"<html lang=\"([^\"]+)\" dir=\"([^\"]+)\">", page)
    assert tag, page[:300]
    return tag.group(1), tag.group(2)


def claim(client) -> Assignment:
    response = client.post(reverse("labeling:claim"))
    assert response.status_code == 302
    return Assignment.objects.get(pk=int(re.search(r"/assignments/(\d+)/", response["Location"]).group(1)))


def answer_url(assignment, position):
    return reverse("labeling:answer_item", args=[assignment.pk, position])


def first_choice(assignment, position):
    return assignment.hit.items.get(position=position).choices[0]


@pytest.mark.parametrize("language", ["ar", "es", "en"])
def test_every_page_a_participant_meets_is_in_the_browsers_language(language, campaign, annotators):
    client = browser(annotators[0], language)
    home = client.get(reverse("labeling:worker_home")).content.decode()
    assert html_tag(home) == (language, DIRECTION[language]) and HOME[language] in home
    assignment = claim(client)
    screen = client.get(reverse("labeling:assignment_item", args=[assignment.pk, 1])).content.decode()
    assert html_tag(screen) == (language, DIRECTION[language])
    assert SCREEN[language] in screen and QUESTION[language] in screen
    for item in assignment.hit.items.order_by("position"):
        client.post(answer_url(assignment, item.position), {"go": "next", "answer": item.choices[0]})
    client.post(reverse("labeling:assignment_submit", args=[assignment.pk]))
    done = client.get(reverse("labeling:assignment_done", args=[assignment.pk])).content.decode()
    assert html_tag(done) == (language, DIRECTION[language]) and DONE[language] in done
    login = browser(None, language).get(reverse("login")).content.decode()
    assert html_tag(login) == (language, DIRECTION[language]) and LOGIN[language] in login


@pytest.mark.parametrize("language", ["ar", "es"])
def test_refusal_pages_are_in_the_browsers_language(language, campaign, annotators):
    client = browser(annotators[0], language)
    assignment = claim(client)
    Assignment.objects.filter(pk=assignment.pk).update(expires_at=timezone.now())
    closed = client.get(reverse("labeling:assignment_detail", args=[assignment.pk]))
    assert closed.status_code == 410
    page = closed.content.decode()
    assert html_tag(page) == (language, DIRECTION[language]) and CLOSED[language] in page
    missing = client.get(reverse("labeling:assignment_detail", args=[assignment.pk + 1000]))
    page = missing.content.decode()
    assert missing.status_code == 404 and html_tag(page) == (language, DIRECTION[language])
    assert NOT_FOUND[language] in page


def test_the_unavailable_page_needs_no_database_and_is_in_the_requests_language():
    request = RequestFactory().get("/")
    with translation.override("ar"):
        page = unavailable_response(request).content.decode()
    assert html_tag(page) == ("ar", "rtl") and "غير متاح لفترة وجيزة" in page


def test_english_is_the_default_and_an_unshipped_language_falls_back_to_it(campaign, annotators):
    for asked in (None, "de", "fr-CA"):
        page = browser(annotators[0], asked).get(reverse("labeling:worker_home")).content.decode()
        assert html_tag(page) == ("en", "ltr") and HOME["en"] in page
    regional = browser(annotators[0], "es-MX,es;q=0.9").get(reverse("labeling:worker_home")).content.decode()
    assert html_tag(regional) == ("es", "ltr")


def test_the_switcher_is_on_every_participant_page_and_its_choice_wins_over_the_browser(campaign, annotators):
    client = browser(annotators[0], "ar")
    home = client.get(reverse("labeling:worker_home")).content.decode()
    switcher = re.search(r'<form[^>]*id="language-switcher".*?</form>', home, re.S).group(0)
    assert re.findall(r'name="language" value="(\w+)"', switcher) == ["en", "ar", "es"]
    assert 'value="ar" lang="ar" class="link" aria-current="true" disabled' in switcher  # the current one
    back_to = reverse("labeling:worker_home")
    switched = client.post(reverse("set_language"), {"language": "es"}, HTTP_REFERER=f"http://testserver{back_to}")
    assert switched.status_code == 302 and switched["Location"] == f"http://testserver{back_to}"
    page = client.get(back_to).content.decode()  # still asking for Arabic: the cookie wins
    assert html_tag(page) == ("es", "ltr") and HOME["es"] in page
    assignment = claim(client)
    screen = client.get(reverse("labeling:assignment_item", args=[assignment.pk, 1])).content.decode()
    assert 'id="language-switcher"' in screen and SCREEN["es"] in screen


def test_the_switcher_refuses_a_language_not_shipped(annotators):
    client = browser(annotators[0], None)
    client.post(reverse("set_language"), {"language": "de"})
    page = client.get(reverse("home")).content.decode()
    assert html_tag(page) == ("en", "ltr")


@pytest.mark.parametrize("fast_path", [True, False], ids=["fast-path", "orm"])
def test_each_answer_records_the_interface_language_it_was_given_in(fast_path, settings, campaign, annotators):
    settings.ANNOTATOR_FAST_PATH = fast_path
    client = browser(annotators[0], "ar")
    assignment = claim(client)
    client.get(reverse("labeling:assignment_item", args=[assignment.pk, 1]))  # the screen shown: its route known
    # the autosave of a pick (the fast path's one statement when on)
    saved = client.post(answer_url(assignment, 1), {"go": "stay", "answer": first_choice(assignment, 1)}, **HTMX)
    assert SAVED["ar"] in saved.content.decode()
    assert Response.objects.get(assignment=assignment, item__position=1).language == "ar"
    # a Next carrying a new pick, in Spanish now (the fast path's next_with_pick when on)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "es"
    item = assignment.hit.items.get(position=1)
    other = item.choices[1]
    moved = client.post(answer_url(assignment, 1), {"go": "next", "answer": other}, **HTMX)
    assert SCREEN["es"] in moved.content.decode()
    response = Response.objects.get(assignment=assignment, item=item)
    assert (response.label.name, response.language) == (other, "es")  # replaced: the latest language
    # a typed label through "Other" takes the full path
    client.post(answer_url(assignment, 2), {"go": "stay", "answer": "__new__", "new_label": "Wistful"}, **HTMX)
    typed = Response.objects.get(assignment=assignment, item__position=2)
    assert (typed.method, typed.language) == (Response.OTHER_NEW, "es")


def test_screens_in_two_languages_one_after_the_other_keep_their_own_words(campaign, annotators):
    """The screen's parts are built once per language and process: neither language's cached
    parts show in the other's screen."""
    arabic, english = browser(annotators[0], "ar"), browser(annotators[1], "en")
    first, second = claim(arabic), claim(english)
    for _ in range(2):
        ar = arabic.get(reverse("labeling:assignment_item", args=[first.pk, 1]), **HTMX).content.decode()
        en = english.get(reverse("labeling:assignment_item", args=[second.pk, 1]), **HTMX).content.decode()
        assert QUESTION["ar"] in ar and QUESTION["en"] not in ar and "التصنيفات" in ar
        assert QUESTION["en"] in en and QUESTION["ar"] not in en and "Type to filter the labels" in en


def test_the_answers_export_carries_the_interface_language(campaign, annotators, researcher):
    client = browser(annotators[0], "ar")
    assignment = claim(client)
    for item in assignment.hit.items.order_by("position"):
        client.post(answer_url(assignment, item.position), {"go": "next", "answer": item.choices[0]})
    client.post(reverse("labeling:assignment_submit", args=[assignment.pk]))
    staff = browser(researcher, None)
    download = staff.get(reverse("labeling:campaign_answers_export", args=[campaign.pk, "csv"]))
    rows = list(csv.DictReader(io.StringIO(b"".join(download.streaming_content).decode())))
    assert len(rows) == assignment.hit.items.count()
    assert {row["interface_language"] for row in rows} == {"ar"}
    assert {row["assignment"] for row in rows} == {str(assignment.pk)}
    jsonl = b"".join(
        staff.get(reverse("labeling:campaign_answers_export", args=[campaign.pk, "jsonl"])).streaming_content
    )
    assert jsonl.decode().count('"interface_language": "ar"') == len(rows)
    assert staff.get(reverse("labeling:campaign_answers_export", args=[campaign.pk, "xlsx"])).status_code == 404
    outsider = browser(annotators[1], None).get(reverse("labeling:campaign_answers_export", args=[campaign.pk, "csv"]))
    assert outsider.status_code in (302, 403)


def test_a_researchers_page_keeps_its_english_content_marked_as_english(researcher, campaign):
    page = browser(researcher, "ar").get(reverse("labeling:campaign_detail", args=[campaign.pk])).content.decode()
    assert html_tag(page) == ("ar", "rtl")  # the header (the switcher, log out) in the language chosen
    assert '<main lang="en" dir="ltr">' in page
