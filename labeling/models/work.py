"""The work: HITs and their screens, a worker's assignment of a HIT seat, the answers and their aggregate."""

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy

from annotation.models import Dialogue, Label, Turn
from labeling.models.campaign import Campaign, QuizQuestion
from labeling.models.people import Worker


class HIT(models.Model):
    REGULAR, TIE_BREAK, FOLLOW_UP, QUALIFICATION = "regular", "tiebreak", "followup", "qualify"
    LOCAL_PREFIX = "local:"  # the external_id of a HIT "published" on this site (labeling.platforms.local)
    # follow-up: one more seat for items a redundancy policy has not settled yet; qualification:
    # quiz items only, one set per seat, feedback after each screen (labeling.services.qualification)
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
    # that take and free seats (labeling.work.seats); what a claim searches, through the partial
    # index below, instead of counting every HIT's assignments. None until saved: save() and
    # labeling.work.hits.write_hits start it at required_workers.
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
        (ACCEPTED, gettext_lazy("Accepted")),
        (SUBMITTED, gettext_lazy("Submitted")),
        (APPROVED, gettext_lazy("Approved")),
        (REJECTED, gettext_lazy("Rejected")),
        (EXPIRED, gettext_lazy("Expired")),
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
    # (HITItem.seat); 0 on a HIT whose items all are shared. Chosen by the claim (labeling.work.seats)
    seat = models.PositiveSmallIntegerField(default=0)
    # taken by a platform identity its platform had not proven (an MTurk landing): done but
    # unconfirmed, a seat (not a phantom place) comes back by itself PLATFORM_UNCONFIRMED_GRACE_MINUTES
    # after its time limit (labeling.actions.claim.expire_stale_assignments), sync or no sync
    unproven = models.BooleanField(default=False)
    # a place beyond the HIT's seats: an MTurk landing on the HIT of ours that its MTurk HIT maps
    # to. MTurk lets only MaxAssignments real workers accept that HIT, so the platform is the gate:
    # the place takes no seat a real worker needs (labeling.work.seats never counts it), and a made-up
    # id's place costs nothing; its answers count, like any platform work, once confirmed
    phantom = models.BooleanField(default=False)

    objects = AssignmentQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["hit", "worker"], name="assignment_unique_hit_worker")]
        indexes = [
            models.Index(fields=["hit", "status"]),
            # expire_stale_assignments, run before every claim, finds the lapsed seats here
            models.Index(fields=["expires_at"], condition=models.Q(status="accepted"), name="assignment_live_expiry"),
            # ... and the seats held by unproven work never confirmed
            models.Index(
                fields=["expires_at"],
                condition=models.Q(
                    status="submitted", unproven=True, phantom=False, platform_confirmed_at__isnull=True
                ),
                name="assignment_unproven_expiry",
            ),
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
    # the interface language the answer was given in (one of settings.LANGUAGES' codes, as the
    # request's active language; "" when unknown: imported answers), so a researcher can check
    # whether the language changes the labels (docs/languages.md)
    language = models.CharField(max_length=16, blank=True, default="", db_default="")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["assignment", "item"], name="response_unique_item")]

    def __str__(self) -> str:
        return f"answer to item {self.item_id} ({self.method})"

    @property
    def answer(self) -> str:
        return self.answer_shown(self.data, self.label.name if self.label_id else None, self.new_label_text)

    @staticmethod
    def answer_shown(data: dict, label_name: str | None, new_label_text: str) -> str:
        """The answer as a worker's pages show it, from its columns (`answer`, or a read of values)."""
        if data:
            return ", ".join(f"{key}: {value}" for key, value in data.items())
        return label_name if label_name is not None else new_label_text


class AggregatedLabel(models.Model):
    # adjudicated: a reviewer chose the label (labeling.services.adjudication); aggregation never changes it
    MAJORITY, UNRESOLVED, ADJUDICATED = "majority", "unresolved", "adjudicated"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="aggregated_labels")
    dialogue = models.ForeignKey(Dialogue, on_delete=models.CASCADE)
    turn = models.ForeignKey(Turn, on_delete=models.CASCADE)
    label = models.ForeignKey(Label, on_delete=models.PROTECT, null=True, blank=True)
    label_text = models.CharField(max_length=128, blank=True, help_text="the winning answer as given")
    status = models.CharField(max_length=12, default=UNRESOLVED)
    votes = models.JSONField(default=dict)
    answer_count = models.PositiveSmallIntegerField(default=0)
    agreement = models.FloatField(null=True, blank=True)
    dawid_skene_label = models.CharField(max_length=128, blank=True)
    dawid_skene_confidence = models.FloatField(null=True, blank=True)
    adjudicated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    adjudicated_at = models.DateTimeField(null=True, blank=True)
    adjudication_reason = models.TextField(blank=True)
    # a reviewer asked for more answers: the item leaves the queue until they come
    sent_back_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "turn"], name="aggregated_unique_turn")]
        # the reviewer role (docs/crowd/adjudication.md): `manage.py grant_reviewer USERNAME`
        permissions = [("adjudicate", "Can settle items of the adjudication queue")]

    def __str__(self) -> str:
        return f"{self.status} for turn {self.turn_id} in campaign {self.campaign_id}"
