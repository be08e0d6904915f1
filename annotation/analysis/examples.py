"""Example dialogues with their labels and confidences (the papers' Tables 6 and 8)."""

from collections.abc import Iterable
from dataclasses import dataclass

from annotation.analysis.ordering import by_dialogue
from annotation.analysis.records import ExampleTurn
from annotation.taxonomy import normalise_label_name


@dataclass(frozen=True)
class ExampleFilter:
    label: str | None = None
    min_confidence: float | None = None
    max_confidence: float | None = None

    def matches(self, turn: ExampleTurn) -> bool:
        if turn.label is None or (
            self.label is not None and normalise_label_name(turn.label) != normalise_label_name(self.label)
        ):
            return False
        if self.min_confidence is not None and (turn.confidence is None or turn.confidence < self.min_confidence):
            return False
        return not (
            self.max_confidence is not None and (turn.confidence is None or turn.confidence > self.max_confidence)
        )


@dataclass(frozen=True)
class ExampleDialogue:
    dialogue_id: int
    turns: list[ExampleTurn]
    matching_positions: frozenset[int]


def select_examples(turns: Iterable[ExampleTurn], wanted: ExampleFilter, limit: int = 20) -> list[ExampleDialogue]:
    """Dialogues (turns sorted by dialogue and position) with at least one turn matching `wanted`,
    in input order, at most `limit` of them; reading stops once enough are found."""
    chosen: list[ExampleDialogue] = []
    for dialogue_id, rows in by_dialogue(turns):
        matching = frozenset(row.position for row in rows if wanted.matches(row))
        if matching:
            chosen.append(ExampleDialogue(dialogue_id, rows, matching))
            if len(chosen) >= limit:
                break
    return chosen
