"""Outgoing webhooks: signed deliveries to a real HTTP server on 127.0.0.1, retried with back-off,
recorded with their attempts, replayable by hand; the pages and the API, staff only."""

import json
import re
import time
from datetime import timedelta
from pathlib import Path
from unittest import mock

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from config.web.pages import CONFIRM_FIELD, CONFIRM_VALUE
from jobs.tasks import deliver_webhook_task
from jobs.webhooks import delivery, events, signing
from jobs.webhooks.endpoints import EndpointRefused, change_endpoint, check_url, create_endpoint, secret_of
from jobs.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEvent
from tests.jobs.webhook_receiver import start_receiver

DOC = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"


@pytest.fixture
def receiver(request):
    statuses = getattr(request, "param", [200])
    made, server = start_receiver(statuses)
    yield made
    server.shutdown()
    server.server_close()


@pytest.fixture
def queued():
    with mock.patch.object(deliver_webhook_task, "apply_async") as apply_async:
        yield apply_async


def doc_verify():
    """The receiving example exactly as the manual prints it."""
    text = DOC.read_text()
    section = text.split("## Verifying a delivery", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    namespace: dict = {}
    exec(compile(code, str(DOC), "exec"), namespace)
    return namespace["verify"]


def record_one(endpoint_kinds=("job.failed",), key="job.failed:1:1:x", *, url, data=None, send_now=True, **fields):
    endpoint, secret = create_endpoint(url, list(endpoint_kinds), **fields)
    event = events.record("job.failed", key, data or {"job": 1}, send_now=send_now)
    return endpoint, secret, event


def attempt_now(delivery_id: int) -> dict:
    WebhookDelivery.objects.filter(pk=delivery_id).update(next_attempt_at=timezone.now() - timedelta(seconds=1))
    return delivery.send(delivery_id)


# --- signing (pure) -------------------------------------------------------------------------------


def test_a_signature_verifies_and_a_changed_body_or_secret_or_old_time_does_not():
    body = b'{"id":"e1","kind":"job.failed"}'
    header = signing.signature_header("whsec_x", 1_000_000, body)
    assert signing.verify("whsec_x", header, body, now=1_000_010) == 1_000_000
    for secret, signed_body, now in (("whsec_y", body, 1_000_010), ("whsec_x", body + b" ", 1_000_010),
                                     ("whsec_x", body, 1_000_000 + 301)):  # fmt: skip
        with pytest.raises(signing.BadSignature):
            signing.verify(secret, header, signed_body, now=now)
    forged_time = header.replace("t=1000000", "t=1000005")
    with pytest.raises(signing.BadSignature):
        signing.verify("whsec_x", forged_time, body, now=1_000_010)
    with pytest.raises(signing.BadSignature, match="malformed"):
        signing.verify("whsec_x", "v1=abc", body, now=1_000_010)


def test_back_off_doubles_up_to_its_cap(settings):
    settings.WEBHOOK_RETRY_BASE_SECONDS, settings.WEBHOOK_RETRY_MAX_SECONDS = 30, 100
    assert [delivery.backoff_seconds(n) for n in (1, 2, 3, 4)] == [30, 60, 100, 100]


# --- endpoints -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url, message",
    [
        ("ftp://example.org/hook", "only http and https"),
        ("file:///etc/passwd", "only http and https"),
        ("javascript:alert(1)", "only http and https"),
        ("http://169.254.169.254/latest/meta-data/", "blocked address"),
        ("http://[fe80::1]/hook", "blocked address"),
        ("http://user:pw@127.0.0.1/hook", "no user name"),
        ("http:///hook", "names no host"),
    ],
)
def test_a_url_that_is_not_http_or_points_at_a_metadata_address_is_refused(url, message):
    with pytest.raises(EndpointRefused, match=message) as refused:
        check_url(url)
    assert refused.value.field == "url"


def test_blocked_networks_are_configurable(settings):
    assert check_url("http://127.0.0.1:9/hook") == "http://127.0.0.1:9/hook"
    settings.WEBHOOK_BLOCKED_NETWORKS = ["127.0.0.0/8"]
    with pytest.raises(EndpointRefused, match="127.0.0.1"):
        check_url("http://127.0.0.1:9/hook")


@pytest.mark.django_db
def test_the_secret_is_not_stored_and_follows_the_server_key(settings):
    endpoint, secret = create_endpoint("http://127.0.0.1:9/hook", ["job.failed"])
    row = WebhookEndpoint.objects.filter(pk=endpoint.pk).values().get()
    assert secret.startswith("whsec_") and secret not in json.dumps(row, default=str)
    assert secret_of(WebhookEndpoint.objects.get(pk=endpoint.pk)) == secret
    settings.WEBHOOK_SECRET_KEY = "another key"
    assert secret_of(endpoint) != secret


