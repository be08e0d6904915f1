"""Outgoing webhooks' tables: a researcher's endpoint, one event per occurrence, one delivery per
event and endpoint, one attempt per HTTP request (imported by jobs.models, so they are jobs' tables)."""

import uuid

from django.conf import settings
from django.db import models

# Every event a researcher's endpoint may ask for: kind -> what it says (the forms and docs show it).
EVENT_KINDS = {
    "assignment.submitted": "an annotator submitted a HIT (an assignment)",
    "campaign.filled": "every seat of a campaign is taken",
    "campaign.completed": "every seat of a campaign holds submitted work",
    "adjudication.waiting": "an aggregation left items waiting for adjudication",
    "job.succeeded": "a job finished",
    "job.failed": "a job failed",
    "platform.sync_error": "a crowd platform sync ended with an error",
}


class WebhookEndpoint(models.Model):
    url = models.URLField(max_length=500)
    kinds = models.JSONField(default=list, help_text="the event kinds it receives")
    description = models.CharField(max_length=200, blank=True)
    # The signing secret is never stored: it is HMAC(WEBHOOK_SECRET_KEY, salt), so the database
    # alone (a backup, a dump) does not reveal it (jobs.webhooks.endpoints.secret_of).
    secret_salt = models.CharField(max_length=64)
    active = models.BooleanField(default=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"webhook #{self.pk} {self.url}"


class WebhookEvent(models.Model):
    """One occurrence of a state change: `key` names the occurrence, so a retry or a second
    worker recording it again finds the row and makes no second event."""

    key = models.CharField(max_length=200, unique=True)
    event_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    kind = models.CharField(max_length=40)
    data = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.kind} {self.event_id}"


class WebhookDelivery(models.Model):
    PENDING, SENDING, SUCCEEDED, FAILED = "pending", "sending", "succeeded", "failed"
    STATUS_CHOICES = [(PENDING, "Pending"), (SENDING, "Sending"), (SUCCEEDED, "Succeeded"), (FAILED, "Failed")]

    event = models.ForeignKey(WebhookEvent, on_delete=models.CASCADE, related_name="deliveries")
    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries")
    status = models.CharField(max_length=10, choices=STATUS_CHOICES, default=PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    attempt_limit = models.PositiveSmallIntegerField(help_text="attempts allowed (a replay allows one more)")
    next_attempt_at = models.DateTimeField(help_text="when a pending delivery is due")
    lease_until = models.DateTimeField(null=True, blank=True, help_text="a sending delivery's claim")
    replay_asked = models.BooleanField(default=False, help_text="its next attempt is a replay asked by hand")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [models.UniqueConstraint(fields=["event", "endpoint"], name="webhook_delivery_once")]
        indexes = [models.Index(fields=["status", "next_attempt_at"], name="webhook_delivery_due")]

    def __str__(self) -> str:
        return f"delivery #{self.pk} of {self.event} to {self.endpoint_id} ({self.status})"


class WebhookAttempt(models.Model):
    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempt_log")
    number = models.PositiveSmallIntegerField()
    by_hand = models.BooleanField(default=False, help_text="a replay a researcher asked for")
    started_at = models.DateTimeField()
    duration_ms = models.PositiveIntegerField(default=0)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=500, blank=True, help_text="scrubbed of the secret and the URL's query")

    class Meta:
        ordering = ["number"]
        constraints = [models.UniqueConstraint(fields=["delivery", "number"], name="webhook_attempt_once")]

    def __str__(self) -> str:
        return f"attempt {self.number} of delivery {self.delivery_id}: {self.status_code or self.error}"

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300
