"""The annotator's HIT screen in each shipped language (docs/languages.md), in headless Chromium:
axe finds nothing serious or critical in English, Arabic or Spanish, and in Arabic, at 360 px wide,
the page reads right to left and the keyboard works mirrored (1-3 pick, 4 opens Other and Enter
picks its first match, Enter and the left arrow go on, the right arrow goes back). Needs Debian's
chromium (/usr/bin/chromium)."""

import pytest

from labeling.models import Response
from labeling.work.hits import build_hits
from tests.browser.support import DESKTOP, NARROW_PHONE, Journey, browser_marks, chromium
from tests.labeling.hit_factory import make_dialogues, open_campaign

pytestmark = [pytest.mark.usefixtures("quiz_demo_bank"), *browser_marks]

# the screen's heading and the review's in each language (the catalogs' "Dialog", "Review and submit")
DIALOG = {"en": "Dialog", "ar": "حوار", "es": "Diálogo"}
REVIEW = {"en": "Review and submit", "ar": "المراجعة والإرسال", "es": "Revisar y enviar"}
SAVED = {"en": "Saved", "ar": "حُفظت", "es": "Guardado"}


def start_a_hit(journey: Journey, username: str, password: str) -> None:
    """Sign in and press the start button (whatever its words), then wait for the first screen."""
    from playwright.sync_api import expect

    journey.login(username, password, next_path="/labeling/")
    journey.page.locator('form[action$="/claim/"] button[type="submit"]').first.click()
    expect(journey.page.locator("#item-form")).to_be_visible()
    journey.page.wait_for_load_state("load")


def key_for(page, name: str) -> str:
    return page.locator(f'#item-form input[name="answer"][data-key][value="{name}"]').get_attribute("data-key")


def is_autosave(response) -> bool:
    return response.url.endswith("/answer/") and response.request.method == "POST"


@pytest.mark.parametrize("language", ["en", "ar", "es"])
def test_the_hit_screen_passes_axe_in_each_shipped_language(language, live_server, django_user_model):
    from playwright.sync_api import expect

    django_user_model.objects.create_user("reader", password="pw-reader-1")
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=1)
    build_hits(campaign, make_dialogues(2), seed=3)
    with chromium() as browser:
        journey = Journey(browser, live_server.url, DESKTOP, f"annotator-{language}", locale=language)
        journey.goto("/labeling/")  # the login page first: it too is in the language asked for
        assert journey.page.locator("html").get_attribute("lang") == language
        start_a_hit(journey, "reader", "pw-reader-1")
        html = journey.page.locator("html")
        assert html.get_attribute("lang") == language
        assert html.get_attribute("dir") == ("rtl" if language == "ar" else "ltr")
        expect(journey.page.locator("#hit-item h1")).to_have_text(f"{DIALOG[language]} 1/3")
        journey.check("screen")
        journey.page.keyboard.press("4")  # the Other panel open: its search and list checked too
        expect(journey.page.locator("#label-filter")).to_be_focused()
        journey.check("screen-other")


def test_the_arabic_screen_reads_right_to_left_and_works_with_the_keyboard_at_360_px(live_server, django_user_model):
    from playwright.sync_api import expect

    django_user_model.objects.create_user("qari", password="pw-qari-1")
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=1)
    (hit,) = build_hits(campaign, make_dialogues(2), seed=8)
    items = list(hit.items.order_by("position"))
    with chromium() as browser:
        journey = Journey(browser, live_server.url, NARROW_PHONE, "annotator-ar-360", locale="ar")
        start_a_hit(journey, "qari", "pw-qari-1")
        page = journey.page
        heading = page.locator("#hit-item h1")
        expect(heading).to_have_text(f"{DIALOG['ar']} 1/3")
        assert page.evaluate("getComputedStyle(document.querySelector('.hit-nav')).direction") == "rtl"
        # mirrored: Next (the primary button) sits at the left, Back at the right
        back = page.locator('#item-form [data-nav="back"]').bounding_box()
        forward = page.locator('#item-form [data-nav="next"]').bounding_box()
        assert forward["x"] < back["x"]
        journey.no_horizontal_scroll()
        journey.check("screen", full_page=False)

        # 1-3 pick a choice, saved as picked; the left arrow (forward in Arabic) goes on
        first = items[0].choices[0]
        with page.expect_response(is_autosave):
            page.keyboard.press(key_for(page, first))
        expect(page.locator("#save-status")).to_have_text(SAVED["ar"])
        page.keyboard.press("ArrowLeft")
        expect(heading).to_have_text(f"{DIALOG['ar']} 2/3")
        # the right arrow goes back, the answer kept
        page.keyboard.press("ArrowRight")
        expect(heading).to_have_text(f"{DIALOG['ar']} 1/3")
        expect(page.locator(f'#item-form input[data-key="{key_for(page, first)}"]')).to_be_checked()
        page.keyboard.press("Enter")
        expect(heading).to_have_text(f"{DIALOG['ar']} 2/3")

        # 4 opens Other; typing filters the list, Enter picks its first match
        page.keyboard.press("4")
        expect(page.locator("#label-filter")).to_be_focused()
        journey.no_horizontal_scroll()
        page.keyboard.type("nostal")
        expect(page.locator("#label-list li:visible")).to_have_count(1)
        with page.expect_response(is_autosave):
            page.keyboard.press("Enter")
        expect(page.locator('#label-list input[value="Nostalgic"]')).to_be_checked()
        journey.check("screen-other", full_page=False)
        page.keyboard.press("Enter")
        expect(heading).to_have_text(f"{DIALOG['ar']} 3/3")
        third = items[2].choices[1]
        with page.expect_response(is_autosave):
            page.keyboard.press(key_for(page, third))
        page.keyboard.press("Enter")
        expect(heading).to_have_text(REVIEW["ar"])
        journey.no_horizontal_scroll()
        journey.check("review", full_page=False)

    answers = {r.item.position: (r.label.name, r.language) for r in Response.objects.select_related("item", "label")}
    assert answers == {1: (first, "ar"), 2: ("Nostalgic", "ar"), 3: (third, "ar")}
