"""A pairwise item's two sides: an item holds {"left": side, "right": side, "left_is": "a"|"b"}, a
side being {"dialogue": id} or, for a quiz item's degenerate side, {"turns": [...]}."""

from collections.abc import Mapping

from annotation.models import Turn
from labeling.crowd import win_rates
from labeling.task_types.pairwise.config import SIDES


def side_turns(side: Mapping) -> list[str]:
    if "turns" in side:
        return list(side["turns"])
    return list(Turn.objects.filter(dialogue_id=side["dialogue"]).order_by("position").values_list("text", flat=True))


def dialogue_of(payload: Mapping, source: str) -> int | None:
    """The dialogue id of source `source` ("a"/"b") in an item's payload (None: a made-up side)."""
    side = payload["left"] if payload["left_is"] == source else payload["right"]
    return side.get("dialogue")


def source_of(side: str | None, left_is: str) -> str | None:
    """The source ("a"/"b") a picked side showed, or None for no pick."""
    return win_rates.unshuffle(side, left_is) if side in SIDES else None
