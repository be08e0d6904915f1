"""The flows page when the crowd labeled only the last turn of each dialogue: plotly cannot draw a
Sankey without a link (it threw "Invalid array length" and left a blank chart); the page now says
why there is no flow and shows the labels as bars."""

from annotation.models import Label, TurnLabel
from tests.browser.support import DESKTOP, Journey, browser_marks, chromium

pytestmark = browser_marks


def test_last_turn_gold_labels_show_bars_and_no_javascript_error(tiny_corpus, live_server, django_user_model):
    from playwright.sync_api import expect

    django_user_model.objects.create_user("lead", password="pw-lead-1", is_staff=True)
    for dialogue, name in zip(tiny_corpus, ["Sad", "Sad", "Joyful", "Angry"], strict=True):
        last = dialogue.turns.order_by("-position").first()
        TurnLabel.objects.create(turn=last, label=Label.objects.get(name=name), source=TurnLabel.CROWD)
    with chromium() as browser:
        journey = Journey(browser, live_server.url, DESKTOP, "flows-last-turn")
        journey.login("lead", "pw-lead-1", "/corpus/analysis/flows/?kind=gold")
        expect(journey.page.locator("#no-flows")).to_be_visible()
        bars = journey.page.locator("#plot-first-labels .bar")
        expect(bars).to_have_count(3)
        expect(bars.first).to_contain_text("Sad")
        assert journey.page.locator("[data-figure]").count() == 0
        journey.check("flows")
