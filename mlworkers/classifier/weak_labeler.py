"""Step 1, the weak labeler (Django side): jobs `weak_train` and `weak_apply`.

    weak_train   reads a text,label file (default the seed set, mlworkers/data/weak_seed.csv) and the
                 crowd gold of the validation and test splits when there is some; writes a
                 ModelVersion of kind "weak", calibrated and measured (`measured`, `headline`)
    weak_apply   reads every turn without a Prediction of that version; writes one Prediction per
                 turn (top 3), in chunks each committed on its own (resumable)

`measured` and `headline` are how every model of the steps is measured: the suggestion model and
the rounds' models use them too. The maths lives in `mlworkers.ml.classifier.sentence_classifier` and
`mlworkers.ml.classifier.calibration`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef

from annotation.models import Label, ModelVersion, Prediction, Turn, TurnLabel
from annotation.taxonomy import LABEL_NAMES
from jobs.models import JobRun
from jobs.runtime import JobCannotRun, report_progress
from mlworkers.gold import gold_labels
from mlworkers.naming import stamped
from mlworkers.registry import artifact_path, register_model_version

WEAK_SEED = Path(__file__).resolve().parents[1] / "data" / "weak_seed.csv"


def newest_weak_version() -> ModelVersion | None:
    return ModelVersion.objects.filter(kind=ModelVersion.WEAK).order_by("-created_at", "-pk").first()


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
    from mlworkers.ml.classifier.sentence_classifier import (
        WeakLabelerConfig,
        read_labeled_sentences,
        train_weak_labeler,
    )

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
    labeler = train_weak_labeler(training, LABEL_NAMES, config, progress=partial(report_progress, job))
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
    from mlworkers.ml.classifier.calibration import EmptySplitError, calibrate_and_measure, require_examples

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
    from mlworkers.ml.classifier.sentence_classifier import load_weak_labeler

    return load_weak_labeler(artifact_path(version))


def weak_apply(
    job: JobRun, model_version_id: int | None = None, chunk_size: int = 2000, batch_size: int = 128
) -> dict[str, Any]:
    """A Prediction for every turn that has none from this version, in chunks of `chunk_size`,
    each chunk committed on its own: a killed job started again skips what is done, and the
    unique (turn, version) constraint refuses a duplicate from a second worker."""
    from mlworkers.ml.classifier.calibration import apply_temperature
    from mlworkers.ml.classifier.sentence_classifier import top_k

    version = _weak_version(model_version_id)
    labeler = load_weak_labeler_for(version)
    labels = Label.objects.by_names(version.label_names)
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
