"""The corpus: movies, subtitle files, dialogues and turns; the label taxonomy; every label a turn gets.

Labels from every source meet in two tables: TurnLabel (crowd gold, SBERT-similar, self-labeled)
and Prediction (one row per turn and model version, the silver labels). Exports and statistics
read only these two.
"""

from collections.abc import Iterable

from django.db import models
from django.db.models.functions import Lower
from django.utils.translation import gettext_lazy

from annotation import splits
from annotation.taxonomy import normalise_label_name


class Movie(models.Model):
    title = models.CharField(max_length=300)
    year = models.PositiveSmallIntegerField(null=True, blank=True)
    imdb_id = models.CharField(max_length=20, blank=True, db_index=True)
    genres = models.JSONField(default=list, blank=True)
    language = models.CharField(max_length=16, default="en")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["title", "year"]

    def __str__(self) -> str:
        return f"{self.title} ({self.year})" if self.year else self.title


class SubtitleFile(models.Model):
    SRT = "srt"
    OPUS = "opus-xml"
    FORMAT_CHOICES = [(SRT, "SubRip"), (OPUS, "OpenSubtitles / OPUS XML")]

    movie = models.ForeignKey(Movie, on_delete=models.CASCADE, related_name="subtitle_files")
    name = models.CharField(max_length=500)
    format = models.CharField(max_length=16, choices=FORMAT_CHOICES)
    sha256 = models.CharField(max_length=64, unique=True)
    sentence_count = models.PositiveIntegerField(default=0)
    turn_count = models.PositiveIntegerField(default=0)
    dialogue_count = models.PositiveIntegerField(default=0)
    duplicates_dropped = models.PositiveIntegerField(default=0)
    removed_by_rule = models.JSONField(default=dict, blank=True)
    # histogram of the gaps between adjacent raw cues, the evidence for the dialogue split:
    # {"bin_seconds": 0.5, "max_seconds": 30, "counts": [...], "over_max": n}
    cue_gaps = models.JSONField(default=dict, blank=True)
    encoding = models.CharField(max_length=32, blank=True)
    encoding_reason = models.CharField(max_length=300, blank=True)
    # dialogues stored per language code: {"en": 120, "fr": 3}
    language_counts = models.JSONField(default=dict, blank=True)
    ingested_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name


class DialogueQuerySet(models.QuerySet):
    def in_language(self, language: str) -> "DialogueQuerySet":
        """Dialogues a campaign in `language` (ISO 639-1, e.g. "en") may show: identified as it, or
        never identified ("": made outside ingest and the importers, which all identify)."""
        return self.filter(language__in=[language, ""])

    def language_counts(self) -> list[tuple[str, int]]:
        """(language code, dialogues) most first; "" is a dialogue stored before identification."""
        rows = self.values_list("language").annotate(n=models.Count("pk")).order_by("-n", "language")
        return [(language, n) for language, n in rows]

    def from_source(self, source: str) -> "DialogueQuerySet":
        """Dialogues made by `source` (Dialogue.SUBTITLES, i.e. "", or Dialogue.BOTSTALK)."""
        return self.filter(source=source)

    def source_counts(self) -> list[tuple[str, int]]:
        """(source, dialogues) most first; "" is the subtitle corpus and its imports."""
        rows = self.values_list("source").annotate(n=models.Count("pk")).order_by("-n", "source")
        return [(source, n) for source, n in rows]

    def assign_splits(self) -> dict[str, int]:
        """Store the split of every dialogue here that has none yet (the one writer of
        `Dialogue.split`). A conditional UPDATE per split: a split, once stored, never changes,
        even when another process assigns at the same moment."""
        by_split: dict[str, list[int]] = {name: [] for name in splits.SPLITS}
        for pk, content_hash in self.filter(split="").values_list("pk", "content_hash").iterator(chunk_size=5000):
            by_split[splits.split_for(content_hash)].append(pk)
        assigned = {}
        for name, pks in by_split.items():
            assigned[name] = sum(
                Dialogue.objects.filter(pk__in=pks[at : at + 900], split="").update(split=name)
                for at in range(0, len(pks), 900)
            )
        return assigned


