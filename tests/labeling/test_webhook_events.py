"""Each writer of a state change records its webhook event once its change commits, once per
occurrence, and a participant's submission only inserts rows (a worker delivers them)."""

from unittest import mock

import pytest

from jobs.tasks import deliver_webhook_task
from jobs.webhooks import delivery
from jobs.webhooks.endpoints import create_endpoint, wanted_kinds
from jobs.webhooks.models import WebhookDelivery, WebhookEvent
from labeling.actions import SubmissionRefused
from labeling.actions.claim import claim_next_hit
from labeling.actions.submit import submit_assignment
from labeling.models import HIT, AggregatedLabel, Campaign, Publication, Worker
from labeling.platforms import PlatformError
from labeling.platforms.sync import sync_publication
from labeling.services.adjudication import announce_waiting
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import answer_everything, make_dialogues, open_campaign
from tests.labeling.platform_helpers import draft_campaign

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("quiz_demo_bank")]
HOOK = "http://127.0.0.1:9/hook"


@pytest.fixture
def queued():
    with mock.patch.object(deliver_webhook_task, "apply_async") as apply_async:
        yield apply_async


def one_seat_campaign() -> Campaign:
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=1)
    build_hits(campaign, make_dialogues(2), seed=3)
    HIT.objects.filter(campaign=campaign).update(required_workers=1, seats_free=1)
    return campaign


def kinds() -> list[str]:
    return sorted(WebhookEvent.objects.values_list("kind", flat=True))


def test_a_submission_records_its_event_and_the_campaigns_once_without_queueing_anything(
    queued, django_capture_on_commit_callbacks
):
    create_endpoint(HOOK, ["assignment.submitted", "campaign.filled", "campaign.completed"])
    campaign = one_seat_campaign()
    assignment = claim_next_hit(Worker.objects.create(external_id="w1"))
    answer_everything(assignment)
    with django_capture_on_commit_callbacks(execute=True):
        submit_assignment(assignment)
    assert kinds() == ["assignment.submitted", "campaign.completed", "campaign.filled"]
    submitted = WebhookEvent.objects.get(kind="assignment.submitted")
    assert submitted.data["assignment"] == assignment.pk and submitted.data["campaign"] == campaign.pk
    assert WebhookEvent.objects.get(kind="campaign.completed").data == {
        "campaign": campaign.pk,
        "seats": 1,
        "submitted": 1,
    }
    assert not queued.called  # the participant's request only inserted rows
    assert WebhookDelivery.objects.filter(status=WebhookDelivery.PENDING).count() == 3
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(SubmissionRefused):
        submit_assignment(assignment)  # a second submission changes nothing, announces nothing
    assert WebhookEvent.objects.count() == 3
    with django_capture_on_commit_callbacks(execute=True):
        assert delivery.send_due() == {"queued": 3}
    assert queued.call_count == 3 and {c.kwargs["queue"] for c in queued.call_args_list} == {"default"}


def test_a_campaign_with_free_seats_is_neither_filled_nor_completed(django_capture_on_commit_callbacks):
    create_endpoint(HOOK, ["assignment.submitted", "campaign.filled", "campaign.completed"])
    campaign = one_seat_campaign()
    HIT.objects.filter(campaign=campaign).update(required_workers=2, seats_free=2)
    assignment = claim_next_hit(Worker.objects.create(external_id="w1"))
    answer_everything(assignment)
    with django_capture_on_commit_callbacks(execute=True):
        submit_assignment(assignment)
    assert kinds() == ["assignment.submitted"]


def test_a_submission_rolled_back_announces_nothing(django_capture_on_commit_callbacks):
    from django.db import transaction

    create_endpoint(HOOK, ["assignment.submitted"])
    one_seat_campaign()
    assignment = claim_next_hit(Worker.objects.create(external_id="w1"))
    answer_everything(assignment)
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError), transaction.atomic():
        submit_assignment(assignment)
        raise RuntimeError("the caller's transaction fails after the submission")
    assert not WebhookEvent.objects.exists()


def test_an_unwanted_kind_costs_no_query_after_the_commit(
    django_capture_on_commit_callbacks, django_assert_num_queries
):
    create_endpoint(HOOK, ["job.failed"])
    one_seat_campaign()
    assignment = claim_next_hit(Worker.objects.create(external_id="w1"))
    answer_everything(assignment)
    with django_capture_on_commit_callbacks() as callbacks:
        submit_assignment(assignment)
    wanted_kinds()  # read once after an endpoint changes, then kept in the shared cache
    with django_assert_num_queries(0):
        for callback in callbacks:
            callback()
    assert not WebhookEvent.objects.exists()


def test_waiting_adjudication_is_announced_once_per_aggregation(queued, django_capture_on_commit_callbacks):
    create_endpoint(HOOK, ["adjudication.waiting"])
    campaign = open_campaign()
    dialogue = make_dialogues(1)[0]
    with django_capture_on_commit_callbacks(execute=True):
        announce_waiting(campaign, "job-1")  # nothing waits yet
    assert not WebhookEvent.objects.exists()
    AggregatedLabel.objects.create(campaign=campaign, dialogue=dialogue, turn=dialogue.turns.last())
    with django_capture_on_commit_callbacks(execute=True):
        announce_waiting(campaign, "job-2")
        announce_waiting(campaign, "job-2")  # the same aggregation again (a retried job)
    event = WebhookEvent.objects.get()
    assert event.data == {"campaign": campaign.pk, "campaign_name": campaign.name, "waiting": 1}
    assert queued.call_count == 1  # a job's event is queued at once


def test_the_aggregation_job_announces_waiting_work_under_its_own_id(monkeypatch):
    from jobs.runtime import run_job, start_job
    from labeling.services import adjudication

    campaign = open_campaign()
    announced = []
    monkeypatch.setattr(adjudication, "announce_waiting", lambda c, occurrence: announced.append((c.pk, occurrence)))
    job = start_job("labeling.aggregate_campaign", {"campaign_id": campaign.pk})
    run_job(job.pk, heartbeat=False)
    assert announced == [(campaign.pk, f"job-{job.pk}")]


class FailingPlatform:
    def fetch_results(self, publication):
        raise PlatformError("Prolific answered 503")


def test_each_failing_sync_run_is_one_platform_sync_error(queued, django_capture_on_commit_callbacks, clock):
    create_endpoint(HOOK, ["platform.sync_error"])
    campaign = draft_campaign(hits=1, status=Campaign.OPEN)
    publication = Publication.objects.create(
        campaign=campaign, platform="prolific", external_id="60" + "b" * 22, status=Publication.ACTIVE, places=3
    )
    for _ in range(2):
        with django_capture_on_commit_callbacks(execute=True), pytest.raises(PlatformError):
            sync_publication(publication, FailingPlatform())
        clock.advance(60)
    errors = WebhookEvent.objects.filter(kind="platform.sync_error")
    assert errors.count() == 2
    assert errors.first().data["error"] == "Prolific answered 503" and errors.first().data["campaign"] == campaign.pk
