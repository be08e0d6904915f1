"""The study report's figures for one label campaign (ours, or imported crowd results such as the
EDOS ones): `build_report(campaign) -> StudyReport`, a plain dataclass that the page, the command,
the methods paragraph and the dataset card all read.

Two counting rules, both reported, as the EDOS importer does (labeling/services/importers/edos_format.py):
- as given (the paper's rule, used for Table 4 and the agreement figures): a label typed through
  "Other" is its own category, kept apart from the label it may spell ("neutral (Other)");
- the gold rule: typed labels normalised onto the labels they name, as aggregation stores them.
"""

from collections import defaultdict
from dataclasses import asdict, dataclass, field

from django.conf import settings

from labeling.crowd.agreement import RatingTable, rating_table
from labeling.crowd.intervals import AgreementIntervals, agreement_intervals
from labeling.crowd.majority import majority_vote, majority_vote_normalised
from labeling.models import Assignment, Campaign, Response
from labeling.reports.study.crowd import CrowdFigures, crowd_figures
from labeling.reports.study.provenance import Provenance, campaign_provenance
from labeling.reports.study.raters import model_rater_figures
from labeling.reports.study.tables import PaperTables, paper_tables
from labeling.study_flow.report import study_flow_figures
from labeling.task_types.last_turn_label.aggregation import CrowdAnswer, known_labels, load_answers
from labeling.work.label_sets import campaign_labels

TYPED_SUFFIX = " (Other)"


@dataclass(frozen=True)
class Table4:
    """The EDOS paper's Table 4 shape."""

    dialogues: int
    majority: int  # items with a strict majority of the answers as given
    majority_share: float | None
    majority_gold: int  # the same with typed labels normalised (what the gold labels hold)
    fleiss_kappa: float | None
    quiz_workers: int  # workers with at least one quiz mark
    quiz_bonus_share: float | None  # of those, the share whose mean mark reached the bonus mark
    quiz_bonus_mark: int
    typed_dialogues: int  # items on which at least one worker typed a label through "Other"
    answers: int  # answers as given on the dialogues (the N of every agreement figure's votes)
    agreement_items: int  # dialogues with two answers or more: the N of every agreement figure
    categories: int  # distinct answers as given (typed ones each their own): the q of Gwet's AC1


@dataclass(frozen=True)
class StudyReport:
    campaign: dict
    table4: Table4
    agreement: AgreementIntervals
    crowd: CrowdFigures
    model_raters: list[dict] = field(default_factory=list)
    provenance: Provenance | None = None
    tables: PaperTables | None = None
    # the study flow: funnel, exit survey, practice beside quiz accuracy (labeling.study_flow.report)
    study_flow: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        data = asdict(self)
        data["provenance"] = self.provenance.as_dict() if self.provenance else None
        data["agreement"] = {
            "items": self.agreement.items,
            "resamples": self.agreement.resamples,
            "seed": self.agreement.seed,
            "confidence": self.agreement.confidence,
            "overall": {name: e.as_dict() for name, e in self.agreement.overall.items()},
            "per_label": {
                label: {name: e.as_dict() for name, e in figures.items()}
                for label, figures in self.agreement.per_label.items()
            },
        }
        return data


def as_given(answer: CrowdAnswer) -> str:
    return f"{answer.text}{TYPED_SUFFIX}" if answer.method == Response.OTHER_NEW else answer.text


def dialogue_answers(campaign: Campaign, loaded: list[CrowdAnswer] | None = None) -> list[CrowdAnswer]:
    return [
        a
        for a in (loaded if loaded is not None else load_answers(campaign))
        if a.quiz_gold is None and a.turn_id is not None
    ]


def build_report(campaign: Campaign, *, resamples: int | None = None, seed: int = 0) -> StudyReport:
    resamples = settings.STUDY_REPORT_RESAMPLES if resamples is None else resamples
    loaded = load_answers(campaign)
    answers = dialogue_answers(campaign, loaded)
    given: dict[int, list[str]] = defaultdict(list)
    for answer in answers:
        given[answer.turn_id].append(as_given(answer))
    table = rating_table(given.values())
    offered = set(campaign_labels(campaign).values_list("name", flat=True))
    per_label = [label for label in table.categories if not label.endswith(TYPED_SUFFIX) and label in offered]
    intervals = agreement_intervals(table, resamples=resamples, seed=seed, labels=per_label)
    provenance = campaign_provenance(campaign)
    majority = {turn: majority_vote(texts).label for turn, texts in given.items()}
    triples = [(a.turn_id, a.worker_id, as_given(a)) for a in answers]
    return StudyReport(
        campaign={"id": campaign.pk, "name": campaign.name, "status": campaign.status, "currency": campaign.currency},
        table4=_table4(campaign, answers, given, intervals, table),
        agreement=intervals,
        crowd=crowd_figures(campaign, answers, imported=provenance.imported),
        model_raters=model_rater_figures(campaign, answers),
        provenance=provenance,
        tables=paper_tables(triples, majority, table, provenance),
        study_flow=study_flow_figures(campaign, loaded),
    )


def _table4(
    campaign: Campaign, answers, given: dict[int, list[str]], intervals: AgreementIntervals, table: RatingTable
) -> Table4:
    known = known_labels()
    majority = sum(1 for texts in given.values() if majority_vote(texts).is_majority)
    normalised: dict[int, list[str]] = defaultdict(list)
    for answer in answers:
        normalised[answer.turn_id].append(answer.text)
    gold = sum(1 for texts in normalised.values() if majority_vote_normalised(texts, known).is_majority)
    typed = {a.turn_id for a in answers if a.method == Response.OTHER_NEW}
    quiz_workers, bonus_share = _quiz_bonus(campaign)
    return Table4(
        dialogues=len(given),
        majority=majority,
        majority_share=round(majority / len(given), 4) if given else None,
        majority_gold=gold,
        fleiss_kappa=intervals.overall["fleiss_kappa"].value,
        quiz_workers=quiz_workers,
        quiz_bonus_share=bonus_share,
        quiz_bonus_mark=campaign.quiz_pass_mark,
        typed_dialogues=len(typed),
        answers=len(answers),
        agreement_items=len(table.rows),
        categories=len(table.categories),
    )


def _quiz_bonus(campaign: Campaign) -> tuple[int, float | None]:
    """Workers with a quiz mark, and the share whose mean mark per HIT reached the bonus mark."""
    marks: dict[int, list[int]] = defaultdict(list)
    rows = (
        Assignment.objects.filter(hit__campaign=campaign, quiz_correct__isnull=False)
        .counted()
        .values_list("worker_id", "quiz_correct")
    )
    for worker, mark in rows:
        marks[worker].append(mark)
    if not marks:
        return 0, None
    reached = sum(1 for values in marks.values() if sum(values) / len(values) >= campaign.quiz_pass_mark)
    return len(marks), round(reached / len(marks), 4)
