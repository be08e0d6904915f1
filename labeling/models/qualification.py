"""The qualification step: a worker's result, each checked quiz screen, a platform's qualification."""

from django.db import models

from labeling.models.campaign import Campaign
from labeling.models.payments import Publication
from labeling.models.people import Worker
from labeling.models.work import Assignment, HITItem


class QualificationResult(models.Model):
    """One worker's qualification quiz in one campaign: its score and whether it passed. Written at
    submission by labeling.services.qualification.record_result (one per worker identity and campaign);
    `granted_at` is when sync told the platform (MTurk's qualification, Prolific's group)."""

    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="qualification_results")
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="qualification_results")
    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="qualification_result")
    correct = models.PositiveSmallIntegerField()
    total = models.PositiveSmallIntegerField()
    passed = models.BooleanField()
    taken_at = models.DateTimeField(auto_now_add=True)
    granted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["worker", "campaign"], name="qualification_unique_worker_campaign")
        ]

    def __str__(self) -> str:
        return f"{self.worker} {'passed' if self.passed else 'failed'} {self.campaign} ({self.correct}/{self.total})"


class QuizCheck(models.Model):
    """A qualification screen whose answer was checked and shown right or wrong with the known
    answer: its answer can no longer change, and the reveal was counted (quiz_pool.record_reveals)."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="quiz_checks")
    item = models.ForeignKey(HITItem, on_delete=models.CASCADE, related_name="quiz_checks")
    correct = models.BooleanField()
    checked_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["assignment", "item"], name="quizcheck_unique_item")]

    def __str__(self) -> str:
        return f"check of item {self.item_id} in assignment {self.assignment_id}"


class PlatformQualification(models.Model):
    """A campaign's qualification step on a crowd platform: MTurk's qualification type and the HIT
    type of the quiz HIT; Prolific's participant group and the quiz study. Written by the
    platform adapters with what the platform answered (labeling.platforms)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="platform_qualifications")
    platform = models.CharField(max_length=16, choices=Publication.PLATFORM_CHOICES)
    # MTurk QualificationTypeId, Prolific participant group id ("" until the platform answered)
    external_id = models.CharField(max_length=128, blank=True)
    # MTurk HIT type of the quiz HIT, Prolific quiz study id
    quiz_external_id = models.CharField(max_length=128, blank=True)
    # Prolific: the quiz study's completion code and places
    completion_code = models.CharField(max_length=32, blank=True)
    places = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=8, default=Publication.DRAFT)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "platform"], name="platform_qualification_unique")]

    def __str__(self) -> str:
        return f"qualification of {self.campaign} on {self.platform}"
