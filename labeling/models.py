"""The crowd workflow: workers, campaigns, HITs with quiz checkpoints, answers and their aggregate."""

import secrets
from decimal import Decimal

from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models
from django.utils import timezone

from annotation.models import Dialogue, Label, Turn


class Worker(models.Model):
    SITE, MTURK, PROLIFIC = "site", "mturk", "prolific"
    PLATFORM_CHOICES = [(SITE, "This site"), (MTURK, "Amazon Mechanical Turk"), (PROLIFIC, "Prolific")]
    ACTIVE, BLOCKED = "active", "blocked"
    STATUS_CHOICES = [(ACTIVE, "Active"), (BLOCKED, "Blocked")]

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True, related_name="worker"
    )
    platform = models.CharField(max_length=16, choices=PLATFORM_CHOICES, default=SITE)
    external_id = models.CharField(max_length=128, help_text="platform worker id, or the username")
    country = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=8, choices=STATUS_CHOICES, default=ACTIVE)
    created_at = models.DateTimeField(auto_now_add=True)
    # where a platform worker first landed from: what the landing rate limits count
    signup_ip = models.GenericIPAddressField(null=True, blank=True)
    signup_campaign = models.ForeignKey("Campaign", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["platform", "external_id"], name="worker_unique_platform_id")]
        indexes = [
            models.Index(fields=["signup_ip", "created_at"]),
            models.Index(fields=["signup_campaign", "created_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.external_id} ({self.platform})"

    @property
    def is_blocked(self) -> bool:
        return self.status == self.BLOCKED


def new_entry_token() -> str:
    """A campaign's secret for its platform links: 32 URL-safe characters (192 random bits)."""
    return secrets.token_urlsafe(24)


class Campaign(models.Model):
    DRAFT, OPEN, PAUSED, CLOSED = "draft", "open", "paused", "closed"
    STATUS_CHOICES = [(DRAFT, "Draft"), (OPEN, "Open"), (PAUSED, "Paused"), (CLOSED, "Closed")]

    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    labels = models.ManyToManyField(Label, blank=True, related_name="campaigns", help_text="the label set")
    # ISO 639-1: the crowd's language; only dialogues identified as this language become its items
    language = models.CharField(max_length=8, default="en")
    # validators: the form and the API refuse these values with the field's name (never a 500)
    dialogues_per_hit = models.PositiveSmallIntegerField(default=15, validators=[MinValueValidator(1)])
    quiz_per_hit = models.PositiveSmallIntegerField(default=5)
    workers_per_hit = models.PositiveSmallIntegerField(default=3, validators=[MinValueValidator(1)])
    reward = models.DecimalField(
        max_digits=8, decimal_places=2, default=Decimal("0.40"), validators=[MinValueValidator(Decimal(0))]
    )
    bonus = models.DecimalField(
        max_digits=8, decimal_places=2, default=Decimal("0.10"), validators=[MinValueValidator(Decimal(0))]
    )
    quiz_pass_mark = models.PositiveSmallIntegerField(default=3, help_text="quiz answers right to earn the bonus")
    time_limit_minutes = models.PositiveIntegerField(default=60, validators=[MinValueValidator(1)])
    # three label names shown when a dialogue's target turn has no weak-labeler prediction
    fallback_choices = models.JSONField(default=list, blank=True)
    # the model whose top 3 the HITs offer (set by build_hits; null: fallback choices only)
    suggestion_model = models.ForeignKey(
        "annotation.ModelVersion", on_delete=models.SET_NULL, null=True, blank=True, related_name="campaigns"
    )
    tie_breaking = models.BooleanField(default=False)
    tie_break_workers = models.PositiveSmallIntegerField(default=2, validators=[MinValueValidator(1)])
    # sha256 of the crowd-results file a campaign was imported from, so a second import is refused
    source_sha256 = models.CharField(max_length=64, blank=True, db_index=True)
    status = models.CharField(max_length=8, choices=STATUS_CHOICES, default=DRAFT)
    # carried by every MTurk/Prolific link; a landing without it creates nothing (rotatable)
    entry_token = models.CharField(max_length=64, default=new_entry_token)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # one campaign per imported file, even when two imports of it race
            models.UniqueConstraint(
                fields=["source_sha256"], condition=~models.Q(source_sha256=""), name="campaign_unique_source_file"
            )
        ]

    def __str__(self) -> str:
        return self.name


class QuizQuestionQuerySet(models.QuerySet):
    def pool(self):
        """The secret pool: real corpus dialogues with a known answer, active and not retired."""
        return self.filter(is_active=True, retired_at__isnull=True, dialogue__isnull=False)

    def demo_bank(self):
        """The built-in one-turn questions from the source code: for the demo only."""
        return self.filter(is_active=True, source=QuizQuestion.BUILTIN, dialogue__isnull=True)


class QuizQuestion(models.Model):
    """A quiz item. In production a real dialogue of the corpus whose answer is known (unanimous
    crowd gold, or verified by a researcher), shown exactly like a work item; it lives only in the
    database. The BUILTIN one-turn questions of labeling.quiz_bank serve the demo only."""

    BUILTIN, IMPORTED = "builtin", "imported"

    text = models.TextField(help_text="the turn to label, as shown in feedback")
    dialogue = models.ForeignKey(
        Dialogue, on_delete=models.CASCADE, null=True, blank=True, related_name="quiz_questions"
    )
    gold_label = models.ForeignKey(Label, on_delete=models.PROTECT, related_name="quiz_questions")
    choices = models.JSONField(default=list, help_text="demo bank only: the three label names shown, gold among them")
    explanation = models.TextField(blank=True)
    source = models.CharField(max_length=16, default=BUILTIN)
    is_active = models.BooleanField(default=True)
    # seats reserved on HITs (required workers per HIT holding it) and answers shown in feedback
    exposures = models.PositiveIntegerField(default=0)
    reveals = models.PositiveIntegerField(default=0)
    retired_at = models.DateTimeField(null=True, blank=True)

    objects = QuizQuestionQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["dialogue"], condition=models.Q(dialogue__isnull=False), name="quiz_unique_dialogue"
            )
        ]

    def __str__(self) -> str:
        return self.text[:60]


