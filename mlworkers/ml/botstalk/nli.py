"""The BotsTalk moderator's NLI: P(contradiction | premise, hypothesis). Pure: no Django import.

Two kinds of model give the same interface, `contradiction_probabilities(premises, hypotheses)`
(aligned lists, one probability per pair):

- `PairClassifier`, a small one trained here from labeled pairs (botstalk_files.read_nli_pairs):
  a frozen sentence encoder embeds premise u and hypothesis v, a linear head over
  [u, v, |u - v|, u * v] (InferSent's features) predicts the labels. Trains in seconds on a CPU;
  for tests, demos and when no better model is at hand.
- `CrossEncoderNLI`, any sequence-classification model with a "contradiction" label, e.g. an
  MNLI-tuned RoBERTa (`roberta-large-mnli`) or a cross-encoder NLI model, loaded by name or path.

`load_nli(name_or_folder)` picks the kind: a folder holding `pair_classifier.json` is the first.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from mlworkers.ml import loading
from mlworkers.ml.botstalk.files import CONTRADICTION, NLIPair

META_FILE = "pair_classifier.json"
HEAD_FILE = "head.safetensors"


@dataclass
class PairClassifierConfig:
    model_name: str = "minilm"
    epochs: int = 300
    learning_rate: float = 1e-2
    weight_decay: float = 1e-4
    seed: int = 13
    device: str = "cpu"


class PairClassifier:
    def __init__(self, encoder, head: nn.Linear, label_names: Sequence[str], config: PairClassifierConfig):
        self.encoder, self.head = encoder, head
        self.label_names = list(label_names)
        self.config = config

    def features(self, premises: Sequence[str], hypotheses: Sequence[str]) -> torch.Tensor:
        u = torch.as_tensor(self.encoder.encode(list(premises), normalize_embeddings=True, convert_to_numpy=True))
        v = torch.as_tensor(self.encoder.encode(list(hypotheses), normalize_embeddings=True, convert_to_numpy=True))
        return torch.cat([u, v, (u - v).abs(), u * v], dim=1).float()

    def predict_proba(self, premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        if not premises:
            return np.zeros((0, len(self.label_names)), dtype=np.float32)
        self.head.eval()
        with torch.inference_mode():
            return torch.softmax(self.head(self.features(premises, hypotheses)), dim=-1).numpy()

    def contradiction_probabilities(self, premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        column = self.label_names.index(CONTRADICTION)
        return self.predict_proba(premises, hypotheses)[:, column]

    def save(self, folder: str | Path) -> Path:
        from safetensors.torch import save_file

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        save_file({k: v.contiguous() for k, v in self.head.state_dict().items()}, str(folder / HEAD_FILE))
        meta = {"format": "pair-classifier-v1", "label_names": self.label_names, "config": asdict(self.config)}
        (folder / META_FILE).write_text(json.dumps(meta, indent=2))
        return folder


def train_pair_classifier(pairs: Sequence[NLIPair], config: PairClassifierConfig | None = None) -> PairClassifier:
    config = config or PairClassifierConfig()
    random.seed(config.seed)
    np.random.seed(config.seed)
    torch.manual_seed(config.seed)
    label_names = sorted({p.label for p in pairs})
    encoder = loading.load_sentence_transformer(config.model_name, device=config.device)
    head = nn.Linear(4 * _dimension(encoder), len(label_names))
    model = PairClassifier(encoder, head, label_names, config)
    features = model.features([p.premise for p in pairs], [p.hypothesis for p in pairs])
    targets = torch.tensor([label_names.index(p.label) for p in pairs])
    optimizer = torch.optim.AdamW(head.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    head.train()
    for _epoch in range(config.epochs):
        optimizer.zero_grad()
        nn.functional.cross_entropy(head(features), targets).backward()
        optimizer.step()
    return model


def _dimension(encoder) -> int:
    # sentence-transformers 5 renamed get_sentence_embedding_dimension
    method = getattr(encoder, "get_embedding_dimension", None) or encoder.get_sentence_embedding_dimension
    return int(method())


def load_pair_classifier(folder: str | Path, device: str = "cpu") -> PairClassifier:
    from safetensors.torch import load_file

    folder = Path(folder)
    meta = json.loads((folder / META_FILE).read_text())
    config = PairClassifierConfig(**{**meta["config"], "device": device})
    encoder = loading.load_sentence_transformer(config.model_name, device=device)
    head = nn.Linear(4 * _dimension(encoder), len(meta["label_names"]))
    head.load_state_dict(load_file(str(folder / HEAD_FILE)))
    return PairClassifier(encoder, head, meta["label_names"], config)


class CrossEncoderNLI:
    """A hub (or local) sequence-classification NLI model; premise and hypothesis go in together."""

    def __init__(self, tokenizer, model, batch_size: int = 32, name: str = ""):
        labels = {int(i): str(label).lower() for i, label in model.config.id2label.items()}
        found = [i for i, label in labels.items() if label == CONTRADICTION]
        if not found:
            raise ValueError(
                f"NLI model {name or model.name_or_path!r} has no {CONTRADICTION!r} label "
                f"(its labels: {', '.join(labels[i] for i in sorted(labels))})"
            )
        self.tokenizer, self.model, self.batch_size = tokenizer, model.eval(), batch_size
        self.column = found[0]

    def contradiction_probabilities(self, premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        out = []
        with torch.inference_mode():
            for at in range(0, len(premises), self.batch_size):
                batch = self.tokenizer(
                    list(premises[at : at + self.batch_size]),
                    list(hypotheses[at : at + self.batch_size]),
                    padding=True,
                    truncation=True,
                    max_length=256,
                    return_tensors="pt",
                ).to(self.model.device)
                out.append(torch.softmax(self.model(**batch).logits.float(), dim=-1)[:, self.column].cpu().numpy())
        return np.concatenate(out) if out else np.zeros(0, dtype=np.float32)


def load_nli(name: str, device: str = "cpu"):
    """A trained PairClassifier folder, else a sequence-classification model by name or path."""
    if (Path(name).expanduser() / META_FILE).is_file():
        return load_pair_classifier(Path(name).expanduser(), device=device)
    model = loading.load_sequence_classifier(name).to(device)
    return CrossEncoderNLI(loading.load_tokenizer(name), model, name=name)
