"""A screen shown for about 3 seconds records about 3 seconds (the page measures, the server keeps it).
Needs Debian's chromium package (/usr/bin/chromium)."""

from labeling.models import Response
from labeling.work.hits import build_hits
from tests.browser.test_annotator_hit import key_for, page, pytestmark, start_a_hit  # noqa: F401 (fixture, marks)
from tests.labeling.hit_factory import make_dialogues, open_campaign


def test_seconds_on_each_screen_are_really_recorded(page, live_server, django_user_model):  # noqa: F811
    from playwright.sync_api import expect

    django_user_model.objects.create_user("timer", password="pw-timer-1")
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=0)
    (hit,) = build_hits(campaign, make_dialogues(2), seed=5)
    items = list(hit.items.order_by("position"))

    heading = start_a_hit(page, live_server.url, "timer", "pw-timer-1", screens=2)

    waits = {1: 3.0, 2: 1.0}  # the first screen read slowly, the second one clicked through
    for item in items:
        expect(heading).to_have_text(f"Dialog {item.position}/2")
        page.wait_for_timeout(waits[item.position] * 1000)
        page.keyboard.press(key_for(page, item.choices[0]))
        expect(page.locator("#save-status")).to_have_text("Saved")
        page.keyboard.press("Enter")
    expect(heading).to_have_text("Review and submit")

    seconds = dict(Response.objects.filter(item__hit=hit).values_list("item__position", "seconds_spent"))
    assert 2.8 <= seconds[1] <= 4.5, seconds
    assert 0.8 <= seconds[2] <= 2.5, seconds
