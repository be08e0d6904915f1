"""The suggestion model learned from crowd gold: a light head over frozen sentence embeddings.
Pure: numpy and torch, no Django.

Input of one example: the embedding of the labeled (last) turn and the half-decaying mean of the
embeddings of the turns before it (zeros for a one-turn dialogue), side by side. The encoder is
never trained; the turn vectors come from the embedding store the SBERT expansion already keeps.
Heads: a multinomial logistic regression (`hidden=0`) or a one-hidden-layer MLP, trained with
AdamW and the epoch with the lowest validation loss kept. `train_best_head` trains the candidate
heads and keeps the one with the best validation top-3 hit rate (then macro-F1), so the choice
never looks at the test split.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from mlworkers.ml.classifier.calibration import measure
from mlworkers.ml.expansion.embeddings import dialogue_embedding

Progress = Callable[[int, int, str], None]
HEAD_FILE = "head.pt"
CONFIG_FILE = "suggester.json"


def example_features(turn_vectors: np.ndarray) -> np.ndarray:
    """[last turn | decayed mean of the turns before it] for one dialogue's chronological rows."""
    turn_vectors = np.asarray(turn_vectors, dtype=np.float32)
    if not len(turn_vectors):
        raise ValueError("a dialogue needs at least one turn")
    context = dialogue_embedding(turn_vectors[:-1]) if len(turn_vectors) > 1 else np.zeros_like(turn_vectors[-1])
    return np.concatenate([turn_vectors[-1], context]).astype(np.float32)


@dataclass
class HeadConfig:
    hidden: int = 0  # 0: logistic regression; > 0: an MLP with this many hidden units
    dropout: float = 0.2
    lr: float = 3e-3
    weight_decay: float = 1e-4
    epochs: int = 60
    batch_size: int = 256
    label_smoothing: float = 0.0
    seed: int = 13

    @property
    def name(self) -> str:
        return "logreg" if not self.hidden else f"mlp{self.hidden}"


CANDIDATE_HEADS = (
    HeadConfig(hidden=0, lr=1e-2, weight_decay=1e-4),
    HeadConfig(hidden=512, lr=1e-3, weight_decay=1e-2, dropout=0.3, label_smoothing=0.1),
)


def _module(features: int, labels: int, config: HeadConfig) -> nn.Module:
    if not config.hidden:
        return nn.Linear(features, labels)
    return nn.Sequential(
        nn.Dropout(config.dropout / 2),
        nn.Linear(features, config.hidden),
        nn.GELU(),
        nn.Dropout(config.dropout),
        nn.Linear(config.hidden, labels),
    )


@dataclass
class Suggester:
    """A trained head; `predict_proba(features)` gives one row of probabilities per example."""

    module: nn.Module
    label_names: list[str]
    head: HeadConfig
    encoder: str
    history: list[dict[str, Any]] = field(default_factory=list)
    selection: dict[str, Any] = field(default_factory=dict)

    def predict_proba(self, features: np.ndarray, batch_size: int = 4096) -> np.ndarray:
        features = np.asarray(features, dtype=np.float32)
        out = np.zeros((len(features), len(self.label_names)), dtype=np.float32)
        self.module.eval()
        with torch.inference_mode():
            for start in range(0, len(features), batch_size):
                logits = self.module(torch.from_numpy(features[start : start + batch_size]))
                out[start : start + batch_size] = torch.softmax(logits, dim=-1).numpy()
        return out

    def save(self, folder: str | Path) -> Path:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        torch.save(self.module.state_dict(), folder / HEAD_FILE)
        description = {
            "label_names": self.label_names,
            "head": asdict(self.head),
            "encoder": self.encoder,
            "features": self._in_features(),
            "selection": self.selection,
        }
        (folder / CONFIG_FILE).write_text(json.dumps(description, indent=2))
        return folder

    def hyperparameters(self) -> dict[str, Any]:
        return {"head": asdict(self.head), "encoder": self.encoder, "features": "last turn | decayed context"}

    def _in_features(self) -> int:
        first = next(m for m in self.module.modules() if isinstance(m, nn.Linear))
        return first.in_features


def load_suggester(folder: str | Path) -> Suggester:
    folder = Path(folder)
    description = json.loads((folder / CONFIG_FILE).read_text())
    head = HeadConfig(**description["head"])
    module = _module(description["features"], len(description["label_names"]), head)
    module.load_state_dict(torch.load(folder / HEAD_FILE, map_location="cpu"))
    module.eval()
    return Suggester(module, description["label_names"], head, description["encoder"], [], description["selection"])


def train_head(
    train: tuple[np.ndarray, np.ndarray],
    validation: tuple[np.ndarray, np.ndarray],
    label_names: Sequence[str],
    config: HeadConfig,
    encoder: str = "",
) -> Suggester:
    """Train one head; keep the epoch with the lowest validation loss."""
    torch.manual_seed(config.seed)
    features, targets = torch.from_numpy(np.asarray(train[0], np.float32)), torch.as_tensor(train[1])
    val_features, val_targets = torch.from_numpy(np.asarray(validation[0], np.float32)), torch.as_tensor(validation[1])
    module = _module(features.shape[1], len(label_names), config)
    optimizer = torch.optim.AdamW(module.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=config.label_smoothing)
    generator = torch.Generator().manual_seed(config.seed)
    best_loss, best_state, history = math.inf, None, []
    for epoch in range(1, config.epochs + 1):
        module.train()
        for batch in torch.randperm(len(targets), generator=generator).split(config.batch_size):
            optimizer.zero_grad()
            loss_fn(module(features[batch]), targets[batch]).backward()
            optimizer.step()
        module.eval()
        with torch.inference_mode():
            val_loss = float(nn.functional.cross_entropy(module(val_features), val_targets))
        history.append({"epoch": epoch, "val_loss": val_loss})
        if val_loss < best_loss:
            best_loss, best_state = val_loss, {k: v.clone() for k, v in module.state_dict().items()}
    module.load_state_dict(best_state)
    module.eval()
    return Suggester(module, list(label_names), config, encoder, history)


def train_best_head(
    train: tuple[np.ndarray, np.ndarray],
    validation: tuple[np.ndarray, np.ndarray],
    label_names: Sequence[str],
    candidates: Sequence[HeadConfig] = CANDIDATE_HEADS,
    encoder: str = "",
    progress: Progress | None = None,
) -> tuple[Suggester, dict[str, dict[str, float]]]:
    """Every candidate head trained on `train`, measured on `validation`; the best one (top-3,
    then macro-F1) and every candidate's validation figures."""
    scores: dict[str, dict[str, float]] = {}
    best, best_key = None, None
    for index, config in enumerate(candidates):
        model = train_head(train, validation, label_names, config, encoder)
        report = measure(model.predict_proba(validation[0]), validation[1], label_names)
        scores[config.name] = {"top1": report["top1"], "top3": report["top3"], "macro_f1": report["macro_f1"]}
        key = (report["top3"], report["macro_f1"])
        if best_key is None or key > best_key:
            best, best_key = model, key
        if progress:
            progress(index + 1, len(candidates), f"{config.name}: validation top-3 {report['top3']:.3f}")
    return best, scores
