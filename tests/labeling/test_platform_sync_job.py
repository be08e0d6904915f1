"""Sync as a job: on a schedule (Celery beat) and on demand (the campaign page's button)."""

from datetime import timedelta

import pytest
import responses
from django.urls import reverse
from django.utils import timezone

from jobs.models import JobRun
from jobs.runtime import run_job, start_scheduled
from labeling.models import Campaign, Publication
from labeling.platforms import PlatformError
from labeling.platforms.prolific import API
from tests.labeling.platform_helpers import draft_campaign

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("quiz_demo_bank"),
]  # HITs built with the built-in quiz bank
STUDY = "60bbbbbbbbbbbbbbbbbbbbbb"


@pytest.fixture
def study(monkeypatch):
    monkeypatch.setenv("PROLIFIC_API_TOKEN", "t")
    campaign = draft_campaign(hits=1, currency="GBP", status=Campaign.OPEN)
    return Publication.objects.create(
        campaign=campaign, platform="prolific", external_id=STUDY, status=Publication.ACTIVE, places=3
    )


def empty_listing(mock) -> None:
    mock.get(f"{API}/studies/{STUDY}/submissions/", json={"results": [], "_links": {"next": {"href": None}}})


def test_beat_queues_a_platform_sync_every_configured_minutes():
    from config.celery import app

    entry = app.conf.beat_schedule["platform sync"]
    assert entry["task"] == "jobs.start_scheduled"
    assert tuple(entry["args"]) == ("labeling.platform_sync", {})
    assert entry["schedule"] == 10 * 60


def test_a_scheduled_sync_is_not_queued_twice_while_one_waits(monkeypatch):
    from jobs import runtime

    monkeypatch.setattr(runtime, "_queue", lambda job_id, queue: None)  # nothing runs it
    first = start_scheduled("labeling.platform_sync", {})
    assert first is not None and start_scheduled("labeling.platform_sync", {}) is None
    JobRun.objects.filter(pk=first).update(status=JobRun.SUCCEEDED)
    assert start_scheduled("labeling.platform_sync", {}) not in (None, first)


def test_sync_now_on_the_campaign_page_runs_the_job(study, client, researcher, outsider, run_jobs_at_once):
    url = reverse("labeling:campaign_sync", args=[study.campaign_id])
    client.force_login(outsider)
    assert client.post(url).status_code == 403
    client.force_login(researcher)
    with responses.RequestsMock() as mock:
        empty_listing(mock)
        assert client.post(url).status_code == 302
    job = JobRun.objects.get(kind="labeling.platform_sync")
    assert job.status == JobRun.SUCCEEDED and job.result["publications"] == 1
    study.refresh_from_db()
    assert study.last_synced_at is not None and study.sync_lease_until is None
    page = client.get(reverse("labeling:campaign_detail", args=[study.campaign_id])).content.decode()
    assert 'id="sync-now"' in page and 'data-figure="published">3 places' in page


def test_a_publication_another_sync_holds_is_skipped_and_reported(study, monkeypatch):
    from jobs import runtime

    monkeypatch.setattr(runtime, "_queue", lambda job_id, queue: None)
    Publication.objects.filter(pk=study.pk).update(sync_lease_until=timezone.now() + timedelta(minutes=5))
    job = runtime.start_job("labeling.platform_sync", {})
    with responses.RequestsMock():  # no call may be made
        result = run_job(job.pk, heartbeat=False)
    assert result["busy"] == 1 and result["publications"] == 0


def test_a_platform_error_fails_the_job_and_shows_on_the_page(study, client, researcher, monkeypatch, settings):
    from jobs import runtime
    from labeling.platforms import calls

    settings.PLATFORM_RETRY_ATTEMPTS = 1
    monkeypatch.setattr(calls, "sleep", lambda seconds: None)
    monkeypatch.setattr(runtime, "_queue", lambda job_id, queue: None)
    job = runtime.start_job("labeling.platform_sync", {"campaign_id": study.campaign_id})
    with responses.RequestsMock() as mock:
        mock.get(f"{API}/studies/{STUDY}/submissions/", status=401, json={"error": "Invalid token"})
        with pytest.raises(PlatformError, match="401"):
            run_job(job.pk, heartbeat=False)
    job.refresh_from_db()
    assert job.status == JobRun.FAILED and "401" in job.error
    client.force_login(researcher)
    page = client.get(reverse("labeling:campaign_detail", args=[study.campaign_id])).content.decode()
    assert 'id="sync-error"' in page and "401" in page
