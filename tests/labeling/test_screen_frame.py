"""The frame around a screen and the review, as they are formatted since a Next got cheaper:
the form token an htmx swap leaves to the body's hx-headers, the heading, progress and time limit
formatted in Python (labeling.fast_path.screen.frame), the screen URLs from one reversed form
(labeling.fast_path.screen.urls) and the review's answers read as values (Response.answer_shown)."""

import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.template import Context, Template
from django.test import Client, override_settings
from django.urls import reverse, set_script_prefix
from django.utils import timezone
from django.utils.html import escape

from labeling.fast_path import screen as screens
from labeling.models import Assignment, Response
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import make_dialogues, open_campaign, screen_item
from tests.labeling.test_annotator_views import HTMX, answer, item_url, start_hit

# the HITs here take their quiz screens from the built-in one-turn quiz bank
pytestmark = pytest.mark.usefixtures("quiz_demo_bank")

TOTAL = 6  # four dialogues and two quiz screens a HIT
TRIGGER = "change[target.name=='answer'||target.name=='new_label']"  # last_turn_label's autosave trigger


@pytest.fixture
def campaign(db):
    campaign = open_campaign(dialogues_per_hit=4, quiz_per_hit=2)
    build_hits(campaign, make_dialogues(4), seed=11)
    return campaign


@pytest.fixture
def annotator(client, annotators):
    client.force_login(annotators[0])
    return client


def hx_token(page: str) -> str:
    """The token the page's body hands htmx (base.html's hx-headers)."""
    return re.search(r"""<body hx-headers='\{"X-CSRFToken": "([^"]+)"\}'>""", page).group(1)


def item_form(page: str) -> str:
    start = page.index('<form id="item-form"')
    return page[start : page.index("</form>", start)]


def form_token(page: str) -> str | None:
    found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', item_form(page))
    return found.group(1) if found else None


def next_with(client, assignment, position: int, **extra):
    """Next from screen `position` with its first choice, as htmx posts it (plus `extra` headers)."""
    item = screen_item(assignment, position)
    url = item_url(assignment, position, "answer_item")
    return client.post(url, {"go": "next", "answer": item.choices[0]}, **HTMX, **extra)


# --- The form token: a swap has none of its own, htmx sends the page's ------------------------


@pytest.fixture
def strict(annotators):
    """A browser whose every POST is checked for its CSRF token, as a real one's is."""
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(annotators[0])
    return browser


