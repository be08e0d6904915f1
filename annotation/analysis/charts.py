"""Plotly figures (plain dicts) for label distributions."""

from collections.abc import Mapping, Sequence
from typing import Any


def distribution_figure(series: Mapping[str, Mapping[str, float]], labels: Sequence[str], title: str) -> dict[str, Any]:
    """Grouped bars, one series per name ({"gold": {label: share}, ...}), over `labels` in order."""
    return {
        "data": [
            {
                "type": "bar",
                "name": name,
                "x": list(labels),
                "y": [shares.get(label, 0.0) for label in labels],
                "hovertemplate": "%{x}: %{y:.2%}<extra>" + name + "</extra>",
            }
            for name, shares in series.items()
        ],
        "layout": {
            "title": {"text": title},
            "barmode": "group",
            "yaxis": {"title": {"text": "share of turns"}, "tickformat": ".0%"},
            "xaxis": {"tickangle": -60},
            "height": 480,
            "legend": {"orientation": "h", "y": 1.1},
            "margin": {"b": 120},
        },
    }


def shares(counts: Mapping[str, int]) -> dict[str, float]:
    total = sum(counts.values())
    return {label: count / total for label, count in counts.items()} if total else {}
