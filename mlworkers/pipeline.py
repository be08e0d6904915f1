"""The model-in-the-loop jobs, Django side: each reads rows, calls the pure core in `mlworkers.ml`
(or `annotation.readability`) and writes rows back in one transaction per logical unit.

    weak_train         the weak sentence labeler, from the seed set or a text,label file
    weak_apply         Prediction rows of the weak labeler for every turn (resumable, in chunks)
    rank_candidates    prefilter (>= 0.9) + readability, top N per label -> a Campaign's HITs
    gold_split         fix the held-out 20 % of the crowd labels (stratified) before any expansion
    sbert_expand       TurnLabel(sbert) for unlabeled dialogues similar to a gold dialogue
    self_label_rounds  the four rounds of Table 5 for the dialogue classifier and fastText
    run_pipeline       the steps above in order, each one its own JobRun

Every job is declared, with its typed parameters, in `mlworkers/jobs.py` and runs in a Celery
worker (jobs.runtime). No job runs inside a web request: views only queue them.
"""

from __future__ import annotations

import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Count, Exists, F, OuterRef, Subquery

from annotation.models import Dialogue, Label, ModelVersion, Prediction, Turn, TurnLabel
from annotation.papers import (
    CANDIDATES_PER_LABEL,
    PREFILTER_CONFIDENCE,
    SELF_LABEL_MIN_CONFIDENCE,
    SELF_LABELS_PER_LABEL,
)
from annotation.readability import Candidate, RankedCandidate, build_vocabulary
from annotation.readability import rank_candidates as rank_by_readability
from annotation.taxonomy import LABEL_NAMES
from jobs import registry
from jobs.models import JobRun
from jobs.runtime import JobCannotRun, report_progress, run_job
from mlworkers.ml import rounds as rounds_core
from mlworkers.ml.embeddings import EmbeddingStore, dialogue_embedding, normalise_rows, write_embeddings
from mlworkers.naming import stamped, unique_name
from mlworkers.registry import artifact_path, register_model_version

WEAK_SEED = Path(__file__).resolve().parent / "data" / "weak_seed.csv"
EMBEDDINGS_SUBDIR = "embeddings"
DEFAULT_CAMPAIGN_NAME = "Weak-labeled candidates"
SEARCH_CHUNK = 4096  # unlabeled dialogues embedded and searched at a time


class NoGoldLabels(JobCannotRun):
    """Raised by the steps that need crowd gold labels when there are none yet."""


def _progress(job: JobRun) -> Callable[[int, int, str], None]:
    return lambda done, total, message="": report_progress(job, done, total, message)


def label_rows(names: Iterable[str]) -> dict[str, Label]:
    return Label.objects.by_names(names)


def newest_weak_version() -> ModelVersion | None:
    return ModelVersion.objects.filter(kind=ModelVersion.WEAK).order_by("-created_at", "-pk").first()


# --- 1. The weak labeler -----------------------------------------------------------------------


def weak_train(
    job: JobRun,
    data_path: str | None = None,
    model_name: str | None = None,
    fine_tune: bool = False,
    epochs: int | None = None,
    name: str | None = None,
) -> dict[str, Any]:
    """Train the weak labeler on `data_path` (CSV or JSONL of text,label; default the seed set),
    fit its temperature on a validation split and measure it on a test split: the crowd gold's
    when there is gold in both, else sentences of the file held out by a hash of their text
    (`held_out_sentences`). An empty validation or test split refuses the job."""
    from mlworkers.ml.sentence_classifier import WeakLabelerConfig, read_labeled_sentences, train_weak_labeler

    path = Path(data_path) if data_path else WEAK_SEED
    sentences = read_labeled_sentences(path, LABEL_NAMES)
    config = WeakLabelerConfig(
        model_name=model_name or settings.WEAK_LABELER_MODEL, fine_tune=bool(fine_tune), device=settings.ML_DEVICE
    )
    if epochs:
        config.epochs, config.fine_tune_epochs = int(epochs), int(epochs)
    evaluation = _weak_evaluation_sets(sentences, path)
    training = evaluation.pop("train")
    report_progress(job, 0, 1, f"training on {len(training)} sentences from {path.name}")
    labeler = train_weak_labeler(training, LABEL_NAMES, config, progress=_progress(job))
    metrics = measured(
        "the weak labeler",
        lambda texts: labeler.predict_proba(texts),
        evaluation["validation"],
        evaluation["test"],
        evaluated_on=evaluation["source"],
    )
    version = register_model_version(
        ModelVersion.WEAK,
        name or stamped(f"weak labeler ({path.name})"),
        labeler,
        base_model=config.model_name,
        label_names=list(LABEL_NAMES),
        training_data={"file": str(path), "sentences": len(training), "evaluated_on": evaluation["source"]},
        hyperparameters=asdict(config),
        metrics=metrics,
    )
    return {"model_version": version.pk, "sentences": len(training), **headline(metrics)}


def held_out_sentences(sentences: Sequence, fractions: tuple[int, int] = (80, 90)) -> dict[str, list]:
    """Train / validation / test of labeled sentences by a hash of the text (80/10/10): the same
    sentence always falls in the same split."""
    import hashlib

    out: dict[str, list] = {"train": [], "validation": [], "test": []}
    for sentence in sentences:
        bucket = int.from_bytes(hashlib.sha256(f"weak:{sentence.text}".encode()).digest()[:4], "big") % 100
        out["train" if bucket < fractions[0] else "validation" if bucket < fractions[1] else "test"].append(sentence)
    return out


