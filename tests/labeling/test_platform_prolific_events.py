"""Prolific's events in (labeling.platforms.prolific_hooks, prolific_events) through the stateful
stand-in's webhooks (labeling.platforms.standin.prolific_hooks): publishing subscribes once, a return
frees its seat and a completion is confirmed without a sync, a study Prolific paused is started again
at once; a forged, stale or replayed delivery gets a 4xx and changes nothing; and whole studies with
lost, repeated and reordered events end as they do with the sync alone."""

import json
from urllib.parse import urlsplit

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.record.audit_log import AuditEntry
from labeling.models import HIT, Assignment, PlatformEvent, PlatformHook, Publication
from labeling.platforms import publish_campaign, standin
from labeling.platforms.prolific_hooks import seal, unseal
from labeling.platforms.standin.crowd import BASE_URL, CARELESS, GOOD, StudyRun
from labeling.platforms.standin.prolific_hooks import EventFaults, HookedProlificStandIn, sign
from tests.labeling.platform_study import assert_settled, paid_study_filled, platforms, run_study, study_campaign

__all__ = ["platforms"]
pytestmark = pytest.mark.django_db
EVENTS = reverse("labeling:prolific_events")
TARGET = f"{BASE_URL}{EVENTS}"


@pytest.fixture
def hooked(platforms, settings) -> HookedProlificStandIn:
    settings.SITE_URL = BASE_URL
    prolific = HookedProlificStandIn()
    standin.install(prolific)
    return prolific


def published(prolific) -> StudyRun:
    run = StudyRun(study_campaign("prolific", qualified=False), prolific)
    run.publish()
    return run


def landed(run: StudyRun, participant: str) -> tuple[str, Assignment]:
    """A participant took a place on Prolific and opened our study (work in progress here)."""
    session, landing = run._take(participant)
    assignment = run._land(landing)
    assert assignment is not None and assignment.status == Assignment.ACCEPTED
    return session, assignment


def post(body: bytes, headers: dict, client: Client | None = None):
    headers = {name: value for name, value in headers.items() if name != "Content-Type"}
    client = client or Client(enforce_csrf_checks=True)
    return client.post(EVENTS, body, content_type="application/json", headers=headers)


def now() -> int:
    return int(timezone.now().timestamp())


def seats_free(assignment: Assignment) -> int:
    return HIT.objects.get(pk=assignment.hit_id).seats_free


# --- subscribing --------------------------------------------------------------------------------


def test_publishing_subscribes_each_event_type_once_and_keeps_the_secret_sealed(hooked):
    run = published(hooked)
    subscriptions = list(hooked.subscriptions.values())
    assert sorted(s["event_type"] for s in subscriptions) == ["study.status.change", "submission.status.change"]
    assert all(s["is_enabled"] and s["target_url"] == TARGET for s in subscriptions)  # confirmed
    (secret,) = (s["value"] for s in hooked.hook_secrets.values())
    hook = PlatformHook.objects.get()
    assert secret not in hook.secret_sealed and unseal(hook.secret_sealed) == secret and hook.note == ""

    publish_campaign(run.campaign, run.adapter, BASE_URL)  # a republish, as "Publish new HITs" does
    assert len(hooked.subscriptions) == 2
    assert [r for r in hooked.requests if r[:2] == ("POST", "/hooks/secrets/")] == [
        ("POST", "/hooks/secrets/", {"workspace_id": hook.workspace_id})
    ]  # listed the second time, never replaced
    assert unseal(PlatformHook.objects.get().secret_sealed) == secret


def test_an_existing_workspace_secret_is_used_not_replaced(hooked):
    hooked.hook_secrets["ws" + "pppppppppppppppppppppp"] = {"id": "hs1", "value": "theirs-secret", "workspace_id": "x"}
    published(hooked)
    assert not [r for r in hooked.requests if r[:2] == ("POST", "/hooks/secrets/")]
    assert unseal(PlatformHook.objects.get().secret_sealed) == "theirs-secret"


def test_a_sealed_secret_altered_or_under_another_key_is_not_read(settings):
    sealed = seal("abc-secret-value")
    assert unseal(sealed) == "abc-secret-value" and "abc-secret-value" not in sealed
    assert unseal(sealed[:-4] + ("AAAA" if sealed[-4:] != "AAAA" else "BBBB")) is None
    settings.WEBHOOK_SECRET_KEY = "another key entirely"
    assert unseal(sealed) is None


def test_without_an_https_site_url_publishing_works_and_events_are_off(platforms, settings, client, researcher):
    settings.SITE_URL = ""
    prolific = HookedProlificStandIn()
    standin.install(prolific)
    run = published(prolific)
    assert Publication.objects.get().status == Publication.ACTIVE
    assert not prolific.subscriptions and not [r for r in prolific.requests if r[1].startswith("/hooks/")]
    client.force_login(researcher)
    page = client.get(reverse("labeling:campaign_detail", args=[run.campaign.pk])).content.decode()
    assert "Prolific events are off" in page and "SITE_URL" in page


