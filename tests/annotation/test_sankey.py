"""Emotion-intent flows: node and link counts on a known corpus."""

import re

import pytest

from annotation.analysis.records import FlowTurn
from annotation.analysis.sankey import label_paths, sankey_figure, sankey_flows, standalone_html

CORPUS = [
    # dialogue 1: Sad -> Consoling -> Sad -> Grateful -> (5th turn ignored)
    FlowTurn(1, 0, "Sad"),
    FlowTurn(1, 1, "Consoling"),
    FlowTurn(1, 2, "Sad"),
    FlowTurn(1, 3, "Grateful"),
    FlowTurn(1, 4, "Joyful"),
    # dialogue 2: Sad -> Consoling
    FlowTurn(2, 0, "Sad"),
    FlowTurn(2, 1, "Consoling"),
    # dialogue 3: Angry -> Questioning, then turn 2 unlabeled so turn 3 is not part of the path
    FlowTurn(3, 0, "Angry"),
    FlowTurn(3, 1, "Questioning"),
    FlowTurn(3, 3, "Sad"),
]


def test_paths_take_the_first_four_adjacent_turns():
    assert list(label_paths(CORPUS)) == [
        ("Sad", "Consoling", "Sad", "Grateful"),
        ("Sad", "Consoling"),
        ("Angry", "Questioning"),
    ]


def test_node_and_link_counts_on_a_known_corpus():
    flows = sankey_flows(label_paths(CORPUS))
    assert flows.dialogues == 3
    values = dict(zip(flows.nodes, flows.node_values, strict=True))
    assert values == {
        (1, "Sad"): 2,
        (1, "Angry"): 1,
        (2, "Consoling"): 2,
        (2, "Questioning"): 1,
        (3, "Sad"): 1,
        (4, "Grateful"): 1,
    }
    links = {(flows.nodes[s], flows.nodes[t]): n for s, t, n in flows.links}
    assert links == {
        ((1, "Sad"), (2, "Consoling")): 2,
        ((1, "Angry"), (2, "Questioning")): 1,
        ((2, "Consoling"), (3, "Sad")): 1,
        ((3, "Sad"), (4, "Grateful")): 1,
    }


def test_flows_filter_by_the_starting_label():
    flows = sankey_flows(label_paths(CORPUS), start_label="Angry")
    assert flows.dialogues == 1
    assert flows.nodes == [(1, "Angry"), (2, "Questioning")]
    assert flows.links == [(0, 1, 1)]


def test_the_figure_and_the_standalone_html():
    flows = sankey_flows(label_paths(CORPUS))
    figure = sankey_figure(flows, "Flows")
    trace = figure["data"][0]
    assert trace["type"] == "sankey"
    assert len(trace["node"]["label"]) == 6 and trace["node"]["label"][0] == "T1 Sad"
    assert sum(trace["link"]["value"]) == 5
    # columns follow the turn: T1 at the left edge, T4 at the right, T2 a third of the way
    assert [round(x, 2) for x in trace["node"]["x"]] == [0.0, 0.0, 0.33, 0.33, 0.67, 1.0]
    assert trace["node"]["y"][:2] == pytest.approx([1 / 3, 5 / 6], abs=1e-3)
    html = standalone_html(figure, "Flows <test>")
    assert "<title>Flows &lt;test&gt;</title>" in html
    assert not re.search(r"<script[^>]+src=", html)  # nothing fetched from a CDN
    assert len(html) > 1_000_000  # plotly.js is inline
