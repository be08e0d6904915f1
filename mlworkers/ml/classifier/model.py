"""What a dialogue classifier is (the papers' EmoBERT+): an example, the training configuration,
the network, and the trained classifier with its files. Training (`dialogue_classifier`), one
optimisation step (`training_step`) and batched inference (`inference`) all read these; this module
imports none of them. Pure: no Django import.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import torch
from torch import nn

from annotation.papers import CLASSIFIER_LEARNING_RATE
from mlworkers.ml.classifier import precision
from mlworkers.ml.classifier.inputs import DEFAULT_MAX_TOKENS, DEFAULT_TURN_WEIGHT_DECAY

WEIGHTS_FILE = "model.safetensors"
CONFIG_FILE = "classifier.json"
ENCODER_DIR = "encoder"
TOKENIZER_DIR = "tokenizer"


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
