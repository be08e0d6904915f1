"""Every counted answer of a campaign, one record each, whatever its task type: who gave it, on
which screen, what it was, how long it took and the interface language it was given in (so a
researcher can check whether the language changes the labels; docs/languages.md).

The task type's own export (task_types.<type>.export) is its aggregate or judgments; this one is the
raw material under it, streamed as it is read (labeling.task_types.base.export_records).
"""

import json
from collections.abc import Iterator

from django.db.models.functions import Coalesce

from labeling.models import Campaign, Response, counted_assignment_q
from labeling.task_types.base import Export, export_records

FIELDS = [
    "answer",
    "assignment",
    "hit",
    "worker",
    "item",
    "position",
    "dialogue",
    "turn",
    "quiz",
    "label",
    "new_label_text",
    "method",
    "data",
    "seconds",
    "answered_at",
    "interface_language",
]


def answer_records(campaign: Campaign) -> Iterator[dict]:
    """The campaign's counted answers in the order they were first given; a platform landing's
    identity is the worker it was merged into, as aggregation counts it."""
    rows = (
        Response.objects.filter(counted_assignment_q("assignment__"), item__hit__campaign=campaign)
        .order_by("pk")
        .values_list(
            "pk",
            "assignment_id",
            "item__hit_id",
            Coalesce("assignment__worker__merged_into_id", "assignment__worker_id"),
            "item_id",
            "item__position",
            "item__dialogue_id",
            "item__target_turn_id",
            "item__quiz_question_id",
            "label__name",
            "new_label_text",
            "method",
            "data",
            "seconds_spent",
            "answered_at",
            "language",
        )
    )
    for row in rows.iterator(chunk_size=5000):
        *ids, quiz_question, label, typed, method, data, seconds, answered_at, language = row
        yield dict(
            zip(FIELDS, ids, strict=False),
            quiz=quiz_question is not None,
            label=label or "",
            new_label_text=typed,
            method=method,
            data=json.dumps(data, ensure_ascii=False) if data else "",
            seconds=round(seconds, 3),
            answered_at=answered_at.isoformat(),
            interface_language=language,
        )


def export_answers(campaign: Campaign, fmt: str) -> Export:
    """The answers as CSV or JSON Lines; ValueError for another format."""
    return export_records(campaign, "answers", answer_records(campaign), FIELDS, fmt)
