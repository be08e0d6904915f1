"""A model's answers as a rater of a campaign's items: one row per (campaign, rater, turn), with
what each answer cost (calls, tokens, seconds) and, when it failed, why."""

from django.db import models

from annotation.models import ModelVersion, Turn
from labeling.models.campaign import Campaign


class RaterAnswer(models.Model):
    OK, OUTSIDE, MALFORMED, TIMEOUT, RATE_LIMITED, HTTP_ERROR, NO_PREDICTION = (
        "ok",
        "outside",
        "malformed",
        "timeout",
        "rate-limited",
        "http-error",
        "no-prediction",
    )
    STATUS_CHOICES = [
        (OK, "A label of the campaign's set"),
        (OUTSIDE, "A label outside the campaign's set"),
        (MALFORMED, "An answer that names no label"),
        (TIMEOUT, "No answer in time"),
        (RATE_LIMITED, "Still refused (429) after the retries"),
        (HTTP_ERROR, "Another HTTP error"),
        (NO_PREDICTION, "The model version has no prediction for the turn"),
    ]

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="rater_answers")
    rater = models.CharField(max_length=200, help_text="endpoint:<model name> or model-version:<id>")
    model_version = models.ForeignKey(ModelVersion, on_delete=models.SET_NULL, null=True, blank=True)
    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="rater_answers")
    label_text = models.CharField(max_length=128, blank=True, help_text="the label, when status is ok")
    confidence = models.FloatField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=STATUS_CHOICES)
    detail = models.TextField(blank=True, help_text="what came back, when it was not a label (cut to 500 characters)")
    calls = models.PositiveSmallIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    seconds = models.FloatField(default=0)
    answered_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "rater", "turn"], name="rater_answer_unique_turn")]

    def __str__(self) -> str:
        return f"{self.rater} on turn {self.turn_id}: {self.status}"
