"""A campaign's last computed researcher figures (labeling.reports.cache): what its pages show while
newer ones are computed by the refresh job, so no page view waits for a computation."""

from django.core.serializers.json import DjangoJSONEncoder
from django.db import models

from labeling.models.campaign import Campaign


class CampaignFigures(models.Model):
    """One row per campaign, written only by labeling.reports.cache.store_figures (the refresh job)."""

    campaign = models.OneToOneField(Campaign, on_delete=models.CASCADE, related_name="stored_figures")
    # report_fingerprint of the state the figures were computed from: the page compares it with now
    fingerprint = models.CharField(max_length=64)
    computed_at = models.DateTimeField()
    seconds = models.FloatField(default=0.0)  # how long the computation took
    report = models.JSONField(encoder=DjangoJSONEncoder)  # campaign_report, as the API returns it
    bought = models.JSONField(encoder=DjangoJSONEncoder)  # labeling.work.policy.answers_bought
    html = models.TextField()  # the report partial, rendered (CSRF placeholder in place of the token)

    def __str__(self) -> str:
        return f"figures of campaign {self.campaign_id} as of {self.computed_at:%Y-%m-%d %H:%M:%S}"
