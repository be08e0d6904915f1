"""Which of a campaign's items a model rater saw in training, so the study report scores it only on
items it did not learn from.

The models that learn from the crowd's gold (the suggestion model, the dialogue classifier and
fastText of the rounds: mlworkers/classifier/suggestions.py, mlworkers/rounds/self_labeling.py) train on the gold of the
dialogues in the train split, choose and calibrate on the validation split and are measured on the
test split; the split is stored once per dialogue (annotation/splits.py, Dialogue.split), so a
campaign item's role follows from its dialogue's split. Other raters:
- the weak labeler learned from its seed sentences (a file, ModelVersion.training_data), none of
  this campaign's items: every item is held out;
- a chat model behind an endpoint, or a model of another kind: what it learned from is not known
  here, so its items are "unknown" and the report says so rather than calling them held out.
"""

from annotation.models import ModelVersion, Turn
from annotation.splits import TEST, TRAIN, VALIDATION

TRAINING, VALIDATING, HELD_OUT, UNKNOWN = "training", "validation", "held-out", "unknown"
ROLES = (HELD_OUT, UNKNOWN, VALIDATING, TRAINING)  # the order the report lists them in
# what a role means for the headline: scored (a fair comparison with the humans) or set apart
SCORED_ROLES = (HELD_OUT, UNKNOWN)
TRAINED_ON_GOLD = {ModelVersion.SUGGESTER, ModelVersion.DIALOGUE, ModelVersion.FASTTEXT}
TRAINED_ELSEWHERE = {ModelVersion.WEAK}
_CHUNK = 900  # under SQLite's bound-parameter limit
ROLE_OF_SPLIT = {TRAIN: TRAINING, VALIDATION: VALIDATING, TEST: HELD_OUT}

EXPOSURE_TEXT = {
    "gold": "trained on the crowd gold of the train split, chosen and calibrated on the validation split",
    "elsewhere": "trained on data outside this campaign (its seed sentences)",
    "unknown": "training data not known here",
}


def exposure(model_version: ModelVersion | None) -> str:
    """ "gold", "elsewhere" or "unknown" (an endpoint's model, or a kind whose data we do not know)."""
    if model_version is None:
        return "unknown"
    if model_version.kind in TRAINED_ON_GOLD:
        return "gold"
    return "elsewhere" if model_version.kind in TRAINED_ELSEWHERE else "unknown"


def item_roles(turn_ids: list[int], how: str) -> dict[int, str]:
    """turn -> its role for a rater of this exposure; a gold-trained model's item whose dialogue has
    no stored split yet counts as training (it may have been assigned one and learned from)."""
    if how == "elsewhere":
        return dict.fromkeys(turn_ids, HELD_OUT)
    if how == "unknown":
        return dict.fromkeys(turn_ids, UNKNOWN)
    splits: dict[int, str] = {}
    for start in range(0, len(turn_ids), _CHUNK):
        chunk = turn_ids[start : start + _CHUNK]
        splits.update(Turn.objects.filter(pk__in=chunk).values_list("pk", "dialogue__split"))
    return {turn: ROLE_OF_SPLIT.get(splits.get(turn) or "", TRAINING) for turn in turn_ids}
