"""The weak labeler: a sentence encoder with a linear head over the 41 labels. Pure: no Django.

Two training modes (WeakLabelerConfig.fine_tune):
- frozen (default): the encoder embeds every sentence once (mean pooling over the attention mask)
  and only the linear head is trained, which takes seconds on a CPU;
- fine-tune: encoder and head train together for a few epochs (slower, usually better).

Training data is a CSV (`text,label` header) or a JSON Lines file (`{"text": ..., "label": ...}`);
a bad row raises LabeledFileError naming the file and line.
"""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from annotation.taxonomy import normalise_label_name
from mlworkers.ml import loading

Progress = Callable[[int, int, str], None]


class LabeledFileError(ValueError):
    pass


@dataclass(frozen=True)
class LabeledSentence:
    text: str
    label: str


def read_labeled_sentences(path: str | Path, label_names: Sequence[str]) -> list[LabeledSentence]:
    """Read `text,label` rows; labels are matched to `label_names` by `normalise_label_name`."""
    path = Path(path)
    if not path.exists():
        raise LabeledFileError(f"{path}: no such file")
    known = {normalise_label_name(name): name for name in label_names}
    rows = _jsonl_rows(path) if path.suffix.lower() in {".jsonl", ".ndjson"} else _csv_rows(path)
    sentences = []
    for line, text, label in rows:
        text, label = (text or "").strip(), (label or "").strip()
        if not text:
            raise LabeledFileError(f"{path}:{line}: empty text")
        if normalise_label_name(label) not in known:
            raise LabeledFileError(f"{path}:{line}: unknown label {label!r}")
        sentences.append(LabeledSentence(text, known[normalise_label_name(label)]))
    if not sentences:
        raise LabeledFileError(f"{path}: no labeled sentences")
    return sentences


def _csv_rows(path: Path):
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None or [h.strip().lower() for h in header[:2]] != ["text", "label"]:
            raise LabeledFileError(f"{path}:1: the header must be 'text,label'")
        for row in reader:
            if not row or not any(cell.strip() for cell in row):
                continue
            if len(row) != 2:
                raise LabeledFileError(f"{path}:{reader.line_num}: expected 2 columns (text,label), got {len(row)}")
            yield reader.line_num, row[0], row[1]