@pytest.mark.django_db
def test_nothing_is_recorded_when_no_active_endpoint_wants_the_kind():
    assert events.record("job.failed", "job.failed:1", {"job": 1}) is None
    endpoint, _ = create_endpoint("http://127.0.0.1:9/hook", ["job.succeeded"])
    assert events.record("job.failed", "job.failed:1", {"job": 1}) is None
    change_endpoint(endpoint, kinds=["job.failed"], active=False)
    assert events.record("job.failed", "job.failed:1", {"job": 1}) is None
    assert not WebhookEvent.objects.exists() and not WebhookDelivery.objects.exists()


# --- delivering ------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_an_event_is_recorded_once_per_key_and_delivered_once_signed(
    receiver, queued, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        endpoint, secret, event = record_one(url=receiver.url)
        assert events.record("job.failed", "job.failed:1:1:x", {"job": 1}) is None  # a retry of the writer
    assert WebhookEvent.objects.count() == 1 and WebhookDelivery.objects.count() == 1
    row = WebhookDelivery.objects.get()
    assert queued.call_args.kwargs == {"args": [row.pk], "queue": "default", "countdown": None}
    outcome = delivery.send(row.pk)
    assert outcome["ok"] and delivery.send(row.pk)["skipped"] == "not due"  # a redelivered message
    assert len(receiver.received) == 1
    got = receiver.received[0]
    signing.verify(secret, got.headers[signing.SIGNATURE_HEADER], got.body, now=time.time())
    sent = doc_verify()(secret, got.headers[signing.SIGNATURE_HEADER], got.body)
    assert sent == {"id": str(event.event_id), "kind": "job.failed", "created_at": event.created_at.isoformat(),
                    "data": {"job": 1}}  # fmt: skip
    assert got.headers["X-Event-Id"] == str(event.event_id) and got.headers["Content-Type"] == "application/json"
    row.refresh_from_db()
    assert (row.status, row.attempts) == (WebhookDelivery.SUCCEEDED, 1)


@pytest.mark.django_db
def test_the_manuals_example_refuses_a_changed_body_a_forged_signature_and_an_old_one(receiver):
    _, secret, event = record_one(url=receiver.url, send_now=False)
    delivery.send(event.deliveries.get().pk)
    got = receiver.received[0]
    header = got.headers[signing.SIGNATURE_HEADER]
    verify = doc_verify()
    with pytest.raises(ValueError, match="bad signature"):
        verify(secret, header, got.body.replace(b'"job":1', b'"job":2'))
    with pytest.raises(ValueError, match="bad signature"):
        verify("whsec_guess", header, got.body)
    old = int(time.time()) - 3600
    with pytest.raises(ValueError, match="stale"):
        verify(secret, signing.signature_header(secret, old, got.body), got.body)


@pytest.mark.django_db
@pytest.mark.parametrize("receiver", [[500, 200]], indirect=True)
def test_a_failing_endpoint_is_retried_with_back_off_and_the_page_shows_each_attempt(
    receiver, queued, settings, client, researcher, django_capture_on_commit_callbacks
):
    settings.WEBHOOK_RETRY_BASE_SECONDS = 30
    _, _, event = record_one(url=receiver.url, send_now=False)
    row = event.deliveries.get()
    before = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        assert not delivery.send(row.pk)["ok"]
    row.refresh_from_db()
    assert row.status == WebhookDelivery.PENDING and row.attempts == 1
    assert timedelta(seconds=29) < row.next_attempt_at - before < timedelta(seconds=32)
    assert queued.call_args.kwargs["countdown"] == 30
    assert delivery.send(row.pk)["skipped"] == "not due"  # not before its back-off
    assert attempt_now(row.pk)["ok"]
    row.refresh_from_db()
    assert row.status == WebhookDelivery.SUCCEEDED
    assert [(a.number, a.status_code, a.error) for a in row.attempt_log.all()] == [(1, 500, "HTTP 500"), (2, 200, "")]
    client.force_login(researcher)
    page = client.get(reverse("webhooks:delivery_list")).content.decode()
    assert f'data-delivery="{row.pk}" data-status="succeeded"' in page
    assert "HTTP 500" in page and "HTTP 200" in page
    assert len(receiver.received) == 2 and receiver.received[0].body == receiver.received[1].body