def test_the_campaign_page_says_events_are_on_and_never_shows_the_secret(hooked, client, researcher):
    run = published(hooked)
    client.force_login(researcher)
    page = client.get(reverse("labeling:campaign_detail", args=[run.campaign.pk])).content.decode()
    assert f"Prolific events on for {TARGET}" in page
    assert next(iter(hooked.hook_secrets.values()))["value"] not in page


# --- acting at once -----------------------------------------------------------------------------


def test_a_return_frees_the_seat_at_once_without_a_sync(hooked):
    run = published(hooked)
    session, assignment = landed(run, "r01W")
    held = seats_free(assignment)
    hooked.return_submission(session)
    run.deliver_events()
    assignment.refresh_from_db()
    assert assignment.status == Assignment.EXPIRED and seats_free(assignment) == held + 1
    assert Publication.objects.get().last_synced_at is None  # no sync ran
    assert PlatformEvent.objects.filter(resource_id=session, status="RETURNED", outcome=PlatformEvent.APPLIED).exists()


def test_a_completion_is_confirmed_and_approved_at_once_without_a_sync(hooked):
    run = published(hooked)
    run.arrive("c01W", GOOD)  # works here, completes on Prolific; the events are delivered
    assignment = Assignment.objects.get(worker__external_id="c01W")
    assert assignment.platform_confirmed_at is not None and assignment.status == Assignment.APPROVED
    assert hooked.submissions[assignment.platform_assignment_id].status == "APPROVED"
    assert Publication.objects.get().last_synced_at is None
    assert AuditEntry.objects.filter(actor="platform-event", campaign_id=run.campaign.pk).exists()  # who approved


def test_a_study_prolific_paused_is_started_again_at_once(hooked):
    run = published(hooked)
    study = hooked.studies[run.publication.external_id]
    for n in range(study.places - 1):
        run.arrive(f"s{n:02d}W", GOOD)
    assert study.status == "ACTIVE"
    run.arrive("s99W", CARELESS)  # the last place: rejected at once, so Prolific pauses the full study ...
    (rejected,) = [s for s in hooked.submissions.values() if s.participant_id == "s99W"]
    assert rejected.status == "REJECTED"
    started = ("POST", f"/studies/{study.id}/transition/", {"action": "START"})
    assert started in hooked.requests  # ... and its study.status.change had it started again at once
    run.deliver_events()
    assert study.status == "ACTIVE" and Publication.objects.get().last_synced_at is None
    assert PlatformEvent.objects.filter(resource_id=study.id, outcome=PlatformEvent.APPLIED).exists()


def test_events_out_of_order_apply_the_state_prolific_holds_now(hooked):
    run = published(hooked)
    run._arrive("o01W", GOOD)  # the events stay queued: RESERVED, ACTIVE, AWAITING REVIEW
    hooked.outbox.reverse()  # the newest first, the oldest last
    run.deliver_events()
    run.deliver_events()  # and the APPROVED our approval caused
    assignment = Assignment.objects.get(worker__external_id="o01W")
    assert assignment.status == Assignment.APPROVED and assignment.platform_confirmed_at is not None
    assert hooked.submissions[assignment.platform_assignment_id].status == "APPROVED"


# --- refused deliveries -------------------------------------------------------------------------


def queued_return(hooked) -> tuple[StudyRun, Assignment, object]:
    run = published(hooked)
    session, assignment = landed(run, "f01W")
    run.deliver_events()
    hooked.return_submission(session)
    (delivery,) = [d for d in hooked.outbox if b"RETURNED" in d.body]
    return run, assignment, delivery


def test_a_forged_a_stale_or_a_tampered_delivery_gets_a_4xx_and_changes_nothing(hooked):
    _run, assignment, delivery = queued_return(hooked)
    held, recorded = seats_free(assignment), PlatformEvent.objects.count()
    forged = {
        **hooked.headers_for(delivery, now()),
        "X-Prolific-Request-Signature": sign("guess", now(), delivery.body),
    }
    stale = hooked.headers_for(delivery, now() - 360)
    early = hooked.headers_for(delivery, now() + 360)
    tampered = delivery.body.replace(b"RETURNED", b"APPROVED")
    for body, headers in [(delivery.body, forged), (delivery.body, stale), (delivery.body, early),
                          (tampered, hooked.headers_for(delivery, now()))]:  # fmt: skip
        answer = post(body, headers)
        assert answer.status_code == 403, answer.content
    assignment.refresh_from_db()
    assert assignment.status == Assignment.ACCEPTED and seats_free(assignment) == held
    assert PlatformEvent.objects.count() == recorded


