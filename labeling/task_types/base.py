"""What every task type says about itself. A type is one subclass of TaskType, its screen
template, and one `register(...)` line in labeling/task_types/__init__.py.

Everything else (campaigns, HITs, quiz seats, 3 workers per item, claiming, the time limit,
submission, payments, platforms, the dashboard) is shared and knows a type only through this
interface. Items keep what they show in `HITItem.payload` (the server's eyes only), answers
in `Response.data`, quiz gold in `QuizQuestion.gold`.
"""

import csv
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass

from annotation.export.cells import escape_cell


class AnswerRefused(ValueError):
    """An answer the type does not accept; the message is for the annotator."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConfigRefused(ValueError):
    """A campaign setting of the type that cannot be used; `field` names it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Export:
    content_type: str
    filename: str
    text: str


class TaskType:
    """The contract of a task type (override what differs; the defaults suit a type whose answer
    is a small dict saved as `Response.data`)."""

    name = ""  # stored in Campaign.task_type
    title = ""  # shown to researchers
    template = ""  # one screen's task area, rendered inside the shared HIT screen
    results_template = ""  # the researcher's results page; "" when the dashboard is all there is
    uses_labels = False  # the campaign's label set and fallback choices matter (last_turn_label)

    def clean_config(self, config: Mapping) -> dict:
        """The campaign's `task_config`, checked and completed with defaults; raise ConfigRefused."""
        return dict(config or {})

    def screen_context(self, campaign, item, saved: Mapping) -> dict:
        """What one screen shows, for `template`, with `saved` (the stored Response.data, {} when
        none) filled in. Never the gold, never where a side came from."""
        raise NotImplementedError

    def clean_answer(self, campaign, item, posted: Mapping[str, str]) -> dict:
        """The answer posted on one screen as the dict to store; raise AnswerRefused."""
        raise NotImplementedError

    def save_answer(self, assignment, item, posted: Mapping[str, str], *, seconds_spent=0.0, assignment_locked=False):
        """Store the answer through labeling.services (the one writer of Response rows)."""
        from labeling import services

        answer = self.clean_answer(assignment.hit.campaign, item, posted)
        return services.save_structured_response(
            assignment, item, answer, seconds_spent=seconds_spent, assignment_locked=assignment_locked
        )

    def quiz_correct(self, campaign, item, answer: Mapping) -> bool:
        """Whether `answer` (Response.data) to a quiz item matches its QuizQuestion.gold."""
        raise NotImplementedError

    def describe_answer(self, campaign, item, answer: Mapping) -> str:
        return ", ".join(f"{key}: {value}" for key, value in answer.items()) or "(no answer)"

    def describe_gold(self, campaign, item) -> str:
        return ", ".join(f"{key}: {value}" for key, value in item.quiz_question.gold.items())

    def aggregate(self, campaign) -> dict:
        """Aggregate the counted answers (Assignment.objects.counted()); return a small summary."""
        raise NotImplementedError

    def summary(self, campaign) -> dict:
        """A small read-only summary of the results so far (the API's results; writes nothing)."""
        return {}

    def results(self, campaign) -> dict:
        """The context of `results_template`."""
        return {}

    def export(self, campaign, fmt: str) -> Export:
        """The campaign's answers or aggregate as `fmt` ("csv" or "jsonl"); ValueError otherwise."""
        raise NotImplementedError


def export_records(campaign, what: str, records: list[dict], fields: list[str], fmt: str) -> Export:
    """CSV (cells escaped: no formulas in a spreadsheet) or JSON Lines of `records`."""
    if fmt == "jsonl":
        text = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
        return Export("application/x-ndjson", f"campaign-{campaign.pk}-{what}.jsonl", text)
    if fmt != "csv":
        raise ValueError(f"unknown export format {fmt!r}; use csv or jsonl")
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(fields)
    for record in records:
        writer.writerow([escape_cell(record[name]) for name in fields])
    return Export("text/csv", f"campaign-{campaign.pk}-{what}.csv", out.getvalue())
