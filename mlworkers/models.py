"""A JobRun records one long-running job (ML or export): what was asked, how far it got, what came out."""

from django.conf import settings
from django.db import models


class JobRun(models.Model):
    QUEUED, RUNNING, SUCCEEDED, FAILED = "queued", "running", "succeeded", "failed"
    STATUS_CHOICES = [(QUEUED, "Queued"), (RUNNING, "Running"), (SUCCEEDED, "Succeeded"), (FAILED, "Failed")]
    FINISHED = (SUCCEEDED, FAILED)

    kind = models.CharField(max_length=64, help_text="a name registered in mlworkers.jobs")
    parameters = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=STATUS_CHOICES, default=QUEUED)
    progress_done = models.PositiveBigIntegerField(default=0)
    progress_total = models.PositiveBigIntegerField(default=0)
    message = models.CharField(max_length=300, blank=True)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

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
