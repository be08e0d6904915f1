"""The labeling API: staff only for every endpoint, the same figures as the dashboard, and a
schema that lists every endpoint without warnings."""

import pytest
from rest_framework.test import APIClient

from annotation.models import Label
from jobs.models import JobRun
from labeling.models import HIT, Campaign, Worker
from labeling.task_types.last_turn_label.aggregation import aggregate_campaign
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues, make_workers

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("quiz_demo_bank"),
]  # HITs built with the built-in quiz bank


@pytest.fixture
def campaign():
    campaign = Campaign.objects.create(name="API test")
    d = make_dialogues(2)
    make_answered_hit(campaign, make_workers(3), {d[0]: ["Angry", "Angry", "Sad"], d[1]: ["Sad", "Joyful", "Proud"]})
    return campaign


def _endpoints(campaign: Campaign) -> list[tuple[str, str, dict]]:
    worker = Worker.objects.first()
    return [
        ("get", "/api/campaigns/", {}),
        ("post", "/api/campaigns/", {"name": "Posted", "fallback_choices": ["Sad", "Angry", "Joyful"]}),
        ("get", f"/api/campaigns/{campaign.pk}/", {}),
        ("get", f"/api/campaigns/{campaign.pk}/report/", {}),
        ("get", f"/api/campaigns/{campaign.pk}/aggregated-labels/", {}),
        ("get", f"/api/campaigns/{campaign.pk}/workers/", {}),
        ("get", f"/api/campaigns/{campaign.pk}/study-report/", {}),
        ("post", f"/api/campaigns/{campaign.pk}/publish/", {"platform": "local"}),
        ("post", f"/api/campaigns/{campaign.pk}/aggregate/", {}),
        ("post", f"/api/campaigns/{campaign.pk}/approve-submitted/", {}),
        ("post", f"/api/campaigns/{campaign.pk}/record-payments/", {}),
        ("post", f"/api/workers/{worker.pk}/status/", {"blocked": True}),
        ("post", "/api/labels/accept/", {"text": "Forgetful"}),
    ]


@pytest.mark.parametrize("role", ["annotator", "outsider"])
def test_non_staff_users_get_403_on_every_endpoint(campaign, annotators, outsider, role):
    client = APIClient()
    client.force_authenticate(annotators[0] if role == "annotator" else outsider)
    for method, url, data in _endpoints(campaign):
        assert getattr(client, method)(url, data, format="json").status_code == 403, url
    assert not Campaign.objects.filter(name="Posted").exists()
    assert not Worker.objects.filter(status=Worker.BLOCKED).exists()


def test_anonymous_requests_are_refused(campaign):
    client = APIClient()
    for method, url, data in _endpoints(campaign):
        assert getattr(client, method)(url, data, format="json").status_code in (401, 403), url


def test_the_researcher_reaches_every_endpoint(campaign, researcher, django_capture_on_commit_callbacks):
    client = APIClient()
    client.force_authenticate(researcher)
    for method, url, data in _endpoints(campaign):
        with django_capture_on_commit_callbacks(execute=True):
            response = getattr(client, method)(url, data, format="json")
        assert response.status_code in (200, 201, 202), (url, response.content)


def test_session_writes_need_a_csrf_token(campaign, researcher):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(researcher)
    assert client.post(f"/api/campaigns/{campaign.pk}/aggregate/").status_code == 403
    assert client.get(f"/api/campaigns/{campaign.pk}/report/").status_code == 200


