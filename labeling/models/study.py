"""A participant's way through a campaign's study flow (labeling.study_flow): the steps reached,
the consent decision, the practice answers and the exit survey. Written only by
labeling.study_flow.progress."""

from django.db import models


class StudyStep(models.Model):
    """One step of the flow a participant reached (labeling.study_flow.config.RECORDED_STEPS):
    one row per participant, campaign and step, the first time only, so a double click or two
    tabs record it once and the funnel counts people."""

    worker = models.ForeignKey("Worker", on_delete=models.CASCADE, related_name="study_steps")
    campaign = models.ForeignKey("Campaign", on_delete=models.CASCADE, related_name="study_steps")
    step = models.CharField(max_length=24)
    reached_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["worker", "campaign", "step"], name="study_step_once"),
        ]

    def __str__(self) -> str:
        return f"{self.worker_id} reached {self.step} in campaign {self.campaign_id}"


class ConsentDecision(models.Model):
    """A participant's answer to a campaign's consent, with the consent's version: one per
    participant, campaign and version (the first answer stands; a new version asks again)."""

    worker = models.ForeignKey("Worker", on_delete=models.CASCADE, related_name="consent_decisions")
    campaign = models.ForeignKey("Campaign", on_delete=models.CASCADE, related_name="consent_decisions")
    version = models.PositiveIntegerField()
    consented = models.BooleanField()
    decided_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["worker", "campaign", "version"], name="consent_decision_once"),
        ]

    def __str__(self) -> str:
        answer = "consented" if self.consented else "declined"
        return f"{self.worker_id} {answer} to version {self.version} of campaign {self.campaign_id}"


class PracticeAnswer(models.Model):
    """One practice screen answered in one attempt. Practice items are training, not quiz gold:
    they live in the campaign's flow, never in the quiz pool, and count toward no quiz accuracy."""

    worker = models.ForeignKey("Worker", on_delete=models.CASCADE, related_name="practice_answers")
    campaign = models.ForeignKey("Campaign", on_delete=models.CASCADE, related_name="practice_answers")
    attempt = models.PositiveSmallIntegerField()
    item = models.PositiveSmallIntegerField(help_text="the practice item's index in the campaign's flow")
    answer = models.CharField(max_length=64)
    correct = models.BooleanField()
    answered_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["worker", "campaign", "attempt", "item"], name="practice_answer_once"),
        ]

    def __str__(self) -> str:
        return (
            f"{self.worker_id}: practice {self.item} of attempt {self.attempt}, {'right' if self.correct else 'wrong'}"
        )


class SurveyResponse(models.Model):
    """A participant's exit survey for a campaign: the answers by question key (empty: skipped)."""

    worker = models.ForeignKey("Worker", on_delete=models.CASCADE, related_name="survey_responses")
    campaign = models.ForeignKey("Campaign", on_delete=models.CASCADE, related_name="survey_responses")
    answers = models.JSONField(default=dict, blank=True)
    skipped = models.BooleanField(default=False)
    language = models.CharField(max_length=16, blank=True, help_text="the interface language it was given in")
    submitted_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["worker", "campaign"], name="survey_response_once"),
        ]

    def __str__(self) -> str:
        return f"{self.worker_id}'s exit survey of campaign {self.campaign_id}"
