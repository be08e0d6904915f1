"""A campaign and its settings, and the secret quiz pool its HITs draw from."""

import secrets
from decimal import Decimal

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from annotation.models import Dialogue, Label
from annotation.papers import DIALOGUES_PER_HIT, QUIZ_BONUS_MARK, QUIZ_ITEMS_PER_HIT, WORKERS_PER_HIT
from labeling.crowd.qualification import quiz_minutes


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
    RUN_HERE, IMPORTED = "here", "imported"
    PROVENANCE_CHOICES = [(RUN_HERE, "Run here (HITs on this site or a platform)"), (IMPORTED, "Imported results")]

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
    # the adjudication queue (labeling.services.adjudication) takes an item whose Dawid-Skene posterior
    # maximum is below this, besides every item without a majority; null: settings.ADJUDICATE_POSTERIOR_BELOW
    adjudicate_posterior_below = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="a reviewer settles items whose Dawid-Skene posterior is below this (empty: the site setting)",
    )
    # the qualification step (labeling.services.qualification): a quiz-only HIT with feedback after each
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
    # the participant's way in and out (labeling.study_flow): consent, instructions, practice, exit
    # survey and their texts per language, checked by labeling.study_flow.config.clean_flow
    study_flow = models.JSONField(default=dict, blank=True, help_text="consent, instructions, practice, survey")
    # sha256 of the crowd-results file a campaign was imported from, so a second import is refused
    source_sha256 = models.CharField(max_length=64, blank=True, db_index=True)
    # where the campaign's answers came from (set once, by create_campaign or an importer): the
    # study report and the dataset card describe only what happened (labeling/reports/study/provenance.py)
    provenance = models.CharField(max_length=8, choices=PROVENANCE_CHOICES, default=RUN_HERE)
    source_format = models.CharField(max_length=32, blank=True, help_text="the importer's format name")
    source_license = models.CharField(
        max_length=64, blank=True, help_text="the imported data's licence, as the Hub names it (cc-by-4.0)"
    )
    source_citation = models.TextField(blank=True, help_text="BibTeX of the imported data's source")
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

    @property
    def qualification_minutes(self) -> int:
        """The qualification quiz's estimated minutes: the paid HIT's per screen, times its items."""
        screens = self.dialogues_per_hit + self.quiz_per_hit
        return quiz_minutes(self.estimated_minutes, screens, self.qualification_items)


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
