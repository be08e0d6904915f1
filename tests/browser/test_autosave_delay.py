"""A pick is saved by the Next that carries it (one request per screen), on its own after
AUTOSAVE_DELAY_MS when the annotator stays, and as the page is left when neither came first.
Needs Debian's chromium package (/usr/bin/chromium)."""

from labeling.models import Assignment, Response
from labeling.work.hits import build_hits
from tests.browser.test_annotator_hit import key_for, page, pytestmark, start_a_hit  # noqa: F401 (fixture, marks)
from tests.labeling.hit_factory import make_dialogues, open_campaign


def _answer_posts(page) -> list[str]:  # noqa: F811 (the fixture's page)
    """The go= of every POST to an answer URL the page sends from now on (beacons included)."""
    sent: list[str] = []

    def record(request):
        if request.method == "POST" and request.url.endswith("/answer/"):
            body = request.post_data or ""
            sent.append("next" if "go=next" in body or 'name="go"\r\n\r\nnext' in body else "stay")

    page.on("request", record)
    return sent


def _stored(assignment) -> dict[int, str]:
    return dict(Response.objects.filter(assignment=assignment).values_list("item__position", "label__name"))


def test_pick_then_next_is_one_request_and_a_lingering_pick_saves_itself(page, live_server, django_user_model):  # noqa: F811
    from playwright.sync_api import expect

    django_user_model.objects.create_user("quick", password="pw-quick-1")
    campaign = open_campaign(dialogues_per_hit=3, quiz_per_hit=0)
    (hit,) = build_hits(campaign, make_dialogues(3), seed=3)
    items = list(hit.items.order_by("position"))
    heading = start_a_hit(page, live_server.url, "quick", "pw-quick-1", screens=3)
    sent = _answer_posts(page)
    status = page.locator("#save-status")

    # Screen 1: a pick and Enter at once: only the Next goes out, and it stores the pick.
    page.keyboard.press(key_for(page, items[0].choices[0]))
    page.keyboard.press("Enter")
    expect(heading).to_have_text("Dialog 2/3")
    page.wait_for_timeout(2_500)  # longer than the autosave delay: nothing else is sent for screen 1
    assert sent == ["next"]
    assignment = Assignment.objects.get(hit=hit)
    assert _stored(assignment) == {1: items[0].choices[0]}

    # Screen 2: the annotator picks and stays: the pick saves itself after the delay.
    page.keyboard.press(key_for(page, items[1].choices[1]))
    expect(status).to_have_text("Saved", timeout=5_000)
    assert sent == ["next", "stay"]
    assert _stored(assignment)[2] == items[1].choices[1]

    # Still screen 2: a new pick, and the page is hidden (a phone's app switch) before the delay:
    # the pick goes out at once, and the delayed save that would send it again is dropped.
    page.keyboard.press(key_for(page, items[1].choices[0]))
    page.evaluate(
        "Object.defineProperty(document, 'visibilityState', {value: 'hidden', configurable: true});"
        "document.dispatchEvent(new Event('visibilitychange'));"
        "Object.defineProperty(document, 'visibilityState', {value: 'visible', configurable: true});"
    )
    page.wait_for_timeout(2_500)
    assert sent == ["next", "stay", "stay"]
    assert _stored(assignment)[2] == items[1].choices[0]

    # Screen 3 (after Next, which sends the unchanged pick again): picked, then the page is left
    # before the delay: the pick goes with the page.
    page.keyboard.press("Enter")
    expect(heading).to_have_text("Dialog 3/3")
    page.keyboard.press(key_for(page, items[2].choices[2]))
    page.goto(f"{live_server.url}/labeling/")
    page.wait_for_timeout(1_000)
    assert _stored(assignment) == {
        1: items[0].choices[0],
        2: items[1].choices[0],
        3: items[2].choices[2],
    }
