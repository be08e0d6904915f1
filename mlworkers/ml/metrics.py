"""Classification metrics (pure numpy): precision, recall, macro-F1, accuracy, per label, confusion."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def classification_report(
    y_true: Sequence[int | str], y_pred: Sequence[int | str], label_names: Sequence[str]
) -> dict[str, Any]:
    """Scores of predictions against gold labels, given as label indices or as names.

    Macro averages run over the labels PRESENT IN y_true (a label nobody used cannot be scored,
    and counting it as 0 would punish the model for the sample); a label predicted but never true
    still costs precision of nothing and recall of the true labels it took. Returns plain
    JSON-ready values: `confusion[i][j]` counts true label i predicted as j.
    """
    names = list(label_names)
    true = _as_indices(y_true, names, "y_true")
    pred = _as_indices(y_pred, names, "y_pred")
    if len(true) != len(pred):
        raise ValueError(f"y_true has {len(true)} items but y_pred has {len(pred)}")
    confusion = np.zeros((len(names), len(names)), dtype=np.int64)
    np.add.at(confusion, (true, pred), 1)
    per_label = [_label_scores(name, confusion, i) for i, name in enumerate(names)]
    present = [row for row in per_label if row["support"] > 0]
    return {
        "n": int(len(true)),
        "accuracy": float((true == pred).mean()) if len(true) else 0.0,
        "macro_precision": _mean(row["precision"] for row in present),
        "macro_recall": _mean(row["recall"] for row in present),
        "macro_f1": _mean(row["f1"] for row in present),
        "labels_scored": len(present),
        "per_label": per_label,
        "label_names": names,
        "confusion": confusion.tolist(),
    }


def _label_scores(name: str, confusion: np.ndarray, i: int) -> dict[str, Any]:
    true_positive = int(confusion[i, i])
    support = int(confusion[i, :].sum())
    predicted = int(confusion[:, i].sum())
    precision = true_positive / predicted if predicted else 0.0
    recall = true_positive / support if support else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "label": name,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "support": support,
        "predicted": predicted,
    }


def _as_indices(values: Sequence[int | str], names: list[str], field: str) -> np.ndarray:
    index = {name: i for i, name in enumerate(names)}
    out = np.empty(len(values), dtype=np.int64)
    for position, value in enumerate(values):
        if isinstance(value, str):
            if value not in index:
                raise ValueError(f"{field}[{position}]: label {value!r} is not one of the {len(names)} label names")
            out[position] = index[value]
        else:
            if not 0 <= int(value) < len(names):
                raise ValueError(f"{field}[{position}]: index {value} is outside 0..{len(names) - 1}")
            out[position] = int(value)
    return out


def _mean(values) -> float:
    values = list(values)
    return float(sum(values) / len(values)) if values else 0.0