class HIT(models.Model):
    REGULAR, TIE_BREAK = "regular", "tiebreak"
    KIND_CHOICES = [(REGULAR, "Regular"), (TIE_BREAK, "Tie-break")]

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="hits")
    position = models.PositiveIntegerField(default=0)
    kind = models.CharField(max_length=8, choices=KIND_CHOICES, default=REGULAR)
    required_workers = models.PositiveSmallIntegerField(default=3)
    external_id = models.CharField(max_length=128, blank=True, help_text="id on a crowd platform once published")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign_id", "position"]

    def __str__(self) -> str:
        return f"HIT {self.pk} of {self.campaign}"


class HITItem(models.Model):
    """One screen of a HIT: a dialogue to label, or a quiz question that looks just like one."""

    hit = models.ForeignKey(HIT, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveSmallIntegerField()
    dialogue = models.ForeignKey(Dialogue, on_delete=models.CASCADE, null=True, blank=True)
    target_turn = models.ForeignKey(Turn, on_delete=models.CASCADE, null=True, blank=True)
    quiz_question = models.ForeignKey(QuizQuestion, on_delete=models.PROTECT, null=True, blank=True)
    # frozen at build time: the weak labeler's top 3, or the campaign's fallback
    choices = models.JSONField(default=list)

    class Meta:
        ordering = ["hit_id", "position"]
        constraints = [models.UniqueConstraint(fields=["hit", "position"], name="hititem_unique_position")]

    def __str__(self) -> str:
        return f"item {self.position} of HIT {self.hit_id}"

    @property
    def is_quiz(self) -> bool:
        return self.quiz_question_id is not None


def counted_assignment_q(prefix: str = "") -> models.Q:
    """Done work that aggregation, agreement and payments may use: a site worker's at once, a
    crowd-platform worker's once the platform confirmed the submission. `prefix` reaches an
    assignment through a relation, e.g. "assignments__" from a HIT."""
    return models.Q(**{f"{prefix}status__in": Assignment.DONE}) & (
        models.Q(**{f"{prefix}worker__platform": Worker.SITE})
        | models.Q(**{f"{prefix}platform_confirmed_at__isnull": False})
    )


class AssignmentQuerySet(models.QuerySet):
    """The answer states, named once: every "submitted or approved" goes through `done()`."""

    def done(self) -> "AssignmentQuerySet":
        """Submitted or approved: the work that counts (aggregation, reports, seats, payments)."""
        return self.filter(status__in=Assignment.DONE)

    def live(self, now=None) -> "AssignmentQuerySet":
        """Accepted and still inside the time limit."""
        return self.filter(status=Assignment.ACCEPTED, expires_at__gt=now or timezone.now())

    def holding_a_seat(self, now=None) -> "AssignmentQuerySet":
        """Done or live: the assignments that fill one of a HIT's required seats."""
        now = now or timezone.now()
        return self.filter(
            models.Q(status__in=Assignment.DONE) | models.Q(status=Assignment.ACCEPTED, expires_at__gt=now)
        )

    def counted(self) -> "AssignmentQuerySet":
        """Done and countable (see counted_assignment_q): a platform worker's only once confirmed."""
        return self.filter(counted_assignment_q())

    def pending_confirmation(self) -> "AssignmentQuerySet":
        """Done work of platform workers that the platform has not confirmed yet."""
        return self.done().exclude(worker__platform=Worker.SITE).filter(platform_confirmed_at__isnull=True)


class Assignment(models.Model):
    ACCEPTED, SUBMITTED, APPROVED, REJECTED, EXPIRED = "accepted", "submitted", "approved", "rejected", "expired"
    STATUS_CHOICES = [
        (ACCEPTED, "Accepted"),
        (SUBMITTED, "Submitted"),
        (APPROVED, "Approved"),
        (REJECTED, "Rejected"),
        (EXPIRED, "Expired"),
    ]
    DONE = (SUBMITTED, APPROVED)
    # answers can no longer change: done, or rejected after review
    FINAL = (SUBMITTED, APPROVED, REJECTED)

    hit = models.ForeignKey(HIT, on_delete=models.CASCADE, related_name="assignments")
    worker = models.ForeignKey(Worker, on_delete=models.CASCADE, related_name="assignments")
    status = models.CharField(max_length=10, choices=STATUS_CHOICES, default=ACCEPTED)
    accepted_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)
    quiz_correct = models.PositiveSmallIntegerField(null=True, blank=True)
    completion_code = models.CharField(max_length=32, blank=True)
    # set by labeling.services.confirm_platform_submission; null on a platform worker's done
    # assignment means "pending": it holds its seat but counts toward nothing yet
    platform_confirmed_at = models.DateTimeField(null=True, blank=True)
    # the platform's own id of this work (MTurk assignmentId, Prolific SESSION_ID), bound at the
    # first landing: a later landing with another id cannot take the HIT over
    platform_assignment_id = models.CharField(max_length=64, blank=True)

    objects = AssignmentQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["hit", "worker"], name="assignment_unique_hit_worker")]
        indexes = [models.Index(fields=["hit", "status"])]

    def __str__(self) -> str:
        return f"HIT {self.hit_id} for worker {self.worker_id} ({self.status})"

    @property
    def is_done(self) -> bool:
        return self.status in self.DONE