def test_a_replayed_request_gets_409_and_a_redelivery_is_acknowledged_both_changing_nothing(hooked):
    run, assignment, delivery = queued_return(hooked)
    headers = hooked.headers_for(delivery, now())
    assert post(delivery.body, headers).status_code == 200
    assignment.refresh_from_db()
    freed, recorded = seats_free(assignment), PlatformEvent.objects.count()
    assert assignment.status == Assignment.EXPIRED
    replay = post(delivery.body, headers)  # the very same request again
    assert replay.status_code == 409 and "replay" in replay.json()["detail"]
    redelivered = post(delivery.body, hooked.headers_for(delivery, now() + 30))  # Prolific's retry: signed anew
    assert redelivered.status_code == 200 and "already recorded" in redelivered.json()["detail"]
    assert seats_free(assignment) == freed and PlatformEvent.objects.count() == recorded


@pytest.mark.parametrize(
    ("body", "drop", "says"),
    [
        (b"{not json", None, "not JSON"),
        (b"[1, 2]", None, "not a JSON object"),
        (json.dumps({"event_type": "study.status.change", "status": "ACTIVE"}).encode(), None, "resource_id"),
        (json.dumps({"resource_id": "x", "event_type": 5}).encode(), None, "event_type"),
        (json.dumps({"resource_id": "x", "event_type": "study.status.change"}).encode(), "X-Event-ID", "X-Event-ID"),
        (b"{}", "X-Prolific-Request-Signature", "X-Prolific-Request-Signature"),
        (json.dumps({"resource_id": "x" * 200, "event_type": "study.status.change"}).encode(), None, "longer"),
    ],
)
def test_a_malformed_delivery_gets_400_naming_what_is_wrong(hooked, body, drop, says):
    published(hooked)
    secret = next(iter(hooked.hook_secrets.values()))["value"]
    headers = {"X-Prolific-Request-Timestamp": str(now()), "X-Prolific-Request-Signature": sign(secret, now(), body),
               "X-Event-ID": "ev-malformed"}  # fmt: skip
    headers.pop(drop, None)
    answer = post(body, headers)
    assert answer.status_code == 400 and says in answer.json()["detail"]
    assert not PlatformEvent.objects.exists()


def test_an_event_of_a_study_not_ours_is_acknowledged_and_changes_nothing(hooked):
    published(hooked)
    secret = next(iter(hooked.hook_secrets.values()))["value"]
    body = json.dumps({"resource_id": "st-of-someone-else", "event_type": "study.status.change", "status": "PAUSED"})
    headers = {"X-Prolific-Request-Timestamp": str(now()), "X-Event-ID": "ev-theirs",
               "X-Prolific-Request-Signature": sign(secret, now(), body.encode())}  # fmt: skip
    before = len(hooked.requests)
    answer = post(body.encode(), headers)
    assert answer.status_code == 200
    assert PlatformEvent.objects.get().outcome == PlatformEvent.IGNORED
    assert len(hooked.requests) == before  # Prolific not even asked
    assert Client().get(EVENTS).status_code == 405


def test_deliveries_an_answer_refused_are_retried_as_documented(hooked):
    run = published(hooked)
    run._arrive("t01W", GOOD)
    queued = len(hooked.outbox)
    assert hooked.deliver(lambda url, body, headers: 500, now()) == 0 and len(hooked.outbox) == queued
    assert all(urlsplit(d.url).path == EVENTS for d in hooked.outbox)
    assert run.deliver_events() == 0  # the first retry waits a minute
    assert Assignment.objects.get(worker__external_id="t01W").status == Assignment.SUBMITTED
    run.pass_time(0.1)  # the retries, signed anew, are taken
    assert len([status for _event, status in hooked.sent if status == 200]) >= queued
    assert Assignment.objects.get(worker__external_id="t01W").status == Assignment.APPROVED
    assert Assignment.objects.get(worker__external_id="t01W").status == Assignment.APPROVED


# --- whole studies ------------------------------------------------------------------------------


@pytest.mark.parametrize("qualified", [False, True], ids=["no-quiz", "quiz"])
def test_a_whole_study_with_lost_and_repeated_events_ends_as_with_the_sync_alone(platforms, qualified):
    alone = run_study("prolific", qualified=qualified, tag="a")
    assert_settled(alone)
    alone_outcome = (alone.report.hits_completed, alone.report.hits, paid_study_filled(alone))
    events = EventFaults(lost=0.2, repeated=0.2, reordered=True, seed=7)
    run = run_study("prolific", qualified=qualified, tag="e", events=events)
    assert_settled(run)  # every reward and bonus paid once, nothing left recruiting
    approved, places = paid_study_filled(run)
    assert (run.report.hits_completed, run.report.hits, (approved, places)) == alone_outcome
    assert approved == places
    assert run.standin.lost_events, "some events were lost"
    acknowledged = [event for event, status in run.standin.sent if status == 200]
    assert len(acknowledged) > len(set(acknowledged)), "some events arrived twice"
    recorded = PlatformEvent.objects.all()  # the run without hooks recorded none
    assert recorded.count() == len(set(acknowledged)) and recorded.filter(outcome=PlatformEvent.APPLIED).exists()
