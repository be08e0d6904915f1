"""A crowd platform's events in (Prolific's webhooks: labeling.platforms.prolific_hooks subscribes,
labeling.platforms.prolific_events receives): the workspace's signing secret and subscriptions, and
each event received, recorded once."""

from django.db import models

from labeling.models.payments import Publication


class PlatformHook(models.Model):
    """What the publish step set up in one Prolific workspace. The secret Prolific made is kept
    sealed (labeling.platforms.prolific_hooks.seal: a database dump alone does not reveal it) and is
    never shown on a page or in an answer."""

    platform = models.CharField(max_length=16, default=Publication.PROLIFIC)
    workspace_id = models.CharField(max_length=64)
    secret_sealed = models.TextField(blank=True)
    target_url = models.URLField(max_length=500, blank=True)
    # event type -> Prolific's id of the confirmed subscription
    subscriptions = models.JSONField(default=dict)
    # why events are off or incomplete ("" when every event type is subscribed)
    note = models.CharField(max_length=500, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["platform", "workspace_id"], name="platform_hook_once")]

    def __str__(self) -> str:
        return f"{self.platform} hooks of {self.workspace_id}"


class PlatformEvent(models.Model):
    """One event a platform sent, recorded once (unique on the platform's event id, X-Event-ID), with
    what was done about it. `signature` is the digest of the first request that carried it, so a
    byte-for-byte copy of that request (a replay) is told from the platform's own redelivery."""

    APPLIED, IGNORED, FAILED = "applied", "ignored", "failed"

    platform = models.CharField(max_length=16, default=Publication.PROLIFIC)
    event_id = models.CharField(max_length=128, unique=True)
    event_type = models.CharField(max_length=64)
    resource_id = models.CharField(max_length=128)
    status = models.CharField(max_length=32, blank=True, help_text="the status the event announced")
    sent_at = models.DateTimeField(null=True, blank=True, help_text="X-Timestamp: when the platform sent it")
    signature = models.CharField(max_length=128)
    publication = models.ForeignKey(Publication, on_delete=models.SET_NULL, null=True, blank=True)
    outcome = models.CharField(max_length=8)
    note = models.CharField(max_length=255, blank=True)
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-received_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.event_type} {self.resource_id} ({self.outcome})"
