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
One optimisation step (the loss, AdamW's groups, the schedule, the EMA) lives in `training_step.py`.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from annotation.papers import CLASSIFIER_LEARNING_RATE
from mlworkers.ml import loading
from mlworkers.ml.classifier import inference, precision
from mlworkers.ml.classifier.inputs import DEFAULT_MAX_TOKENS, DEFAULT_TURN_WEIGHT_DECAY
from mlworkers.ml.classifier.training_step import Stepper
from mlworkers.ml.metrics import classification_report

Progress = Callable[[int, int, str], None]  # (steps done, steps in all, message)

WEIGHTS_FILE = "model.safetensors"
CONFIG_FILE = "classifier.json"
ENCODER_DIR = "encoder"
TOKENIZER_DIR = "tokenizer"

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


@dataclass
class DialogueExample:
    """Chronological turns; the LAST one is the turn that carries (or gets) the label."""

    turns: list[str]
    label: str | None = None
    # The crowd's individual answers for the last turn (e.g. the three workers' labels), used as a
    # soft target when `TrainConfig.soft_target_weight` > 0; answers outside the label set are ignored.
    votes: tuple[str, ...] = ()


@dataclass
class TrainConfig:
    """Defaults are the paper's; the schedule, head lr and label smoothing are off by default."""

    base_model: str = "minilm"
    max_tokens: int = DEFAULT_MAX_TOKENS
    lr: float = CLASSIFIER_LEARNING_RATE
    head_lr: float | None = None  # a larger lr for the new layers; None = lr
    betas: tuple[float, float] = (0.9, 0.98)
    eps: float = 1e-6
    weight_decay: float = 0.01
    dropout: float = 0.1
    epochs: int = 4
    batch_size: int = 32
    turn_weight_decay: float = DEFAULT_TURN_WEIGHT_DECAY
    schedule: str = "constant"  # constant | linear | cosine, after `warmup_ratio` of the steps
    warmup_ratio: float = 0.0
    label_smoothing: float = 0.0
    max_grad_norm: float | None = 1.0
    # share of the target taken from the vote distribution (0 = the majority label alone, 1 = the
    # votes alone); examples without a label need votes and train on them alone
    soft_target_weight: float = 0.0
    layer_lr_decay: float = 1.0  # lr of encoder layer k below the top = lr * layer_lr_decay**k
    ema_decay: float | None = None  # EMA of the weights (e.g. 0.998); None = the last weights
    rdrop_alpha: float = 0.0  # weight of R-Drop's symmetric KL between two dropout passes
    seed: int = 13
    device: str = "auto"
    precision: str = "auto"  # auto | fp32 | bf16 | fp16: autocast of the forward pass (auto: bf16 on a GPU)
    num_threads: int | None = None
    offline: bool | None = None

    def __post_init__(self) -> None:
        self.betas = tuple(self.betas)
        if self.schedule not in {"constant", "linear", "cosine"}:
            raise ValueError(f"schedule={self.schedule!r} must be constant, linear or cosine")
        for name in ("lr", "eps", "epochs", "batch_size", "max_tokens"):
            if getattr(self, name) <= 0:
                raise ValueError(f"TrainConfig.{name} must be positive, got {getattr(self, name)}")
        precision.check_precision(self.precision)
        if not 0 < self.turn_weight_decay <= 1:
            raise ValueError(f"TrainConfig.turn_weight_decay must be in (0, 1], got {self.turn_weight_decay}")
        if not 0 <= self.soft_target_weight <= 1:
            raise ValueError(f"TrainConfig.soft_target_weight must be in [0, 1], got {self.soft_target_weight}")
        if not 0 < self.layer_lr_decay <= 1:
            raise ValueError(f"TrainConfig.layer_lr_decay must be in (0, 1], got {self.layer_lr_decay}")
        if self.ema_decay is not None and not 0 < self.ema_decay < 1:
            raise ValueError(f"TrainConfig.ema_decay must be in (0, 1) or None, got {self.ema_decay}")
        if self.rdrop_alpha < 0:
            raise ValueError(f"TrainConfig.rdrop_alpha must not be negative, got {self.rdrop_alpha}")

    def to_dict(self) -> dict[str, Any]:
        values = asdict(self)
        values["betas"] = list(self.betas)
        return values

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> TrainConfig:
        known = {f.name for f in fields(cls)}
        return cls(**{key: value for key, value in values.items() if key in known})


class DialogueClassifierModel(nn.Module):
    def __init__(self, encoder: nn.Module, num_labels: int, dropout: float = 0.1) -> None:
        super().__init__()
        hidden = encoder.config.hidden_size
        self.encoder = encoder
        self.num_labels = num_labels
        self.attention = nn.Linear(hidden, 1)
        self.dropout = nn.Dropout(dropout)
        self.hidden = nn.Linear(hidden, hidden)
        self.output = nn.Linear(hidden, num_labels)

    def weighted_embeddings(self, input_ids: torch.Tensor, token_weights: torch.Tensor) -> torch.Tensor:
        """Word embeddings scaled by each token's turn weight; the encoder adds positions after.
        The weights take the embeddings' dtype, so a bf16 or fp16 model stays in its precision."""
        embeddings = self.encoder.get_input_embeddings()(input_ids)
        return embeddings * token_weights.to(embeddings.dtype).unsqueeze(-1)

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_weights: torch.Tensor
    ) -> torch.Tensor:
        states = self.encoder(
            inputs_embeds=self.weighted_embeddings(input_ids, token_weights), attention_mask=attention_mask
        ).last_hidden_state
        # The pooling scores are masked and normalised in fp32 whatever the model's precision: under
        # autocast the linear layer returns bf16/fp16, where fp32's minimum would overflow to -inf.
        scores = self.attention(states).squeeze(-1).float()
        scores = scores.masked_fill(attention_mask == 0, torch.finfo(scores.dtype).min)
        pooled = (torch.softmax(scores, dim=-1).to(states.dtype).unsqueeze(-1) * states).sum(dim=1)
        return self.output(self.dropout(torch.tanh(self.hidden(self.dropout(pooled)))))

    def head_parameters(self) -> list[nn.Parameter]:
        return [p for name, p in self.named_parameters() if not name.startswith("encoder.")]


@dataclass
class TrainedClassifier:
    model: DialogueClassifierModel
    tokenizer: Any
    label_names: list[str]
    config: TrainConfig
    history: list[dict[str, Any]] = field(default_factory=list)
    best_epoch: int | None = None
    precision: str = "fp32"  # the dtype the weights are in now (inference casts; training keeps fp32)
    # for "auto" on a CPU: the measured choice between fp32 and int8 (mlworkers.ml.classifier.cpu_precision)
    precision_choice: Any = None

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def save(self, directory: str | Path) -> Path:
        """Write weights (safetensors), the encoder's config, the tokenizer and a JSON description."""
        from safetensors.torch import save_model

        if self.precision == "int8":
            # its encoder's weights are int8 now: a folder of them would not load as a classifier
            raise ValueError("an int8 classifier is for inference only: save the fp32 classifier it was loaded from")
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        save_model(self.model, str(directory / WEIGHTS_FILE))
        self.model.encoder.config.save_pretrained(directory / ENCODER_DIR)
        self.tokenizer.save_pretrained(directory / TOKENIZER_DIR)
        description = {
            "label_names": self.label_names,
            "config": self.config.to_dict(),
            "history": self.history,
            "best_epoch": self.best_epoch,
        }
        (directory / CONFIG_FILE).write_text(json.dumps(description, indent=2))
        return directory

    def hyperparameters(self) -> dict[str, Any]:
        return self.config.to_dict()


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
