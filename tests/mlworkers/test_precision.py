"""Mixed precision: ML_PRECISION's choices, and the bf16/fp16 paths of the dialogue classifier run on
the CPU (masks and turn weights follow the model's dtype; pooling scores are masked in fp32)."""

import numpy as np
import pytest
import torch

from mlworkers.ml.classifier import precision
from mlworkers.ml.classifier.dialogue_classifier import build_classifier, load_classifier, predict_proba, train
from mlworkers.ml.classifier.inference import collate, encode_examples, predict_top_k_encoded
from mlworkers.ml.classifier.model import TrainConfig
from tests.mlworkers import tiny_models
from tests.mlworkers.tiny_models import TOY_LABELS, one_torch_thread

single_thread = pytest.fixture(autouse=True)(one_torch_thread)


@pytest.fixture(scope="module")
def toy_examples():
    return tiny_models.toy_examples()


config = tiny_models.toy_config


def test_auto_is_fp32_on_a_cpu_and_explicit_choices_stand(monkeypatch):
    monkeypatch.delenv("ML_PRECISION", raising=False)
    assert precision.resolve(None, "cpu") == precision.resolve("auto", "cpu") == "fp32"
    assert precision.resolve("bf16", "cpu") == "bf16" and precision.resolve("fp16", "cpu") == "fp16"
    monkeypatch.setenv("ML_PRECISION", "bf16")
    assert precision.resolve(None, "cpu") == "bf16"
    assert precision.dtype_of("bf16") is torch.bfloat16 and precision.dtype_of("fp32") is torch.float32


def test_an_unknown_precision_is_refused_by_name(monkeypatch):
    with pytest.raises(ValueError, match="precision 'fp8'"):
        precision.resolve("fp8", "cpu")
    with pytest.raises(ValueError, match="precision 'half'"):
        TrainConfig(precision="half")
    monkeypatch.setenv("ML_PRECISION", "int4")
    with pytest.raises(ValueError, match="int4"):
        precision.resolve(None, "cpu")


def test_fp16_only_needs_loss_scaling_on_a_gpu():
    assert precision.needs_grad_scaler("fp16", "cuda") and not precision.needs_grad_scaler("fp16", "cpu")
    assert not precision.needs_grad_scaler("bf16", "cuda")


def padded_batch(clf, examples):
    return collate(encode_examples(examples, clf.tokenizer, 100), clf.tokenizer.pad_token_id, 0.5)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_under_autocast_the_forward_pass_is_finite_and_padding_is_masked(toy_examples, dtype):
    """The bug this pins: scores came back in bf16 and were masked with float32's minimum (overflow)."""
    clf = build_classifier(TOY_LABELS, config())
    model = clf.model.eval()
    batch = padded_batch(clf, toy_examples)
    assert batch["attention_mask"].min() == 0  # the batch really has padding
    with torch.inference_mode(), torch.autocast("cpu", dtype=dtype):
        logits = model(**batch)
        alone = model(**padded_batch(clf, toy_examples[:1]))
    assert torch.isfinite(logits.float()).all()
    reference = model(**batch).float()
    assert torch.allclose(logits.float(), reference, atol=0.05)
    # row 0 scored alone (no padding beyond its own) equals row 0 inside the padded batch
    assert torch.allclose(alone.float()[0], logits.float()[0], atol=0.05)


@pytest.mark.parametrize("name", ["bf16", "fp16"])
def test_a_saved_classifier_loads_and_predicts_in_half_precision(toy_examples, tmp_path, name):
    """`model.half()` used to fail: the turn weights stayed float32 and promoted the embeddings."""
    clf = train(toy_examples[:9], toy_examples[9:], TOY_LABELS, config(epochs=2))
    clf.save(tmp_path / "saved")
    half = load_classifier(tmp_path / "saved", device="cpu", precision_name=name)
    assert half.precision == name and next(half.model.parameters()).dtype == precision.dtype_of(name)
    full = predict_proba(clf, toy_examples)
    low = predict_proba(half, toy_examples)
    assert np.isfinite(low).all() and np.allclose(low.sum(axis=1), 1, atol=1e-3)
    assert np.abs(low - full).max() < 0.05
    assert (low.argmax(axis=1) == full.argmax(axis=1)).mean() >= 0.9


def test_training_under_bf16_autocast_learns_the_toy_task(toy_examples):
    clf = train(toy_examples, toy_examples, TOY_LABELS, config(precision="bf16"))
    assert next(clf.model.parameters()).dtype == torch.float32  # fp32 master weights
    losses = [record["train_loss"] for record in clf.history]
    assert all(np.isfinite(losses)) and losses[-1] < losses[0]
    predicted = predict_proba(clf, toy_examples).argmax(axis=1)
    targets = [TOY_LABELS.index(example.label) for example in toy_examples]
    assert (predicted == np.array(targets)).mean() >= 0.75


def test_device_top_k_matches_the_full_probabilities(toy_examples):
    clf = build_classifier(TOY_LABELS, config(seed=8))
    encoded = encode_examples(toy_examples, clf.tokenizer, 100)
    indices, values = predict_top_k_encoded(
        clf.model, encoded, k=2, pad_id=clf.tokenizer.pad_token_id, decay=0.5, batch_size=5
    )
    full = predict_proba(clf, toy_examples, batch_size=5)
    assert indices.shape == values.shape == (len(toy_examples), 2)
    assert (indices[:, 0] == full.argmax(axis=1)).all()
    assert np.allclose(values, np.sort(full, axis=1)[:, ::-1][:, :2], atol=1e-6)
    # a temperature above 1 flattens the same ranking
    _, flatter = predict_top_k_encoded(
        clf.model, encoded, k=2, pad_id=clf.tokenizer.pad_token_id, decay=0.5, temperature=3.0
    )
    assert (flatter[:, 0] <= values[:, 0] + 1e-6).all()
