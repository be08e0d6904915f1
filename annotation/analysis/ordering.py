"""Grouping streamed turns by dialogue without holding more than one dialogue in memory."""

from collections.abc import Iterable, Iterator
from itertools import groupby
from typing import Any


class UnorderedInput(ValueError):
    """The rows were not sorted by (dialogue, position): the one-pass functions would count wrongly."""


def ordered(rows: Iterable[Any]) -> Iterator[Any]:
    """Yield rows sorted by (dialogue_id, position), dropping a repeated turn (a turn that has two
    labels of one kind, e.g. sbert and self, counts once: the first row wins)."""
    previous: tuple[int, int] | None = None
    for row in rows:
        key = (row[0], row[1])
        if previous is not None:
            if key == previous:
                continue
            if key < previous:
                raise UnorderedInput(f"rows must be sorted by dialogue and position; {key} came after {previous}")
        previous = key
        yield row


def by_dialogue(rows: Iterable[Any]) -> Iterator[tuple[int, list[Any]]]:
    """(dialogue_id, its rows) for sorted rows; one dialogue's rows in memory at a time."""
    for dialogue_id, group in groupby(ordered(rows), key=lambda row: row[0]):
        yield dialogue_id, list(group)