def _weak_evaluation_sets(sentences: Sequence, path: Path) -> dict[str, Any]:
    """The weak labeler reads single turns: the gold's labeled last turns when there are gold
    labels in the validation and test splits, else held-out sentences of the training file."""
    validation, test = gold_labels([TurnLabel.VALIDATION]), gold_labels([TurnLabel.TEST])
    if validation and test:
        texts = dict(Turn.objects.filter(pk__in=[*validation, *test]).values_list("pk", "text"))
        as_pairs = lambda gold: [(texts[pk], label) for pk, label in gold.items()]  # noqa: E731
        return {"train": list(sentences), "validation": as_pairs(validation), "test": as_pairs(test), "source": "gold"}
    held_out = held_out_sentences(sentences)
    pairs = lambda split: [(s.text, s.label) for s in held_out[split]]  # noqa: E731
    return {
        "train": held_out["train"],
        "validation": pairs("validation"),
        "test": pairs("test"),
        "source": f"held-out sentences of {path.name} (no crowd gold yet)",
    }


def measured(
    model: str,
    predict: Callable[[list], np.ndarray],
    validation: Sequence[tuple[Any, str]],
    test: Sequence[tuple[Any, str]],
    *,
    evaluated_on: str = "gold",
) -> dict[str, Any]:
    """Temperature fitted on `validation`, figures on `test` ((input, label) pairs): the metrics a
    ModelVersion stores. An empty split raises JobCannotRun with a one-line reason."""
    from mlworkers.ml.calibration import EmptySplitError, calibrate_and_measure, require_examples

    try:
        require_examples({"validation": len(validation), "test": len(test)}, model)
        index = {name: i for i, name in enumerate(LABEL_NAMES)}
        as_arrays = lambda pairs: (  # noqa: E731
            predict([x for x, _ in pairs]),
            np.array([index[label] for _, label in pairs], dtype=np.int64),
        )
        result = calibrate_and_measure(as_arrays(validation), as_arrays(test), LABEL_NAMES, model)
    except EmptySplitError as error:
        raise JobCannotRun(str(error)) from error
    return {**result, "evaluated_on": evaluated_on}


def headline(metrics: dict[str, Any]) -> dict[str, Any]:
    test = metrics.get("test") or {}
    calibration = test.get("calibration") or {}
    return {
        "top1": round(test.get("top1", 0.0), 4),
        "top3": round(test.get("top3", 0.0), 4),
        "macro_f1": round(test.get("macro_f1", 0.0), 4),
        "ece": round(calibration.get("ece", 0.0), 4),
        "temperature": metrics.get("temperature"),
    }


def load_weak_labeler_for(version: ModelVersion):
    """The one point where a weak ModelVersion's files become a model (tests may patch it)."""
    from mlworkers.ml.sentence_classifier import load_weak_labeler

    return load_weak_labeler(artifact_path(version))


def weak_apply(
    job: JobRun, model_version_id: int | None = None, chunk_size: int = 2000, batch_size: int = 128
) -> dict[str, Any]:
    """A Prediction for every turn that has none from this version, in chunks of `chunk_size`,
    each chunk committed on its own: a killed job started again skips what is done, and the
    unique (turn, version) constraint refuses a duplicate from a second worker."""
    from mlworkers.ml.calibration import apply_temperature
    from mlworkers.ml.sentence_classifier import top_k

    version = _weak_version(model_version_id)
    labeler = load_weak_labeler_for(version)
    labels = label_rows(version.label_names)
    total = Turn.objects.count()
    done = Prediction.objects.filter(model_version=version).count()
    report_progress(job, done, total, f"{done} of {total} turns already labeled")
    pending = Turn.objects.exclude(
        Exists(Prediction.objects.filter(model_version=version, turn=OuterRef("pk")))
    ).order_by("pk")
    written, last_pk = 0, 0
    while chunk := list(pending.filter(pk__gt=last_pk).values_list("pk", "text")[:chunk_size]):
        probabilities = apply_temperature(
            labeler.predict_proba([text for _, text in chunk], batch_size=batch_size), version.temperature
        )
        ranked = top_k(probabilities, version.label_names, k=3)
        rows = [
            Prediction(
                turn_id=turn_id, model_version=version, label=labels[best[0][0]], confidence=best[0][1], top_k=best
            )
            for (turn_id, _), best in zip(chunk, ranked, strict=True)
        ]
        with transaction.atomic():
            Prediction.objects.bulk_create(rows, ignore_conflicts=True)
        written, last_pk = written + len(rows), chunk[-1][0]
        report_progress(job, min(total, done + written), total, f"labeled {done + written} of {total} turns")
    if not written:
        report_progress(job, total, total, f"nothing to label: every turn already has a prediction of {version.name}")
    return {"model_version": version.pk, "predicted": written, "total": total}


def _suggestion_version(model_version_id: int | None) -> ModelVersion:
    """The given version, else the one that makes suggestions now (ModelVersion.objects.suggester)."""
    if model_version_id is not None:
        version = ModelVersion.objects.filter(pk=model_version_id).first()
        if version is None:
            raise JobCannotRun(f"model version {model_version_id} does not exist")
        return version
    version = ModelVersion.objects.suggester()
    if version is None:
        raise JobCannotRun("no suggestion model yet: run weak_train first")
    return version


