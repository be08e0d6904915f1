"""Money and platforms: the payment ledger, a campaign's publication on a crowd platform and the platform's submissions."""

from django.db import models

from labeling.models.campaign import Campaign
from labeling.models.people import Worker
from labeling.models.work import Assignment


class PaymentEntry(models.Model):
    """The ledger. One row per assignment and kind, so paying twice is impossible by construction."""

    REWARD, BONUS = "reward", "bonus"
    KIND_CHOICES = [(REWARD, "Reward"), (BONUS, "Quiz bonus")]

    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="payments")
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="payments")
    kind = models.CharField(max_length=8, choices=KIND_CHOICES)
    amount = models.DecimalField(max_digits=8, decimal_places=2)
    created_at = models.DateTimeField(auto_now_add=True)
    paid_at = models.DateTimeField(null=True, blank=True)
    # platform bonuses (labeling.platforms.sync): the idempotency key sent with the payment
    # (MTurk's UniqueRequestToken), written BEFORE the call; Prolific's bulk bonus id, and when
    # its one pay call was started (a pay started but not known to have finished is never sent
    # again: it waits for a researcher, see `payment_unsure`)
    request_token = models.CharField(max_length=64, blank=True)
    platform_reference = models.CharField(max_length=64, blank=True)
    pay_started_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["assignment", "kind"], name="payment_unique_assignment_kind")]

    def __str__(self) -> str:
        return f"{self.kind} {self.amount} for assignment {self.assignment_id}"


class Publication(models.Model):
    """A campaign offered on a crowd platform: MTurk's HIT type (its HITs are HIT.external_id), or
    a Prolific study. One per campaign and platform; written by labeling.platforms only."""

    MTURK, PROLIFIC = Worker.MTURK, Worker.PROLIFIC
    PLATFORM_CHOICES = [(MTURK, "Amazon Mechanical Turk"), (PROLIFIC, "Prolific")]
    DRAFT, ACTIVE, CLOSED = "draft", "active", "closed"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="publications")
    platform = models.CharField(max_length=16, choices=PLATFORM_CHOICES)
    # MTurk HIT type id, Prolific study id ("" until the platform answered)
    external_id = models.CharField(max_length=128, blank=True)
    # Prolific: the study's completion code, which the return page hands back
    completion_code = models.CharField(max_length=32, blank=True)
    sandbox = models.BooleanField(default=False)
    status = models.CharField(max_length=8, default=DRAFT)
    places = models.PositiveIntegerField(default=0, help_text="Prolific: total places asked for")
    created_at = models.DateTimeField(auto_now_add=True)
    last_synced_at = models.DateTimeField(null=True, blank=True)
    last_sync_error = models.TextField(blank=True)
    # one sync at a time per publication: a conditional UPDATE takes this lease
    sync_lease_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "platform"], name="publication_unique_platform")]

    def __str__(self) -> str:
        return f"{self.campaign} on {self.platform}"


class PlatformSubmission(models.Model):
    """What a platform reports about one piece of work (MTurk assignment, Prolific submission),
    matched to our Assignment when sync finds it, and what sync decided about it."""

    APPROVED, REJECTED, FLAGGED, RETURN_REQUESTED = "approved", "rejected", "flagged", "return"
    UNMATCHED = "unmatched"

    publication = models.ForeignKey(Publication, on_delete=models.CASCADE, related_name="submissions")
    external_id = models.CharField(max_length=64)
    worker_external_id = models.CharField(max_length=64)
    assignment = models.OneToOneField(
        Assignment, on_delete=models.SET_NULL, null=True, blank=True, related_name="platform_submission"
    )
    platform_status = models.CharField(max_length=32, help_text="the platform's own word, as last seen")
    # "" while undecided; approved/rejected once the platform took it; flagged, unmatched, return
    decision = models.CharField(max_length=12, blank=True)
    note = models.CharField(max_length=255, blank=True)
    # the platform's own time for the work, from its start to its completion (Prolific's submission
    # started_at -> completed_at): what its pay check reads (labeling.platforms.checks.measured_minutes)
    time_taken_seconds = models.PositiveIntegerField(null=True, blank=True)
    first_seen_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["publication", "external_id"], name="platform_submission_unique_id")
        ]

    def __str__(self) -> str:
        return f"{self.external_id} on {self.publication.platform} ({self.platform_status})"