class Dialogue(models.Model):
    """A run of turns with no gap over the split threshold. Imported dialogues have no movie/file.

    `split` (train/validation/test) is assigned when the dialogue is stored and never changes:
    every consumer reads it (annotation/splits.py)."""

    SPLIT_CHOICES = [(name, name) for name in splits.SPLITS]
    # What made the dialogue: "" for subtitles (ingested or imported), "botstalk" for the BotsTalk
    # job's machine-made multi-skill dialogues (their skill contexts in SkillContext).
    SUBTITLES = ""
    BOTSTALK = "botstalk"
    SOURCE_CHOICES = [(SUBTITLES, "Subtitles"), (BOTSTALK, "BotsTalk (machine-made)")]

    movie = models.ForeignKey(Movie, on_delete=models.CASCADE, null=True, blank=True, related_name="dialogues")
    file = models.ForeignKey(SubtitleFile, on_delete=models.CASCADE, null=True, blank=True, related_name="dialogues")
    position = models.PositiveIntegerField(default=0)
    start = models.FloatField(null=True, blank=True, help_text="seconds from the start of the film")
    end = models.FloatField(null=True, blank=True)
    # sha256 of the normalised text of all turns: exact duplicates are refused corpus-wide.
    content_hash = models.CharField(max_length=64, unique=True)
    external_id = models.CharField(max_length=64, blank=True, db_index=True)
    turn_count = models.PositiveSmallIntegerField(default=0)
    split = models.CharField(max_length=10, choices=SPLIT_CHOICES, blank=True, db_index=True)
    # ISO 639-1 code from the language identifier ("und" when too short to tell); "" before ingest set it
    language = models.CharField(max_length=8, blank=True, db_index=True)
    source = models.CharField(max_length=16, choices=SOURCE_CHOICES, blank=True, default=SUBTITLES, db_index=True)

    objects = DialogueQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["file", "position"])]

    def __str__(self) -> str:
        return f"Dialogue {self.pk}"

    def save(self, *args, **kwargs) -> None:
        if not self.split and self.content_hash:
            self.split = splits.split_for(self.content_hash)
        super().save(*args, **kwargs)


class Turn(models.Model):
    dialogue = models.ForeignKey(Dialogue, on_delete=models.CASCADE, related_name="turns")
    position = models.PositiveSmallIntegerField()
    text = models.TextField()
    start = models.FloatField(null=True, blank=True)
    end = models.FloatField(null=True, blank=True)
    token_count = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["dialogue_id", "position"]
        constraints = [models.UniqueConstraint(fields=["dialogue", "position"], name="turn_unique_position")]

    def __str__(self) -> str:
        return self.text[:60]


class LabelQuerySet(models.QuerySet):
    """Label lookups by name, all under one case rule: `taxonomy.normalise_label_name` (runs of
    white space are one space, case is ignored), the rule the unique Lower(name) constraint and
    the aggregation's folding of typed answers follow too."""

    def offered(self) -> "LabelQuerySet":
        """The labels an annotator may pick: active and not merely proposed by the crowd."""
        return self.filter(is_active=True).exclude(kind=Label.PROPOSED)

    def named(self, name: str) -> "LabelQuerySet":
        """The labels called `name` (at most one: names are unique under the rule); a queryset,
        so it can narrow a filter, e.g. `label__in=Label.objects.named(text)`."""
        key = normalise_label_name(name)
        if key.isascii():
            return self.annotate(folded_name=Lower("name")).filter(folded_name=key)
        # SQLite's LOWER folds ASCII letters only: fold other names in Python, the same rule
        return self.filter(pk__in=[label.pk for label in self if normalise_label_name(label.name) == key])

    def by_name(self, name: str) -> "Label | None":
        """The label called `name`, or None."""
        if not normalise_label_name(name):
            return None
        return self.named(name).first()

    def by_names(self, names: Iterable[str]) -> "dict[str, Label]":
        """Each given name that names a label, mapped (as given) to its label; one query."""
        by_key = {normalise_label_name(label.name): label for label in self}
        found = {name: by_key.get(normalise_label_name(name)) for name in names}
        return {name: label for name, label in found.items() if label is not None}