def _weak_version(model_version_id: int | None) -> ModelVersion:
    if model_version_id is not None:
        version = ModelVersion.objects.filter(pk=model_version_id, kind=ModelVersion.WEAK).first()
        if version is None:
            raise JobCannotRun(f"model version {model_version_id} is not a weak labeler")
        return version
    version = newest_weak_version()
    if version is None:
        raise JobCannotRun("no weak labeler yet: run weak_train first")
    return version


# --- 2. Prefilter, readability ranking, campaign candidates ------------------------------------


def ranked_candidate_dialogues(
    version: ModelVersion,
    *,
    min_confidence: float = PREFILTER_CONFIDENCE,
    per_label: int = CANDIDATES_PER_LABEL,
    language: str = "en",
) -> tuple[list[int], dict[str, int]]:
    """Dialogue ids for the crowd, ordered, and how many per label (see ranked_candidates)."""
    ranked = ranked_candidates(version, min_confidence=min_confidence, per_label=per_label, language=language)
    return [r.candidate.dialogue_id for r in ranked], dict(Counter(r.candidate.label for r in ranked))


def ranked_candidates(
    version: ModelVersion,
    *,
    min_confidence: float = PREFILTER_CONFIDENCE,
    per_label: int = CANDIDATES_PER_LABEL,
    language: str = "en",
) -> list[RankedCandidate]:
    """The crowd's candidates, ordered, each with its label and rank within the label.

    Only dialogues the language identifier gave `language` (the campaign's) are candidates.

    A candidate is a turn the weak labeler labels with confidence >= min_confidence. The crowd
    labels the LAST turn of a dialogue (build_hits freezes the choices for that turn), so a
    candidate is the last turn of its dialogue: the dialogue ending at that turn is what the
    annotator reads. A confident turn in the middle of a dialogue is not a candidate; making it one
    would need a truncated copy of the dialogue, which would count its turns twice in the corpus,
    the exports and the statistics. Dialogues already in a HIT, with a crowd label or in the quiz
    pool (a quiz dialogue is never also work) are skipped.
    The order interleaves the labels by rank (every label's best, then every label's second...),
    so each HIT gets a mix of labels.
    """
    last_position = Turn.objects.filter(dialogue=OuterRef("turn__dialogue")).order_by("-position").values("position")
    rows = (
        Prediction.objects.filter(
            model_version=version,
            confidence__gte=min_confidence,
            turn__dialogue__in=Dialogue.objects.in_language(language).values("pk"),
        )
        .annotate(last_position=Subquery(last_position[:1]))
        .filter(turn__position=F("last_position"))
        .exclude(Exists(TurnLabel.objects.filter(turn=OuterRef("turn"), source=TurnLabel.CROWD)))
        .exclude(turn__dialogue__in=_dialogues_in_hits())
        .exclude(turn__dialogue__in=_quiz_dialogues())
        .values_list("turn_id", "turn__dialogue_id", "turn__text", "label__name", "confidence")
    )
    candidates = [Candidate(t, d, text, label, conf) for t, d, text, label, conf in rows.iterator(chunk_size=5000)]
    vocabulary = build_vocabulary(Turn.objects.values_list("text", flat=True).iterator(chunk_size=5000))
    ranked = rank_by_readability(candidates, vocabulary, min_confidence=min_confidence, per_label=per_label)
    ranked.sort(
        key=lambda r: (r.rank, LABEL_NAMES.index(r.candidate.label) if r.candidate.label in LABEL_NAMES else 99)
    )
    return ranked


def _dialogues_in_hits():
    from labeling.models import HITItem

    return HITItem.objects.filter(dialogue__isnull=False).values("dialogue_id")


def _quiz_dialogues():
    from labeling.models import QuizQuestion

    return QuizQuestion.objects.filter(dialogue__isnull=False).values("dialogue_id")


def rank_candidates(
    job: JobRun,
    model_version_id: int | None = None,
    min_confidence: float = PREFILTER_CONFIDENCE,
    per_label: int = CANDIDATES_PER_LABEL,
    campaign_id: int | None = None,
    campaign_name: str | None = None,
    seed: int | None = 13,
    language: str = "en",
) -> dict[str, Any]:
    """Rank the candidates in `language` (an existing campaign's own language wins) by the
    suggestion model's calibrated confidence (the given version, else the one suggesting now);
    with a campaign (id or a new name) build its HITs from them."""
    from labeling.hits import build_hits
    from labeling.models import Campaign

    version = _suggestion_version(model_version_id)
    if campaign_id:
        language = Campaign.objects.values_list("language", flat=True).get(pk=campaign_id)
    report_progress(job, 0, 2, "ranking candidates by readability")
    dialogue_ids, per_label_counts = ranked_candidate_dialogues(
        version, min_confidence=float(min_confidence), per_label=int(per_label), language=language
    )
    result: dict[str, Any] = {
        "language": language,
        "model_version": version.pk,
        "candidates": len(dialogue_ids),
        "per_label": per_label_counts,
    }
    if (campaign_id or campaign_name) and not dialogue_ids:
        # an empty campaign would only be clutter: say why there is none instead
        note = NO_CANDIDATES + (
            f": no HITs added to campaign {campaign_id}" if campaign_id else ": no campaign created"
        )
        result.update(campaign=campaign_id, hits=0, note=note)
    elif campaign_id or campaign_name:
        with transaction.atomic():
            campaign = (
                Campaign.objects.get(pk=campaign_id) if campaign_id else _new_campaign(campaign_name, job, language)
            )
            order = {pk: i for i, pk in enumerate(dialogue_ids)}
            dialogues = sorted(Dialogue.objects.filter(pk__in=dialogue_ids), key=lambda d: order[d.pk])
            hits = build_hits(campaign, dialogues, seed=seed, suggester=version) if dialogues else []
        result.update(campaign=campaign.pk, campaign_name=campaign.name, hits=len(hits))
    result["dialogue_ids"] = dialogue_ids
    report_progress(job, 2, 2, _ranking_message(result))
    return result