def _jsonl_rows(path: Path):
    with path.open(encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise LabeledFileError(f"{path}:{line_number}: not valid JSON ({error.msg})")
            if not isinstance(record, dict):
                raise LabeledFileError(f"{path}:{line_number}: expected an object with text and label")
            yield line_number, str(record.get("text") or ""), str(record.get("label") or "")


@dataclass
class WeakLabelerConfig:
    model_name: str = "minilm"
    fine_tune: bool = False
    epochs: int = 200  # head-only epochs are cheap full passes over cached embeddings
    fine_tune_epochs: int = 3
    learning_rate: float = 1e-2
    fine_tune_learning_rate: float = 3e-5
    weight_decay: float = 1e-4
    batch_size: int = 32
    max_length: int = 64
    seed: int = 13
    device: str = "auto"


class WeakLabeler:
    """Encoder + linear head; `predict_proba` returns one row of 41 probabilities per text."""

    def __init__(self, tokenizer, encoder, head: nn.Linear, label_names: Sequence[str], config: WeakLabelerConfig):
        self.tokenizer, self.encoder, self.head = tokenizer, encoder, head
        self.label_names = list(label_names)
        self.config = config
        self.device = loading.pick_device(config.device)
        self.encoder.to(self.device)
        self.head.to(self.device)

    def embed(self, texts: Sequence[str], batch_size: int = 128) -> torch.Tensor:
        self.encoder.eval()
        chunks = []
        with torch.inference_mode():
            for start in range(0, len(texts), batch_size):
                chunks.append(self._pooled(texts[start : start + batch_size]))
        return torch.cat(chunks) if chunks else torch.zeros((0, self.head.in_features))

    def _pooled(self, texts: Sequence[str]) -> torch.Tensor:
        batch = self.tokenizer(
            list(texts), padding=True, truncation=True, max_length=self.config.max_length, return_tensors="pt"
        ).to(self.device)
        hidden = self.encoder(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        return (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)

    def predict_proba(self, texts: Sequence[str], batch_size: int = 128) -> np.ndarray:
        if not texts:
            return np.zeros((0, len(self.label_names)), dtype=np.float32)
        self.head.eval()
        with torch.inference_mode():
            logits = self.head(self.embed(texts, batch_size))
            return torch.softmax(logits, dim=-1).cpu().numpy().astype(np.float32)

    def save(self, folder: str | Path) -> Path:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        torch.save(self.head.state_dict(), folder / "head.pt")
        config = asdict(self.config)
        if self.config.fine_tune:
            self.encoder.save_pretrained(folder / "encoder")
            self.tokenizer.save_pretrained(folder / "encoder")
            config["model_name"] = str(folder / "encoder")
        meta = {"label_names": self.label_names, "config": config, "base_model": self.config.model_name}
        (folder / "weak_labeler.json").write_text(json.dumps(meta, indent=2))
        return folder


def load_weak_labeler(folder: str | Path) -> WeakLabeler:
    folder = Path(folder)
    meta = json.loads((folder / "weak_labeler.json").read_text())
    config = WeakLabelerConfig(**meta["config"])
    tokenizer, encoder = loading.load_tokenizer(config.model_name), loading.load_encoder(config.model_name)
    head = nn.Linear(encoder.config.hidden_size, len(meta["label_names"]))
    head.load_state_dict(torch.load(folder / "head.pt", map_location="cpu"))
    return WeakLabeler(tokenizer, encoder, head, meta["label_names"], config)


def train_weak_labeler(
    sentences: Sequence[LabeledSentence],
    label_names: Sequence[str],
    config: WeakLabelerConfig | None = None,
    progress: Progress | None = None,
) -> WeakLabeler:
    config = config or WeakLabelerConfig()
    _seed_everything(config.seed)
    tokenizer, encoder = loading.load_tokenizer(config.model_name), loading.load_encoder(config.model_name)
    head = nn.Linear(encoder.config.hidden_size, len(label_names))
    labeler = WeakLabeler(tokenizer, encoder, head, label_names, config)
    index = {name: i for i, name in enumerate(label_names)}
    texts = [s.text for s in sentences]
    targets = torch.tensor([index[s.label] for s in sentences], device=labeler.device)
    if config.fine_tune:
        _fine_tune(labeler, texts, targets, progress)
    else:
        _train_head(labeler, labeler.embed(texts), targets, progress)
    return labeler


def _train_head(labeler: WeakLabeler, features: torch.Tensor, targets: torch.Tensor, progress) -> None:
    config, head = labeler.config, labeler.head
    optimizer = torch.optim.AdamW(head.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    loss_fn = nn.CrossEntropyLoss()
    head.train()
    for epoch in range(1, config.epochs + 1):
        optimizer.zero_grad()
        loss = loss_fn(head(features), targets)
        loss.backward()
        optimizer.step()
        if progress and (epoch % 20 == 0 or epoch == config.epochs):
            progress(epoch, config.epochs, f"head epoch {epoch}: loss {loss.item():.3f}")


def _fine_tune(labeler: WeakLabeler, texts: list[str], targets: torch.Tensor, progress) -> None:
    config = labeler.config
    parameters = [
        {"params": labeler.encoder.parameters(), "lr": config.fine_tune_learning_rate},
        {"params": labeler.head.parameters(), "lr": config.learning_rate / 10},
    ]
    optimizer = torch.optim.AdamW(parameters, weight_decay=config.weight_decay)
    loss_fn = nn.CrossEntropyLoss()
    order = list(range(len(texts)))
    rng = random.Random(config.seed)
    steps_per_epoch = (len(texts) + config.batch_size - 1) // config.batch_size
    total = config.fine_tune_epochs * steps_per_epoch
    step = 0
    labeler.encoder.train()
    labeler.head.train()
    for _epoch in range(config.fine_tune_epochs):
        rng.shuffle(order)
        for start in range(0, len(order), config.batch_size):
            batch = order[start : start + config.batch_size]
            optimizer.zero_grad()
            loss = loss_fn(labeler.head(labeler._pooled([texts[i] for i in batch])), targets[batch])
            loss.backward()
            optimizer.step()
            step += 1
            if progress:
                progress(step, total, f"fine-tune step {step}/{total}: loss {loss.item():.3f}")


def top_k(probabilities: np.ndarray, label_names: Sequence[str], k: int = 3) -> list[list[list]]:
    """Per row, [[label, probability], ...] best first."""
    order = np.argsort(-probabilities, axis=1, kind="stable")[:, :k]
    return [
        [[label_names[j], round(float(row[j]), 6)] for j in best]
        for row, best in zip(probabilities, order, strict=True)
    ]


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
