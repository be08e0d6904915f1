"""last_turn_label: pick the emotion or intent of a dialogue's last turn (EDOS).

An item holds a dialogue, its target (last) turn and three frozen choices (HITItem.dialogue,
target_turn, choices); the screen is labeling/partials/hit_item.html with the campaign's label
set as the "Other" list; an answer is a label of that set or a new label typed through "Other"
(Response.label / new_label_text); answers aggregate by strict majority (with Dawid-Skene as a
second opinion) into AggregatedLabel and crowd TurnLabels; the export is one row per turn.
"""

from collections.abc import Mapping

from annotation.taxonomy import normalise_label_name
from labeling.models import LAST_TURN_LABEL, AggregatedLabel
from labeling.task_types.base import AnswerRefused, Export, TaskType, export_records

NEW_LABEL = "__new__"  # the "Other: a new label" radio's value

EXPORT_FIELDS = ["dialogue", "turn", "status", "label", "answers", "agreement", "dawid_skene_label"]


class LastTurnLabel(TaskType):
    name = LAST_TURN_LABEL
    title = "Label the last turn (emotion / intent)"
    template = "labeling/partials/hit_item.html"
    uses_labels = True

    def save_answer(self, assignment, item, posted: Mapping[str, str], *, seconds_spent=0.0, assignment_locked=False):
        from labeling import services
        from labeling.models import Response

        answer = posted.get("answer", "")
        if not answer:
            raise AnswerRefused("Choose a label (or Other) before going on.")
        if answer == NEW_LABEL:
            return services.save_response(
                assignment,
                item,
                new_label_text=posted.get("new_label", ""),
                method=Response.OTHER_NEW,
                seconds_spent=seconds_spent,
                assignment_locked=assignment_locked,
            )
        # the service stores a list pick that is one of the three choices as top3
        return services.save_response(
            assignment,
            item,
            label_name=answer,
            method=Response.OTHER_LIST,
            seconds_spent=seconds_spent,
            assignment_locked=assignment_locked,
        )

    def quiz_correct(self, campaign, item, answer: Mapping) -> bool:
        gold = item.quiz_question.gold_label
        return gold is not None and normalise_label_name(answer.get("label", "")) == normalise_label_name(gold.name)

    def describe_gold(self, campaign, item) -> str:
        return item.quiz_question.gold_label.name

    def aggregate(self, campaign) -> dict:
        from labeling.aggregate import aggregate_campaign

        return aggregate_campaign(campaign)

    def summary(self, campaign) -> dict:
        rows = AggregatedLabel.objects.filter(campaign=campaign)
        return {"items": rows.count(), "majority": rows.filter(status=AggregatedLabel.MAJORITY).count()}

    def export(self, campaign, fmt: str) -> Export:
        rows = (
            AggregatedLabel.objects.filter(campaign=campaign)
            .order_by("dialogue_id")
            .values_list(
                "dialogue_id", "turn_id", "status", "label_text", "answer_count", "agreement", "dawid_skene_label"
            )
        )
        records = [dict(zip(EXPORT_FIELDS, row, strict=True)) for row in rows.iterator()]
        return export_records(campaign, "labels", records, EXPORT_FIELDS, fmt)
