"""The qualification step on Prolific through `responses` (Prolific's documented API shapes; an
unexpected call fails): a participant group is created, the quiz is a study of its own, the paid
study's filters allowlist the group, and sync adds the participant who passed, only them."""

import json
from decimal import Decimal

import pytest
from django.urls import reverse
from responses import matchers

from labeling.models import HIT, Assignment, PlatformQualification, Publication, QualificationResult
from labeling.platforms import get_platform, publish_campaign
from labeling.platforms.prolific import ALLOWLIST_FILTER, API
from labeling.platforms.sync import sync_publication
from labeling.services import qualification
from tests.labeling.platform_helpers import (
    draft_campaign,
    prolific_landing,
    prolific_sessions,
    slept,
    work_through_pages,
)
from tests.labeling.test_platform_prolific import (
    AUTH,
    STUDY,
    WORKSPACE,
    answer_study_states,
    api,
    expect_workspace,
    submission,
)

__all__ = ["api", "slept", "prolific_sessions"]
# HITs built with the built-in quiz bank; every Prolific landing is asked of Prolific (its stand-in)
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("quiz_demo_bank", "prolific_sessions")]
GROUP, QUIZ_STUDY = "65gggggggggggggggggggggg", "66qqqqqqqqqqqqqqqqqqqqqq"
PASS, FAIL = "5f00000000000000000000a1", "5f00000000000000000000a2"


def partial(**fields):
    return matchers.json_params_matcher(fields, strict_match=False)


@pytest.fixture
def published(api):
    campaign = draft_campaign(
        hits=1,
        currency="GBP",
        qualification_required=True,
        qualification_items=2,
        qualification_mark=2,
        qualification_reward=Decimal("2.70"),
    )
    qualification.build_qualification_hit(campaign, 2, seed=5)
    expect_workspace(api, "GBP")
    answer_study_states(api)
    group = {"id": GROUP, "name": "x", "workspace_id": WORKSPACE, "participant_count": 0}
    api.post(f"{API}/participant-groups/", json=group, status=201, match=[AUTH, partial(workspace_id=WORKSPACE)])
    quiz_name = f"campaign {campaign.pk} qualification"
    api.post(f"{API}/studies/", json={"id": QUIZ_STUDY}, status=201, match=[partial(internal_name=quiz_name)])
    api.post(f"{API}/studies/{QUIZ_STUDY}/transition/", json={"id": QUIZ_STUDY, "status": "ACTIVE"})
    api.post(
        f"{API}/studies/", json={"id": STUDY}, status=201, match=[partial(internal_name=f"campaign {campaign.pk}")]
    )
    api.post(f"{API}/studies/{STUDY}/transition/", json={"id": STUDY, "status": "ACTIVE"})
    assert publish_campaign(campaign, get_platform("prolific"), "https://site.example") == 3  # paid places only
    return campaign, Publication.objects.get(campaign=campaign)


def posted(api, url: str) -> list[dict]:
    return [json.loads(c.request.body) for c in api.calls if c.request.method == "POST" and c.request.url == url]


def expect_submissions(api, study: str, *rows: dict) -> None:
    page = {"results": list(rows), "_links": {"next": {"href": None}}, "meta": {"count": len(rows)}}
    api.get(f"{API}/studies/{study}/submissions/", json=page, match=[AUTH])


def test_the_group_is_made_and_the_paid_study_allowlists_it_while_the_quiz_study_does_not(published, api):
    campaign, publication = published
    (group,) = posted(api, f"{API}/participant-groups/")
    assert group["workspace_id"] == WORKSPACE and str(campaign.pk) in group["name"]
    quiz, paid = posted(api, f"{API}/studies/")
    assert paid["filters"] == [{"filter_id": ALLOWLIST_FILTER, "selected_values": [GROUP]}]
    assert "filters" not in quiz
    assert (quiz["total_available_places"], quiz["reward"], paid["total_available_places"]) == (2, 270, 3)
    setup = PlatformQualification.objects.get(campaign=campaign)
    assert (setup.external_id, setup.quiz_external_id, setup.places) == (GROUP, QUIZ_STUDY, 2)
    assert setup.completion_code and setup.completion_code != publication.completion_code


def test_sync_adds_the_participant_who_passed_only_and_they_then_get_a_paid_hit(published, client, api, slept):
    campaign, publication = published
    quiz_link = {"study": QUIZ_STUDY}
    passed = work_through_pages(client, prolific_landing(campaign, worker=PASS, session="67s1", **quiz_link))
    html = client.get(reverse("labeling:platform_return", args=[passed.pk])).content.decode()
    setup = PlatformQualification.objects.get(campaign=campaign)
    assert f"cc={setup.completion_code}" in html  # the quiz study's own code
    failed = work_through_pages(
        client, prolific_landing(campaign, worker=FAIL, session="67s2", **quiz_link), wrong_quiz=2
    )
    assert passed.hit.kind == failed.hit.kind == HIT.QUALIFICATION

    expect_submissions(api, STUDY)
    expect_submissions(
        api, QUIZ_STUDY, submission("67s1", PASS, "AWAITING REVIEW"), submission("67s2", FAIL, "AWAITING REVIEW")
    )
    api.post(
        f"{API}/submissions/67s1/transition/",
        json={"id": "67s1", "status": "APPROVED"},
        match=[AUTH, matchers.json_params_matcher({"action": "APPROVE"})],
    )
    api.post(
        f"{API}/participant-groups/{GROUP}/participants/",
        json={"results": [{"participant_id": PASS}]},
        match=[AUTH, matchers.json_params_matcher({"participant_ids": [PASS]})],
    )
    counts = sync_publication(publication)
    assert counts["qualified"] == 1 and counts["approved"] == 1 and counts["flagged"] == 1
    assert QualificationResult.objects.get(worker__external_id=PASS).granted_at is not None
    assert QualificationResult.objects.get(worker__external_id=FAIL).granted_at is None

    paid = work_through_pages(client, prolific_landing(campaign, worker=PASS, session="67s3", study=STUDY))
    assert paid.hit.kind == HIT.REGULAR
    client.logout()
    refused = client.get(prolific_landing(campaign, worker=FAIL, session="67s4", study=STUDY))
    assert refused.status_code == 409 and not Assignment.objects.filter(platform_assignment_id="67s4").exists()

    # the next sync sends no second group call: the pass is recorded as granted
    expect_submissions(api, STUDY, submission("67s3", PASS, "ACTIVE"))
    expect_submissions(
        api, QUIZ_STUDY, submission("67s1", PASS, "APPROVED"), submission("67s2", FAIL, "AWAITING REVIEW")
    )
    assert sync_publication(publication)["qualified"] == 0
