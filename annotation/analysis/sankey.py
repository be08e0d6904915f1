"""Emotion-intent flows: how labels follow each other over the first turns (the papers' Figure 3).

A dialogue's path is the labels of its first `depth` turns in order; the path stops at the first
turn without a label, so every link joins two adjacent turns. Nodes are (step, label) pairs and a
link's value is the number of dialogues that pass from one node to the next.
"""

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from annotation.analysis.ordering import by_dialogue
from annotation.analysis.records import FlowTurn

DEFAULT_DEPTH = 4


@dataclass(frozen=True)
class SankeyFlows:
    nodes: list[tuple[int, str]]  # (step counted from 1, label)
    node_values: list[int]  # dialogues reaching each node
    links: list[tuple[int, int, int]]  # (source node index, target node index, dialogues)
    dialogues: int
    start_label: str | None
    depth: int


def label_paths(turns: Iterable[FlowTurn], depth: int = DEFAULT_DEPTH) -> Iterator[tuple[str, ...]]:
    """The label path of each dialogue, from turns sorted by (dialogue_id, position)."""
    for _dialogue_id, rows in by_dialogue(turns):
        path = [rows[0].label]
        for previous, row in zip(rows, rows[1:], strict=False):
            if len(path) == depth or row.position != previous.position + 1:
                break
            path.append(row.label)
        yield tuple(path)


def sankey_flows(
    paths: Iterable[tuple[str, ...]], *, start_label: str | None = None, depth: int = DEFAULT_DEPTH
) -> SankeyFlows:
    """Count nodes and links over the paths, keeping only those that start with `start_label`."""
    node_counts: Counter[tuple[int, str]] = Counter()
    link_counts: Counter[tuple[tuple[int, str], tuple[int, str]]] = Counter()
    dialogues = 0
    for path in paths:
        path = path[:depth]
        if not path or (start_label is not None and path[0] != start_label):
            continue
        dialogues += 1
        steps = [(step, label) for step, label in enumerate(path, start=1)]
        node_counts.update(steps)
        link_counts.update(zip(steps, steps[1:], strict=False))
    nodes = sorted(node_counts, key=lambda node: (node[0], -node_counts[node], node[1]))
    index = {node: i for i, node in enumerate(nodes)}
    links = sorted(
        ((index[a], index[b], n) for (a, b), n in link_counts.items()), key=lambda link: (link[0], -link[2], link[1])
    )
    return SankeyFlows(
        nodes=nodes,
        node_values=[node_counts[node] for node in nodes],
        links=links,
        dialogues=dialogues,
        start_label=start_label,
        depth=depth,
    )


def first_labels(flows: SankeyFlows) -> list[tuple[str, int]]:
    """(label, dialogues) at the first step, most dialogues first."""
    return [(label, value) for (step, label), value in zip(flows.nodes, flows.node_values, strict=True) if step == 1]


def sankey_figure(flows: SankeyFlows, title: str = "Label flows over the first turns") -> dict[str, Any]:
    """A plotly figure (as a plain dict) for the flows; nodes read "T2 Afraid"."""
    return {
        "data": [
            {
                "type": "sankey",
                "arrangement": "snap",
                "node": {
                    "label": [f"T{step} {label}" for step, label in flows.nodes],
                    **node_positions(flows),
                    "customdata": flows.node_values,
                    "hovertemplate": "%{label}: %{customdata} dialogues<extra></extra>",
                    "pad": 12,
                },
                "link": {
                    "source": [source for source, _, _ in flows.links],
                    "target": [target for _, target, _ in flows.links],
                    "value": [value for _, _, value in flows.links],
                },
            }
        ],
        "layout": {"title": {"text": title}, "font": {"size": 11}, "height": 640},
    }


def node_positions(flows: SankeyFlows) -> dict[str, list[float]]:
    """Pin each node to the column of its turn (plotly would push short paths to the right edge),
    stacked in each column by the dialogues that reach it."""
    columns = max(flows.depth - 1, 1)
    step_totals: Counter[int] = Counter()
    for (step, _label), value in zip(flows.nodes, flows.node_values, strict=True):
        step_totals[step] += value
    xs, ys, filled = [], [], Counter()
    for (step, _label), value in zip(flows.nodes, flows.node_values, strict=True):
        xs.append(_inside(0.001 + 0.998 * (step - 1) / columns))
        ys.append(_inside((filled[step] + value / 2) / step_totals[step]))
        filled[step] += value
    return {"x": xs, "y": ys}


def _inside(value: float) -> float:
    return min(0.999, max(0.001, round(value, 4)))


def standalone_html(figure: dict[str, Any], title: str) -> str:
    """A self-contained HTML page: plotly.js is embedded inline, so it opens offline."""
    import plotly.io

    return plotly.io.to_html(figure, include_plotlyjs=True, full_html=True, validate=False, div_id="flows").replace(
        "<head>", f"<head><title>{_escape(title)}</title>", 1
    )


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
