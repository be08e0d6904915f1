"""Dataset statistics as the papers' Table 3 (sizes) and Table 9 (per-label counts).

One pass over turns sorted by (dialogue, position): memory holds counters only, never the rows.
A dialogue counts under the label of its first labeled turn (for gold data that is turn one).
"""

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from annotation.analysis.ordering import ordered
from annotation.analysis.records import LabeledTurn


@dataclass
class SizeStatistics:
    """Table 3: how big a dataset is."""

    dialogues: int = 0
    turns: int = 0
    tokens: int = 0

    @property
    def turns_per_dialogue(self) -> float:
        return self.turns / self.dialogues if self.dialogues else 0.0

    @property
    def tokens_per_dialogue(self) -> float:
        return self.tokens / self.dialogues if self.dialogues else 0.0

    @property
    def tokens_per_turn(self) -> float:
        return self.tokens / self.turns if self.turns else 0.0


@dataclass(frozen=True)
class LabelRow:
    label: str
    dialogues: int
    dialogue_share: float
    turns: int
    turn_share: float


@dataclass
class DatasetStatistics:
    sizes: SizeStatistics = field(default_factory=SizeStatistics)
    dialogues_by_first_label: Counter = field(default_factory=Counter)
    turns_by_label: Counter = field(default_factory=Counter)

    def label_rows(self, label_order: Sequence[str] = ()) -> list[LabelRow]:
        """Table 9: one row per label, in `label_order` first, then any other label by name."""
        present = set(self.turns_by_label) | set(self.dialogues_by_first_label)
        names = [name for name in label_order if name in present]
        names += sorted(present - set(names))
        dialogues = sum(self.dialogues_by_first_label.values()) or 1
        turns = sum(self.turns_by_label.values()) or 1
        return [
            LabelRow(
                label=name,
                dialogues=self.dialogues_by_first_label[name],
                dialogue_share=self.dialogues_by_first_label[name] / dialogues,
                turns=self.turns_by_label[name],
                turn_share=self.turns_by_label[name] / turns,
            )
            for name in names
        ]


def dataset_statistics(turns: Iterable[LabeledTurn]) -> DatasetStatistics:
    """Sizes and per-label counts of turns sorted by (dialogue_id, position).

    Turns with label None count in the sizes only (the unlabeled corpus). Raises UnorderedInput
    when the rows are not sorted, since the dialogue count relies on it.
    """
    stats = DatasetStatistics()
    sizes = stats.sizes
    current_dialogue: int | None = None
    dialogue_has_label = False
    for dialogue_id, _position, token_count, label in ordered(turns):
        if dialogue_id != current_dialogue:
            current_dialogue, dialogue_has_label = dialogue_id, False
            sizes.dialogues += 1
        sizes.turns += 1
        sizes.tokens += token_count or 0
        if label is None:
            continue
        stats.turns_by_label[label] += 1
        if not dialogue_has_label:
            stats.dialogues_by_first_label[label] += 1
            dialogue_has_label = True
    return stats
