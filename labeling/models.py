"""The crowd workflow: workers, campaigns, HITs with quiz checkpoints, answers and their aggregate."""

import secrets
from decimal import Decimal

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone

from annotation.models import Dialogue, Label, Turn
from annotation.papers import DIALOGUES_PER_HIT, QUIZ_BONUS_MARK, QUIZ_ITEMS_PER_HIT, WORKERS_PER_HIT


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
    # where a platform worker first landed from: what the landing rate limits count (the address,
    # and its block: an IPv6 address's /PLATFORM_IPV6_PREFIX network, an IPv4 address itself)
    signup_ip = models.GenericIPAddressField(null=True, blank=True)
    signup_network = models.CharField(max_length=64, blank=True)
    signup_campaign = models.ForeignKey("Campaign", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    # A platform landing is a pending identity of its own: the platform's id of the work it came
    # with (MTurk assignmentId, Prolific SESSION_ID) is its key, since the worker id alone proves
    # nothing. "" for the proven worker of a platform id (and for site workers): the row that
    # pending identities are merged into once the platform confirms their submission.
    landing_key = models.CharField(max_length=64, blank=True)
    merged_into = models.ForeignKey("self", on_delete=models.SET_NULL, null=True, blank=True, related_name="landings")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["platform", "external_id", "landing_key"], name="worker_unique_platform_id_landing"
            )
        ]
        indexes = [
            models.Index(fields=["signup_ip", "created_at"]),
            models.Index(fields=["signup_network", "created_at"]),
            models.Index(fields=["signup_campaign", "created_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.external_id} ({self.platform})"

    @property
    def is_blocked(self) -> bool:
        return self.status == self.BLOCKED

    @property
    def is_pending_identity(self) -> bool:
        """A platform landing not yet proven by a confirmed submission (see landing_key)."""
        return bool(self.landing_key) and self.merged_into_id is None


def new_entry_token() -> str:
    """A campaign's secret for its platform links: 32 URL-safe characters (192 random bits)."""
    return secrets.token_urlsafe(24)


# the task type of every campaign made before task types were data (labeling/task_types/)
LAST_TURN_LABEL = "last_turn_label"
REDUNDANCY_CHOICES = [
    ("fixed", "Fixed: workers per HIT answers per item"),
    ("until_agreement", "Until agreement: two answers, one more while no majority"),
    ("model_informed", "Model-informed: one answer where the model is confident"),
]
CURRENCY_CHOICES = [("USD", "US dollar"), ("GBP", "Pound sterling"), ("EUR", "Euro")]


class Campaign(models.Model):
    FLAG, REJECT = "flag", "reject"
    DRAFT, OPEN, PAUSED, CLOSED = "draft", "open", "paused", "closed"
    STATUS_CHOICES = [(DRAFT, "Draft"), (OPEN, "Open"), (PAUSED, "Paused"), (CLOSED, "Closed")]

    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    # a name in labeling.task_types' registry (no `choices`: a new type needs no migration)
    task_type = models.CharField(max_length=32, default=LAST_TURN_LABEL, db_index=True)
    # the type's own settings, checked by its clean_config (pairwise: questions, sources, seed)
    task_config = models.JSONField(default=dict, blank=True)
    labels = models.ManyToManyField(Label, blank=True, related_name="campaigns", help_text="the label set")
    # ISO 639-1: the crowd's language; only dialogues identified as this language become its items
    language = models.CharField(max_length=8, default="en")
    # validators: the form and the API refuse these values with the field's name (never a 500)
    dialogues_per_hit = models.PositiveSmallIntegerField(default=DIALOGUES_PER_HIT, validators=[MinValueValidator(1)])
    quiz_per_hit = models.PositiveSmallIntegerField(default=QUIZ_ITEMS_PER_HIT)
    workers_per_hit = models.PositiveSmallIntegerField(default=WORKERS_PER_HIT, validators=[MinValueValidator(1)])
    reward = models.DecimalField(
        max_digits=8, decimal_places=2, default=Decimal("2.70"), validators=[MinValueValidator(Decimal(0))]
    )
    bonus = models.DecimalField(
        max_digits=8, decimal_places=2, default=Decimal("0.10"), validators=[MinValueValidator(Decimal(0))]
    )
    quiz_pass_mark = models.PositiveSmallIntegerField(
        default=QUIZ_BONUS_MARK, help_text="quiz answers right to earn the bonus"
    )
    time_limit_minutes = models.PositiveIntegerField(default=60, validators=[MinValueValidator(1)])
    # what one HIT takes a careful worker: the hourly rate a platform's minimum pay is checked on
    # (the default reward pays 8.10 an hour at it, above Prolific's documented minimum)
    estimated_minutes = models.PositiveIntegerField(
        default=20,
        validators=[MinValueValidator(1)],
        help_text="minutes one HIT takes a careful worker: the hourly rate checked against the platform's minimum",
    )
    # three label names shown when a dialogue's target turn has no weak-labeler prediction
    fallback_choices = models.JSONField(default=list, blank=True)
    # the model whose top 3 the HITs offer (set by build_hits; null: fallback choices only)
    suggestion_model = models.ForeignKey(
        "annotation.ModelVersion", on_delete=models.SET_NULL, null=True, blank=True, related_name="campaigns"
    )
    tie_breaking = models.BooleanField(default=False)
    tie_break_workers = models.PositiveSmallIntegerField(default=2, validators=[MinValueValidator(1)])
    # how many answers an item gets (labeling.crowd.redundancy): `fixed` buys workers_per_hit per item;
    # the others buy fewer first seats and one follow-up seat at a time until settled or the cap
    redundancy_policy = models.CharField(max_length=16, choices=REDUNDANCY_CHOICES, default="fixed")
    redundancy_cap = models.PositiveSmallIntegerField(
        default=3,
        validators=[MinValueValidator(2), MaxValueValidator(9)],
        help_text="most answers an item may get under until_agreement / model_informed",
    )
    model_threshold = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="model_informed: the suggestion model's calibrated top probability for a single first seat",
    )
    # until_agreement / model_informed: one more seat while the item's Dawid-Skene posterior
    # (over the campaign's answers so far) is below this, still within the cap; null: off
    posterior_below = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="one more answer while the item's Dawid-Skene posterior maximum is below this (empty: off)",
    )
    # the qualification step (labeling.qualification): a quiz-only HIT with feedback after each
    # screen first; paid HITs only for workers who reached the mark (one attempt per campaign)
    qualification_required = models.BooleanField(
        default=False, help_text="workers take a qualification quiz first; only those who pass get paid HITs"
    )
    qualification_items = models.PositiveSmallIntegerField(
        default=QUIZ_ITEMS_PER_HIT,
        validators=[MinValueValidator(1), MaxValueValidator(50)],
        help_text="quiz dialogues in the qualification quiz",
    )
    qualification_mark = models.PositiveSmallIntegerField(
        default=QUIZ_BONUS_MARK,
        validators=[MinValueValidator(1)],
        help_text="quiz answers right to pass the qualification quiz",
    )
    # the platforms pay every HIT and study (Prolific checks its hourly minimum), so the quiz is
    # paid this; its minutes are the paid HIT's estimate per screen times its screens
    qualification_reward = models.DecimalField(
        max_digits=8,
        decimal_places=2,
        default=Decimal("0.70"),
        validators=[MinValueValidator(Decimal(0))],
        help_text="what one qualification quiz pays (a separate HIT or study on a platform)",
    )
    # sha256 of the crowd-results file a campaign was imported from, so a second import is refused
    source_sha256 = models.CharField(max_length=64, blank=True, db_index=True)
    status = models.CharField(max_length=8, choices=STATUS_CHOICES, default=DRAFT)
    # money: rewards, bonuses and the payments page are in this currency (MTurk pays only USD)
    currency = models.CharField(max_length=3, choices=CURRENCY_CHOICES, default="USD")
    # platform sync: work whose quiz mark reaches this is approved on the platform; the rest is
    # rejected or flagged for review, as `below_mark` says (capped at the HIT's quiz screens)
    approval_quiz_mark = models.PositiveSmallIntegerField(
        default=2, help_text="quiz answers right for a platform submission to be approved automatically"
    )
    below_mark = models.CharField(
        max_length=8,
        choices=[("flag", "Flag for review"), ("reject", "Reject on the platform")],
        default="flag",
        help_text="what sync does with platform work below the approval quiz mark",
    )
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
        """The secret pool: real corpus dialogues with a known label, active and not retired."""
        return self.filter(is_active=True, retired_at__isnull=True, dialogue__isnull=False, task_type=LAST_TURN_LABEL)

    def demo_bank(self):
        """The built-in one-turn questions from the source code: for tests only (QUIZ_DEMO_BANK)."""
        return self.filter(
            is_active=True, source=QuizQuestion.BUILTIN, dialogue__isnull=True, task_type=LAST_TURN_LABEL
        )


class QuizQuestion(models.Model):
    """A quiz item. In production a real dialogue of the corpus whose answer is known (unanimous
    crowd gold, or verified by a researcher), shown exactly like a work item; it lives only in the
    database. The BUILTIN one-turn questions of labeling.crowd.quiz_bank serve tests only."""

    BUILTIN, IMPORTED, GENERATED = "builtin", "imported", "generated"

    text = models.TextField(help_text="the turn to label, as shown in feedback")
    dialogue = models.ForeignKey(
        Dialogue, on_delete=models.CASCADE, null=True, blank=True, related_name="quiz_questions"
    )
    # the known answer: a label for last_turn_label; for another task type its `gold` (e.g.
    # pairwise: {"better": "a"}), checked by that type's quiz_correct
    task_type = models.CharField(max_length=32, default=LAST_TURN_LABEL)
    gold_label = models.ForeignKey(
        Label, on_delete=models.PROTECT, null=True, blank=True, related_name="quiz_questions"
    )
    gold = models.JSONField(default=dict, blank=True)
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
    REGULAR, TIE_BREAK, FOLLOW_UP, QUALIFICATION = "regular", "tiebreak", "followup", "qualify"
    # follow-up: one more seat for items a redundancy policy has not settled yet; qualification:
    # quiz items only, one set per seat, feedback after each screen (labeling.qualification)
    KIND_CHOICES = [
        (REGULAR, "Regular"),
        (TIE_BREAK, "Tie-break"),
        (FOLLOW_UP, "Follow-up"),
        (QUALIFICATION, "Qualification"),
    ]

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="hits")
    position = models.PositiveIntegerField(default=0)
    kind = models.CharField(max_length=8, choices=KIND_CHOICES, default=REGULAR)
    required_workers = models.PositiveSmallIntegerField(default=3)
    # required_workers minus the seats held by live or done assignments, kept by the services
    # that take and free seats (labeling.seats); what a claim searches, through the partial
    # index below, instead of counting every HIT's assignments. None until saved: save() and
    # labeling.hits.write_hits start it at required_workers.
    seats_free = models.SmallIntegerField(null=True, blank=True, editable=False)
    external_id = models.CharField(max_length=128, blank=True, help_text="id on a crowd platform once published")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign_id", "position"]
        indexes = [
            # a claim walks this in claim order and stops at the first HIT it may take
            models.Index(
                fields=["campaign", "position", "id"], condition=models.Q(seats_free__gt=0), name="hit_free_seats"
            )
        ]

    def __str__(self) -> str:
        return f"HIT {self.pk} of {self.campaign}"

    def save(self, *args, **kwargs) -> None:
        if self._state.adding and self.seats_free is None:
            self.seats_free = self.required_workers  # a new HIT: every seat free
        super().save(*args, **kwargs)


