"""The fastText baseline: a bag of n-grams over the dialogue's turns. Pure: no Django.

fastText reads its training data from a file of `__label__X text` lines, so training writes a
temporary file and removes it. A dialogue becomes one line: its turns joined with " | " (fastText
has no notion of turns; the separator keeps turn boundaries visible as a token).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

LABEL_PREFIX = "__label__"
TURN_SEPARATOR = " | "


@dataclass
class FastTextConfig:
    epochs: int = 25
    learning_rate: float = 0.5
    word_ngrams: int = 2
    dim: int = 50
    min_count: int = 1
    seed: int = 13
    threads: int = 1  # reproducible results need one thread


def dialogue_text(turns: Sequence[str]) -> str:
    # fastText splits on white space and treats a newline as the end of an example.
    return re.sub(r"\s+", " ", TURN_SEPARATOR.join(turns)).strip()


def _label_token(label: str) -> str:
    return LABEL_PREFIX + label.replace(" ", "_")


class FastTextClassifier:
    def __init__(self, model, label_names: Sequence[str]):
        self.model = model
        self.label_names = list(label_names)
        self._column = {_label_token(name): i for i, name in enumerate(self.label_names)}

    def predict_proba(self, dialogues: Sequence[Sequence[str]]) -> np.ndarray:
        """One row of probabilities over `label_names` per dialogue (labels never seen in training get 0)."""
        out = np.zeros((len(dialogues), len(self.label_names)), dtype=np.float32)
        if not dialogues:
            return out
        # The wrapper's predict() mangles probabilities under numpy 2 (copy=False); the bound
        # f.predict returns plain (probability, label) pairs.
        for row, turns in enumerate(dialogues):
            for probability, label in self.model.f.predict(dialogue_text(turns), -1, 0.0, "strict"):
                column = self._column.get(label)
                if column is not None:
                    out[row, column] = probability
        return out

    def save(self, folder: str | Path) -> Path:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.model.save_model(str(folder / "fasttext.bin"))
        (folder / "labels.txt").write_text("\n".join(self.label_names))
        return folder


def load_fasttext(folder: str | Path) -> FastTextClassifier:
    import fasttext

    folder = Path(folder)
    return FastTextClassifier(
        fasttext.load_model(str(folder / "fasttext.bin")), (folder / "labels.txt").read_text().splitlines()
    )


def train_fasttext(
    dialogues: Sequence[Sequence[str]],
    labels: Sequence[str],
    label_names: Sequence[str],
    config: FastTextConfig | None = None,
) -> FastTextClassifier:
    import fasttext

    if not dialogues:
        raise ValueError("fastText needs at least one training example")
    config = config or FastTextConfig()
    handle, path = tempfile.mkstemp(prefix="fasttext-train-", suffix=".txt")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            for turns, label in zip(dialogues, labels, strict=True):
                out.write(f"{_label_token(label)} {dialogue_text(turns)}\n")
        model = fasttext.train_supervised(
            input=path,
            epoch=config.epochs,
            lr=config.learning_rate,
            wordNgrams=config.word_ngrams,
            dim=config.dim,
            minCount=config.min_count,
            seed=config.seed,
            thread=config.threads,
            verbose=0,
        )
    finally:
        os.unlink(path)
    return FastTextClassifier(model, label_names)
