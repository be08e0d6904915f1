"""Where a campaign's answers came from, and what happened to them here: the study report's and the
dataset card's "how it was made" states only this.

A campaign runs here (HITs on this site or a crowd platform, with the quiz, payments and reviewers
the campaign had) or was imported from a named format (labeling/services/importers/). An importer stores
HITs, assignments and one stand-in worker per answer column so that aggregation reads the answers
like any others; none of that happened: an import reports no HITs, no quiz, no pay and no worker
as a person, only the answers, the source's licence and citation, and what was done to them here
afterwards (a reviewer's adjudication is counted wherever it happened).
"""

from dataclasses import asdict, dataclass

from labeling.models import AggregatedLabel, Assignment, Campaign, Response, Worker, counted_assignment_q

# the Hub's licence ids (https://huggingface.co/docs/hub/repositories-licenses) -> how a paper names them
LICENSE_NAMES = {
    "cc-by-4.0": "CC BY 4.0",
    "cc-by-sa-4.0": "CC BY-SA 4.0",
    "cc-by-nc-4.0": "CC BY-NC 4.0",
    "cc0-1.0": "CC0 1.0",
    "mit": "MIT",
    "apache-2.0": "Apache 2.0",
}


@dataclass(frozen=True)
class Provenance:
    kind: str  # Campaign.RUN_HERE or Campaign.IMPORTED
    source_format: str  # the importer's format name; "" when run here
    license: str  # the source's licence id; "" when run here or unknown
    citation: str  # BibTeX of the source; "" when run here or unknown
    hits: int  # HITs worked here (counted assignments); 0 for an import, whose HITs are scaffolding
    quiz_answers: int  # quiz screens answered here
    adjudicated: int  # items a reviewer settled here
    rater_noun: str  # what an answer's author is: "worker", or "answer column" for an import

    @property
    def imported(self) -> bool:
        return self.kind == Campaign.IMPORTED

    @property
    def license_name(self) -> str:
        return LICENSE_NAMES.get(self.license, self.license)

    def as_dict(self) -> dict:
        return {**asdict(self), "imported": self.imported, "license_name": self.license_name}


def campaign_provenance(campaign: Campaign) -> Provenance:
    imported = campaign.provenance == Campaign.IMPORTED
    return Provenance(
        kind=campaign.provenance,
        source_format=campaign.source_format,
        license=campaign.source_license,
        citation=campaign.source_citation,
        hits=0 if imported else Assignment.objects.filter(hit__campaign=campaign).counted().count(),
        quiz_answers=0 if imported else _quiz_answers(campaign),
        adjudicated=AggregatedLabel.objects.filter(campaign=campaign, status=AggregatedLabel.ADJUDICATED).count(),
        rater_noun="answer column" if imported else "worker",
    )


def _quiz_answers(campaign: Campaign) -> int:
    return Response.objects.filter(
        counted_assignment_q("assignment__"), item__hit__campaign=campaign, item__quiz_question__isnull=False
    ).count()


def rater_names(provenance: Provenance, worker_ids: list[int], answers_per_worker: dict[int, int]) -> dict[int, str]:
    """Names for the tables: pseudonyms W1, W2, ... (most answers first; ids are not published),
    or, for an import, the source's answer columns in the importer's order (its stand-ins' ids)."""
    if provenance.imported:
        external = dict(Worker.objects.filter(pk__in=worker_ids).values_list("pk", "external_id"))
        ordered = sorted(worker_ids, key=lambda pk: (external.get(pk, ""), pk))
        return {pk: f"answer column {k}" for k, pk in enumerate(ordered, start=1)}
    ordered = sorted(worker_ids, key=lambda pk: (-answers_per_worker.get(pk, 0), pk))
    return {pk: f"W{k}" for k, pk in enumerate(ordered, start=1)}