class HITItem(models.Model):
    """One screen of a HIT: a dialogue to label, or a quiz question that looks just like one."""

    hit = models.ForeignKey(HIT, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveSmallIntegerField()
    dialogue = models.ForeignKey(Dialogue, on_delete=models.CASCADE, null=True, blank=True)
    target_turn = models.ForeignKey(Turn, on_delete=models.CASCADE, null=True, blank=True)
    quiz_question = models.ForeignKey(QuizQuestion, on_delete=models.PROTECT, null=True, blank=True)
    # frozen at build time: the weak labeler's top 3, or the campaign's fallback
    choices = models.JSONField(default=list)
    # what an item of another task type holds (pairwise: both sides and which source is left);
    # read by the server only, never rendered as such
    payload = models.JSONField(default=dict, blank=True)
    # 0: a screen every seat of the HIT sees (a work item); k >= 1: a quiz item only seat k sees,
    # so no two seats of one HIT share a quiz item (what one learns in feedback helps no other)
    seat = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["hit_id", "position", "seat"]
        constraints = [models.UniqueConstraint(fields=["hit", "seat", "position"], name="hititem_unique_seat_position")]

    def __str__(self) -> str:
        return f"item {self.position} of HIT {self.hit_id}"

    @property
    def is_quiz(self) -> bool:
        return self.quiz_question_id is not None


def seat_items_q(seat: int, prefix: str = "") -> models.Q:
    """The HIT items one seat sees: the shared ones (seat 0) and its own quiz items."""
    return models.Q(**{f"{prefix}seat__in": (0, seat)})


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
    # set by labeling.actions.submit.confirm_platform_submission; null on a platform worker's done
    # assignment means "pending": it holds its seat but counts toward nothing yet
    platform_confirmed_at = models.DateTimeField(null=True, blank=True)
    # the platform's own id of this work (MTurk assignmentId, Prolific SESSION_ID), bound at the
    # first landing: a later landing with another id cannot take the HIT over
    platform_assignment_id = models.CharField(max_length=64, blank=True)
    # which of the HIT's seat slots this is: its quiz screens are the HIT's items of this seat
    # (HITItem.seat); 0 on a HIT whose items all are shared. Chosen by the claim (labeling.seats)
    seat = models.PositiveSmallIntegerField(default=0)

    objects = AssignmentQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["hit", "worker"], name="assignment_unique_hit_worker")]
        indexes = [
            models.Index(fields=["hit", "status"]),
            # expire_stale_assignments, run before every claim, finds the lapsed seats here
            models.Index(fields=["expires_at"], condition=models.Q(status="accepted"), name="assignment_live_expiry"),
        ]

    def __str__(self) -> str:
        return f"HIT {self.hit_id} for worker {self.worker_id} ({self.status})"

    @property
    def is_done(self) -> bool:
        return self.status in self.DONE


