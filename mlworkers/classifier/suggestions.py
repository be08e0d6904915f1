"""The suggestion model learned from crowd gold (job `suggest_train`), Django side.

Once crowd gold exists, the model whose top 3 the crowd sees learns from it: the labeled last
turn with its context. Two kinds of candidate, measured on the gold VALIDATION split (never the
test split) by top-3 hit rate, then macro-F1:
- light heads (logistic regression, a small MLP) over frozen sentence embeddings of the last turn
  and its decayed context (mlworkers.ml.classifier.suggester), trained on the gold train split;
- the newest dialogue classifier (self_label_rounds), when there is one.
The winner gets its temperature fitted on validation and its figures on test (a light head is
registered as a `suggester` ModelVersion; a winning dialogue classifier keeps its own row and
temperature), is marked `suggests_since` (ModelVersion.objects.suggester) and writes a Prediction
for the last turn of every dialogue, which the prefilter and build_hits read. Until then the seed
weak labeler (mlworkers/data/weak_seed.csv) stays the cold start.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone

from annotation.models import Label, ModelVersion, Prediction, Turn, TurnLabel
from annotation.taxonomy import LABEL_NAMES
from jobs.models import JobRun
from jobs.runtime import JobCannotRun, report_progress
from mlworkers.classifier.weak_labeler import headline, measured
from mlworkers.expansion.vectors import DialogueVectors, turn_embedding_store
from mlworkers.gold import NoGoldLabels, dialogue_items, gold_labels, gold_split
from mlworkers.registry import load_dialogue_classifier, register_model_version

APPLY_CHUNK = 5000


class SuggestionFeatures(DialogueVectors):
    """[last turn | decayed context] embeddings looked up by target turn id (mlworkers.ml.classifier.suggester)."""

    def __call__(self, target_turn_ids: Sequence[int]) -> np.ndarray:
        from mlworkers.ml.classifier.suggester import example_features

        target_turn_ids = list(target_turn_ids)
        history = self.histories(target_turn_ids)
        out = np.zeros((len(target_turn_ids), 2 * self.vectors.shape[1]), dtype=np.float32)
        for index, target in enumerate(target_turn_ids):
            out[index] = example_features(self.vectors[np.searchsorted(self.turn_ids, history[target])])
        return out


def suggest_train(job: JobRun, name: str | None = None) -> dict[str, Any]:
    """Train the suggestion model on the crowd gold, pick the best candidate on validation, mark it
    as the suggester and write its calibrated top 3 for every dialogue's last turn."""
    from mlworkers.ml.classifier.suggester import train_best_head

    gold_split(job)
    train, validation, test = (
        gold_labels([split]) for split in (TurnLabel.TRAIN, TurnLabel.VALIDATION, TurnLabel.TEST)
    )
    if not train:
        raise NoGoldLabels("no crowd gold labels in the train split yet: the seed weak labeler stays the suggester")
    empty = [split for split, gold in (("validation", validation), ("test", test)) if not gold]
    if empty:
        raise JobCannotRun(f"suggest_train: the {' and '.join(empty)} gold split is empty (no figure to choose by)")
    store = turn_embedding_store(progress=lambda d, t: report_progress(job, d, t, f"embedding turns {d}/{t}"))
    features = SuggestionFeatures(store)
    index = {label: i for i, label in enumerate(LABEL_NAMES)}
    arrays = lambda gold: (features(list(gold)), np.array([index[v] for v in gold.values()], np.int64))  # noqa: E731
    report_progress(job, 0, 3, f"training light heads on {len(train)} gold dialogues")
    light, scores = train_best_head(arrays(train), arrays(validation), LABEL_NAMES, encoder=settings.ENCODER_MODEL)
    candidates: dict[str, tuple[Callable, ModelVersion | None]] = {
        f"light ({light.head.name})": (lambda ids: light.predict_proba(features(ids)), None)
    }
    dialogue = ModelVersion.objects.filter(kind=ModelVersion.DIALOGUE).order_by("-created_at", "-pk").first()
    if dialogue is not None:
        candidates[f"dialogue classifier #{dialogue.pk}"] = (_dialogue_predictor(dialogue), dialogue)
    report_progress(job, 1, 3, f"choosing among {', '.join(candidates)} on the validation split")
    chosen_name, chosen_scores = _choose(candidates, validation, scores)
    predict, existing = candidates[chosen_name]
    metrics = measured(chosen_name, predict, list(validation.items()), list(test.items()))
    metrics.update(candidates=chosen_scores, chosen=chosen_name)
    version = existing or register_model_version(
        ModelVersion.SUGGESTER,
        name or f"suggestions from gold ({light.head.name}, {len(train)} dialogues)",
        light,
        base_model=settings.ENCODER_MODEL,
        label_names=list(LABEL_NAMES),
        training_data={"job": job.pk, "gold": {"train": len(train), "validation": len(validation), "test": len(test)}},
        metrics=metrics,
    )
    ModelVersion.objects.filter(pk=version.pk).update(suggests_since=timezone.now())
    report_progress(job, 2, 3, f"{chosen_name} suggests; writing its top 3 for every dialogue's last turn")
    written = write_last_turn_predictions(version, predict, temperature=metrics["temperature"])
    report_progress(job, 3, 3, f"{chosen_name}: {written} predictions")
    return {
        "model_version": version.pk,
        "chosen": chosen_name,
        "candidates": chosen_scores,
        "predicted": written,
        **headline(metrics),
        # the full figures as a suggester: a winning dialogue classifier keeps its own row's metrics
        "metrics": metrics,
    }