@pytest.mark.django_db
@pytest.mark.parametrize("receiver", [[500]], indirect=True)
def test_a_delivery_fails_after_its_attempts_and_a_replay_by_hand_tries_once_more(
    receiver, queued, settings, client, researcher, django_capture_on_commit_callbacks
):
    settings.WEBHOOK_MAX_ATTEMPTS = 2
    _, _, event = record_one(url=receiver.url, send_now=False)
    row = event.deliveries.get()
    delivery.send(row.pk)
    attempt_now(row.pk)
    row.refresh_from_db()
    assert (row.status, row.attempts) == (WebhookDelivery.FAILED, 2)
    assert attempt_now(row.pk)["skipped"] == "not due"
    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("webhooks:delivery_replay", args=[row.pk]))
    assert response.status_code == 302 and queued.call_args.kwargs["args"] == [row.pk]
    receiver.statuses[:] = [200]
    assert delivery.send(row.pk)["ok"]
    row.refresh_from_db()
    last = row.attempt_log.last()
    assert (row.status, row.attempts, last.by_hand, last.status_code) == (WebhookDelivery.SUCCEEDED, 3, True, 200)
    assert "replay" in client.get(reverse("webhooks:delivery_list")).content.decode()
    assert delivery.replay(row) and not delivery.replay(row)  # a pending one is not replayed twice


@pytest.mark.django_db
def test_a_refused_connection_is_a_failed_attempt_whose_error_hides_the_query_and_secret(queued):
    endpoint, secret, event = record_one(url="http://127.0.0.1:9/hook?token=abc", send_now=False)
    delivery.send(event.deliveries.get().pk)
    attempt = WebhookAttempt.objects.get()
    assert attempt.status_code is None and "ConnectionError" in attempt.error
    assert "token=abc" not in attempt.error and secret not in attempt.error
    assert delivery.scrub(f"boom {secret} at http://h/p?token=abc", "http://h/p?token=abc", secret) == (
        "boom [secret] at http://h/p"
    )


@pytest.mark.django_db
def test_a_slow_endpoint_times_out_as_a_failed_attempt(settings, queued):
    import socket

    settings.WEBHOOK_TIMEOUT_SECONDS = 0.3
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)  # accepts the connection, never answers
    try:
        _, _, event = record_one(url=f"http://127.0.0.1:{silent.getsockname()[1]}/hook", send_now=False)
        assert not delivery.send(event.deliveries.get().pk)["ok"]
    finally:
        silent.close()
    attempt = WebhookAttempt.objects.get()
    assert "Timeout" in attempt.error and attempt.duration_ms >= 250


@pytest.mark.django_db
def test_an_address_blocked_after_registration_is_not_called(receiver, settings, queued):
    _, _, event = record_one(url=receiver.url, send_now=False)
    settings.WEBHOOK_BLOCKED_NETWORKS = ["127.0.0.0/8"]
    delivery.send(event.deliveries.get().pk)
    assert receiver.received == [] and "blocked address" in WebhookAttempt.objects.get().error


@pytest.mark.django_db
def test_the_sweep_queues_due_and_lapsed_deliveries_only(queued):
    _, _, event = record_one(url="http://127.0.0.1:9/hook", send_now=False)
    row = event.deliveries.get()
    assert delivery.send_due() == {"queued": 1}
    WebhookDelivery.objects.filter(pk=row.pk).update(next_attempt_at=timezone.now() + timedelta(minutes=1))
    assert delivery.send_due() == {"queued": 0}
    WebhookDelivery.objects.filter(pk=row.pk).update(
        status=WebhookDelivery.SENDING, attempts=1, lease_until=timezone.now() - timedelta(seconds=1)
    )
    assert delivery.send_due() == {"queued": 1}  # its worker died mid-request


def test_beat_sends_due_webhooks_on_the_default_queue(settings):
    from config.celery import app

    entry = app.conf.beat_schedule["send due webhooks"]
    assert entry["task"] == "jobs.send_due_webhooks" and entry["schedule"] == settings.WEBHOOK_SWEEP_SECONDS
    assert entry["options"]["queue"] == "default"


# --- pages -----------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_registering_on_the_page_shows_the_secret_once(client, researcher):
    client.force_login(researcher)
    response = client.post(
        reverse("webhooks:endpoint_list"),
        {"url": "http://127.0.0.1:9/hook", "kinds": ["job.failed", "campaign.completed"], "description": "lab"},
    )
    assert response.status_code == 201 and response["Cache-Control"] == "no-store"
    secret = re.search(r'id="webhook-secret">(whsec_[0-9a-f]+)<', response.content.decode()).group(1)
    endpoint = WebhookEndpoint.objects.get()
    assert secret == secret_of(endpoint) and endpoint.kinds == ["campaign.completed", "job.failed"]
    for url in (reverse("webhooks:endpoint_list"), reverse("webhooks:endpoint_detail", args=[endpoint.pk])):
        assert secret not in client.get(url).content.decode()
    assert 'href="/webhooks/"' in client.get(reverse("jobs:job_list")).content.decode()  # in the navigation


