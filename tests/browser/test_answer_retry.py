"""A server that fails under the annotator (503 while the database restarts, a dropped connection)
loses no answer: the HIT page says so, sends the request again, and the answer is stored once.
Headless Chromium; Playwright's routing plays the failing server. Needs /usr/bin/chromium."""

import pytest

from labeling.models import Assignment, Response
from labeling.work.hits import build_hits
from tests.browser.test_annotator_hit import (  # noqa: F401  (the page fixture)
    CHROMIUM,
    choose,
    key_for,
    page,
    start_a_hit,
)
from tests.labeling.hit_factory import make_dialogues, open_campaign

pytestmark = [
    pytest.mark.usefixtures("quiz_demo_bank"),  # HITs built with the built-in quiz bank
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
    pytest.mark.django_db(transaction=True),
]


class FailingServer:
    """Answers the next `count` POSTs to URLs ending in `suffix` itself: 503 with Retry-After, or a
    dropped connection; every other request reaches the live server."""

    def __init__(self, browser_page, suffix: str) -> None:
        self.suffix, self.plan, self.failed = suffix, [], 0
        browser_page.route("**/*", self.handle)

    def fail(self, *how: str) -> None:
        self.plan = list(how)

    def handle(self, route) -> None:
        request = route.request
        if request.method == "POST" and request.url.endswith(self.suffix) and self.plan:
            self.failed += 1
            if self.plan.pop(0) == "503":
                route.fulfill(status=503, headers={"Retry-After": "1"}, body="<span>briefly unavailable</span>")
            else:
                route.abort("connectionreset")
            return
        route.continue_()


def test_failed_autosave_next_and_submit_are_shown_retried_and_stored_once(page, live_server, django_user_model):  # noqa: F811
    from playwright.sync_api import expect

    django_user_model.objects.create_user("retrier", password="pw-retrier-1")
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=1)
    (hit,) = build_hits(campaign, make_dialogues(2), seed=5)
    items = list(hit.items.select_related("quiz_question__gold_label").order_by("position"))

    heading = start_a_hit(page, live_server.url, "retrier", "pw-retrier-1", screens=3)
    answers = FailingServer(page, "/answer/")
    status = page.locator("#save-status")

    # The autosave meets a 503, then a dropped connection: the page says so, keeps the pick, retries.
    answers.fail("503", "reset")
    first = choose(items[0], None)
    page.keyboard.press(key_for(page, first))
    expect(status).to_contain_text("Not saved yet")
    expect(page.locator(f'#item-form input[data-key][value="{first}"]')).to_be_checked()
    expect(status).to_have_text("Saved", timeout=15_000)
    assert answers.failed == 2

    # Next meets a dropped connection: the screen stays, then moves on by itself.
    answers.fail("reset")
    page.keyboard.press("Enter")
    expect(status).to_contain_text("Not saved yet")
    expect(heading).to_have_text("Dialog 2/3", timeout=15_000)
    for item in items[1:]:
        expect(heading).to_have_text(f"Dialog {item.position}/3")
        page.keyboard.press(key_for(page, choose(item, None)))
        expect(status).to_have_text("Saved")
        page.keyboard.press("Enter")

    # Submit meets a 503: the review says so and submits again.
    expect(heading).to_have_text("Review and submit")
    submits = FailingServer(page, "/submit/")
    submits.fail("503")
    page.keyboard.press("Enter")
    expect(page.locator("#quiz-score")).to_be_visible(timeout=15_000)
    assert submits.failed == 1

    assignment = Assignment.objects.get(hit=hit)
    assert assignment.status == Assignment.SUBMITTED
    stored = list(Response.objects.filter(assignment=assignment).values_list("item__position", "label__name"))
    assert sorted(stored) == [(item.position, choose(item, None)) for item in items]
