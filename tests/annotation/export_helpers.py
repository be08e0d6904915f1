"""Labels on the shared tiny corpus for the analysis and export tests (gold, extended, silver)."""

from annotation.models import Dialogue, Label, ModelVersion, Prediction, TurnLabel

# dialogue index -> labels of its turns in order (tiny_corpus: 3, 2, 3 and 2 turns)
GOLD = {
    0: ["Anxious", "Questioning", "Annoyed"],
    1: ["Excited", "Proud"],
    2: ["Apprehensive", "Suggesting", "Agreeing"],
}
EXTENDED = {3: [("sbert", "Nostalgic", 0.91), ("sbert", "Sad", 0.88)], 1: [("self", "Joyful", 0.97)]}
SILVER = {
    0: [("Anxious", 0.8), ("Questioning", 0.95), ("Angry", 0.6)],
    1: [("Excited", 0.9), ("Proud", 0.7)],
    2: [("Afraid", 0.4), ("Suggesting", 0.85), ("Agreeing", 0.99)],
    3: [("Nostalgic", 0.75), ("Sad", 0.65)],
}


def label(name: str) -> Label:
    return Label.objects.get(name=name)


def add_labels(dialogues, splits: dict[int, str] | None = None) -> ModelVersion:
    """Gold on dialogues 0-2, extended on 1 and 3, silver everywhere; returns the silver model."""
    for index, split in (splits or {}).items():
        Dialogue.objects.filter(pk=dialogues[index].pk).update(split=split)
    for index, names in GOLD.items():
        turns = list(dialogues[index].turns.order_by("position"))
        for turn, name in zip(turns, names, strict=True):
            TurnLabel.objects.create(
                turn=turn,
                label=label(name),
                source=TurnLabel.CROWD,
                provenance={
                    "campaign": 7,
                    "votes": {name: 2, "Neutral": 1},
                    "workers": 3,
                    "agreement": 2 / 3,
                    "answers": 3,
                    "posterior": {name: 0.875, "Neutral": 0.125},
                    "policy": "until_agreement",
                },
            )
    model = ModelVersion.objects.create(kind=ModelVersion.DIALOGUE, name="eb-plus-1", base_model="minilm")
    for index, labels in EXTENDED.items():
        turns = list(dialogues[index].turns.order_by("position"))
        for turn, (source, name, confidence) in zip(turns, labels, strict=False):
            provenance = {"source_dialogue": dialogues[0].pk, "similarity": confidence, "round": 1}
            if source == "self":
                provenance = {"round": 1}
            TurnLabel.objects.create(
                turn=turn,
                label=label(name),
                source=source,
                confidence=confidence,
                model_version=model if source == "self" else None,
                provenance=provenance,
            )
    for index, labels in SILVER.items():
        for turn, (name, confidence) in zip(dialogues[index].turns.order_by("position"), labels, strict=True):
            Prediction.objects.create(
                turn=turn,
                model_version=model,
                label=label(name),
                confidence=confidence,
                top_k=[[name, confidence], ["Neutral", round(1 - confidence, 4)]],
            )
    return model
