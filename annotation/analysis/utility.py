"""The dataset-utility table (the EDOS paper's Table 7) shaped for a page: rows are models, column
groups are test sets, each with PPL, D1, D2 and SES (pure, no Django).

It reads what the `dataset_utility` job stored in a model version's metrics:
`{"table7": [{"row", "test", "ppl", "d1", "d2", "ses", "pairs"}, ...], "test_sets": [...], "command": "..."}`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

METRICS = ("ppl", "d1", "d2", "ses")


@dataclass(frozen=True)
class UtilityRow:
    name: str
    cells: list[dict[str, Any] | None]  # one per test set, None where it was not scored


@dataclass(frozen=True)
class UtilityTable:
    test_sets: list[str]
    rows: list[UtilityRow]
    pairs: dict[str, int]
    command: str


def utility_table(metrics: dict[str, Any]) -> UtilityTable | None:
    """The table of a model version's metrics, or None when it holds none."""
    scored = (metrics or {}).get("table7") or []
    if not scored:
        return None
    tests = list(dict.fromkeys([*(metrics.get("test_sets") or []), *(row["test"] for row in scored)]))
    names = list(dict.fromkeys(row["row"] for row in scored))
    found = {(row["row"], row["test"]): row for row in scored}
    rows = [UtilityRow(name, [_cell(found.get((name, test))) for test in tests]) for name in names]
    pairs = {row["test"]: row.get("pairs", 0) for row in scored}
    return UtilityTable(tests, rows, pairs, metrics.get("command", ""))


def _cell(row: dict[str, Any] | None) -> dict[str, Any] | None:
    return {metric: row.get(metric) for metric in METRICS} if row else None
