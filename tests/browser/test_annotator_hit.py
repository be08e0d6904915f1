"""An annotator completes a HIT in headless Chromium with the keyboard, uses Back and Other, and
learns from the quiz feedback. Needs Debian's chromium package (/usr/bin/chromium)."""

import os
from pathlib import Path

import pytest
from django.db import connections

from labeling.models import Assignment, Response
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import make_dialogues, open_campaign

# Playwright's sync API runs an event loop in this thread; the ORM calls made here are safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

pytestmark = [
    pytest.mark.usefixtures("quiz_demo_bank"),  # HITs built with the built-in quiz bank
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)"
    ),
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def page(live_server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.set_default_timeout(10_000)
        yield page
        browser.close()
        # ORM calls made while Playwright runs get a connection of their own (greenlet context):
        # close it, or PostgreSQL refuses to drop the test database.
        connections.close_all()


def key_for(page, name: str) -> str:
    """The key of a choice on the screen shown (each assignment sees its own order)."""
    return page.locator(f'#item-form input[name="answer"][data-key][value="{name}"]').get_attribute("data-key")


def is_autosave(response) -> bool:
    # the autosave of a pick: waiting for it keeps this test's requests in order (the SQLite
    # live server shares one connection between its threads)
    return response.url.endswith("/answer/") and response.request.method == "POST"


def start_a_hit(page, base_url: str, username: str, password: str, screens: int):
    """Sign in, press "Start a HIT" and wait until the first of `screens` screens is shown and its
    scripts have run (keys and retries work once the deferred htmx and hit.js are loaded); returns
    the screen's heading."""
    from playwright.sync_api import expect

    page.goto(f"{base_url}/accounts/login/?next=/labeling/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.press("input[name=password]", "Enter")
    page.get_by_role("button", name="Start a HIT").click()
    heading = page.locator("#hit-item h1")
    expect(heading).to_have_text(f"Dialog 1/{screens}")
    page.wait_for_load_state("load")
    return heading


def choose(item, wrong_quiz) -> str:
    """The gold label on quiz screens but one (answered wrong on purpose), the last choice elsewhere."""
    if not item.is_quiz:
        return item.choices[-1]
    gold = item.quiz_question.gold_label.name
    return next(c for c in item.choices if c != gold) if item == wrong_quiz else gold


def test_an_annotator_completes_a_hit_with_the_keyboard(page, live_server, django_user_model):
    from playwright.sync_api import expect

    django_user_model.objects.create_user("keyboard", password="pw-keyboard-1")
    campaign = open_campaign(dialogues_per_hit=3, quiz_per_hit=2)
    (hit,) = build_hits(campaign, make_dialogues(3), seed=21)
    items = list(hit.items.select_related("quiz_question__gold_label").order_by("position"))
    wrong_quiz = next(i for i in items if i.is_quiz)
    other_item = next(i for i in items[1:] if not i.is_quiz)

    heading = start_a_hit(page, live_server.url, "keyboard", "pw-keyboard-1", screens=5)

    # Screen 1: answer with a key, go on, come Back, and find the answer kept.
    first = items[0]
    first_answer = choose(first, wrong_quiz)
    page.keyboard.press(key_for(page, first_answer))
    expect(page.locator("#save-status")).to_have_text("Saved")
    page.keyboard.press("ArrowRight")
    expect(heading).to_have_text("Dialog 2/5")
    page.keyboard.press("ArrowLeft")
    expect(heading).to_have_text("Dialog 1/5")
    expect(page.locator(f'#item-form input[data-key="{key_for(page, first_answer)}"]')).to_be_checked()
    page.keyboard.press("Enter")
    expect(heading).to_have_text("Dialog 2/5")
    # The browser's own Back and a reload lose nothing either.
    page.go_back()
    expect(heading).to_have_text("Dialog 1/5")
    page.reload()
    expect(page.locator(f'#item-form input[data-key="{key_for(page, first_answer)}"]')).to_be_checked()
    page.keyboard.press("ArrowRight")
    expect(heading).to_have_text("Dialog 2/5")

    answers = {first.position: first_answer}
    for item in items[1:]:
        expect(heading).to_have_text(f"Dialog {item.position}/5")
        if item == other_item:
            # "Other": 4 opens the list, typing filters it, Enter picks the first match.
            page.keyboard.press("4")
            page.keyboard.type("nostal")
            expect(page.locator("#label-list li:visible")).to_have_count(1)
            with page.expect_response(is_autosave):
                page.keyboard.press("Enter")
            expect(page.locator('#label-list input[value="Nostalgic"]')).to_be_checked()
            answers[item.position] = "Nostalgic"
        else:
            name = choose(item, wrong_quiz)
            with page.expect_response(is_autosave):
                page.keyboard.press(key_for(page, name))
            answers[item.position] = name
        page.keyboard.press("Enter")

    expect(heading).to_have_text("Review and submit")
    page.keyboard.press("Enter")

    # Quiz feedback: the wrong answer, the right label, and why.
    expect(page.locator("#quiz-score")).to_contain_text("1 of 2")
    feedback = page.locator(".quiz-feedback")
    expect(feedback).to_have_count(1)
    expect(feedback.locator(".gold")).to_have_text(wrong_quiz.quiz_question.gold_label.name)
    expect(feedback.locator(".explanation")).to_contain_text(wrong_quiz.quiz_question.explanation)
    page.click("#to-done")

    assignment = Assignment.objects.get(hit=hit)
    expect(page.locator("#completion-code")).to_have_text(assignment.completion_code)
    assert assignment.status == Assignment.SUBMITTED
    saved = {r.item.position: r for r in Response.objects.filter(assignment=assignment).select_related("item", "label")}
    assert {position: r.answer for position, r in saved.items()} == answers
    assert saved[other_item.position].method == Response.OTHER_LIST
