"""An annotator's whole HIT by keyboard only, on a desktop and on a 375 px phone: the start page,
every screen (one answer through "Other"), the review, the quiz feedback and the completion code.
No JavaScript console error, no serious accessibility finding, no horizontal scrolling, and a
screenshot of each page."""

import pytest

from labeling.models import Assignment, Response
from labeling.work.hits import build_hits
from tests.browser.support import DESKTOP, PHONE, Journey, browser_marks, chromium
from tests.browser.test_annotator_hit import choose, is_autosave, key_for
from tests.labeling.hit_factory import make_dialogues, open_campaign

pytestmark = [*browser_marks, pytest.mark.usefixtures("quiz_demo_bank")]  # HITs built with the built-in quiz bank


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_an_annotator_labels_a_whole_hit_by_keyboard(live_server, django_user_model, viewport):
    from playwright.sync_api import expect

    django_user_model.objects.create_user("keys", password="pw-keys-1")
    campaign = open_campaign(dialogues_per_hit=3, quiz_per_hit=1)
    (hit,) = build_hits(campaign, make_dialogues(3), seed=8)
    items = list(hit.items.select_related("quiz_question__gold_label").order_by("position"))
    wrong_quiz = next(i for i in items if i.is_quiz)
    other_item = next(i for i in items if not i.is_quiz)

    with chromium() as browser:
        journey = Journey(browser, live_server.url, viewport, f"annotator-{viewport['width']}")
        page = journey.page
        journey.login("keys", "pw-keys-1", "/labeling/")
        journey.no_horizontal_scroll()
        journey.check("home")

        page.get_by_role("button", name="Start a HIT").focus()
        page.keyboard.press("Enter")
        heading = page.locator("#hit-item h1")
        expect(heading).to_have_text(f"Dialog 1/{len(items)}")
        page.wait_for_load_state("load")  # keys work once the deferred htmx and hit.js have run
        journey.no_horizontal_scroll()
        journey.check("screen")

        answers = {}
        for item in items:
            expect(heading).to_have_text(f"Dialog {item.position}/{len(items)}")
            if item == other_item:
                page.keyboard.press("4")  # "Other": the filter takes the typing at once
                expect(page.locator("#label-filter")).to_be_focused()
                expect(page.locator("#label-filter")).to_be_in_viewport()
                page.keyboard.type("nostal")
                expect(page.locator("#label-list li:visible")).to_have_count(1)
                expect(page.locator("#label-list li:visible")).to_be_in_viewport()
                journey.no_horizontal_scroll()
                journey.check("other", full_page=False)
                with page.expect_response(is_autosave):
                    page.keyboard.press("Enter")
                answers[item.position] = "Nostalgic"
            else:
                name = choose(item, wrong_quiz)
                with page.expect_response(is_autosave):
                    page.keyboard.press(key_for(page, name))
                answers[item.position] = name
            page.keyboard.press("Enter")

        expect(heading).to_have_text("Review and submit")
        journey.no_horizontal_scroll()
        journey.check("review")
        page.keyboard.press("Enter")

        expect(page.locator("#quiz-score")).to_contain_text("0 of 1")
        journey.no_horizontal_scroll()
        journey.check("feedback")
        page.locator("#to-done").focus()
        page.keyboard.press("Enter")

        assignment = Assignment.objects.get(hit=hit)
        expect(page.locator("#completion-code")).to_have_text(assignment.completion_code)
        journey.no_horizontal_scroll()
        journey.check("done")

    assert assignment.status == Assignment.SUBMITTED
    saved = Response.objects.filter(assignment=assignment).select_related("item", "label")
    assert {r.item.position: r.answer for r in saved} == answers