def test_creating_a_campaign_builds_hits_from_recent_dialogues(researcher):
    make_dialogues(4, prefix="api")
    client = APIClient()
    client.force_authenticate(researcher)
    response = client.post(
        "/api/campaigns/",
        {
            "name": "From the API",
            "dialogues_per_hit": 2,
            "quiz_per_hit": 1,
            "fallback_choices": ["neutral", "Questioning", "Acknowledging"],
            "recent_dialogues": 3,
            "labels": ["Sad", "Angry", "Neutral", "Questioning", "Acknowledging"],
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    campaign = Campaign.objects.get(pk=response.data["id"])
    assert response.data["hit_count"] == 2 == HIT.objects.filter(campaign=campaign).count()
    assert campaign.fallback_choices == ["Neutral", "Questioning", "Acknowledging"]
    assert sorted(campaign.labels.values_list("name", flat=True)) == [
        "Acknowledging", "Angry", "Neutral", "Questioning", "Sad"
    ]  # fmt: skip
    assert campaign.created_by == researcher


def test_a_bad_campaign_is_refused_with_the_field_named(researcher):
    client = APIClient()
    client.force_authenticate(researcher)
    response = client.post("/api/campaigns/", {"name": "x", "fallback_choices": ["Sad", "Nope"]}, format="json")
    assert response.status_code == 400 and "fallback_choices" in response.data
    response = client.post("/api/campaigns/", {"name": "x", "dialogue_ids": [999999]}, format="json")
    assert response.status_code == 400 and "dialogue_ids" in response.data
    assert not Campaign.objects.filter(name="x").exists()


def test_report_labels_and_workers(campaign, researcher):
    aggregate_campaign(campaign)
    client = APIClient()
    client.force_authenticate(researcher)
    report = client.get(f"/api/campaigns/{campaign.pk}/report/").data
    assert report["agreement"]["majority"] == 1 and report["agreement"]["items"] == 2
    labels = client.get(f"/api/campaigns/{campaign.pk}/aggregated-labels/").data
    assert labels["count"] == 2
    angry = next(row for row in labels["results"] if row["label"] == "Angry")
    assert angry["votes"] == {"Angry": 2, "Sad": 1} and angry["turn_text"].startswith("Reply line")
    workers = client.get(f"/api/campaigns/{campaign.pk}/workers/").data
    assert {w["worker"] for w in workers} == {"w1", "w2", "w3"}


def test_aggregate_queues_a_job_and_answers_202(campaign, researcher, django_capture_on_commit_callbacks):
    client = APIClient()
    client.force_authenticate(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/api/campaigns/{campaign.pk}/aggregate/")
    assert response.status_code == 202
    assert JobRun.objects.get(pk=response.data["job"]).result["majority"] == 1


def test_block_and_accept(campaign, researcher):
    client = APIClient()
    client.force_authenticate(researcher)
    worker = Worker.objects.get(external_id="w2")
    assert (
        client.post(f"/api/workers/{worker.pk}/status/", {"blocked": True}, format="json").data["status"] == "blocked"
    )
    worker.refresh_from_db()
    assert worker.is_blocked
    response = client.post("/api/labels/accept/", {"text": "Forgetful"}, format="json")
    assert response.status_code == 201 and response.data["kind"] == Label.PROPOSED


def test_the_schema_lists_the_labeling_endpoints_without_warnings():
    from drf_spectacular.drainage import GENERATOR_STATS
    from drf_spectacular.generators import SchemaGenerator

    GENERATOR_STATS.reset()
    with GENERATOR_STATS.silence():
        schema = SchemaGenerator().get_schema(request=None, public=True)
    paths = set(schema["paths"])
    assert {
        "/api/campaigns/",
        "/api/campaigns/{id}/",
        "/api/campaigns/{id}/report/",
        "/api/campaigns/{id}/aggregated-labels/",
        "/api/campaigns/{id}/workers/",
        "/api/campaigns/{id}/aggregate/",
        "/api/campaigns/{id}/record-payments/",
        "/api/campaigns/{id}/approve-submitted/",
        "/api/workers/{id}/status/",
        "/api/labels/accept/",
    } <= paths
    messages = [*GENERATOR_STATS._warn_cache, *GENERATOR_STATS._error_cache]
    assert [m for m in messages if "labeling" in m or "campaign" in m.lower() or "worker" in m.lower()] == []
