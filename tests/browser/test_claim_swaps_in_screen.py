"""Start a HIT is one request: the claim answers with the first screen's whole page, htmx swaps
it in for the body and pushes the screen's URL; the screen is styled and its keys work; a reload
Back and forward behave as after a redirect. Needs Debian's chromium package (/usr/bin/chromium)."""

from labeling.models import Assignment, Response
from labeling.work.hits import build_hits
from tests.browser.test_annotator_hit import key_for, page, pytestmark  # noqa: F401 (fixture, marks)
from tests.labeling.hit_factory import make_dialogues, open_campaign


def test_start_a_hit_is_one_request_that_shows_the_first_screen(page, live_server, django_user_model):  # noqa: F811
    from playwright.sync_api import expect

    django_user_model.objects.create_user("starter", password="pw-starter-1")
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=0)
    (hit,) = build_hits(campaign, make_dialogues(2), seed=5)
    items = list(hit.items.order_by("position"))
    page.goto(f"{live_server.url}/accounts/login/?next=/labeling/")
    page.fill("input[name=username]", "starter")
    page.fill("input[name=password]", "pw-starter-1")
    page.click("main button[type=submit]")
    page.wait_for_load_state("load")  # htmx loaded: the start button posts through it

    sent: list[str] = []
    page.on("request", lambda request: sent.append(f"{request.method} {request.url.removeprefix(live_server.url)}"))
    page.get_by_role("button", name="Start a HIT").click()
    heading = page.locator("#hit-item h1")
    expect(heading).to_have_text("Dialog 1/2")
    assignment = Assignment.objects.get(hit=hit)
    screen_url = f"/labeling/assignments/{assignment.pk}/items/1/"
    expect(page).to_have_url(f"{live_server.url}{screen_url}")
    page.wait_for_function("window.hitScreenInstalled === true")  # hit.js, run from the swapped-in page
    pages = [line for line in sent if not line.split(" ", 1)[1].startswith("/static/")]
    assert pages == ["POST /labeling/claim/"], pages  # no redirect, no second GET of the screen
    assert page.title() == "Dialog 1/2"
    # hit.css (loaded with the home page: htmx swaps the body only) styles the swapped-in screen
    assert page.locator("#hit-item .turn").first.evaluate("e => getComputedStyle(e).borderLeftStyle") != "none"

    # the swapped-in screen works as a loaded one: a key picks, Enter goes on and stores the pick
    page.keyboard.press(key_for(page, items[0].choices[1]))
    page.keyboard.press("Enter")
    expect(heading).to_have_text("Dialog 2/2")
    assert Response.objects.get(assignment=assignment, item=items[0]).label.name == items[0].choices[1]

    # Back twice is the home page again (htmx restores it); forward and a reload show the screen
    # the pushed URL names, read anew
    page.go_back()
    expect(heading).to_have_text("Dialog 1/2")
    page.go_back()
    expect(page).to_have_url(f"{live_server.url}/labeling/")
    expect(page.get_by_role("heading", name="Annotate dialogues")).to_be_visible()
    page.go_forward()
    expect(page).to_have_url(f"{live_server.url}{screen_url}")
    page.reload()
    expect(heading).to_have_text("Dialog 1/2")
    expect(page.locator('#item-form input[name="answer"]:checked')).to_have_value(items[0].choices[1])