@pytest.mark.django_db
@pytest.mark.parametrize(
    "fields, field",
    [({"url": "ftp://x/h", "kinds": ["job.failed"]}, "url"), ({"url": "http://127.0.0.1:9/h", "kinds": []}, "kinds"),
     ({"url": "http://127.0.0.1:9/h", "kinds": ["nope"]}, "kinds")],
)  # fmt: skip
def test_a_bad_registration_is_a_400_naming_the_field_and_records_nothing(client, researcher, fields, field):
    client.force_login(researcher)
    response = client.post(reverse("webhooks:endpoint_list"), fields)
    assert response.status_code == 400 and f'data-field="{field}"' in response.content.decode()
    assert not WebhookEndpoint.objects.exists()


@pytest.mark.django_db
def test_switching_off_and_deleting_an_endpoint(client, researcher):
    endpoint, _ = create_endpoint("http://127.0.0.1:9/hook", ["job.failed"])
    client.force_login(researcher)
    client.post(reverse("webhooks:endpoint_switch", args=[endpoint.pk]))
    endpoint.refresh_from_db()
    assert not endpoint.active and events.record("job.failed", "k", {}) is None
    asked = client.post(reverse("webhooks:endpoint_delete", args=[endpoint.pk]))
    assert asked.status_code == 200 and WebhookEndpoint.objects.exists()  # the confirmation page first
    client.post(reverse("webhooks:endpoint_delete", args=[endpoint.pk]), {CONFIRM_FIELD: CONFIRM_VALUE})
    assert not WebhookEndpoint.objects.exists()


def refused(response, who: str, url: str) -> None:
    """As every staff page refuses (config.web.access): anonymous to the site's login, others the refusal page."""
    if who == "anonymous":
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/"), url
    else:
        assert response.status_code == 403 and "admin/login" not in response.content.decode(), url


@pytest.mark.django_db
@pytest.mark.parametrize("who", ["anonymous", "outsider", "annotator"])
def test_only_staff_see_the_webhook_pages_or_change_anything(client, who, outsider, annotators, queued):
    if who == "outsider":
        client.force_login(outsider)
    elif who == "annotator":
        client.force_login(annotators[0])
    _, _, event = record_one(url="http://127.0.0.1:9/hook", send_now=False)
    row = event.deliveries.get()
    WebhookDelivery.objects.filter(pk=row.pk).update(status=WebhookDelivery.FAILED)
    endpoint = WebhookEndpoint.objects.get()
    for url in (reverse("webhooks:endpoint_list"), reverse("webhooks:endpoint_detail", args=[endpoint.pk]),
                reverse("webhooks:delivery_list")):  # fmt: skip
        response = client.get(url)
        refused(response, who, url)
    for url in (reverse("webhooks:endpoint_list"), reverse("webhooks:delivery_replay", args=[row.pk]),
                reverse("webhooks:endpoint_switch", args=[endpoint.pk])):  # fmt: skip
        response = client.post(url, {"url": "http://127.0.0.1:9/x", "kinds": ["job.failed"]})
        refused(response, who, url)
    assert WebhookEndpoint.objects.count() == 1 and endpoint.active and not queued.called
    for method, url in (("get", "/api/webhooks/"), ("post", "/api/webhooks/"), ("get", "/api/webhook-deliveries/"),
                        ("post", f"/api/webhook-deliveries/{row.pk}/replay/")):  # fmt: skip
        assert getattr(client, method)(url).status_code in (401, 403), url
    assert WebhookDelivery.objects.get().status == WebhookDelivery.FAILED


@pytest.mark.django_db
def test_a_replay_without_the_csrf_token_is_refused(researcher, queued):
    _, _, event = record_one(url="http://127.0.0.1:9/hook", send_now=False)
    row = event.deliveries.get()
    WebhookDelivery.objects.filter(pk=row.pk).update(status=WebhookDelivery.FAILED)
    client = Client(enforce_csrf_checks=True)
    client.force_login(researcher)
    assert client.post(reverse("webhooks:delivery_replay", args=[row.pk])).status_code == 403
    assert client.get(reverse("webhooks:delivery_replay", args=[row.pk])).status_code == 405
    assert WebhookDelivery.objects.get().status == WebhookDelivery.FAILED and not queued.called