class Response(models.Model):
    TOP3, OTHER_LIST, OTHER_NEW = "top3", "other-list", "other-new"
    METHOD_CHOICES = [(TOP3, "One of the top 3"), (OTHER_LIST, "Other: from the list"), (OTHER_NEW, "Other: new label")]

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="responses")
    item = models.ForeignKey(HITItem, on_delete=models.CASCADE, related_name="responses")
    label = models.ForeignKey(Label, on_delete=models.PROTECT, null=True, blank=True)
    # what the worker typed through "Other"; crowd files hold answers up to ~90 characters
    new_label_text = models.CharField(max_length=128, blank=True)
    method = models.CharField(max_length=10, choices=METHOD_CHOICES)
    seconds_spent = models.FloatField(default=0)
    answered_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["assignment", "item"], name="response_unique_item")]

    def __str__(self) -> str:
        return f"answer to item {self.item_id} ({self.method})"

    @property
    def answer(self) -> str:
        return self.label.name if self.label_id else self.new_label_text


class AggregatedLabel(models.Model):
    MAJORITY, UNRESOLVED = "majority", "unresolved"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="aggregated_labels")
    dialogue = models.ForeignKey(Dialogue, on_delete=models.CASCADE)
    turn = models.ForeignKey(Turn, on_delete=models.CASCADE)
    label = models.ForeignKey(Label, on_delete=models.PROTECT, null=True, blank=True)
    label_text = models.CharField(max_length=128, blank=True, help_text="the winning answer as given")
    status = models.CharField(max_length=10, default=UNRESOLVED)
    votes = models.JSONField(default=dict)
    answer_count = models.PositiveSmallIntegerField(default=0)
    agreement = models.FloatField(null=True, blank=True)
    dawid_skene_label = models.CharField(max_length=128, blank=True)
    dawid_skene_confidence = models.FloatField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "turn"], name="aggregated_unique_turn")]

    def __str__(self) -> str:
        return f"{self.status} for turn {self.turn_id} in campaign {self.campaign_id}"


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

    class Meta:
        constraints = [models.UniqueConstraint(fields=["assignment", "kind"], name="payment_unique_assignment_kind")]

    def __str__(self) -> str:
        return f"{self.kind} {self.amount} for assignment {self.assignment_id}"
