"""The study report's tables for a paper (the maths in labeling/crowd/paper_tables.py): each rater's
Cohen's kappa against the majority, pairwise Cohen's kappa of raters who shared items, the label
distribution, the confusion of the majority against each rater and positive specific agreement per
label; all under the report's rule (answers as given, a typed label its own category), so the
majority here is Table 4's.

Raters are named as the report may publish them (provenance.rater_names): W1, W2, ... for workers,
"answer column k" for an import's stand-ins."""

from collections import Counter
from dataclasses import asdict, dataclass

from labeling.crowd import paper_tables as pt
from labeling.crowd.agreement import RatingTable
from labeling.reports.study.provenance import Provenance, rater_names


@dataclass(frozen=True)
class PaperTables:
    worker_kappa: list[dict]  # rater, items, agreement, kappa
    pairwise_kappa: list[dict]  # first, second, items, agreement, kappa
    label_distribution: list[dict]  # label, answers, answer_share, majority_items, majority_share
    confusion: list[dict]  # rater, majority, answer, count (cells with a count)
    specific_agreement: list[dict]  # label, items, value

    def as_dict(self) -> dict:
        return asdict(self)


def paper_tables(triples: list[pt.Answer], majority: dict, table: RatingTable, provenance: Provenance) -> PaperTables:
    """`triples`: (turn, worker id, answer as given); `majority`: turn -> its strict majority or None."""
    per_worker = Counter(worker for _, worker, _ in triples)
    names = rater_names(provenance, list(per_worker), per_worker)
    named = [(item, names[worker], answer) for item, worker, answer in triples]
    return PaperTables(
        worker_kappa=[_rounded(asdict(row), rater=row.worker) for row in pt.worker_kappas(named, majority)],
        pairwise_kappa=[_rounded(asdict(row)) for row in pt.pairwise_kappas(named)],
        label_distribution=[_rounded(asdict(row)) for row in pt.label_distribution(named, majority)],
        confusion=_confusion_cells(named, majority, sorted(set(names.values()), key=_rater_order)),
        specific_agreement=[
            _rounded(asdict(row)) for row in sorted(pt.specific_agreement(table).values(), key=lambda r: r.label)
        ],
    )


def _confusion_cells(named: list[pt.Answer], majority: dict, raters: list[str]) -> list[dict]:
    cells = []
    own: dict[str, list[pt.Answer]] = {rater: [] for rater in raters}
    for answer in named:
        own[answer[1]].append(answer)  # each rater's answers once, not a pass over all per rater
    for rater in raters:
        matrix = pt.worker_confusion(own[rater], majority, rater)
        for i, winner in enumerate(matrix.labels):
            for j, answer in enumerate(matrix.labels):
                if matrix.counts[i][j]:
                    cells.append({"rater": rater, "majority": winner, "answer": answer, "count": matrix.counts[i][j]})
    return cells


def _rater_order(name: str) -> tuple:
    head, _, number = name.rpartition(" ") if " " in name else (name[:1], "", name[1:])
    return (head, int(number) if number.isdigit() else 0, name)


def _rounded(row: dict, **renamed) -> dict:
    if renamed:
        row.pop("worker", None)
        row = {**renamed, **row}
    return {key: round(value, 4) if isinstance(value, float) else value for key, value in row.items()}
