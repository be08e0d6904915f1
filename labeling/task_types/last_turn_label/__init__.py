"""last_turn_label: pick the emotion or intent of a dialogue's last turn (EDOS).

An item holds a dialogue, its target (last) turn and three choices frozen at build time
(HITItem.dialogue, target_turn, choices: `planning`); the screen (`screen`: its parts of the
shared labeling/partials/screen.html) shows them with the campaign's label set as
the "Other" list; an answer is a label of that set or a new label typed through "Other"
(Response.label / new_label_text); a quiz answer is right when it is the gold label (`quiz`).
Answers aggregate by strict majority (with Dawid-Skene as a second opinion) into AggregatedLabel
and crowd TurnLabels (`aggregation`), after the seats the redundancy policy still wants are opened
(`follow_up`, `tiebreak`); the dashboard's figures are `report`'s; the export is one row per turn.
"""

from collections.abc import Mapping

from django.utils.translation import gettext_lazy

from annotation.taxonomy import normalise_label_name
from labeling.fast_path import reads as hot_reads
from labeling.models import LAST_TURN_LABEL, AggregatedLabel
from labeling.task_types.base import Export, QuizScore, ScreenPlan, TaskType, export_records
from labeling.task_types.last_turn_label import aggregation, follow_up, label_set, planning, quiz, report, screen

EXPORT_FIELDS = ["dialogue", "turn", "status", "label", "answers", "agreement", "dawid_skene_label"]


class LastTurnLabel(TaskType):
    name = LAST_TURN_LABEL
    title = "Label the last turn (emotion / intent)"
    # the shared screen, with the dialogue above the form, the choices and "Other" in it and the
    # key hints built by `screen` (labeling/task_types/last_turn_label/screen.py)
    screen_noun = gettext_lazy("Dialog")
    detail_template = "labeling/task_types/last_turn_label_links.html"
    uses_labels = True
    study_report = True
    unanswered_message = gettext_lazy("Choose a label (or Other) before going on.")
    back_leaves_refused_answers = False  # one pick is the whole answer: a refused one is a mistake

    def qualification_screens(self, campaign, per_seat, suggester):
        return planning.qualification_screens(campaign, per_seat, suggester)

    def clean_label_set(self, labels, fallback_choices):
        return label_set.clean_label_set(labels, fallback_choices)

    def plan_screens(self, campaign, source, rng, *, suggester=None) -> ScreenPlan:
        """`source`: the dialogues to label, in order; `suggester`: the model version whose top 3
        the screens offer (default ModelVersion.objects.suggester())."""
        return planning.plan_screens(campaign, source, rng, suggester=suggester)

    def stored_answers(self, assignment_id, item_ids):
        return hot_reads.stored_answers(assignment_id, item_ids)

    def read_with_answers(self, pk, user_id, item_ids):
        return hot_reads.own_assignment_with_answers(pk, user_id, item_ids)

    def screen(self, assignment, item, saved) -> dict:
        return screen.screen_context(assignment, item, saved)

    def answer_changed(self, posted, saved) -> bool:
        return screen.answer_changed(posted, saved)

    def clean_answer(self, campaign, item, posted):
        return screen.clean_answer(posted)

    def score_quiz(self, assignment) -> QuizScore:
        return quiz.score_quiz(assignment)

    def quiz_correct(self, campaign, item, answer: Mapping) -> bool:
        gold = item.quiz_question.gold_label
        return gold is not None and normalise_label_name(answer.get("label", "")) == normalise_label_name(gold.name)

    def describe_gold(self, campaign, item) -> str:
        return item.quiz_question.gold_label.name

    def aggregate(self, campaign) -> dict:
        """Open the extra seats that are due (follow-up HITs under a redundancy policy, tie-break
        HITs under `fixed`), then write the majorities (aggregation.aggregate_campaign)."""
        extra = follow_up.extra_seat_counts(follow_up.create_follow_up_hits(campaign))
        return {**extra, **aggregation.aggregate_campaign(campaign)}

    def hits_short_of_answers(self, campaign) -> list:
        return follow_up.hits_short_of_majority(campaign)

    def summary(self, campaign) -> dict:
        rows = AggregatedLabel.objects.filter(campaign=campaign)
        return {"items": rows.count(), "majority": rows.filter(status=AggregatedLabel.MAJORITY).count()}

    def report(self, campaign) -> dict:
        return report.label_report(campaign)

    def export(self, campaign, fmt: str) -> Export:
        rows = (
            AggregatedLabel.objects.filter(campaign=campaign)
            .order_by("dialogue_id")
            .values_list(
                "dialogue_id", "turn_id", "status", "label_text", "answer_count", "agreement", "dawid_skene_label"
            )
        )
        records = (dict(zip(EXPORT_FIELDS, row, strict=True)) for row in rows.iterator(chunk_size=5000))
        return export_records(campaign, "labels", records, EXPORT_FIELDS, fmt)
