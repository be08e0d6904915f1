"""A worker comes from MTurk in headless Chromium: MTurk's preview, the accepted HIT opened from
the signed entry link, the HIT submitted on our page, and the result POSTed to turkSubmitTo's
externalSubmit (intercepted in the browser: nothing leaves the machine). Then a sync confirms it.
Needs Debian's chromium package (/usr/bin/chromium)."""

import os
from urllib.parse import parse_qs

import pytest

from labeling.models import HIT, Assignment, Publication
from tests.browser.test_annotator_hit import CHROMIUM, page  # noqa: F401  (the shared fixture)
from tests.labeling.hit_factory import answer_everything
from tests.labeling.platform_helpers import SANDBOX, draft_campaign, mturk_landing

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

pytestmark = [
    pytest.mark.usefixtures("quiz_demo_bank"),  # HITs built with the built-in quiz bank
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)"
    ),
    pytest.mark.django_db(transaction=True),
]
HIT_ID = "3BROWSERHIT0000000000000000000"


class FakeMTurk:
    """Answers the sync's MTurk calls with what the browser posted to externalSubmit."""

    def __init__(self, posted: dict) -> None:
        self.posted, self.approved = posted, []

    def list_assignments_for_hit(self, **params):
        answer = (
            '<QuestionFormAnswers xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/'
            '2005-10-01/QuestionFormAnswers.xsd"><Answer><QuestionIdentifier>completion_code</QuestionIdentifier>'
            f"<FreeText>{self.posted['completion_code']}</FreeText></Answer></QuestionFormAnswers>"
        )
        row = {
            "AssignmentId": self.posted["assignmentId"],
            "WorkerId": "A1BROWSER",
            "AssignmentStatus": "Submitted",
            "Answer": answer,
        }
        return {"Assignments": [row] if params["HITId"] == HIT_ID else []}

    def approve_assignment(self, **params):
        self.approved.append(params["AssignmentId"])

    def send_bonus(self, **params):
        pass


def test_an_mturk_worker_previews_accepts_submits_and_is_handed_back(page, live_server):  # noqa: F811
    from playwright.sync_api import expect

    campaign = draft_campaign(hits=2, status="open")
    HIT.objects.filter(pk=campaign.hits.order_by("position").last().pk).update(external_id=HIT_ID)
    publication = Publication.objects.create(campaign=campaign, platform="mturk", status=Publication.ACTIVE)
    posted = {}

    def external_submit(route, request):
        posted.update({key: values[0] for key, values in parse_qs(request.post_data).items()})
        route.fulfill(status=200, body="<p>MTurk got it</p>", content_type="text/html")

    page.route(f"{SANDBOX}/mturk/externalSubmit", external_submit)

    # MTurk's preview: a sample, nothing accepted
    page.goto(live_server.url + mturk_landing(campaign, worker="", assignment="", hit_id=HIT_ID, preview=True))
    expect(page.locator("#preview-sample")).to_be_visible()
    assert not Assignment.objects.exists()

    # accepted: the landing signs the worker in and opens the HIT MTurk offered
    page.goto(live_server.url + mturk_landing(campaign, worker="A1BROWSER", assignment="3ABROWSER", hit_id=HIT_ID))
    expect(page.locator("#hit-item h1")).to_be_visible()
    assignment = Assignment.objects.get()
    assert assignment.hit.external_id == HIT_ID and assignment.platform_assignment_id == "3ABROWSER"
    answer_everything(assignment)  # the screens themselves are tested in test_annotator_hit.py
    page.goto(f"{live_server.url}/labeling/assignments/{assignment.pk}/review/")
    page.locator("#submit-hit").click()
    page.locator("#to-done").click()
    with page.expect_request(f"{SANDBOX}/mturk/externalSubmit"):
        page.get_by_role("link", name="Return to MTurk").click()
    expect(page.locator("body")).to_contain_text("MTurk got it")
    assignment.refresh_from_db()
    assert posted == {"assignmentId": "3ABROWSER", "completion_code": assignment.completion_code}
    assert assignment.platform_confirmed_at is None  # pending until the platform reports it

    # a sync finds the submission MTurk holds and confirms and approves it
    from labeling.platforms.mturk import MTurkPlatform
    from labeling.platforms.sync import sync_publication

    fake = FakeMTurk(posted)
    sync_publication(publication, MTurkPlatform(client=fake))
    assignment.refresh_from_db()
    assert fake.approved == ["3ABROWSER"]
    assert assignment.status == Assignment.APPROVED and assignment.platform_confirmed_at is not None
