"""A researcher's first session in headless Chromium: the campaign dashboard, the flows chart as
the menu opens it (the silver labels of the newest classifier that labeled turns), a job form, a model page, and an export downloaded. No JavaScript console error,
no serious accessibility finding, a screenshot of each page, at desktop and phone widths."""

from pathlib import Path

import pytest

from annotation.analysis.records import SILVER
from annotation.models import ModelVersion
from labeling.models import Campaign, Response
from tests.annotation.export_helpers import add_labels
from tests.browser.support import DESKTOP, PHONE, Journey, assert_no_overlaps, browser_marks, chromium
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues, make_workers

pytestmark = browser_marks

REPORT = {
    "n": 3, "accuracy": 2 / 3, "macro_f1": 0.5555, "macro_precision": 0.75, "macro_recall": 0.75,
    "label_names": ["Joyful", "Sad", "Neutral"],
    "per_label": [
        {"label": "Joyful", "precision": 0.5, "recall": 1.0, "f1": 0.6667, "support": 1, "predicted": 2},
        {"label": "Sad", "precision": 1.0, "recall": 0.5, "f1": 0.6667, "support": 2, "predicted": 1},
    ],
    "confusion": [[1, 0, 0], [1, 1, 0], [0, 0, 0]],
}  # fmt: skip


@pytest.fixture
def research_data(tiny_corpus, django_user_model, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    django_user_model.objects.create_user("lead", password="pw-lead-1", is_staff=True)
    add_labels(tiny_corpus)
    campaign = Campaign.objects.create(name="Evening batch", status=Campaign.OPEN, fallback_choices=["Angry"])
    dialogues = make_dialogues(4)
    votes = [["Angry"] * 3, ["Sad", "Sad", "Angry"], ["Joyful"] * 3, ["Sad", "Joyful", "Angry"]]
    answers = dict(zip(dialogues, votes, strict=True))
    workers = make_workers(3)
    make_answered_hit(campaign, workers, answers)
    for worker, seconds in zip(workers, [4.0, 9.0, 1.5], strict=True):  # apart on the speed axis
        Response.objects.filter(assignment__worker=worker).update(seconds_spent=seconds)
    version = ModelVersion.objects.create(
        kind=ModelVersion.DIALOGUE, name="EB+ round 2", base_model="minilm", metrics={"test": REPORT, "rounds": []}
    )
    return campaign, version


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_researcher_walks_through_the_pages(research_data, live_server, viewport):
    from playwright.sync_api import expect

    campaign, version = research_data
    with chromium() as browser:
        journey = Journey(browser, live_server.url, viewport, f"researcher-{viewport['width']}")
        page = journey.page
        journey.login("lead", "pw-lead-1", f"/labeling/campaigns/{campaign.pk}/")
        expect(page.locator("#report h2").first).to_be_visible()
        expect(page.locator("#plot-worker-accuracy .point")).to_have_count(3)
        journey.no_horizontal_scroll()
        journey.check("dashboard")

        page.get_by_role("button", name="Close", exact=True).click()
        expect(page.locator("#confirm")).to_contain_text("cannot be undone")
        journey.check("confirm-close")
        page.locator("#confirm-cancel").click()
        expect(page.get_by_role("heading", name=campaign.name)).to_be_visible()
        campaign.refresh_from_db()
        assert campaign.status == Campaign.OPEN

        journey.goto("/corpus/analysis/flows/")
        expect(page.locator("select[name=kind] option[selected]")).to_have_text(SILVER)
        expect(page.locator(".chart .main-svg").first).to_be_attached()
        expect(page.locator(".chart .sankey-node").first).to_be_attached()
        journey.check("flows")

        journey.goto("/jobs/")
        for summary in page.locator("#start-job details > summary").all():
            summary.click()
        assert_no_overlaps(page, "#start-job form .field")
        journey.no_horizontal_scroll()
        journey.check("jobs")

        journey.goto(f"/models/{version.pk}/")
        expect(page.get_by_role("heading", name="EB+ round 2")).to_be_visible()
        journey.check("model")

        journey.goto("/corpus/analysis/exports/")
        page.select_option("select[name=kind]", "gold")
        page.select_option("select[name=format]", "csv")
        page.get_by_role("button", name="Start export").click()
        link = page.get_by_role("link", name="Download").first
        expect(link).to_be_visible()
        with page.expect_download() as download:
            link.click()
        assert download.value.suggested_filename.endswith("-gold.csv")
        assert "Anxious" in Path(download.value.path()).read_text(encoding="utf-8")
        journey.check("exports")


def test_closing_a_campaign_is_confirmed_without_javascript(research_data, live_server):
    from playwright.sync_api import expect

    campaign, _version = research_data
    with chromium() as browser:
        journey = Journey(browser, live_server.url, DESKTOP, "no-js", javascript=False)
        page = journey.page
        journey.login("lead", "pw-lead-1", f"/labeling/campaigns/{campaign.pk}/")
        page.get_by_role("button", name="Close", exact=True).click()
        expect(page.get_by_role("heading", name=f"Close {campaign.name}?")).to_be_visible()
        campaign.refresh_from_db()
        assert campaign.status == Campaign.OPEN
        page.get_by_role("button", name="Close the campaign").click()
        expect(page.locator(".messages")).to_contain_text("is now closed")
    campaign.refresh_from_db()
    assert campaign.status == Campaign.CLOSED