class Response(models.Model):
    TOP3, OTHER_LIST, OTHER_NEW, STRUCTURED = "top3", "other-list", "other-new", "structured"
    METHOD_CHOICES = [
        (TOP3, "One of the top 3"),
        (OTHER_LIST, "Other: from the list"),
        (OTHER_NEW, "Other: new label"),
        (STRUCTURED, "The task type's own answer (data)"),
    ]

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="responses")
    item = models.ForeignKey(HITItem, on_delete=models.CASCADE, related_name="responses")
    label = models.ForeignKey(Label, on_delete=models.PROTECT, null=True, blank=True)
    # what the worker typed through "Other"; crowd files hold answers up to ~90 characters
    new_label_text = models.CharField(max_length=128, blank=True)
    method = models.CharField(max_length=10, choices=METHOD_CHOICES)
    # a task type's answer other than a label, as its clean_answer returned it (pairwise:
    # {"engagingness": "left", ...}, the side as shown)
    data = models.JSONField(default=dict, blank=True)
    seconds_spent = models.FloatField(default=0)
    answered_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["assignment", "item"], name="response_unique_item")]

    def __str__(self) -> str:
        return f"answer to item {self.item_id} ({self.method})"

    @property
    def answer(self) -> str:
        if self.data:
            return ", ".join(f"{key}: {value}" for key, value in self.data.items())
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
    first_seen_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["publication", "external_id"], name="platform_submission_unique_id")
        ]

    def __str__(self) -> str:
        return f"{self.external_id} on {self.publication.platform} ({self.platform_status})"


class QualificationResult(models.Model):
    """One worker's qualification quiz in one campaign: its score and whether it passed. Written at
    submission by labeling.qualification.record_result (one per worker identity and campaign);
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
