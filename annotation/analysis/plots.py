"""Small charts drawn on the server as SVG: horizontal bars and a scatter plot.

No JavaScript and no chart library: they show in a screenshot, a printout and a browser with
scripts off. Across, everything is placed in percent of the chart's width, down in pixels, so the
chart fills any screen and its text keeps its size (a viewBox would shrink it to nothing on a
phone). Pure: this module computes positions only; templates/partials/bar_chart.html and
scatter_plot.html draw them, and each chart sits beside a table with the same numbers (the table
is what a screen reader reads).
"""

from collections.abc import Iterable
from dataclasses import dataclass

LABEL_SHARE = 31.0  # percent of the width for the label names left of the bars
VALUE_SHARE = 11.0  # percent kept right of the longest bar for its value
ROW = 22  # px per bar
BAR = 15
AXIS = 28  # px under the bars for the tick labels


@dataclass(frozen=True)
class Tick:
    position: float  # percent across (x) or pixels down (y)
    text: str


@dataclass(frozen=True)
class Bar:
    label: str
    text: str  # the value as printed
    y: int  # top of the bar, px
    length: float  # percent
    text_y: int  # baseline of the label and value texts, px
    value_x: float  # percent


@dataclass(frozen=True)
class BarChart:
    title: str
    bars: list[Bar]
    height: int
    left: float  # percent where bars start
    label_x: float  # percent where label names end
    axis_y: int
    ticks: list[Tick]


def bar_chart(
    title: str, rows: Iterable[tuple[str, float | None]], *, max_value: float | None = None, digits: int = 0
) -> BarChart:
    """One bar per (label, value) row, in the order given; rows without a value are left out.
    `max_value` fixes the scale (1.0 for rates), else a round number at or above the largest value."""
    kept = [(label, float(value)) for label, value in rows if value is not None]
    top = max_value or round_up(max((value for _, value in kept), default=0.0))
    span = 100.0 - LABEL_SHARE - VALUE_SHARE
    bars = []
    for index, (label, value) in enumerate(kept):
        length = round(span * min(max(value, 0.0), top) / top, 2)
        y = index * ROW + 4
        text = f"{value:.{digits}f}"
        bars.append(Bar(shorten(label), text, y, length, y + BAR - 3, round(LABEL_SHARE + length + 0.8, 2)))
    axis_y = len(bars) * ROW + 6
    ticks = [Tick(round(LABEL_SHARE + span * share, 2), f"{top * share:g}") for share in (0, 0.5, 1)]
    return BarChart(title, bars, axis_y + AXIS, LABEL_SHARE, LABEL_SHARE - 1.2, axis_y, ticks)


@dataclass(frozen=True)
class Point:
    label: str
    x: float
    y: float
    cx: float  # percent
    cy: float  # px
    label_before: bool  # print the label left of the point (near the right edge)
    flagged: bool


@dataclass(frozen=True)
class ScatterPlot:
    title: str
    x_title: str
    y_title: str
    points: list[Point]
    height: int
    left: float  # percent
    right: float  # percent
    top: int  # px
    bottom: int  # px
    x_ticks: list[Tick]
    y_ticks: list[Tick]


SCATTER_HEIGHT = 300
SCATTER_LEFT, SCATTER_RIGHT = 12.0, 96.0  # percent
SCATTER_TOP, SCATTER_BOTTOM = 28, SCATTER_HEIGHT - 44  # px


def scatter_plot(
    title: str,
    points: Iterable[tuple[str, float | None, float | None, bool]],
    *,
    x_title: str,
    y_title: str,
    y_max: float = 1.0,
) -> ScatterPlot:
    """Points (label, x, y, flagged) on linear axes from 0; points missing x or y are left out.
    The x axis ends at a round number with some room past the largest x."""
    kept = [(label, float(x), float(y), flagged) for label, x, y, flagged in points if x is not None and y is not None]
    x_max = round_up(1.1 * max((x for _, x, _, _ in kept), default=0.0))

    def across(value: float) -> float:
        return round(SCATTER_LEFT + (SCATTER_RIGHT - SCATTER_LEFT) * min(max(value, 0.0), x_max) / x_max, 2)

    def down(value: float) -> float:
        return round(SCATTER_BOTTOM - (SCATTER_BOTTOM - SCATTER_TOP) * min(max(value, 0.0), y_max) / y_max, 1)

    shown = [Point(label, x, y, across(x), down(y), across(x) > 75, flagged) for label, x, y, flagged in kept]
    shares = (0, 0.25, 0.5, 0.75, 1)
    return ScatterPlot(
        title=title,
        x_title=x_title,
        y_title=y_title,
        points=shown,
        height=SCATTER_HEIGHT,
        left=SCATTER_LEFT,
        right=SCATTER_RIGHT,
        top=SCATTER_TOP,
        bottom=SCATTER_BOTTOM,
        x_ticks=[Tick(across(x_max * share), f"{x_max * share:g}") for share in shares],
        y_ticks=[Tick(down(y_max * share), f"{y_max * share:g}") for share in shares],
    )


def round_up(value: float) -> float:
    """The smallest of 1, 2, 2.5 or 5 times a power of ten that is at least `value` (1 for nothing)."""
    if value <= 0:
        return 1.0
    scale = 1.0
    while scale * 10 < value:
        scale *= 10
    while scale > value:
        scale /= 10
    return next(round(step * scale, 12) for step in (1, 2, 2.5, 5, 10) if step * scale >= value)


def shorten(label: str, limit: int = 18) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"