NO_CANDIDATES = "no candidates (no last turn at or above the prefilter outside a HIT)"


def _ranking_message(result: dict[str, Any]) -> str:
    if result.get("note"):
        return result["note"]
    if result.get("campaign_name"):
        return f"{result['candidates']} candidates, {result['hits']} HITs in {result['campaign_name']!r}"
    return f"{result['candidates']} candidates"


def _new_campaign(name: str, job: JobRun, language: str = "en"):
    from labeling.campaigns import create_campaign
    from labeling.models import Campaign

    # a name already taken (a re-run) carries the time, then " #2", ... if that is taken too
    taken = lambda candidate: Campaign.objects.filter(name=candidate).exists()  # noqa: E731
    name = name.strip()
    return create_campaign(
        unique_name(stamped(name) if taken(name) else name, taken),
        language=language,
        description="Candidates ranked by the weak labeler and readability.",
        created_by=job.created_by,
    )


# --- 3. Gold split, embeddings, SBERT expansion --------------------------------------------------


def gold_split(job: JobRun | None = None) -> dict[str, Any]:
    """Make sure every dialogue has its stored split (`Dialogue.objects.assign_splits`, the one
    writer; ingest sets it already) and report how the crowd gold falls. A split never changes
    once stored, so the test split is fixed before any expansion and stays fixed."""
    assigned = Dialogue.objects.assign_splits()
    gold = (
        TurnLabel.objects.filter(source=TurnLabel.CROWD)
        .values("turn__dialogue__split")
        .annotate(n=Count("turn__dialogue", distinct=True))
    )
    return {
        "assigned": {name: n for name, n in assigned.items() if n},
        "gold_dialogues": {row["turn__dialogue__split"]: row["n"] for row in gold},
    }


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "model"


def turn_embedding_store(model_name: str | None = None, progress=None) -> EmbeddingStore:
    """Embeddings of every turn under MEDIA_ROOT/embeddings/<model>/, computed when the stored ids
    are not exactly the corpus's turns (a new import recomputes them all)."""
    from mlworkers.ml import loading

    model_name = model_name or settings.ENCODER_MODEL
    store = EmbeddingStore(Path(settings.MEDIA_ROOT) / EMBEDDINGS_SUBDIR / _slug(model_name))
    turn_ids = np.fromiter(Turn.objects.order_by("pk").values_list("pk", flat=True), dtype=np.int64)
    if store.exists() and np.array_equal(np.load(store.ids_path), turn_ids):
        return store
    encoder = loading.load_sentence_transformer(model_name, device=loading.pick_device(settings.ML_DEVICE))
    return write_embeddings(
        store,
        turn_ids,
        _turn_texts(),
        lambda chunk: encoder.encode(chunk, batch_size=128, convert_to_numpy=True),
        _embedding_dimension(encoder),
        progress=progress,
    )


def _turn_texts(chunk_size: int = 4096) -> Iterable[str]:
    """Every turn's text in pk order, a page at a time (keyset): no cursor stays open while a chunk
    is encoded, so the job's heartbeat and progress writes never wait on it (SQLite would lock)."""
    last_pk = 0
    while page := list(Turn.objects.filter(pk__gt=last_pk).order_by("pk").values_list("pk", "text")[:chunk_size]):
        yield from (text for _, text in page)
        last_pk = page[-1][0]


def _embedding_dimension(encoder) -> int:
    # sentence-transformers renamed the method; accept both spellings.
    method = getattr(encoder, "get_embedding_dimension", None) or encoder.get_sentence_embedding_dimension
    return int(method())


class DialogueVectors:
    """Decayed dialogue embeddings looked up by target turn id: the target turn and the turns of
    its dialogue before it, last heaviest. The turn vectors stay memory-mapped and nothing is kept
    between calls, so looking up a corpus chunk by chunk holds one chunk at a time."""

    def __init__(self, store: EmbeddingStore):
        self.turn_ids, self.vectors = store.load()

    def histories(self, target_turn_ids: Iterable[int]) -> dict[int, list[int]]:
        """target turn id -> the turn ids of its dialogue up to it, in order."""
        target_rows = Turn.objects.filter(pk__in=list(target_turn_ids)).values_list("pk", "dialogue_id", "position")
        wanted = defaultdict(list)
        for pk, dialogue_id, position in target_rows:
            wanted[dialogue_id].append((position, pk))
        turns = Turn.objects.filter(dialogue_id__in=list(wanted)).order_by("dialogue_id", "position")
        by_dialogue = defaultdict(list)
        for pk, dialogue_id, position in turns.values_list("pk", "dialogue_id", "position").iterator(chunk_size=5000):
            by_dialogue[dialogue_id].append((position, pk))
        return {
            pk: [t for p, t in by_dialogue[dialogue_id] if p <= position]
            for dialogue_id, targets_here in wanted.items()
            for position, pk in targets_here
        }

    def __call__(self, target_turn_ids: Sequence[int]) -> np.ndarray:
        history = self.histories(target_turn_ids)
        out = np.zeros((len(target_turn_ids), self.vectors.shape[1]), dtype=np.float32)
        for index, target in enumerate(target_turn_ids):
            rows = np.searchsorted(self.turn_ids, history[target])
            out[index] = dialogue_embedding(self.vectors[rows])
        return normalise_rows(out)


