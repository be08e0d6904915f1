"""What every task type says about itself. A type is one package under labeling/task_types/ (a
subclass of TaskType and its screen template) and one `register(...)` line in
labeling/task_types/installed.py.

Everything else (campaigns, HITs, quiz seats, workers per item, claiming, the time limit,
submission, payments, platforms, the dashboard) is shared and knows a type only through this
interface. A type plans, checks and computes; it stores nothing through a service and imports
none: it returns what is to be written (screens, an answer) and the shell writes it. Items keep
what they show in `HITItem.payload` (the server's eyes only), answers in `Response.data`, quiz
gold in `QuizQuestion.gold`.
"""

import csv
import io
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from django.utils.translation import gettext_lazy

from annotation.export.cells import escape_cell
from labeling.models import HITItem, Response, seat_items_q

EXPORT_CHUNK_CHARS = 64 * 1024

# the form fields every screen posts besides the answer
SCREEN_FIELDS = ("go", "seconds", "csrfmiddlewaretoken")


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
    """A download: its text a chunk at a time (`chunks`, read once: a view streams it, so a
    campaign of a million answers is never one string in memory)."""

    content_type: str
    filename: str
    chunks: Iterable[str]

    @property
    def text(self) -> str:
        return "".join(self.chunks)


@dataclass(frozen=True)
class LabelPick:
    """An answer stored as a label (`Response.label`, or the text of a new one): what a type that
    picks labels returns from clean_answer. The answer action checks the label against the
    screen's choices and the campaign's label set, under the assignment's lock."""

    label_name: str | None
    new_label_text: str
    method: str


@dataclass
class ScreenPlan:
    """New HITs as a type plans them, for labeling.work.hits.build_hits to write: per group of HITs that
    start with the same seats (None: the campaign's workers_per_hit), each HIT's screens (as
    labeling.work.hits.write_hits takes them); and the model whose suggestions they offer, if any."""

    groups: list[tuple[int | None, list]] = field(default_factory=list)
    suggestion_model: object | None = None


@dataclass(frozen=True)
class WrongQuizAnswer:
    position: int
    text: str
    given: str
    gold_label: str
    explanation: str
    question_id: int = 0


@dataclass(frozen=True)
class QuizScore:
    correct: int
    total: int
    wrong: list[WrongQuizAnswer] = field(default_factory=list)


