"""pairwise: which of two whole dialogues is better, on a few fixed questions (ACUTE-Eval).

An item holds two sides (HITItem.payload = {"left": side, "right": side, "left_is": "a"|"b"},
a side being {"dialogue": id} or, for a quiz item's degenerate side, {"turns": [...]}); which
source goes left is drawn per item with the campaign's seed and recorded in `left_is`. The
screen (labeling/task_types/pairwise.html, included in the shared screen) shows both dialogues in full, turn texts only: no
skill contexts, source names or ids. An answer is {question key: "left" | "right"} for every
configured question. Aggregation un-shuffles each pick to its source and gives per question the
win rate of source a with a Wilson 95 % interval, the position bias and the judges' agreement
(labeling.crowd.win_rates). The export is one row per judgment.

Sources: `subtitles` (the subtitle corpus, ingested or imported: `Dialogue.source` empty where the
table has that field, else every dialogue), `movie:<id>`, `source:<name>` (dialogues whose
turns carry TurnLabels of that source, e.g. `botstalk`, or whose own `source` is that name where
the Dialogue table has such a field), `model:<id>` (dialogues with turns labeled or predicted by
that ModelVersion), `ids:<id>,<id>,...`; or a CSV of `dialogue_a,dialogue_b` pairs.
"""

from collections.abc import Mapping

from django.utils.translation import gettext

from labeling.crowd import win_rates
from labeling.models import Worker
from labeling.task_types.base import AnswerRefused, Export, ScreenPlan, TaskType, export_records
from labeling.task_types.pairwise import config as config_of
from labeling.task_types.pairwise import planning
from labeling.task_types.pairwise.config import DEFAULT_PAIR_COUNT, DEFAULT_QUESTIONS, PAIRWISE, SIDES
from labeling.task_types.pairwise.items import dialogue_of, side_turns, source_of
from labeling.task_types.pairwise.judgments import EXPORT_FIELDS, bounds, judgment_records, load_judgments, rounded

__all__ = ["DEFAULT_PAIR_COUNT", "DEFAULT_QUESTIONS", "PAIRWISE", "Pairwise", "dialogue_of", "side_turns"]


class Pairwise(TaskType):
    name = PAIRWISE
    title = "Compare two dialogues (ACUTE-Eval)"
    template = "labeling/task_types/pairwise.html"
    results_template = "labeling/researcher/pairwise_results.html"

    def clean_config(self, config: Mapping) -> dict:
        return config_of.clean_config(config)

    def prepare_campaign(self, arguments: dict, language: str) -> tuple[dict, planning.PairSource]:
        return planning.prepare_campaign(arguments, language)

    def plan_screens(self, campaign, source, rng, **options) -> ScreenPlan:
        """The order is drawn with the campaign's own seed (task_config), not with `rng`."""
        return planning.plan_screens(campaign, source)

    def screen_context(self, campaign, item, saved: Mapping) -> dict:
        payload = item.payload
        questions = [
            {**question, "saved": saved.get(question["key"], "")} for question in campaign.task_config["questions"]
        ]
        return {
            "left_turns": side_turns(payload["left"]),
            "right_turns": side_turns(payload["right"]),
            "questions": questions,
        }

    def clean_answer(self, campaign, item, posted: Mapping[str, str]) -> dict:
        questions = campaign.task_config["questions"]
        answer = {}
        for question in questions:
            side = posted.get(f"q_{question['key']}", "")
            if side not in SIDES:
                raise AnswerRefused(
                    gettext("Answer every question (still open: %(title)s).") % {"title": question["title"]}
                )
            answer[question["key"]] = side
        return answer

    def quiz_correct(self, campaign, item, answer: Mapping) -> bool:
        better = item.quiz_question.gold.get("better")
        left_is = item.payload["left_is"]
        keys = [q["key"] for q in campaign.task_config["questions"]]
        return all(source_of(answer.get(key), left_is) == better for key in keys)

    def describe_answer(self, campaign, item, answer: Mapping) -> str:
        return ", ".join(f"{key}: {side}" for key, side in answer.items()) or "(no answer)"

    def describe_gold(self, campaign, item) -> str:
        better = item.quiz_question.gold.get("better")
        side = "left" if item.payload["left_is"] == better else "right"
        return f"the {side} dialogue on every question"

    def aggregate(self, campaign) -> dict:
        """Nothing to store: the results are computed from the answers whenever they are read."""
        return {"task_type": self.name, **self.summary(campaign)}

    def summary(self, campaign) -> dict:
        results = self.pairwise_results(campaign)
        summary = {"judgments": results.position_bias.total}
        for axis in results.axes:
            summary[f"{axis.question}_win_rate_a"] = rounded(axis.win_rate_a)
            summary[f"{axis.question}_interval_a"] = bounds(axis.interval_a)
            summary[f"{axis.question}_judgments"] = axis.total
        summary["left_win_rate"] = rounded(results.position_bias.rate)
        summary["left_win_interval"] = bounds(results.position_bias.interval)
        summary["pairwise_agreement"] = rounded(results.pairwise_agreement)
        return summary

    def results(self, campaign) -> dict:
        results = self.pairwise_results(campaign)
        names = dict(
            Worker.objects.filter(pk__in=[w.worker_id for w in results.workers]).values_list("pk", "external_id")
        )
        titles = {q["key"]: q for q in campaign.task_config["questions"]}
        return {
            "sources": campaign.task_config["sources"],
            "axes": [(titles[axis.question], axis) for axis in results.axes],
            "bias": results.position_bias,
            "workers": [(names.get(w.worker_id, w.worker_id), w) for w in results.workers],
            "agreement": results.pairwise_agreement,
        }

    def pairwise_results(self, campaign) -> win_rates.PairwiseResults:
        keys = [q["key"] for q in campaign.task_config["questions"]]
        return win_rates.pairwise_results(load_judgments(campaign), keys)

    def export(self, campaign, fmt: str) -> Export:
        return export_records(campaign, "judgments", judgment_records(campaign), EXPORT_FIELDS, fmt)