class Label(models.Model):
    EMOTION = "emotion"
    INTENT = "intent"
    NEUTRAL = "neutral"
    PROPOSED = "proposed"
    KIND_CHOICES = [
        (EMOTION, gettext_lazy("Emotion")),
        (INTENT, gettext_lazy("Empathetic response intent")),
        (NEUTRAL, gettext_lazy("Neutral")),
        (PROPOSED, gettext_lazy("Proposed by the crowd")),
    ]

    name = models.CharField(max_length=64)
    kind = models.CharField(max_length=16, choices=KIND_CHOICES)
    description = models.CharField(max_length=300, blank=True)
    example_1 = models.CharField(max_length=300, blank=True)
    example_2 = models.CharField(max_length=300, blank=True)
    # Order in the taxonomy; the 41 core labels keep their classifier index here.
    position = models.PositiveSmallIntegerField(default=1000)
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = LabelQuerySet.as_manager()

    class Meta:
        ordering = ["position", "name"]
        constraints = [models.UniqueConstraint(Lower("name"), name="label_unique_name_ci")]

    def __str__(self) -> str:
        return self.name

    @property
    def examples(self) -> list[str]:
        return [e for e in (self.example_1, self.example_2) if e]


class ModelVersionQuerySet(models.QuerySet):
    def suggester(self) -> "ModelVersion | None":
        """The model whose top 3 the crowd sees: the newest one chosen from gold, else the newest
        weak labeler trained on the seed sentences (the cold start), else None."""
        chosen = self.filter(suggests_since__isnull=False).order_by("-suggests_since", "-pk").first()
        return chosen or self.filter(kind=ModelVersion.WEAK).order_by("-created_at", "-pk").first()


class ModelVersion(models.Model):
    WEAK = "weak"
    DIALOGUE = "dialogue"
    FASTTEXT = "fasttext"
    SKILL = "skill"
    NLI = "nli"
    SUGGESTER = "suggester"
    ENCODER = "encoder"  # no weights of its own: the SBERT encoder's expansion calibration (metrics)
    RESPONSE = "response"
    KIND_CHOICES = [
        (WEAK, "Weak sentence labeler"),
        (DIALOGUE, "Dialogue classifier"),
        (FASTTEXT, "fastText"),
        (SKILL, "Skill classifier"),
        (NLI, "NLI (contradiction) classifier"),
        (SUGGESTER, "Suggestion model (learned from gold)"),
        (ENCODER, "Sentence encoder (expansion calibration)"),
        (RESPONSE, "Dialogue response models (dataset utility, Table 7)"),
    ]

    kind = models.CharField(max_length=16, choices=KIND_CHOICES)
    name = models.CharField(max_length=200)
    base_model = models.CharField(max_length=300, help_text="Hugging Face name or local path")
    label_names = models.JSONField(default=list)
    training_data = models.JSONField(default=dict, blank=True, help_text="ids of what it was trained on")
    hyperparameters = models.JSONField(default=dict, blank=True)
    metrics = models.JSONField(default=dict, blank=True)
    artifact_dir = models.CharField(max_length=500, blank=True, help_text="relative to MEDIA_ROOT")
    # set when the suggest_train job chose this model to make the crowd's suggestions (learned
    # from gold); the newest such model makes them, else the newest weak labeler (the cold start)
    suggests_since = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ModelVersionQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"

    @property
    def temperature(self) -> float:
        """The temperature fitted on the validation split (1.0 for a model measured before it existed)."""
        return float((self.metrics or {}).get("temperature") or 1.0)


class Prediction(models.Model):
    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="predictions")
    model_version = models.ForeignKey(ModelVersion, on_delete=models.CASCADE, related_name="predictions")
    label = models.ForeignKey(Label, on_delete=models.PROTECT, related_name="predictions")
    confidence = models.FloatField()
    # [[label name, probability], ...] best first
    top_k = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["turn", "model_version"], name="prediction_unique_turn_version")]
        indexes = [models.Index(fields=["model_version", "label", "confidence"])]

    def __str__(self) -> str:
        return f"{self.label_id} ({self.confidence:.2f}) for turn {self.turn_id}"