# --- API -------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_api_registers_lists_changes_replays_and_deletes(client, researcher, receiver, queued):
    client.force_login(researcher)
    created = client.post(
        "/api/webhooks/", {"url": receiver.url, "kinds": ["job.failed"]}, content_type="application/json"
    )
    assert created.status_code == 201
    body = created.json()
    endpoint = WebhookEndpoint.objects.get(pk=body["id"])
    assert body["secret"] == secret_of(endpoint) and body["kinds"] == ["job.failed"]
    listed = client.get("/api/webhooks/").json()
    assert body["secret"] not in json.dumps(listed) and listed["results"][0]["id"] == endpoint.pk
    for bad, field in (({"url": "ftp://x/h", "kinds": ["job.failed"]}, "url"),
                       ({"url": receiver.url, "kinds": ["nope"]}, "kinds"),
                       ({"url": "http://169.254.169.254/", "kinds": ["job.failed"]}, "url")):  # fmt: skip
        refused = client.post("/api/webhooks/", bad, content_type="application/json")
        assert refused.status_code == 400 and field in refused.json(), bad
    patched = client.patch(f"/api/webhooks/{endpoint.pk}/", {"kinds": ["job.failed", "job.succeeded"]},
                           content_type="application/json")  # fmt: skip
    assert patched.status_code == 200 and patched.json()["kinds"] == ["job.failed", "job.succeeded"]
    assert client.patch(f"/api/webhooks/{endpoint.pk}/", {"url": "http://127.0.0.1:1/"},
                        content_type="application/json").status_code == 400  # fmt: skip
    event = events.record("job.failed", "job.failed:9", {"job": 9}, send_now=False)
    row = event.deliveries.get()
    assert client.post(f"/api/webhook-deliveries/{row.pk}/replay/").status_code == 409  # still pending
    delivery.send(row.pk)
    listed = client.get("/api/webhook-deliveries/").json()["results"][0]
    assert listed["status"] == "succeeded" and listed["event_id"] == str(event.event_id)
    assert listed["attempt_log"][0]["status_code"] == 200
    replayed = client.post(f"/api/webhook-deliveries/{row.pk}/replay/")
    assert replayed.status_code == 202 and replayed.json()["status"] == "pending"
    assert client.delete(f"/api/webhooks/{endpoint.pk}/").status_code == 204
    assert not WebhookEndpoint.objects.exists()


def test_the_schema_lists_the_webhook_endpoints_without_warnings():
    from drf_spectacular.drainage import GENERATOR_STATS
    from drf_spectacular.generators import SchemaGenerator

    GENERATOR_STATS.reset()
    with GENERATOR_STATS.silence():
        schema = SchemaGenerator().get_schema(request=None, public=True)
    assert {"/api/webhooks/", "/api/webhooks/{id}/", "/api/webhook-deliveries/",
            "/api/webhook-deliveries/{id}/replay/"} <= set(schema["paths"])  # fmt: skip
    created = schema["paths"]["/api/webhooks/"]["post"]["responses"]["201"]
    assert created["content"]["application/json"]["schema"]["$ref"].endswith("/CreatedEndpoint")
    messages = [*GENERATOR_STATS._warn_cache, *GENERATOR_STATS._error_cache]
    assert [m for m in messages if "webhook" in m.lower()] == []


@pytest.mark.django_db
def test_a_switched_off_endpoints_deliveries_wait_until_it_is_on_again(receiver, queued):
    endpoint, _, event = record_one(url=receiver.url, send_now=False)
    row = event.deliveries.get()
    change_endpoint(endpoint, active=False)
    assert delivery.send(row.pk)["skipped"] == "not due" and delivery.send_due() == {"queued": 0}
    change_endpoint(endpoint, active=True)
    assert delivery.send(row.pk)["ok"] and len(receiver.received) == 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="needs PostgreSQL's concurrent writers (set DATABASE_URL)"
)
def test_two_workers_handed_one_delivery_and_two_recorders_of_one_occurrence_make_one_of_each(receiver, queued):
    from tests.threads import run_together

    create_endpoint(receiver.url, ["job.failed"])
    recorded = run_together(4, lambda i: events.record("job.failed", "job.failed:7:1:t", {"job": 7}, send_now=False))
    assert sum(isinstance(result, WebhookEvent) for result in recorded) == 1, recorded
    assert [r for r in recorded if r is not None and not isinstance(r, WebhookEvent)] == []
    row = WebhookDelivery.objects.get()
    outcomes = run_together(4, lambda i: delivery.send(row.pk))
    assert sum(1 for outcome in outcomes if isinstance(outcome, dict) and outcome.get("ok")) == 1, outcomes
    assert len(receiver.received) == 1 and WebhookAttempt.objects.count() == 1
