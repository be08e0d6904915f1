"""A new participant's whole study on a 360 px phone with the keyboard alone (Tab, arrows, Space,
Enter, typing): consent, instructions, practice (feedback after each screen; a retry with what it
taught), the HIT, the exit survey and the completion page, each page naming its step in
data-step. No JavaScript console error, no serious accessibility finding (axe), no horizontal
scrolling, and a screenshot of each page."""

import pytest

from labeling.models import Assignment, StudyStep, SurveyResponse
from labeling.study_flow.config import clean_flow
from labeling.study_flow.demo import DEMO_FLOW
from labeling.work.hits import build_hits
from tests.browser.support import Journey, browser_marks, chromium
from tests.browser.test_annotator_hit import is_autosave, key_for
from tests.labeling.hit_factory import make_dialogues, open_campaign

pytestmark = [*browser_marks, pytest.mark.usefixtures("quiz_demo_bank")]
NARROW = {"width": 360, "height": 740}
ITEMS = DEMO_FLOW["practice"]["items"]


def tab_to(page, selector: str, presses: int = 60) -> None:
    """Tab (the keyboard alone) until the element matching `selector` has the focus."""
    for _ in range(presses):
        if page.evaluate("s => document.activeElement && document.activeElement.matches(s)", selector):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"{selector} never took the focus in {presses} Tabs")


def step(page) -> str:
    return page.locator("main").get_attribute("data-step")


def pick_radio(page, name: str, value: str) -> None:
    """Tab into a radio group, then arrows (which select) to the value; Space selects the first."""
    values = page.eval_on_selector_all(f'input[name="{name}"]', "inputs => inputs.map(i => i.value)")
    tab_to(page, f'input[name="{name}"]')
    if values.index(value) == 0:
        page.keyboard.press("Space")
    for _ in range(values.index(value)):
        page.keyboard.press("ArrowDown")
    assert page.locator(f'input[name="{name}"][value="{value}"]').is_checked()


def press_on(page, selector: str) -> None:
    tab_to(page, selector)
    with page.expect_navigation():
        page.keyboard.press("Enter")


def shown(journey: Journey, expected_step: str, shot: str) -> None:
    assert step(journey.page) == expected_step, journey.page.url
    journey.no_horizontal_scroll()
    journey.check(shot)


def practise(journey: Journey, answers: list[str], *, first: int) -> list[str]:
    """Every practice screen answered by keyboard; what each feedback page says is right."""
    page, learned = journey.page, []
    for index, answer in enumerate(answers):
        shown(journey, "practice", f"practice-{first + index}")
        pick_radio(page, "answer", answer)
        press_on(page, "#practice-answer")
        shown(journey, "practice", f"practice-feedback-{first + index}")
        learned.append(page.locator("#practice-feedback").inner_text().split("answer is ")[-1].split(".")[0].strip())
        press_on(page, "#practice-next")
    return learned


def test_a_new_participant_walks_the_whole_study_by_keyboard_at_360_px(live_server, django_user_model):
    from playwright.sync_api import expect

    django_user_model.objects.create_user("newcomer", password="pw-newcomer-1")
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=1, study_flow=clean_flow(DEMO_FLOW))
    (hit,) = build_hits(campaign, make_dialogues(2), seed=4)
    items = list(hit.items.select_related("quiz_question__gold_label").order_by("position"))

    with chromium() as browser:
        journey = Journey(browser, live_server.url, NARROW, "study-360")
        page = journey.page
        journey.login("newcomer", "pw-newcomer-1", "/labeling/")
        press_on(page, 'form:has(input[name="campaign"]) button[type="submit"]')
        shown(journey, "consent", "consent")
        assert not Assignment.objects.exists()
        press_on(page, "#consent-agree")
        shown(journey, "instructions", "instructions")
        press_on(page, "#instructions-continue")

        wrong = [next(c for c in item["choices"] if c != item["answer"]) for item in ITEMS]
        learned = practise(journey, wrong, first=1)
        expect(page.locator("#practice-result")).to_have_attribute("data-passed", "false")
        shown(journey, "practice", "practice-retry")
        press_on(page, "#practice-retry")
        practise(journey, learned, first=len(ITEMS) + 1)
        expect(page.locator("#practice-result")).to_have_attribute("data-passed", "true")
        shown(journey, "practice", "practice-passed")
        assert not Assignment.objects.exists()  # nothing held before the first work screen

        press_on(page, "#start-work")
        heading = page.locator("#hit-item h1")
        expect(heading).to_have_text(f"Dialog 1/{len(items)}")
        page.wait_for_load_state("load")
        shown(journey, "work", "work")
        assert Assignment.objects.count() == 1
        for item in items:
            expect(heading).to_have_text(f"Dialog {item.position}/{len(items)}")
            name = item.quiz_question.gold_label.name if item.is_quiz else item.choices[-1]
            with page.expect_response(is_autosave):
                page.keyboard.press(key_for(page, name))
            page.keyboard.press("Enter")
        expect(heading).to_have_text("Review and submit")
        page.keyboard.press("Enter")
        expect(page.locator("#quiz-score")).to_be_visible()
        press_on(page, "#to-done")

        shown(journey, "survey", "survey")
        pick_radio(page, "difficulty", "4")
        pick_radio(page, "clarity", "Mostly clear")
        tab_to(page, "#survey-comments")
        page.keyboard.type("Sarcasm was hard to label.")
        press_on(page, "#survey-submit")
        shown(journey, "done", "done")
        expect(page.locator("#completion-code")).to_have_text(Assignment.objects.get().completion_code)

    assert SurveyResponse.objects.get().answers == {
        "difficulty": 4,
        "clarity": "Mostly clear",
        "comments": "Sarcasm was hard to label.",
    }
    reached = set(StudyStep.objects.values_list("step", flat=True))
    assert {
        "consented",
        "instructions_read",
        "practice_passed",
        "work",
        "submitted",
        "survey_answered",
        "done",
    } <= reached
