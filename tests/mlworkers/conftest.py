"""Fixtures of the ML pipeline tests: a tiny encoder standing in for MiniLM, settings pointing the
models and media at it, and a small seed file. A test module's own fixture of the same name wins."""

import csv

import pytest

from tests.mlworkers.tiny_models import write_tiny_encoder


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory):
    return write_tiny_encoder(tmp_path_factory.mktemp("tiny-encoder"))


@pytest.fixture
def ml_settings(settings, tmp_path, tiny_encoder):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.WEAK_LABELER_MODEL = str(tiny_encoder)
    settings.CLASSIFIER_MODEL = str(tiny_encoder)
    settings.ML_DEVICE = "cpu"
    return settings


@pytest.fixture
def small_seed(tmp_path):
    """Two seed sentences per label: enough for the weak labeler's plumbing, quick to embed."""
    from mlworkers.classifier import weak_labeler

    with weak_labeler.WEAK_SEED.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    kept, seen = [], {}
    for row in rows:
        if seen.get(row["label"], 0) < 2:
            kept.append(row)
            seen[row["label"]] = seen.get(row["label"], 0) + 1
    path = tmp_path / "seed.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, ["text", "label"])
        writer.writeheader()
        writer.writerows(kept)
    return path
