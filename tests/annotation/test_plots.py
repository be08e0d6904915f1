"""The server-drawn charts: positions computed from the numbers, nothing else."""

import pytest

from annotation.analysis.plots import LABEL_SHARE, VALUE_SHARE, bar_chart, round_up, scatter_plot, shorten


def test_bars_are_scaled_to_a_round_maximum_and_keep_their_order():
    chart = bar_chart("Labels", [("Sad", 4), ("Angry", 2), ("Unknown", None), ("Joyful", 0)])
    assert [bar.label for bar in chart.bars] == ["Sad", "Angry", "Joyful"]  # no value, no bar
    span = 100 - LABEL_SHARE - VALUE_SHARE
    assert chart.bars[0].length == pytest.approx(span * 4 / 5)  # the scale ends at 5, above 4
    assert chart.bars[1].length == pytest.approx(span * 2 / 5)
    assert chart.bars[2].length == 0
    assert [tick.text for tick in chart.ticks] == ["0", "2.5", "5"]
    assert [bar.text for bar in chart.bars] == ["4", "2", "0"]
    assert chart.bars[1].y - chart.bars[0].y == 22 and chart.height > chart.bars[-1].y + 15


def test_rates_use_a_fixed_scale_and_digits():
    chart = bar_chart("Agreement", [("Sad", 0.5), ("Angry", 1.2)], max_value=1.0, digits=2)
    span = 100 - LABEL_SHARE - VALUE_SHARE
    assert chart.bars[0].length == pytest.approx(span / 2)
    assert chart.bars[1].length == pytest.approx(span)  # clipped at the scale's end
    assert [bar.text for bar in chart.bars] == ["0.50", "1.20"]
    assert [tick.text for tick in chart.ticks] == ["0", "0.5", "1"]


def test_an_empty_chart_has_no_bars_and_still_an_axis():
    chart = bar_chart("Nothing", [])
    assert chart.bars == [] and [tick.text for tick in chart.ticks] == ["0", "0.5", "1"]


def test_the_scatter_places_points_on_linear_axes_and_leaves_out_missing_values():
    plot = scatter_plot(
        "Workers",
        [("w1", 4.0, 1.0, False), ("w2", 0.0, 0.0, True), ("w3", None, 0.5, False), ("w4", 2.0, None, False)],
        x_title="seconds",
        y_title="agreement",
    )
    assert [p.label for p in plot.points] == ["w1", "w2"]
    w1, w2 = plot.points
    assert w2.cx == plot.left and w2.cy == plot.bottom and w2.flagged  # the origin
    assert w1.cy == plot.top  # agreement 1 at the top
    assert plot.x_ticks[-1].text == "5"  # 4 s plus room, rounded up
    assert w1.cx == pytest.approx(plot.left + (plot.right - plot.left) * 4 / 5)
    assert w1.label_before and not w2.label_before  # a label near the right edge goes left


@pytest.mark.parametrize(
    ("value", "rounded"), [(0, 1), (0.3, 0.5), (1, 1), (1.1, 2), (2.2, 2.5), (3, 5), (7, 10), (42, 50), (180, 200)]
)
def test_round_up(value, rounded):
    assert round_up(value) == pytest.approx(rounded)


def test_long_labels_are_shortened():
    assert shorten("Sad") == "Sad"
    assert shorten("A very long proposed label name") == "A very long propo…"
