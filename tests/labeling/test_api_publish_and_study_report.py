"""The API's publish action (the dashboard's publish: the same checks, the same job) and its study
report (the study report page's figures as JSON), for the typed client (client/, docs/api.md)."""

from decimal import Decimal

import pytest
from rest_framework.test import APIClient

from jobs.models import JobRun
from labeling.models import HIT, Campaign
from labeling.reports.study import build_report
from labeling.services.campaigns import create_campaign, create_pairwise_campaign
from labeling.work.hits import build_hits
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues, make_workers

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("quiz_demo_bank")]


@pytest.fixture
def api(researcher) -> APIClient:
    client = APIClient()
    client.force_authenticate(researcher)
    return client


@pytest.fixture
def draft() -> Campaign:
    campaign = create_campaign("To publish", dialogues_per_hit=2, quiz_per_hit=1)
    build_hits(campaign, make_dialogues(4), seed=1)
    return campaign


def test_publishing_locally_queues_the_publish_job_which_opens_the_campaign(
    api, draft, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(f"/api/campaigns/{draft.pk}/publish/", {"platform": "local"}, format="json")
    assert response.status_code == 202, response.content
    job = JobRun.objects.get(pk=response.data["job"])
    assert job.kind == "labeling.platform_publish" and job.status == JobRun.SUCCEEDED, job.error
    assert job.parameters == {"campaign_id": draft.pk, "platform": "local", "base_url": "http://testserver/"}
    draft.refresh_from_db()
    assert draft.status == Campaign.OPEN
    assert all(hit.external_id == f"local:{hit.pk}" for hit in HIT.objects.filter(campaign=draft))


def test_publishing_a_closed_campaign_or_on_an_unknown_platform_is_refused_naming_the_platform(api, draft):
    Campaign.objects.filter(pk=draft.pk).update(status=Campaign.CLOSED)
    response = api.post(f"/api/campaigns/{draft.pk}/publish/", {"platform": "local"}, format="json")
    assert response.status_code == 400 and "closed" in response.data["platform"][0]
    response = api.post(f"/api/campaigns/{draft.pk}/publish/", {"platform": "elsewhere"}, format="json")
    assert response.status_code == 400 and "platform" in response.data
    assert not JobRun.objects.exists()


def test_a_paid_platforms_refusal_is_the_dashboards(api, draft):
    """Below MTurk's minimum hourly pay and without https: refused with the figures, and no job queued."""
    Campaign.objects.filter(pk=draft.pk).update(reward=Decimal("0.01"), estimated_minutes=10)
    response = api.post(f"/api/campaigns/{draft.pk}/publish/", {"platform": "mturk"}, format="json")
    assert response.status_code == 400, response.content
    refusals = " | ".join(response.data["platform"])
    assert "pays $0.06/h at the estimated 10.0 min per HIT" in refusals and "SITE_URL" in refusals, refusals
    assert not JobRun.objects.exists()


def test_the_study_report_is_the_pages_figures(api):
    campaign = Campaign.objects.create(name="Answered")
    d = make_dialogues(2)
    make_answered_hit(campaign, make_workers(3), {d[0]: ["Angry", "Angry", "Sad"], d[1]: ["Sad", "Joyful", "Proud"]})
    response = api.get(f"/api/campaigns/{campaign.pk}/study-report/")
    assert response.status_code == 200
    assert response.json() == _as_json(build_report(campaign).as_dict())
    assert response.data["table4"]["dialogues"] == 2 and response.data["table4"]["majority"] == 1


def test_a_pairwise_campaign_has_no_study_report(api):
    a, b = make_dialogues(2, prefix="a"), make_dialogues(2, prefix="b")
    ids = lambda dialogues: "ids:" + ",".join(str(d.pk) for d in dialogues)  # noqa: E731
    campaign, _ = create_pairwise_campaign("Pairs", source_a=ids(a), source_b=ids(b), quiz_per_hit=0)
    response = api.get(f"/api/campaigns/{campaign.pk}/study-report/")
    assert response.status_code == 404 and "label campaigns" in response.data["detail"]


def _as_json(data):
    import json

    return json.loads(json.dumps(data))
