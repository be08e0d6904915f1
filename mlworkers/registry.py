"""Model versions: save a trained model's files under MEDIA_ROOT/models/<id>/ and record what it is.

The database row holds the description (base model, label set, training data ids,
hyperparameters, metrics) and the folder name; the weights stay in files, never in a row.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from annotation.models import ModelVersion
from mlworkers.naming import unique_name

MODELS_SUBDIR = "models"


def register_model_version(
    kind: str,
    name: str,
    trained: Any,
    *,
    base_model: str | None = None,
    label_names: list[str] | None = None,
    training_data: dict[str, Any] | None = None,
    hyperparameters: dict[str, Any] | None = None,
    metrics: dict[str, Any] | None = None,
) -> ModelVersion:
    """Record a trained model and write its files to MEDIA_ROOT/models/<id>/.

    `trained` is anything with `save(directory)`: a TrainedClassifier (its config and label names
    fill the defaults) or another model kind's wrapper. The row and the files come together: if
    saving fails the row is rolled back and the half-written folder removed. A name already taken
    gets " #2", " #3", ... (mlworkers.naming), so no two versions share one.
    """
    if kind not in dict(ModelVersion.KIND_CHOICES):
        raise ValueError(f"kind {kind!r} is not one of {', '.join(dict(ModelVersion.KIND_CHOICES))}")
    config = getattr(trained, "config", None)
    with transaction.atomic():
        version = ModelVersion.objects.create(
            kind=kind,
            name=unique_name(name, lambda candidate: ModelVersion.objects.filter(name=candidate).exists()),
            base_model=base_model or getattr(config, "base_model", "") or "",
            label_names=list(label_names if label_names is not None else getattr(trained, "label_names", [])),
            training_data=training_data or {},
            hyperparameters=hyperparameters if hyperparameters is not None else _hyperparameters_of(trained),
            metrics=metrics or {},
            artifact_dir=f"{MODELS_SUBDIR}/{{id}}",
        )
        version.artifact_dir = f"{MODELS_SUBDIR}/{version.pk}"
        directory = artifact_path(version)
        try:
            trained.save(directory)
        except BaseException:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        version.save(update_fields=["artifact_dir"])
    return version


def artifact_path(version: ModelVersion) -> Path:
    if not version.artifact_dir:
        raise ValueError(f"model version {version.pk} has no artifact folder")
    return Path(settings.MEDIA_ROOT) / version.artifact_dir


def load_dialogue_classifier(version: ModelVersion, device: str | None = None, precision: str | None = None):
    """The TrainedClassifier saved for a dialogue-classifier model version, ready for inference in
    `precision` (None: ML_PRECISION, whose "auto" is bf16 on a GPU and, on a CPU, fp32 or int8,
    whichever measured faster there; see mlworkers.ml.classifier.precision and mlworkers.ml.classifier.cpu_precision)."""
    from mlworkers.ml.classifier.dialogue_classifier import load_for_inference

    if version.kind != ModelVersion.DIALOGUE:
        raise ValueError(f"model version {version.pk} is a {version.kind!r} model, not a dialogue classifier")
    return load_for_inference(
        artifact_path(version), device=device or settings.ML_DEVICE, precision_name=precision or settings.ML_PRECISION
    )


def _hyperparameters_of(trained: Any) -> dict[str, Any]:
    if hasattr(trained, "hyperparameters"):
        return dict(trained.hyperparameters())
    config = getattr(trained, "config", None)
    return config.to_dict() if hasattr(config, "to_dict") else {}
