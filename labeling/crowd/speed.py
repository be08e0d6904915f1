"""Quality signals from the time workers spend on screens. Pure: no Django import.

The classic sign of a click-through worker is a screen answered faster than it can be read. Each
answer carries the seconds its screen was shown before it was given (measured by the page,
clamped by the server); a worker whose median over their dialogue screens is below a threshold
is flagged on the dashboard.
"""

import math
from collections import defaultdict
from collections.abc import Iterable
from statistics import median


def clamped_seconds(raw: object, cap: float) -> float:
    """Seconds posted by the page as a sane number: non-numbers, NaN, infinities and negatives
    count 0, and one save never credits more than `cap` (a tab left open over lunch)."""
    try:
        value = float(str(raw).strip()[:32])
    except ValueError:
        return 0.0
    if not math.isfinite(value) or value < 0:
        return 0.0
    return min(value, cap)


def median_seconds(answers: Iterable[tuple[int, float]]) -> dict[int, float]:
    """(worker id, seconds on one screen) pairs -> each worker's median seconds per screen."""
    by_worker: dict[int, list[float]] = defaultdict(list)
    for worker, seconds in answers:
        by_worker[worker].append(seconds)
    return {worker: median(values) for worker, values in by_worker.items()}


def is_too_fast(median_value: float | None, answers: int, *, threshold: float, min_answers: int) -> bool:
    """Flag a worker whose median is under `threshold` seconds, once they gave `min_answers`."""
    return median_value is not None and answers >= min_answers and median_value < threshold
