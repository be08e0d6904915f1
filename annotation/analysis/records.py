"""The plain records the analysis functions read, and the three label kinds of the dataset."""

from typing import NamedTuple

GOLD = "gold"  # TurnLabel source crowd: the crowd majority
EXTENDED = "extended"  # TurnLabel sources sbert and self: labels grown from the gold ones
SILVER = "silver"  # Prediction: one model version's top-1 label for every turn
KINDS: tuple[str, ...] = (GOLD, EXTENDED, SILVER)
KIND_DESCRIPTIONS = {
    GOLD: "crowd majority labels (TurnLabel source crowd)",
    EXTENDED: "labels from SBERT similarity to gold dialogues and from self-labeling (TurnLabel sources sbert, self)",
    SILVER: "top-1 labels of one classifier version (Prediction)",
}


class LabeledTurn(NamedTuple):
    """One turn with the label it has in one kind (label None for the unlabeled corpus)."""

    dialogue_id: int
    position: int
    token_count: int
    label: str | None


class FlowTurn(NamedTuple):
    dialogue_id: int
    position: int
    label: str


class ExampleTurn(NamedTuple):
    dialogue_id: int
    position: int
    text: str
    label: str | None
    confidence: float | None