def _dialogue_predictor(version: ModelVersion) -> Callable[[Sequence[int]], np.ndarray]:
    from mlworkers.ml.classifier import dialogue_classifier as dc
    from mlworkers.ml.classifier.model import DialogueExample

    clf = load_dialogue_classifier(version)
    return lambda ids: dc.predict_proba(clf, [DialogueExample(list(i.turns)) for i in dialogue_items(list(ids))])


def _choose(candidates: dict, validation: dict[int, str], scores: dict) -> tuple[str, dict[str, dict[str, float]]]:
    """Every candidate's validation top-1, top-3 and macro-F1; the best by top-3, then macro-F1."""
    from mlworkers.ml.classifier.calibration import measure

    index = {label: i for i, label in enumerate(LABEL_NAMES)}
    targets = np.array([index[v] for v in validation.values()], np.int64)
    figures = {f"light ({head})": row for head, row in scores.items()}
    for name, (predict, _) in candidates.items():
        report = measure(predict(list(validation)), targets, LABEL_NAMES)
        figures[name] = {"top1": report["top1"], "top3": report["top3"], "macro_f1": report["macro_f1"]}
    best = max(candidates, key=lambda name: (figures[name]["top3"], figures[name]["macro_f1"]))
    return best, figures


def last_turn_ids() -> list[int]:
    last_position = Turn.objects.filter(dialogue=OuterRef("dialogue")).order_by("-position").values("position")[:1]
    return list(Turn.objects.filter(position=Subquery(last_position)).order_by("pk").values_list("pk", flat=True))


def write_last_turn_predictions(version: ModelVersion, predict: Callable, temperature: float) -> int:
    """A Prediction (tempered top 3) for every dialogue's last turn that has none from `version`,
    chunk by chunk, each chunk committed on its own (a re-run skips what is done)."""
    from mlworkers.ml.classifier.calibration import apply_temperature
    from mlworkers.ml.classifier.sentence_classifier import top_k

    labels = Label.objects.by_names(LABEL_NAMES)
    done = set(Prediction.objects.filter(model_version=version).values_list("turn_id", flat=True))
    pending = [pk for pk in last_turn_ids() if pk not in done]
    written = 0
    for start in range(0, len(pending), APPLY_CHUNK):
        chunk = pending[start : start + APPLY_CHUNK]
        ranked = top_k(apply_temperature(predict(chunk), temperature), LABEL_NAMES, k=3)
        rows = [
            Prediction(turn_id=pk, model_version=version, label=labels[best[0][0]], confidence=best[0][1], top_k=best)
            for pk, best in zip(chunk, ranked, strict=True)
        ]
        with transaction.atomic():
            Prediction.objects.bulk_create(rows, ignore_conflicts=True)
        written += len(rows)
    return written