def dialogue_items(turn_ids: Sequence[int], labels: dict[int, str] | None = None) -> list[rounds_core.Item]:
    """Items for target turns: the dialogue's turns up to the target, chronological."""
    targets = dict(Turn.objects.filter(pk__in=list(turn_ids)).values_list("pk", "position"))
    dialogue_of = dict(Turn.objects.filter(pk__in=list(turn_ids)).values_list("pk", "dialogue_id"))
    texts = defaultdict(list)
    rows = Turn.objects.filter(dialogue_id__in=set(dialogue_of.values())).order_by("dialogue_id", "position")
    for dialogue_id, position, text in rows.values_list("dialogue_id", "position", "text").iterator(chunk_size=5000):
        texts[dialogue_id].append((position, text))
    items = []
    for pk in turn_ids:
        history = tuple(text for position, text in texts[dialogue_of[pk]] if position <= targets[pk])
        items.append(rounds_core.Item(pk, history, (labels or {}).get(pk)))
    return items


class DialoguePool:
    """The unlabeled dialogues of the rounds (a `rounds.Pool`): their target turn ids, read once,
    and their texts read `config.chunk_size` at a time when the rounds ask."""

    def __init__(self, target_turn_ids: Sequence[int]):
        self.target_turn_ids = np.asarray(target_turn_ids, dtype=np.int64)

    def all_keys(self) -> np.ndarray:
        return self.target_turn_ids

    def read(self, keys: Sequence[int]) -> list[rounds_core.Item]:
        return dialogue_items([int(key) for key in keys])