class TaskType:
    """The contract of a task type (override what differs; the defaults suit a type whose answer
    is a small dict saved as `Response.data`, shown by a template fragment)."""

    name = ""  # stored in Campaign.task_type
    title = ""  # shown to researchers
    template = ""  # one screen's task area, included in the shared screen's `answers` block
    # the whole screen: the shared one (whose lead, answers and hints a type's screen context may
    # fill with markup it built and escaped: lead_html, answers_html, hints_html, and the autosave's
    # autosave_trigger), or a template of the type's that extends it and fills its blocks. An htmx
    # swap renders it with the screen's context alone (no request, user or messages in it)
    screen_template = "labeling/partials/screen.html"
    screen_noun = gettext_lazy("Item")  # the screen's heading: "Item 2/10"
    results_template = ""  # the researcher's results page; "" when the dashboard is all there is
    detail_template = ""  # links of the type's own on the campaign page ("" for none)
    study_report = False  # labeling.reports.study covers its answers (one label per item, from a set)
    # the campaign's label set and fallback choices matter: a fact about the type, for its own
    # code; nothing outside labeling/task_types/ branches on it (tests/labeling/test_labeling_imports.py)
    uses_labels = False
    unanswered_message = gettext_lazy("Answer every question before going on.")
    # Back with an answer the type refuses (an unfinished one): go back and leave it unsaved
    back_leaves_refused_answers = True

    # --- the campaign -------------------------------------------------------------------------

    def clean_config(self, config: Mapping) -> dict:
        """The campaign's `task_config`, checked and completed with defaults; raise ConfigRefused."""
        return dict(config or {})

    def clean_label_set(self, labels: list, fallback_choices: list[str] | None) -> tuple[list, list[str]]:
        """(the campaign's label set, its fallback choices) from what its creator gave."""
        if labels or fallback_choices:
            raise ConfigRefused("labels", f"a {self.name} campaign offers no labels")
        return [], []

    def prepare_campaign(self, arguments: dict, language: str) -> tuple[dict, object]:
        """For labeling.services.campaigns.create_campaign_with_hits: take the type's own arguments out of
        `arguments` (the rest are Campaign settings) and return (task_config, the source its
        screens are planned from); raise ConfigRefused naming the argument."""
        raise ConfigRefused("task_type", f"a {self.name} campaign is made with create_campaign and build_hits")

    def plan_screens(self, campaign, source, rng, **options) -> ScreenPlan:
        """The screens of new HITs from `source`, drawn with `rng` (random.Random). Runs inside the
        transaction that writes them; it may reserve what they use (quiz items) in it."""
        raise NotImplementedError

    def qualification_screens(self, campaign, per_seat, suggester) -> list[list]:
        """The screens of a qualification HIT (labeling.services.qualification): per seat its own quiz
        questions (`per_seat`, one list a seat, all the same length), as one list of unsaved
        HITItems a screen position, each item carrying its seat. A type with no quiz to qualify
        workers with refuses (ValueError)."""
        raise ValueError(f"a {self.name} campaign has no quiz to qualify workers with")

    # --- one screen ---------------------------------------------------------------------------

    def stored_answers(self, assignment_id: int, item_ids: list[int]) -> dict[int, object]:
        """item id -> the stored answer as `screen` and `answer_changed` read it (None when there
        is none), for every id asked for."""
        stored: dict[int, object] = dict.fromkeys(item_ids)
        rows = Response.objects.filter(assignment_id=assignment_id, item_id__in=item_ids)
        stored.update(rows.values_list("item_id", "data"))
        return stored

    def read_with_answers(self, pk: int, user_id: int, item_ids: list[int]):
        """(assignment, stored_answers) read at once where the type can (None: read them apart)."""
        return None

    def screen(self, assignment, item, saved) -> dict:
        """The context of one screen of `assignment`, for screen_template and template."""
        return self.screen_context(assignment.hit.campaign, item, saved or {})

    def screen_context(self, campaign, item, saved: Mapping) -> dict:
        """What one screen shows, for `template`, with `saved` (the stored Response.data, {} when
        none) filled in. Never the gold, never where a side came from."""
        raise NotImplementedError

    def answer_changed(self, posted: Mapping[str, str], saved) -> bool:
        """Whether the posted form carries an answer to store (Next and Back carry the screen's
        answer again; saving an unchanged one twice would double its writes)."""
        return any(name not in SCREEN_FIELDS for name in posted)

    def clean_answer(self, campaign, item, posted: Mapping[str, str]) -> dict | LabelPick:
        """The answer posted on one screen as the dict to store (Response.data), or a LabelPick;
        raise AnswerRefused."""
        raise NotImplementedError

    # --- the quiz -----------------------------------------------------------------------------

    def score_quiz(self, assignment) -> QuizScore:
        """Score the quiz screens of an assignment from its saved answers (no side effects)."""
        campaign = assignment.hit.campaign
        answers = Response.objects.filter(assignment=assignment, item__quiz_question__isnull=False)
        responses = {response.item_id: response for response in answers}
        correct, wrong = 0, []
        for item in quiz_items_of(assignment).select_related("quiz_question"):
            response = responses.get(item.pk)
            answer = response.data if response is not None else {}
            if response is not None and self.quiz_correct(campaign, item, answer):
                correct += 1
                continue
            given = self.describe_answer(campaign, item, answer)
            gold = self.describe_gold(campaign, item)
            question = item.quiz_question
            wrong.append(WrongQuizAnswer(item.position, question.text, given, gold, question.explanation, question.pk))
        return QuizScore(correct, correct + len(wrong), wrong)

    def quiz_correct(self, campaign, item, answer: Mapping) -> bool:
        """Whether `answer` (Response.data) to a quiz item matches its QuizQuestion.gold."""
        raise NotImplementedError

    def describe_answer(self, campaign, item, answer: Mapping) -> str:
        return ", ".join(f"{key}: {value}" for key, value in answer.items()) or "(no answer)"

    def describe_gold(self, campaign, item) -> str:
        return ", ".join(f"{key}: {value}" for key, value in item.quiz_question.gold.items())

    # --- results ------------------------------------------------------------------------------

    def aggregate(self, campaign) -> dict:
        """Aggregate the counted answers (Assignment.objects.counted()), opening whatever more seats
        the type wants first; return a small summary (the job's and the command's result)."""
        raise NotImplementedError

    def hits_short_of_answers(self, campaign) -> list:
        """Published HITs whose seats are all done that want one more worker on their platform."""
        return []

    def summary(self, campaign) -> dict:
        """A small read-only summary of the results so far (the API's results; writes nothing)."""
        return {}

    def results(self, campaign) -> dict:
        """The context of `results_template`."""
        return {}

    def report(self, campaign) -> dict:
        """The type's sections of the campaign dashboard's report (labeling.reports.campaign)."""
        return {}

    def export(self, campaign, fmt: str) -> Export:
        """The campaign's answers or aggregate as `fmt` ("csv" or "jsonl"); ValueError otherwise."""
        raise NotImplementedError


def quiz_items_of(assignment):
    """The quiz items an assignment's seat shows, in screen order."""
    return quiz_items(assignment.hit_id, assignment.seat)


def quiz_items(hit_id: int, seat: int):
    """The quiz items seat slot `seat` of a HIT shows, in screen order."""
    return HITItem.objects.filter(seat_items_q(seat), hit_id=hit_id, quiz_question__isnull=False).order_by("position")


def export_records(campaign, what: str, records: Iterable[dict], fields: list[str], fmt: str) -> Export:
    """CSV (cells escaped: no formulas in a spreadsheet) or JSON Lines of `records`, read as the
    download is streamed; an unknown format is refused here (ValueError), before any byte."""
    if fmt == "jsonl":
        lines = (json.dumps(record, ensure_ascii=False) + "\n" for record in records)
        return Export("application/x-ndjson", f"campaign-{campaign.pk}-{what}.jsonl", _in_chunks(lines))
    if fmt != "csv":
        raise ValueError(f"unknown export format {fmt!r}; use csv or jsonl")
    return Export("text/csv", f"campaign-{campaign.pk}-{what}.csv", _in_chunks(_csv_lines(records, fields)))


def _csv_lines(records: Iterable[dict], fields: list[str]) -> Iterator[str]:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(fields)
    for record in records:
        writer.writerow([escape_cell(record[name]) for name in fields])
        yield out.getvalue()
        out.seek(0)
        out.truncate()
    yield out.getvalue()


def _in_chunks(lines: Iterable[str], size: int = EXPORT_CHUNK_CHARS) -> Iterator[str]:
    """Lines joined into chunks of about `size` characters (one write per chunk, not per line)."""
    batch: list[str] = []
    held = 0
    for line in lines:
        batch.append(line)
        held += len(line)
        if held >= size:
            yield "".join(batch)
            batch, held = [], 0
    if batch:
        yield "".join(batch)
