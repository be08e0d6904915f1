"""The dialogue classifier (the papers' EmoBERT+): a pretrained encoder that reads the labeled
turn first and its history backwards, with the history's token embeddings weighted down.

Architecture (per input built by `mlworkers.ml.classifier.inputs`):
  word embeddings x turn weight (1 for the target, decay**k for the turn k steps back)
  -> the encoder (which adds position and token-type embeddings AFTER our weighting)
  -> attention pooling over the hidden states (padding masked) -> dropout -> tanh layer
  -> dropout -> linear -> softmax over the labels.
Training: AdamW (betas 0.9/0.98, eps 1e-6, lr 2e-5 by default), cross-entropy; the weights of
the epoch with the lowest validation loss are kept. Pure: no Django import.

Options beyond the paper (all off by default, see `TrainConfig`):
- soft targets: an example may carry the crowd's individual answers (`votes`); the target is then
  a mix of the majority label and the vote distribution, and a dialogue with no majority can train
  on its votes alone;
- layer-wise learning-rate decay: each encoder layer below the top gets `layer_lr_decay` times the
  lr of the one above it (the embeddings the least);
- EMA of the weights: validation and the kept weights use an exponential moving average of the
  weights over the steps (checkpoint averaging for the price of one copy of the weights);
- R-Drop: two dropout passes per batch and a symmetric KL term that pulls them together.
What a classifier is (the example, `TrainConfig`, the network, `TrainedClassifier` and its files)
lives in `model.py`; one optimisation step (the loss, AdamW's groups, the schedule, the EMA) in
`training_step.py`.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from mlworkers.ml import loading
from mlworkers.ml.classifier import cpu_precision, inference, precision, quantize
from mlworkers.ml.classifier.model import (
    CONFIG_FILE,
    ENCODER_DIR,
    TOKENIZER_DIR,
    WEIGHTS_FILE,
    DialogueClassifierModel,
    DialogueExample,
    TrainConfig,
    TrainedClassifier,
)
from mlworkers.ml.classifier.training_step import Stepper
from mlworkers.ml.metrics import classification_report

Progress = Callable[[int, int, str], None]  # (steps done, steps in all, message)

# The recipe bench/classifier_edos.py measured past the paper's (chosen on the EDOS validation split):
# soft targets from the crowd's votes, an EMA of the weights, a larger lr with warm-up and linear decay.
# `TrainConfig`'s own defaults stay the paper's; the pipeline's rounds train with this one.
MEASURED_RECIPE: dict[str, Any] = {
    "lr": 1e-4,
    "head_lr": 1e-3,
    "schedule": "linear",
    "warmup_ratio": 0.06,
    "label_smoothing": 0.1,
    "soft_target_weight": 1.0,
    "ema_decay": 0.995,
}


def load_classifier(
    directory: str | Path, device: str | torch.device | None = None, precision_name: str | None = None
) -> TrainedClassifier:
    """Rebuild a saved classifier from its folder alone (the base model need not be present), for
    inference in `precision_name` (None = ML_PRECISION; "auto" = bf16 on a GPU, fp32 on a CPU)."""
    from safetensors.torch import load_model
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    directory = Path(directory)
    if not (directory / CONFIG_FILE).exists():
        raise FileNotFoundError(f"{directory / CONFIG_FILE} is missing: not a saved dialogue classifier")
    description = json.loads((directory / CONFIG_FILE).read_text())
    config = TrainConfig.from_dict(description["config"])
    encoder = AutoModel.from_config(AutoConfig.from_pretrained(directory / ENCODER_DIR))
    model = DialogueClassifierModel(encoder, len(description["label_names"]), config.dropout)
    load_model(model, str(directory / WEIGHTS_FILE))
    target = loading.pick_device(str(device) if device else config.device)
    chosen = precision.resolve(precision_name, target)
    model.to(target, dtype=precision.dtype_of(chosen)).eval()
    tokenizer = AutoTokenizer.from_pretrained(directory / TOKENIZER_DIR)
    return TrainedClassifier(
        model,
        tokenizer,
        list(description["label_names"]),
        config,
        description.get("history", []),
        description.get("best_epoch"),
        precision=chosen,
    )


def load_for_inference(
    directory: str | Path, device: str | torch.device | None = None, precision_name: str | None = None
) -> TrainedClassifier:
    """A saved classifier ready for inference in `precision_name` (None = ML_PRECISION), on `device`
    (None = the saved config's). fp32/bf16/fp16 load as `load_classifier` loads them; "int8" loads
    fp32 and quantizes; "auto" on a CPU loads fp32 and quantizes only where int8 measured faster on
    this machine (`mlworkers.ml.classifier.cpu_precision`, whose choice is in `clf.precision_choice`); "int8"
    on a GPU runs in the GPU's own precision instead (a logged warning; see
    precision.inference_precision). `clf.precision` says which precision the model is in."""
    name = precision.configured_precision() if precision_name is None else precision.check_precision(precision_name)
    if name not in ("int8", "auto"):
        return load_classifier(directory, device=device, precision_name=name)
    # "auto" loads fp32 on a CPU and bf16/fp16 on a GPU; int8 then quantizes the fp32 one
    clf = load_classifier(directory, device=device, precision_name="auto")
    chosen = precision.inference_precision(name, clf.device)
    if chosen == precision.CPU_AUTO:
        clf.precision_choice = cpu_precision.choose(clf)
        chosen = clf.precision_choice.precision
    if chosen != "int8":
        return clf
    return quantize.quantize_classifier(clf)


def build_classifier(label_names: Sequence[str], config: TrainConfig) -> TrainedClassifier:
    """A fresh classifier: the pretrained encoder and a randomly initialised head."""
    _seed_everything(config.seed)
    encoder = loading.load_encoder(config.base_model, offline=config.offline)
    tokenizer = loading.load_tokenizer(config.base_model, offline=config.offline)
    model = DialogueClassifierModel(encoder, len(label_names), config.dropout)
    model.to(loading.pick_device(config.device))
    return TrainedClassifier(model, tokenizer, list(label_names), config)


def train(
    train_examples: Sequence[DialogueExample],
    validation: Sequence[DialogueExample],
    label_names: Sequence[str],
    config: TrainConfig | None = None,
    progress: Progress | None = None,
) -> TrainedClassifier:
    """Fine-tune a classifier; keep the epoch with the lowest validation loss (the last epoch when
    there is no validation set). `progress(done_steps, total_steps, message)` is called as it goes."""
    config = config or TrainConfig()
    if config.num_threads:
        torch.set_num_threads(config.num_threads)
    label_names = list(label_names)
    train_targets = target_distributions(train_examples, label_names, config.soft_target_weight, "train")
    validation_targets = _targets(validation, label_names, "validation")
    clf = build_classifier(label_names, config)
    encoded = inference.encode_examples(train_examples, clf.tokenizer, config.max_tokens)
    validation_encoded = inference.encode_examples(validation, clf.tokenizer, config.max_tokens)
    stepper = Stepper(clf, total_steps=math.ceil(len(encoded) / config.batch_size) * config.epochs)
    rng = np.random.default_rng(config.seed)
    best_loss, best_state = math.inf, None
    for epoch in range(1, config.epochs + 1):
        record = _train_epoch(clf, encoded, train_targets, stepper, rng, epoch, progress)
        # with EMA, validation scores (and the kept weights) are the averaged ones
        with stepper.averaged_weights():
            if validation:
                record.update(_validation_scores(clf, validation_encoded, validation_targets))
            current = record.get("val_loss", -epoch)  # no validation: the latest epoch counts as best
            if current < best_loss:
                best_loss, clf.best_epoch = current, epoch
                best_state = {name: t.detach().to("cpu", copy=True) for name, t in clf.model.state_dict().items()}
        clf.history.append(record)
        if progress:
            progress(stepper.done, stepper.total, _describe(record))
    clf.model.load_state_dict(best_state)
    clf.model.eval()
    return clf


def _train_epoch(clf, encoded, targets, stepper: Stepper, rng, epoch: int, progress: Progress | None) -> dict:
    config, started, losses = clf.config, time.perf_counter(), []
    batches = _bucketed_batches([len(ids) for ids, _ in encoded], config.batch_size, rng)
    report_every = max(1, len(batches) // 20)
    clf.model.train()
    for indices in batches:
        batch = inference.collate(
            [encoded[i] for i in indices], clf.tokenizer.pad_token_id or 0, config.turn_weight_decay
        )
        losses.append(stepper(batch, targets[indices]))
        if progress and stepper.done % report_every == 0:
            message = f"epoch {epoch}/{config.epochs}: train loss {np.mean(losses[-50:]):.4f}"
            progress(stepper.done, stepper.total, message)
    return {"epoch": epoch, "train_loss": float(np.mean(losses)), "seconds": time.perf_counter() - started}


def predict_proba(clf: TrainedClassifier, examples: Sequence[DialogueExample], batch_size: int = 64) -> np.ndarray:
    """(n, labels) probabilities, rows in the order of `examples`."""
    return inference.predict_examples(clf, examples, batch_size=batch_size)


def evaluate(clf: TrainedClassifier, examples: Sequence[DialogueExample], batch_size: int = 64) -> dict[str, Any]:
    """The metrics report (accuracy, macro-F1, per label, confusion) plus the mean cross-entropy."""
    targets = _targets(examples, clf.label_names, "evaluation")
    probabilities = predict_proba(clf, examples, batch_size=batch_size)
    report = classification_report(targets, probabilities.argmax(axis=1), clf.label_names)
    report["loss"] = _cross_entropy(probabilities, targets)
    return report


def _validation_scores(clf: TrainedClassifier, encoded, targets: np.ndarray) -> dict[str, float]:
    probabilities = inference.predict_encoded_with(clf, encoded)
    report = classification_report(targets, probabilities.argmax(axis=1), clf.label_names)
    return {
        "val_loss": _cross_entropy(probabilities, targets),
        "val_macro_f1": report["macro_f1"],
        "val_accuracy": report["accuracy"],
    }


def _cross_entropy(probabilities: np.ndarray, targets: np.ndarray) -> float:
    if not len(targets):
        return 0.0
    picked = probabilities[np.arange(len(targets)), targets]
    return float(-np.log(np.clip(picked, 1e-12, None)).mean())


def target_distributions(
    examples: Sequence[DialogueExample], label_names: list[str], soft_weight: float, split: str = "train"
) -> np.ndarray:
    """(n, labels) training targets: one-hot on the label, mixed with the share of each label among
    the example's votes when soft_weight > 0. An example without a label trains on its votes alone
    (soft_weight must then be > 0); votes outside `label_names` are ignored."""
    index = {name: i for i, name in enumerate(label_names)}
    targets = np.zeros((len(examples), len(label_names)), dtype=np.float32)
    for position, example in enumerate(examples):
        if not example.turns:
            raise ValueError(f"{split} example {position} has no turns")
        votes = [index[vote] for vote in example.votes if vote in index] if soft_weight else []
        if example.label is None:
            if not votes:
                raise ValueError(f"{split} example {position} has no label and no votes among the label names")
            np.add.at(targets[position], votes, 1 / len(votes))
            continue
        if example.label not in index:
            raise ValueError(f"{split} example {position}: label {example.label!r} is not one of the label names")
        targets[position, index[example.label]] = 1.0
        if votes:
            targets[position] *= 1 - soft_weight
            np.add.at(targets[position], votes, soft_weight / len(votes))
    return targets


def _targets(examples: Sequence[DialogueExample], label_names: list[str], split: str) -> np.ndarray:
    index = {name: i for i, name in enumerate(label_names)}
    targets = np.empty(len(examples), dtype=np.int64)
    for position, example in enumerate(examples):
        if not example.turns:
            raise ValueError(f"{split} example {position} has no turns")
        if example.label not in index:
            raise ValueError(f"{split} example {position}: label {example.label!r} is not one of the label names")
        targets[position] = index[example.label]
    return targets


def _bucketed_batches(lengths: Sequence[int], batch_size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Shuffled batches of similar lengths: shuffle, sort within pools of 50 batches, shuffle the
    batches. Padding stays small (the CPU speed-up) while every epoch sees a new order."""
    lengths = np.asarray(lengths)
    shuffled = rng.permutation(len(lengths))
    pool = batch_size * 50
    batches = []
    for start in range(0, len(shuffled), pool):
        chunk = shuffled[start : start + pool]
        chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        batches += [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
    return [batches[i] for i in rng.permutation(len(batches))]


def _describe(record: dict[str, Any]) -> str:
    text = f"epoch {record['epoch']}: train loss {record['train_loss']:.4f}"
    if "val_loss" in record:
        text += (
            f", val loss {record['val_loss']:.4f}, val macro-F1 {record['val_macro_f1']:.4f},"
            f" val accuracy {record['val_accuracy']:.4f}"
        )
    return text + f" ({record['seconds']:.0f}s)"


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


__all__ = [
    "DialogueClassifierModel",
    "DialogueExample",
    "TrainConfig",
    "TrainedClassifier",
    "build_classifier",
    "evaluate",
    "load_classifier",
    "predict_proba",
    "target_distributions",
    "train",
]
