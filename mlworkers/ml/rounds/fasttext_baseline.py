"""The fastText baseline: a bag of n-grams over the dialogue's turns. Pure: no Django.

fastText reads its training data from a file of `__label__X text` lines, so training writes a
temporary file and removes it. A dialogue becomes one line: its turns joined with " | " (fastText
has no notion of turns; the separator keeps turn boundaries visible as a token).

fastText's default hashes word n-grams into 2,000,000 buckets of `dim` floats: 400 MB at dim 50
(and as much again while training) whatever the data, so 24 dialogues gave a 382 MB model. Unless
a bucket count is given, `train_fasttext` sizes it to the data: the power of two at or above the
number of distinct word n-grams (n >= 2) in the training lines, at least `MIN_BUCKETS`, at most
fastText's own default. A few collisions cost a baseline little; the file is then about
(words + buckets) x dim x 4 bytes.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

LABEL_PREFIX = "__label__"
TURN_SEPARATOR = " | "
MIN_BUCKETS = 1024
FASTTEXT_DEFAULT_BUCKETS = 2_000_000


@dataclass
class FastTextConfig:
    epochs: int = 25
    learning_rate: float = 0.5
    word_ngrams: int = 2
    dim: int = 50
    bucket: int | None = None  # None: sized to the training data (bucket_count)
    min_count: int = 1
    seed: int = 13
    threads: int = 1  # reproducible results need one thread


def dialogue_text(turns: Sequence[str]) -> str:
    # fastText splits on white space and treats a newline as the end of an example.
    return re.sub(r"\s+", " ", TURN_SEPARATOR.join(turns)).strip()


def bucket_count(lines: Iterable[str], word_ngrams: int) -> int:
    """Hash buckets for the distinct word n-grams (2 <= n <= word_ngrams) of `lines`: the next
    power of two, between MIN_BUCKETS and fastText's default (0 when there are no n-grams to hash)."""
    if word_ngrams < 2:
        return 0
    seen: set[int] = set()
    for line in lines:
        words = line.split()
        for n in range(2, word_ngrams + 1):
            seen.update(hash(tuple(words[i : i + n])) for i in range(len(words) - n + 1))
    wanted = max(MIN_BUCKETS, 1 << max(0, len(seen) - 1).bit_length())
    return min(wanted, FASTTEXT_DEFAULT_BUCKETS)


def _label_token(label: str) -> str:
    return LABEL_PREFIX + label.replace(" ", "_")


class FastTextClassifier:
    def __init__(self, model, label_names: Sequence[str], config: FastTextConfig | None = None):
        self.model = model
        self.label_names = list(label_names)
        self.config = config
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

    def hyperparameters(self) -> dict:
        """What the model was trained with, the sized bucket count included (for ModelVersion)."""
        return asdict(self.config) if self.config else {}

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
        if config.bucket is None:
            texts = (dialogue_text(turns) for turns in dialogues)
            config = replace(config, bucket=bucket_count(texts, config.word_ngrams))
        model = fasttext.train_supervised(
            input=path,
            epoch=config.epochs,
            lr=config.learning_rate,
            wordNgrams=config.word_ngrams,
            dim=config.dim,
            bucket=config.bucket,
            minCount=config.min_count,
            seed=config.seed,
            thread=config.threads,
            verbose=0,
        )
    finally:
        os.unlink(path)
    return FastTextClassifier(model, label_names, config)
