"""The histogram of gaps between adjacent subtitle cues, summed over files.

It is the evidence for the dialogue split: most gaps inside a conversation are short, and the
split threshold (DIALOGUE_GAP_SECONDS, 5 s by default) sits where the histogram has flattened.
Each SubtitleFile stores {"bin_seconds": b, "max_seconds": m, "counts": [...], "over_max": n};
files with another bin layout than the first one found cannot be added bin by bin and are counted
as skipped rather than silently mixed in.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class GapHistogram:
    bin_seconds: float = 0.0
    max_seconds: float = 0.0
    counts: list[int] = field(default_factory=list)
    over_max: int = 0
    files: int = 0
    files_without_histogram: int = 0
    files_with_other_bins: int = 0

    @property
    def total(self) -> int:
        return sum(self.counts) + self.over_max

    def share_below(self, seconds: float) -> float:
        """The share of gaps in bins that end at or before `seconds`."""
        if not self.total:
            return 0.0
        below = sum(n for i, n in enumerate(self.counts) if (i + 1) * self.bin_seconds <= seconds + 1e-9)
        return below / self.total

    def bin_starts(self) -> list[float]:
        return [round(i * self.bin_seconds, 6) for i in range(len(self.counts))]


def sum_gap_histograms(histograms: Iterable[Mapping[str, Any]]) -> GapHistogram:
    total = GapHistogram()
    for histogram in histograms:
        if not histogram or not histogram.get("counts"):
            total.files_without_histogram += 1
            continue
        layout = (float(histogram["bin_seconds"]), float(histogram["max_seconds"]), len(histogram["counts"]))
        if not total.files:
            total.bin_seconds, total.max_seconds = layout[0], layout[1]
            total.counts = [0] * layout[2]
        elif layout != (total.bin_seconds, total.max_seconds, len(total.counts)):
            total.files_with_other_bins += 1
            continue
        total.files += 1
        total.counts = [a + int(b) for a, b in zip(total.counts, histogram["counts"], strict=True)]
        total.over_max += int(histogram.get("over_max", 0))
    return total


def gap_histogram_figure(histogram: GapHistogram, split_seconds: float) -> dict[str, Any]:
    """A plotly bar chart of the gaps with the split threshold drawn as a dashed line."""
    return {
        "data": [
            {
                "type": "bar",
                "x": [start + histogram.bin_seconds / 2 for start in histogram.bin_starts()],
                "y": histogram.counts,
                "width": histogram.bin_seconds,
                "name": "gaps",
                "hovertemplate": "%{x}s: %{y} gaps<extra></extra>",
            }
        ],
        "layout": {
            "title": {"text": "Gaps between adjacent subtitle cues"},
            "xaxis": {"title": {"text": "gap (seconds)"}},
            "yaxis": {"title": {"text": "gaps"}, "type": "log"},
            "shapes": [
                {
                    "type": "line",
                    "x0": split_seconds,
                    "x1": split_seconds,
                    "yref": "paper",
                    "y0": 0,
                    "y1": 1,
                    "line": {"dash": "dash", "color": "#b42318"},
                }
            ],
            "height": 420,
        },
    }
