"""The classifier's evaluation report from ModelVersion.metrics, in a shape the page can show.

The classifier writes {"precision", "recall", "macro_f1", "accuracy", "per_label", "confusion"}.
per_label may be {label: {"precision", "recall", "f1" or "f1-score", "support"}} or a list of such
dicts with a "label" key; confusion may be a matrix (rows true, columns predicted) over
metrics["labels"] (else the model's label names) or {"labels": [...], "matrix": [[...]]}.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

SUMMARY_KEYS = ("accuracy", "macro_f1", "precision", "recall")


@dataclass(frozen=True)
class PerLabelRow:
    label: str
    precision: float | None
    recall: float | None
    f1: float | None
    support: int | None


@dataclass(frozen=True)
class EvaluationReport:
    summary: dict[str, float | None]
    per_label: list[PerLabelRow]
    confusion_labels: list[str]
    confusion: list[list[int]]

    @property
    def is_empty(self) -> bool:
        return all(v is None for v in self.summary.values()) and not self.per_label and not self.confusion


def evaluation_report(metrics: Mapping[str, Any], label_names: Sequence[str] = ()) -> EvaluationReport:
    summary = {key: _number(metrics.get(key)) for key in SUMMARY_KEYS}
    labels, matrix = _confusion(metrics.get("confusion"), metrics.get("labels") or list(label_names))
    return EvaluationReport(summary, _per_label(metrics.get("per_label")), labels, matrix)


def _per_label(raw: Any) -> list[PerLabelRow]:
    if isinstance(raw, Mapping):
        items = [(str(label), values) for label, values in raw.items() if isinstance(values, Mapping)]
    elif isinstance(raw, list):
        items = [(str(values.get("label", "")), values) for values in raw if isinstance(values, Mapping)]
    else:
        return []
    return [
        PerLabelRow(
            label=label,
            precision=_number(values.get("precision")),
            recall=_number(values.get("recall")),
            f1=_number(values.get("f1", values.get("f1-score", values.get("f1_score")))),
            support=_whole(values.get("support")),
        )
        for label, values in items
    ]


def _confusion(raw: Any, labels: Sequence[str]) -> tuple[list[str], list[list[int]]]:
    if isinstance(raw, Mapping):
        labels, raw = raw.get("labels") or labels, raw.get("matrix")
    if not isinstance(raw, list) or not all(isinstance(row, list) for row in raw):
        return [], []
    matrix = [[int(value) for value in row] for row in raw]
    names = [str(label) for label in labels][: len(matrix)]
    names += [f"#{i}" for i in range(len(names), len(matrix))]
    return names, matrix


def confusion_figure(report: EvaluationReport) -> dict[str, Any]:
    return {
        "data": [
            {
                "type": "heatmap",
                "z": report.confusion,
                "x": report.confusion_labels,
                "y": report.confusion_labels,
                "colorscale": "Blues",
                "hovertemplate": "true %{y}, predicted %{x}: %{z}<extra></extra>",
            }
        ],
        "layout": {
            "title": {"text": "Confusion matrix"},
            "xaxis": {"title": {"text": "predicted"}},
            "yaxis": {"title": {"text": "true"}, "autorange": "reversed"},
            "height": max(420, 18 * len(report.confusion_labels) + 160),
        },
    }


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _whole(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