class TurnLabel(models.Model):
    CROWD = "crowd"
    SBERT = "sbert"
    SELF = "self"
    SOURCE_CHOICES = [(CROWD, "Crowd majority (gold)"), (SBERT, "SBERT-similar to gold"), (SELF, "Self-labeled")]
    # the split is the dialogue's (Dialogue.split); these names are kept for the callers
    TRAIN, VALIDATION, TEST = splits.TRAIN, splits.VALIDATION, splits.TEST

    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="labels")
    label = models.ForeignKey(Label, on_delete=models.PROTECT, related_name="turn_labels")
    source = models.CharField(max_length=8, choices=SOURCE_CHOICES)
    confidence = models.FloatField(null=True, blank=True)
    model_version = models.ForeignKey(
        ModelVersion, on_delete=models.SET_NULL, null=True, blank=True, related_name="turn_labels"
    )
    # crowd: {"campaign": id, "votes": {...}, "workers": n, "agreement": x};
    # sbert: {"source_dialogue": id, "similarity": x, "round": n}; self: {"round": n}
    provenance = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["turn", "source"], name="turnlabel_unique_turn_source")]
        indexes = [models.Index(fields=["source", "label"])]

    def __str__(self) -> str:
        return f"{self.source} label {self.label_id} for turn {self.turn_id}"


class SkillContext(models.Model):
    """One piece of a machine-made dialogue's skill context (a persona sentence, a knowledge
    passage, an emotion situation): what its agents were grounded on and what the moderator's
    NLI checked every response against. Never shown to crowd workers."""

    dialogue = models.ForeignKey(Dialogue, on_delete=models.CASCADE, related_name="skill_contexts")
    kind = models.CharField(max_length=32, help_text="context type, e.g. persona, knowledge, emotion")
    position = models.PositiveSmallIntegerField()
    text = models.TextField()

    class Meta:
        ordering = ["dialogue_id", "kind", "position"]
        constraints = [
            models.UniqueConstraint(fields=["dialogue", "kind", "position"], name="skillcontext_unique_position")
        ]

    def __str__(self) -> str:
        return f"{self.kind}: {self.text[:60]}"


class TurnSkillQuerySet(models.QuerySet):
    def generated(self) -> "TurnSkillQuerySet":
        return self.filter(source=TurnSkill.BOTSTALK)

    def classified(self) -> "TurnSkillQuerySet":
        return self.filter(source=TurnSkill.CLASSIFIER)


class TurnSkill(models.Model):
    """A turn's skill distribution from a skill classifier (`model_version`, kind skill).

    Source `botstalk`: written with a generated turn; `skill` is the agent that said it and
    `passed_mic` whether that agent took the mic from the previously active one. Source
    `classifier`: the `skill_label` job's label of any corpus turn; `skill` is the top skill."""

    BOTSTALK = "botstalk"
    CLASSIFIER = "classifier"
    SOURCE_CHOICES = [(BOTSTALK, "BotsTalk agent"), (CLASSIFIER, "Skill classifier")]

    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="skills")
    source = models.CharField(max_length=16, choices=SOURCE_CHOICES)
    model_version = models.ForeignKey(ModelVersion, on_delete=models.CASCADE, related_name="turn_skills")
    skill = models.CharField(max_length=64)
    # {skill: probability}, summing to 1, in the classifier's skill order
    distribution = models.JSONField(default=dict)
    passed_mic = models.BooleanField(null=True, blank=True, help_text="botstalk only")
    # botstalk: {"job": id, "kl_from_previous": x, "candidates_refused": n}
    provenance = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = TurnSkillQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["turn", "source", "model_version"], name="turnskill_unique_turn_source_model"
            )
        ]
        indexes = [models.Index(fields=["model_version", "skill"])]

    def __str__(self) -> str:
        return f"{self.source} skill {self.skill} for turn {self.turn_id}"

    def ordered_distribution(self) -> list[tuple[str, float]]:
        """(skill, p) in the classifier's skill order (PostgreSQL's jsonb does not keep key order)."""
        order = {name: i for i, name in enumerate(self.model_version.label_names)}
        return sorted(self.distribution.items(), key=lambda item: (order.get(item[0], len(order)), item[0]))


from annotation.record.audit_log import AuditEntry  # noqa: E402, F401  (the audit log, a table of this app)
