"""Thin query helpers: stream database rows into the pure analysis functions.

Rows come from `.values_list(...).iterator(chunk_size=...)` sorted by (dialogue, position), so a
million turns pass through the one-pass functions without being held in memory.
"""

import hashlib
from collections.abc import Iterator

from django.db.models import Count, Max, QuerySet

from annotation.analysis.examples import ExampleFilter
from annotation.analysis.records import EXTENDED, GOLD, SILVER, ExampleTurn, FlowTurn, LabeledTurn
from annotation.models import Label, ModelVersion, Prediction, SubtitleFile, Turn, TurnLabel

CHUNK_SIZE = 5000
SOURCES_OF_KIND = {GOLD: (TurnLabel.CROWD,), EXTENDED: (TurnLabel.SBERT, TurnLabel.SELF)}


class NoModelVersion(LookupError):
    """Silver labels were asked for but no dialogue classifier version exists yet."""


def default_silver_version() -> ModelVersion | None:
    """The newest dialogue-classifier version: silver labels default to it."""
    return ModelVersion.objects.filter(kind=ModelVersion.DIALOGUE).order_by("-created_at", "-pk").first()


def newest_labeling_silver_version() -> ModelVersion | None:
    """The newest dialogue-classifier version that has labeled turns (bulk annotation ran with
    it): a round trained after the bulk annotation has no predictions yet."""
    versions = ModelVersion.objects.filter(kind=ModelVersion.DIALOGUE).order_by("-created_at", "-pk")
    return next((v for v in versions.only("pk")[:50] if Prediction.objects.filter(model_version=v).exists()), None)


def silver_version(model_version_id: int | None) -> ModelVersion | None:
    if model_version_id:
        return ModelVersion.objects.filter(pk=model_version_id).first()
    return default_silver_version()


def labels_of_kind(kind: str, model_version_id: int | None = None) -> QuerySet:
    """TurnLabel rows of gold/extended, or Prediction rows of one model version for silver."""
    if kind == SILVER:
        return Prediction.objects.filter(model_version_id=model_version_id)
    if kind not in SOURCES_OF_KIND:
        raise ValueError(f"unknown kind {kind!r}")
    return TurnLabel.objects.filter(source__in=SOURCES_OF_KIND[kind])


def labeled_turns(kind: str, model_version_id: int | None = None) -> Iterator[LabeledTurn]:
    rows = (
        labels_of_kind(kind, model_version_id)
        .order_by("turn__dialogue_id", "turn__position", "pk")
        .values_list("turn__dialogue_id", "turn__position", "turn__token_count", "label__name")
    )
    return (LabeledTurn(*row) for row in rows.iterator(chunk_size=CHUNK_SIZE))


def corpus_turns() -> Iterator[LabeledTurn]:
    rows = Turn.objects.order_by("dialogue_id", "position").values_list("dialogue_id", "position", "token_count")
    return (LabeledTurn(d, p, t, None) for d, p, t in rows.iterator(chunk_size=CHUNK_SIZE))


def flow_turns(kind: str, model_version_id: int | None = None) -> Iterator[FlowTurn]:
    rows = (
        labels_of_kind(kind, model_version_id)
        .order_by("turn__dialogue_id", "turn__position", "pk")
        .values_list("turn__dialogue_id", "turn__position", "label__name")
    )
    return (FlowTurn(*row) for row in rows.iterator(chunk_size=CHUNK_SIZE))


def label_counts(kind: str, model_version_id: int | None = None) -> dict[str, int]:
    """Turns per label, counted by the database (one GROUP BY, no rows fetched)."""
    rows = labels_of_kind(kind, model_version_id).values_list("label__name").annotate(n=Count("pk")).order_by()
    return dict(rows)


def taxonomy_order() -> list[str]:
    return list(Label.objects.order_by("position", "name").values_list("name", flat=True))


def gap_histograms() -> Iterator[dict]:
    return SubtitleFile.objects.order_by("pk").values_list("cue_gaps", flat=True).iterator(chunk_size=500)


def example_turns(kind: str, wanted: ExampleFilter, model_version_id: int | None, limit: int) -> Iterator[ExampleTurn]:
    """All turns of the first `limit` dialogues that have a label matching `wanted`, labels joined.

    Two queries pick the dialogues and their labels, a third their turns: no query per dialogue.
    """
    matching = labels_of_kind(kind, model_version_id)
    if wanted.label:
        matching = matching.filter(label__in=Label.objects.named(wanted.label))
    if wanted.min_confidence is not None:
        matching = matching.filter(confidence__gte=wanted.min_confidence)
    if wanted.max_confidence is not None:
        matching = matching.filter(confidence__lte=wanted.max_confidence)
    dialogue_ids = list(
        matching.order_by("turn__dialogue_id").values_list("turn__dialogue_id", flat=True).distinct()[:limit]
    )
    labels = {
        turn_id: (label, confidence)
        for turn_id, label, confidence in labels_of_kind(kind, model_version_id)
        .filter(turn__dialogue_id__in=dialogue_ids)
        .order_by("turn_id", "pk")
        .values_list("turn_id", "label__name", "confidence")
    }
    turns = Turn.objects.filter(dialogue_id__in=dialogue_ids).order_by("dialogue_id", "position")
    for turn_id, dialogue_id, position, text in turns.values_list("pk", "dialogue_id", "position", "text"):
        label, confidence = labels.get(turn_id, (None, None))
        yield ExampleTurn(dialogue_id, position, text, label, confidence)


def evaluated_versions() -> QuerySet:
    """Classifiers with evaluation metrics (the dialogue response models have their own page)."""
    return ModelVersion.objects.exclude(metrics={}).exclude(kind=ModelVersion.RESPONSE).order_by("-created_at", "-pk")


def utility_versions() -> QuerySet:
    """The dialogue response models that carry a dataset-utility table, newest first."""
    return ModelVersion.objects.filter(kind=ModelVersion.RESPONSE).order_by("-created_at", "-pk")


def data_version() -> str:
    """A fingerprint of the rows the statistics read (three aggregate queries): any label or turn
    added or removed changes it, so cached statistics never outlive the data they describe."""
    parts = [
        Turn.objects.aggregate(n=Count("pk"), last=Max("pk"), tokens=Max("token_count")),
        TurnLabel.objects.aggregate(n=Count("pk"), last=Max("pk"), at=Max("created_at")),
        Prediction.objects.aggregate(n=Count("pk"), last=Max("pk"), at=Max("created_at")),
    ]
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:32]