def claimed_strictly(browser) -> Assignment:
    """Start a HIT as a browser does: the home page's token (from its body), then the claim."""
    token = hx_token(browser.get(reverse("labeling:worker_home")).content.decode())
    response = browser.post(reverse("labeling:claim"), HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 302, response.status_code
    return Assignment.objects.get(pk=int(re.search(r"/assignments/(\d+)/", response["Location"]).group(1)))


def test_an_htmx_next_carries_no_form_token_and_the_header_alone_gets_the_next_one_through(strict, campaign):
    assignment = claimed_strictly(strict)
    page = strict.get(item_url(assignment, 1)).content.decode()
    header_token = hx_token(page)
    moved = next_with(strict, assignment, 1, HTTP_X_CSRFTOKEN=header_token)
    assert moved.status_code == 200 and "Dialog 2/6" in moved.content.decode()
    assert "csrfmiddlewaretoken" not in moved.content.decode()
    assert "<html" not in moved.content.decode()  # the swap: no body, so no hx-headers either
    # the next Next sends only the header (the page's body still holds it), no form field
    again = next_with(strict, assignment, 2, HTTP_X_CSRFTOKEN=header_token)
    assert again.status_code == 200 and "Dialog 3/6" in again.content.decode()
    # the cookie's value works as the header too (the token is the same secret, unmasked)
    cookie = strict.cookies["csrftoken"].value
    assert next_with(strict, assignment, 3, HTTP_X_CSRFTOKEN=cookie).status_code == 200


def test_an_htmx_next_without_any_token_is_refused(strict, campaign):
    assignment = claimed_strictly(strict)
    refused = next_with(strict, assignment, 1)
    assert refused.status_code == 403
    assert not Response.objects.exists()
    # the same Next with the page's token in the header goes through: the token was what was missing
    token = hx_token(strict.get(item_url(assignment, 1)).content.decode())
    assert next_with(strict, assignment, 1, HTTP_X_CSRFTOKEN=token).status_code == 200
    assert Response.objects.count() == 1


def test_a_whole_page_carries_the_form_token_and_posting_it_works(strict, campaign):
    assignment = claimed_strictly(strict)
    page = strict.get(item_url(assignment, 1)).content.decode()
    token = form_token(page)
    assert token
    first = screen_item(assignment, 1)
    posted = {"go": "next", "answer": first.choices[0], "csrfmiddlewaretoken": token}
    moved = strict.post(item_url(assignment, 1, "answer_item"), posted)  # no header, no htmx
    assert moved.status_code == 302 and moved["Location"] == item_url(assignment, 2)


def test_every_whole_page_answer_to_htmx_keeps_the_form_token(annotator, campaign):
    """A history restore and the claim's answer are whole pages (htmx swaps the body in), so their
    form carries its token like a page without htmx."""
    claimed = annotator.post(reverse("labeling:claim"), **HTMX)
    assert claimed.status_code == 200 and form_token(claimed.content.decode())
    assignment = Assignment.objects.get()
    restored = annotator.get(
        item_url(assignment, 1), headers={"HX-Request": "true", "HX-History-Restore-Request": "true"}
    ).content.decode()
    assert restored.lstrip().lower().startswith("<!doctype html>") and form_token(restored)
    swapped = annotator.get(item_url(assignment, 1), headers={"HX-Request": "true"}).content.decode()
    assert "<html" not in swapped and 'id="item-form"' in swapped and form_token(swapped) is None


# --- The frame: heading, position, progress, Back, time limit, autosave trigger -----------------

WIDTHRATIO = Template("{% widthratio position total 100 %}")


def widthratio(position: int, total: int) -> str:
    return WIDTHRATIO.render(Context({"position": position, "total": total}))


@pytest.mark.parametrize(
    ("position", "total"),
    [
        (1, 1),
        (1, 3),
        (2, 3),
        (3, 3),
        (1, 6),
        (5, 6),
        (6, 6),
        (1, 8),
        (3, 8),
        (5, 8),
        (7, 8),
        (39, 40),
        (40, 40),
        (0, 0),
    ],
)
def test_the_progress_is_what_widthratio_gave(position, total):
    """Halves included (1/8 is 12.5%): both round half to even."""
    frame = screens.frame("Dialog", position, total, datetime(2030, 1, 1, tzinfo=UTC))
    assert frame["progress"] == widthratio(position, total)
    assert frame["heading"] == f"Dialog {position}/{total}"


def test_the_frames_time_is_the_expiry_in_utc_whatever_zone_it_is_given_in():
    tokyo = datetime(2030, 3, 1, 23, 45, tzinfo=ZoneInfo("Asia/Tokyo"))
    assert screens.frame("Item", 1, 2, tokyo)["expires_hm"] == "14:45"


def progress(page: str) -> str:
    return re.search(r'<div class="progress" aria-hidden="true"><span style="width: (\d+)%"></span></div>', page).group(
        1
    )


def back_disabled(page: str) -> bool:
    button = re.search(r'<button type="submit" name="go" value="back" data-nav="back"([^>]*)>', page).group(1)
    return button == " disabled"


def test_every_screen_shows_its_heading_position_progress_and_back(annotator, campaign):
    assignment = start_hit(annotator)
    for position in range(1, TOTAL + 1):
        page = annotator.get(item_url(assignment, position)).content.decode()
        assert f"<title>Dialog {position}/{TOTAL}</title>" in page
        assert f"<h1>Dialog {position}/{TOTAL}</h1>" in page
        assert f'data-position="{position}"' in page
        assert progress(page) == widthratio(position, TOTAL)
        assert back_disabled(page) is (position == 1)


def test_the_swapped_screens_show_the_same_frame(annotator, campaign):
    assignment = start_hit(annotator)
    for position in range(1, TOTAL):
        swapped = next_with(annotator, assignment, position).content.decode()
        shown = position + 1
        assert f"<h1>Dialog {shown}/{TOTAL}</h1>" in swapped and f'data-position="{shown}"' in swapped
        assert progress(swapped) == widthratio(shown, TOTAL)
        assert not back_disabled(swapped)
    assert progress(swapped) == "100"  # the last screen
    back = answer(annotator, assignment, 2, go="back").content.decode()
    assert "<h1>Dialog 1/6</h1>" in back and back_disabled(back)


@override_settings(TIME_ZONE="America/New_York")
def test_the_time_limit_is_shown_in_utc_whatever_the_servers_time_zone(annotator, campaign):
    """The page says "Submit before HH:MM UTC". The old template (`expires_at|time:"H:i"`)
    localized the time to the current time zone: with TIME_ZONE=America/New_York it showed New
    York's hour, four or five hours off, still followed by "UTC". The frame converts to UTC."""
    assignment = start_hit(annotator)
    expires = timezone.now().replace(microsecond=0) + timedelta(minutes=50)
    Assignment.objects.filter(pk=assignment.pk).update(expires_at=expires)
    in_utc = expires.astimezone(UTC).strftime("%H:%M")
    in_new_york = expires.astimezone(ZoneInfo("America/New_York")).strftime("%H:%M")
    assert in_utc != in_new_york
    page = annotator.get(item_url(assignment, 1)).content.decode()
    swapped = next_with(annotator, assignment, 1).content.decode()
    for shown in (page, swapped):
        assert f"Submit before {in_utc} UTC." in shown
        assert f"Submit before {in_new_york} UTC" not in shown


def autosave_trigger(page: str) -> str:
    return re.search(r'<div class="answers" hx-post="[^"]+" hx-trigger="([^"]*)"', page).group(1)


@override_settings(AUTOSAVE_DELAY_MS=0)
def test_without_an_autosave_delay_the_trigger_is_the_change_alone(annotator, campaign):
    assignment = start_hit(annotator)
    assert autosave_trigger(annotator.get(item_url(assignment, 1)).content.decode()) == TRIGGER
    assert autosave_trigger(next_with(annotator, assignment, 1).content.decode()) == TRIGGER


@override_settings(AUTOSAVE_DELAY_MS=12000)
def test_an_autosave_delay_is_added_to_the_trigger_in_milliseconds(annotator, campaign):
    """12000, not "12,000": the number is written as htmx reads it, not localized."""
    assignment = start_hit(annotator)
    expected = f"{TRIGGER} delay:12000ms"
    assert autosave_trigger(annotator.get(item_url(assignment, 1)).content.decode()) == expected
    assert autosave_trigger(next_with(annotator, assignment, 1).content.decode()) == expected


def test_the_screen_urls_are_what_reverse_gives():
    for assignment_id, position in [(1, 1), (42, 6), (900_000_001, 900_000_002), (12, 100)]:
        assert screens.urls(assignment_id, position) == (
            reverse("labeling:assignment_item", args=[assignment_id, position]),
            reverse("labeling:answer_item", args=[assignment_id, position]),
        )


# --- The review: each screen's link and answer, Back to the last screen -------------------------

ROW = re.compile(
    r'<li>\s*<a href="([^"]+)">Dialog (\d+)</a>:\s*'
    r'(?:<strong>(.*?)</strong>|<span class="bad">not answered yet</span>)\s*</li>',
    re.S,
)
NOT_ANSWERED = None


def review_rows(page: str) -> list[tuple[str, int, str | None]]:
    return [(url, int(position), shown if shown else NOT_ANSWERED) for url, position, shown in ROW.findall(page)]


def review_back(page: str) -> str:
    return re.search(r'<a class="button" data-nav="back" href="([^"]+)">', page).group(1)


def expected_rows(assignment) -> list[tuple[str, int, str | None]]:
    rows = []
    for position in range(1, TOTAL + 1):
        response = Response.objects.filter(assignment=assignment, item=screen_item(assignment, position)).first()
        shown = escape(response.answer) if response else NOT_ANSWERED
        rows.append((reverse("labeling:assignment_item", args=[assignment.pk, position]), position, shown))
    return rows


def test_the_review_links_every_screen_and_shows_its_answer_as_the_response_gives_it(annotator, campaign):
    assignment = start_hit(annotator)
    answer(annotator, assignment, 1, answer=screen_item(assignment, 1).choices[0])
    answer(annotator, assignment, 2, answer="__new__", new_label="Quietly smug & sly")
    answer(annotator, assignment, 3, answer="Nostalgic")  # through "Other"'s list
    saved = {r.item.position: r for r in Response.objects.filter(assignment=assignment).select_related("item")}
    assert saved[2].new_label_text == "Quietly smug & sly" and saved[2].label is None
    assert saved[3].label.name == "Nostalgic"
    reviewed = next_with(annotator, assignment, TOTAL)  # Next on the last screen: the review, swapped in
    assert reviewed["HX-Push-Url"] == reverse("labeling:assignment_review", args=[assignment.pk])
    expected = expected_rows(assignment)
    assert [row[2] is not NOT_ANSWERED for row in expected] == [True, True, True, False, False, True]
    assert expected[1][2] == "Quietly smug &amp; sly" and expected[2][2] == "Nostalgic"
    review_url = reverse("labeling:assignment_review", args=[assignment.pk])
    for page in (
        reviewed.content.decode(),
        annotator.get(review_url).content.decode(),  # the whole page
        annotator.get(review_url, **HTMX).content.decode(),  # the partial
    ):
        assert review_rows(page) == expected
        assert "4 of 6 dialogues answered" in page
        assert review_back(page) == item_url(assignment, TOTAL)


def test_the_reviews_links_follow_the_script_prefix_as_reverse_does(annotator, campaign):
    """screens.urls keeps one reversed form per script prefix: a site served under a path links
    under it, and the site without one does not pick up that path. (The test client leaves the
    prefix as it finds it, so the test sets it as the WSGI handler would.)"""
    assignment = start_hit(annotator)
    review_url = reverse("labeling:assignment_review", args=[assignment.pk])
    set_script_prefix("/annotate/")
    try:
        prefixed = annotator.get(review_url).content.decode()
        expected = [reverse("labeling:assignment_item", args=[assignment.pk, p]) for p in range(1, TOTAL + 1)]
    finally:
        set_script_prefix("/")
    assert expected[0].startswith("/annotate/labeling/")
    assert [url for url, _, _ in review_rows(prefixed)] == expected
    assert review_back(prefixed) == expected[-1]
    plain = annotator.get(review_url).content.decode()
    assert [url for url, _, _ in review_rows(plain)] == [item_url(assignment, p) for p in range(1, TOTAL + 1)]


def test_answer_shown_agrees_with_the_responses_answer(annotator, campaign):
    from annotation.models import Label

    assignment = start_hit(annotator)
    nostalgic = Label.objects.get(name="Nostalgic")
    made = [
        Response.objects.create(
            assignment=assignment, item=screen_item(assignment, 1), label=nostalgic, method=Response.OTHER_LIST
        ),
        Response.objects.create(
            assignment=assignment,
            item=screen_item(assignment, 2),
            new_label_text="Quietly smug",
            method=Response.OTHER_NEW,
        ),
        Response.objects.create(
            assignment=assignment,
            item=screen_item(assignment, 3),
            data={"engagingness": "left", "interestingness": "right", "humanness": "left"},
            method=Response.STRUCTURED,
        ),
    ]
    read = Response.objects.filter(pk__in=[r.pk for r in made]).order_by("pk")
    shown = [Response.answer_shown(*values) for values in read.values_list("data", "label__name", "new_label_text")]
    assert shown == [r.answer for r in read.select_related("label")]
    assert shown[:2] == ["Nostalgic", "Quietly smug"]
    # the data's keys in the order the database gives them back (PostgreSQL's jsonb sorts them)
    assert sorted(shown[2].split(", ")) == ["engagingness: left", "humanness: left", "interestingness: right"]
