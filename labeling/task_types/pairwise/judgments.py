"""A pairwise campaign's judgments: every counted pick of a work item, un-shuffled to its source."""

from collections.abc import Iterator

from labeling.crowd import win_rates
from labeling.models import Campaign, Response, counted_assignment_q
from labeling.task_types.pairwise.items import dialogue_of

EXPORT_FIELDS = [
    "item",
    "hit",
    "worker",
    "question",
    "picked_side",
    "left_is",
    "winner",
    "dialogue_a",
    "dialogue_b",
    "interface_language",  # the language of the page the judgment was given on (docs/languages.md)
]


def _counted_responses(campaign: Campaign):
    return (
        Response.objects.filter(
            counted_assignment_q("assignment__"),
            item__hit__campaign=campaign,
            item__quiz_question__isnull=True,
            method=Response.STRUCTURED,
        )
        .order_by("pk")
        .values_list("item_id", "item__hit_id", "assignment__worker_id", "data", "item__payload", "language")
    )


def load_judgments(campaign: Campaign) -> list[win_rates.Judgment]:
    """Every counted pick of a work item (not quiz), un-shuffled to its source."""
    judgments = []
    for item_id, _hit, worker_id, data, payload, _language in _counted_responses(campaign).iterator(chunk_size=5000):
        left_is = payload["left_is"]
        for question, side in data.items():
            winner = win_rates.unshuffle(side, left_is)
            judgments.append(win_rates.Judgment(item_id, worker_id, question, winner, left_is))
    return judgments


def judgment_records(campaign: Campaign) -> Iterator[dict]:
    """Every counted judgment, one record per question, read from the database as it is consumed."""
    for item_id, hit_id, worker_id, data, payload, language in _counted_responses(campaign).iterator(chunk_size=5000):
        for question, side in data.items():
            yield {
                "item": item_id,
                "hit": hit_id,
                "worker": worker_id,
                "question": question,
                "picked_side": side,
                "left_is": payload["left_is"],
                "winner": win_rates.unshuffle(side, payload["left_is"]),
                "dialogue_a": dialogue_of(payload, "a"),
                "dialogue_b": dialogue_of(payload, "b"),
                "interface_language": language,
            }


def rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def bounds(interval: win_rates.Interval | None) -> list[float] | None:
    return None if interval is None else [rounded(interval.low), rounded(interval.high)]