def unlabeled_targets() -> list[int]:
    """The last turn of every training-split dialogue none of whose turns has any TurnLabel: SBERT
    and self labels are training data, so a validation or test dialogue never gets one."""
    last_position = Turn.objects.filter(dialogue=OuterRef("dialogue")).order_by("-position").values("position")[:1]
    labeled = TurnLabel.objects.filter(turn__dialogue=OuterRef("dialogue"))
    return list(
        Turn.objects.filter(position=Subquery(last_position), dialogue__split=TurnLabel.TRAIN)
        .exclude(Exists(labeled))
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def gold_labels(split: Sequence[str]) -> dict[int, str]:
    rows = TurnLabel.objects.filter(source=TurnLabel.CROWD, turn__dialogue__split__in=list(split)).values_list(
        "turn_id", "label__name"
    )
    return dict(rows)


def crowd_votes(splits: Sequence[str]) -> dict[int, tuple[str, ...]]:
    """The workers' answers among the 41 labels for every aggregated turn of a dialogue in `splits`
    (turn id -> one name per answer, most voted first, ties by name), from the campaigns' aggregation; answers
    typed through "Other" that are no label are left out. A turn aggregated in several campaigns
    keeps the newest aggregation's answers."""
    from labeling.models import AggregatedLabel

    known = set(LABEL_NAMES)
    rows = (
        AggregatedLabel.objects.filter(turn__dialogue__split__in=list(splits))
        .order_by("turn_id", "-updated_at", "-pk")
        .values_list("turn_id", "votes")
    )
    votes: dict[int, tuple[str, ...]] = {}
    for turn_id, counts in rows.iterator(chunk_size=5000):
        if turn_id in votes:
            continue  # an older aggregation of the same turn
        # most voted first, ties by name (a jsonb object keeps no order)
        ranked = sorted((counts or {}).items(), key=lambda pair: (-int(pair[1]), pair[0]))
        names = tuple(name for name, count in ranked if name in known for _ in range(int(count)))
        if names:
            votes[turn_id] = names
    return votes


def no_majority_items(votes: dict[int, tuple[str, ...]]) -> list[rounds_core.Item]:
    """Training-split turns the crowd answered without a 2-of-3 majority (no crowd label): items
    without a label, for training on their votes alone."""
    gold = set(gold_labels([TurnLabel.TRAIN]))
    in_train = set(
        Turn.objects.filter(pk__in=list(votes), dialogue__split=TurnLabel.TRAIN).values_list("pk", flat=True)
    )
    return dialogue_items(sorted(key for key in votes if key in in_train and key not in gold))


def save_new_labels(new_labels: Sequence[rounds_core.NewLabel]) -> int:
    """TurnLabel rows for SBERT and self labels, all in one transaction (nothing half-saved)."""
    labels = label_rows({n.label for n in new_labels})
    dialogue_of = dict(
        Turn.objects.filter(pk__in={n.source_key for n in new_labels if n.source_key}).values_list("pk", "dialogue_id")
    )
    rows = []
    for new in new_labels:
        provenance: dict[str, Any] = {"round": new.round}
        if new.source == rounds_core.SBERT:
            provenance.update(
                source_dialogue=dialogue_of.get(new.source_key),
                source_turn=new.source_key,
                similarity=round(float(new.similarity), 6),
            )
        rows.append(
            TurnLabel(
                turn_id=new.key,
                label=labels[new.label],
                source=new.source,
                confidence=new.confidence,
                provenance=provenance,
            )
        )
    with transaction.atomic():
        created = TurnLabel.objects.bulk_create(rows, ignore_conflicts=True)
    return len(created)


def sbert_expand(
    job: JobRun, threshold: float | None = None, round_number: int = 1, method: str = "faiss"
) -> dict[str, Any]:
    """Every unlabeled dialogue at or above `threshold` (empty: calibrated to the encoder, else the paper's)
    of a gold training dialogue takes its label on its last turn (most similar wins; never test gold)."""
    from mlworkers.expansion_calibration import expansion_threshold
    from mlworkers.ml.similarity import SEARCHERS

    chosen = expansion_threshold(threshold)
    gold_split(job)
    gold = gold_labels([TurnLabel.TRAIN, TurnLabel.VALIDATION])
    if not gold:
        raise NoGoldLabels("no crowd gold labels yet: aggregate a campaign first")
    store = turn_embedding_store(progress=lambda d, t: report_progress(job, d, t, f"embedding turns {d}/{t}"))
    targets = unlabeled_targets()
    expand = rounds_core.vector_expander(DialogueVectors(store), search=SEARCHERS[method])
    sources = [rounds_core.Item(k, (), v) for k, v in gold.items()]
    report_progress(job, 0, 1, f"searching {len(targets)} unlabeled dialogues against {len(sources)} gold")
    matches = []
    for start in range(0, len(targets), SEARCH_CHUNK):  # one chunk's dialogue vectors at a time
        candidates = [rounds_core.Item(k, ()) for k in targets[start : start + SEARCH_CHUNK]]
        matches += expand(sources, candidates, chosen.value)
    new = [
        rounds_core.NewLabel(key, gold[source], rounds_core.SBERT, int(round_number), similarity, source, similarity)
        for key, source, similarity in matches
    ]
    created = save_new_labels(new) if new else 0
    found = f"{created} dialogues labeled by similarity" if created else "no unlabeled dialogue matched: nothing saved"
    report_progress(job, 1, 1, f"{found} ({chosen.note()})")
    return {"labeled": created, "gold_sources": len(sources), "unlabeled": len(targets), **chosen.as_result()}


# --- 5. The rounds -----------------------------------------------------------------------------


RECIPES = ("measured", "paper")


def dialogue_classifier_learner(
    epochs: int,
    validation: list[rounds_core.Item],
    lr: float | None = None,
    head_lr: float | None = None,
    recipe: str = "measured",
    votes: dict[int, tuple[str, ...]] | None = None,
    no_majority: Sequence[rounds_core.Item] = (),
) -> rounds_core.Learner:
    """The dialogue classifier as a rounds learner. `recipe` "paper" is TrainConfig's defaults (hard
    majority targets); "measured" is `MEASURED_RECIPE` (bench/classifier_edos.py): each gold item
    trains on its workers' `votes` (turn id -> the answers among the labels), and the `no_majority`
    items (training split, votes only) join every round's training set. lr / head_lr override both."""
    from mlworkers.ml import dialogue_classifier as dc

    if recipe not in RECIPES:
        raise ValueError(f"recipe={recipe!r} must be one of {', '.join(RECIPES)}")
    values = dict(dc.MEASURED_RECIPE) if recipe == "measured" else {}
    values.update({"lr": float(lr)} if lr else {})
    values.update({"head_lr": float(head_lr)} if head_lr else {})
    config = dc.TrainConfig(
        base_model=settings.CLASSIFIER_MODEL, epochs=int(epochs), device=settings.ML_DEVICE, **values
    )
    votes = votes if recipe == "measured" else {}
    extra = list(no_majority) if recipe == "measured" else []

    def as_examples(items: Iterable[rounds_core.Item]) -> list:
        return [dc.DialogueExample(list(i.turns), i.label, (votes or {}).get(i.key, ())) for i in items]

    return rounds_core.Learner(
        name="dialogue",
        train=lambda items: dc.train(as_examples([*items, *extra]), as_examples(validation), list(LABEL_NAMES), config),
        predict_proba=lambda model, items: dc.predict_proba(model, as_examples(items)),
    )


def fasttext_learner() -> rounds_core.Learner:
    from mlworkers.ml import fasttext_baseline as ft

    return rounds_core.Learner(
        name="fasttext",
        train=lambda items: ft.train_fasttext([i.turns for i in items], [i.label for i in items], list(LABEL_NAMES)),
        predict_proba=lambda model, items: model.predict_proba([i.turns for i in items]),
    )


def self_label_rounds(
    job: JobRun,
    epochs: int = 2,
    lr: float | None = None,
    head_lr: float | None = None,
    first_threshold: float | None = None,
    second_threshold: float | None = None,
    self_per_label: int = SELF_LABELS_PER_LABEL,
    self_min_confidence: float = SELF_LABEL_MIN_CONFIDENCE,
    method: str = "faiss",
    chunk_size: int = 2000,
    recipe: str = "measured",
) -> dict[str, Any]:
    """Base -> +SBERT -> +self-labeled -> +SBERT(self), both learners scored on the fixed test split
    every round; registers the last round's dialogue classifier and fastText model versions.
    The dialogue classifier trains with `recipe` (see `dialogue_classifier_learner`): "measured"
    learns from every worker's answer, the training-split dialogues with no majority included.
    The unlabeled dialogues are read `chunk_size` at a time; the result reports the job's peak
    resident memory (`peak_rss_mb`). Empty thresholds: the encoder's calibration's (the paper recipe: 0.92, 0.9)."""
    from mlworkers.expansion_calibration import rounds_thresholds
    from mlworkers.ml.memory import PeakMemory

    first_threshold, second_threshold = rounds_thresholds(first_threshold, second_threshold, paper=recipe == "paper")
    with PeakMemory() as peak:
        result = _self_label_rounds(
            job, epochs, first_threshold, second_threshold, self_per_label, self_min_confidence, method, chunk_size,
            lr=lr, head_lr=head_lr, recipe=recipe,
        )  # fmt: skip
    result.update(peak.as_result())
    report_progress(job, 4, 4, f"rounds done; peak memory {peak.megabytes} MB")
    return result


def _self_label_rounds(
    job, epochs, first_threshold, second_threshold, self_per_label, self_min_confidence, method, chunk_size,
    lr=None, head_lr=None, recipe="measured",
) -> dict[str, Any]:  # fmt: skip
    from mlworkers.ml.similarity import SEARCHERS

    gold_split(job)
    train_gold, test_gold = gold_labels([TurnLabel.TRAIN]), gold_labels([TurnLabel.TEST])
    validation_gold = gold_labels([TurnLabel.VALIDATION])
    if not train_gold or not validation_gold or not test_gold:
        # no validation: no epoch could be chosen; no test: every figure would be a meaningless 0.0
        raise NoGoldLabels("the rounds need crowd gold labels in the train, validation and test splits")
    store = turn_embedding_store(progress=lambda d, t: report_progress(job, d, t, f"embedding turns {d}/{t}"))
    # the workers' answers: soft targets for the gold, and the no-majority dialogues as extra training
    votes = crowd_votes([TurnLabel.TRAIN]) if recipe == "measured" else {}
    no_majority = no_majority_items(votes)
    validation_items = dialogue_items(list(validation_gold), validation_gold)
    learners = [
        dialogue_classifier_learner(epochs, validation_items, lr, head_lr, recipe, votes, no_majority),
        fasttext_learner(),
    ]
    config = rounds_core.RoundsConfig(
        label_names=list(LABEL_NAMES),
        first_threshold=first_threshold.value,
        second_threshold=second_threshold.value,
        expansion_notes={2: first_threshold.as_result(), 4: second_threshold.as_result()},
        self_per_label=self_per_label,
        self_min_confidence=self_min_confidence,
        chunk_size=int(chunk_size),
    )
    test_items = dialogue_items(list(test_gold), test_gold)
    outcome = rounds_core.run_rounds(
        dialogue_items(list(train_gold), train_gold),
        test_items,
        # a no-majority dialogue trains on its votes: it never takes an SBERT or self label as well
        DialoguePool(sorted(set(unlabeled_targets()) - {item.key for item in no_majority})),
        learners,
        rounds_core.vector_expander(DialogueVectors(store), search=SEARCHERS[method]),
        config,
        progress=_progress(job),
    )
    calibrated = {
        learner.name: _measured_learner(learner, outcome.models[learner.name], validation_items, test_items)
        for learner in learners
    }
    crowd = {"recipe": recipe, "gold_with_votes": len(set(votes) & set(train_gold)), "no_majority": len(no_majority)}
    return _save_rounds(job, outcome, calibrated, crowd)


def _measured_learner(learner: rounds_core.Learner, model, validation, test) -> dict[str, Any]:
    """The last round's model: temperature on the validation gold, figures on the test gold."""
    by_key = {item.key: item for item in [*validation, *test]}
    return measured(
        f"the {learner.name} model",
        lambda keys: learner.predict_proba(model, [by_key[k] for k in keys]),
        [(item.key, item.label) for item in validation],
        [(item.key, item.label) for item in test],
    )


def _save_rounds(
    job: JobRun, outcome: rounds_core.RoundsOutcome, calibrated: dict[str, dict[str, Any]], crowd: dict[str, Any]
) -> dict[str, Any]:
    table = outcome.table()
    last = outcome.rounds[-1]
    training = {"job": job.pk, "rounds": table, **crowd}
    dialogue_version = register_model_version(
        ModelVersion.DIALOGUE,
        stamped(f"dialogue classifier, round {last.round} ({last.name})"),
        outcome.models["dialogue"],
        training_data=training,
        metrics={**calibrated["dialogue"], "rounds": table},
    )
    fasttext_version = register_model_version(
        ModelVersion.FASTTEXT,
        stamped(f"fastText, round {last.round} ({last.name})"),
        outcome.models["fasttext"],
        base_model="fasttext",
        label_names=list(LABEL_NAMES),
        training_data=training,
        metrics={**calibrated["fasttext"], "rounds": table},
    )
    created = save_new_labels(outcome.new_labels)
    return {
        "table": table,
        "model_version": dialogue_version.pk,
        "fasttext_version": fasttext_version.pk,
        "fasttext_bytes": _folder_bytes(artifact_path(fasttext_version)),
        "new_labels": created,
        "by_source": dict(Counter(n.source for n in outcome.new_labels)),
        **crowd,
    }


def _folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


# --- 6. The chain ------------------------------------------------------------------------------

STEPS = (
    "weak_train",
    "weak_apply",
    "suggest_train",
    "rank_candidates",
    "sbert_expand",
    "self_label_rounds",
    "bulk_annotate",
)
NEEDS_GOLD = {"suggest_train", "sbert_expand", "self_label_rounds", "bulk_annotate"}


def _step_parameters(step: str, options: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    if step == "weak_train":
        chosen = {k: options[k] for k in ("data_path", "model_name", "fine_tune") if options.get(k)}
        return chosen | ({"epochs": options["weak_epochs"]} if options.get("weak_epochs") else {})
    if step == "weak_apply":
        return {"model_version_id": outputs.get("weak_version")}
    if step == "rank_candidates":
        keys = ("min_confidence", "per_label", "campaign_name", "campaign_id")
        chosen = {k: options[k] for k in keys if options.get(k) is not None}
        if chosen.get("campaign_name") == DEFAULT_CAMPAIGN_NAME:  # a generated name says when it was made
            chosen["campaign_name"] = stamped(DEFAULT_CAMPAIGN_NAME)
        # empty: the model suggesting now (gold-trained once there is gold, else the newest weak labeler)
        version = outputs.get("suggest_version")
        return ({"model_version_id": version} if version else {}) | chosen
    if step == "self_label_rounds":
        return {k: options[k] for k in ("epochs", "recipe") if options.get(k)}
    if step == "bulk_annotate":
        return {"model_version_id": _chosen_dialogue_version(outputs)}
    return {}


def run_steps(
    steps: Sequence[str],
    options: dict[str, Any] | None = None,
    *,
    stdout: TextIO | None = None,
    user=None,
    on_step: Callable[[int, str], None] | None = None,
) -> list[JobRun]:
    """Run `steps` in order in this process, each as its own JobRun; a failure stops the chain
    (the error is on the failed JobRun). Steps that need gold labels are skipped while there are none."""
    options, outputs, done = options or {}, {}, []
    say = (lambda text: stdout.write(text + "\n")) if stdout else (lambda text: None)
    unknown = [s for s in steps if s not in STEPS]
    if unknown:
        raise ValueError(f"unknown steps {unknown}; known: {', '.join(STEPS)}")
    for index, step in enumerate(steps, start=1):
        skipped = _why_skip(step, outputs)
        if skipped:
            say(f"- {step}: skipped, {skipped}")
        else:
            job = _run_step(step, _step_parameters(step, options, outputs), user, say)
            done.append(job)
            outputs.update(_outputs_of(step, job.result))
        if on_step:
            on_step(index, step)
    return done


def _why_skip(step: str, outputs: dict[str, Any]) -> str:
    if step in NEEDS_GOLD and not TurnLabel.objects.filter(source=TurnLabel.CROWD).exists():
        return "no crowd gold labels yet (aggregate a campaign first)"
    if step == "bulk_annotate" and _chosen_dialogue_version(outputs) is None:
        return "no dialogue classifier yet (run self_label_rounds first)"
    return ""


def _run_step(step: str, parameters: dict[str, Any], user, say) -> JobRun:
    """One step as its own JobRun, run here, inside the worker running the chain."""
    job = JobRun.objects.create(kind=step, parameters=registry.get(step).validate(parameters), created_by=user)
    started = time.perf_counter()
    say(f"- {step} (job #{job.pk}) ...")
    try:
        result = run_job(job.pk)
    except Exception as error:
        say(f"  failed: {type(error).__name__}: {error}")
        raise
    job.refresh_from_db()
    if job.status != JobRun.SUCCEEDED:
        raise JobCannotRun(f"step {step} (job #{job.pk}) {job.status}: {job.error or job.message}")
    say(f"  done in {time.perf_counter() - started:.1f} s: {job.message or _summary(result)}")
    return job


def _chosen_dialogue_version(outputs: dict[str, Any]) -> int | None:
    """The classifier this run's rounds produced, else the newest dialogue classifier."""
    if "dialogue_version" in outputs:
        return outputs["dialogue_version"]
    newest = ModelVersion.objects.filter(kind=ModelVersion.DIALOGUE).order_by("-created_at", "-pk").first()
    return newest.pk if newest else None


def _outputs_of(step: str, result: dict[str, Any]) -> dict[str, Any]:
    if step == "weak_train":
        return {"weak_version": result["model_version"]}
    if step == "suggest_train":
        return {"suggest_version": result["model_version"]}
    if step == "self_label_rounds":
        return {"dialogue_version": result["model_version"]}
    return {}


def _summary(result: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in result.items() if isinstance(v, int | float | str))[:200]


def run_pipeline(job: JobRun, steps: Sequence[str] | None = None, **options) -> dict[str, Any]:
    """The chain as one job: each step its own JobRun, run inside this worker one after another
    (queuing them would deadlock a worker with concurrency 1 waiting on itself)."""
    steps = list(steps or STEPS)
    log: list[str] = []

    def note(text: str) -> None:
        log.append(text.strip())
        report_progress(job, job.progress_done, len(steps), text.strip())

    report_progress(job, 0, len(steps), "starting")
    children = run_steps(
        steps,
        options,
        stdout=_LineWriter(note),
        user=job.created_by,
        on_step=lambda index, step: report_progress(job, index, len(steps), f"{step} done"),
    )
    return {"jobs": [child.pk for child in children], "log": log}


class _LineWriter:
    def __init__(self, note: Callable[[str], None]):
        self.note = note

    def write(self, text: str) -> None:
        if text.strip():
            self.note(text)
