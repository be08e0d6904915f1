"""A JobRun records one long-running job: what was asked, how far it got, what came out, and
whether the worker running it is still alive (its heartbeat)."""

from django.conf import settings
from django.db import models


class JobRunQuerySet(models.QuerySet):
    def unfinished(self):
        return self.filter(status__in=JobRun.UNFINISHED)


class JobRun(models.Model):
    QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED = "queued", "running", "succeeded", "failed", "cancelled"
    STATUS_CHOICES = [
        (QUEUED, "Queued"),
        (RUNNING, "Running"),
        (SUCCEEDED, "Succeeded"),
        (FAILED, "Failed"),
        (CANCELLED, "Cancelled"),
    ]
    UNFINISHED = (QUEUED, RUNNING)
    FINISHED = (SUCCEEDED, FAILED, CANCELLED)

    kind = models.CharField(max_length=64, help_text="a name registered with jobs.registry.register")
    parameters = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=STATUS_CHOICES, default=QUEUED)
    attempts = models.PositiveSmallIntegerField(default=0, help_text="times a worker has claimed this job")
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="last sign of life of its worker")
    progress_done = models.PositiveBigIntegerField(default=0)
    progress_total = models.PositiveBigIntegerField(default=0)
    message = models.CharField(max_length=300, blank=True)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    parent = models.ForeignKey(
        "self",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="shards",
        help_text="the job this one is a shard of (jobs.runtime.run_in_shards)",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = JobRunQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "heartbeat_at"], name="jobrun_status_heartbeat")]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk} ({self.status})"

    @property
    def percent(self) -> int:
        if not self.progress_total:
            return 100 if self.status == self.SUCCEEDED else 0
        return min(100, int(100 * self.progress_done / self.progress_total))

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED

    @property
    def can_cancel(self) -> bool:
        return self.status in self.UNFINISHED

    @property
    def can_retry(self) -> bool:
        return self.status in (self.FAILED, self.CANCELLED)


from jobs.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEvent  # noqa: E402,F401
