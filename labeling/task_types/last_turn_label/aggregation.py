"""Turn a campaign's answers into AggregatedLabel rows and crowd TurnLabels, idempotently.

`aggregate_campaign(campaign)` is the one function that writes them: the label type's `aggregate`
(which the dashboard button, the job and the management command reach through
labeling.task_types) calls it after opening the seats that are due, and the EDOS importer calls
it. Running it twice writes the same rows: it has update_or_create semantics (keyed by the unique
(campaign, turn) and (turn, source) constraints), done in bulk so a campaign of ten thousand items
takes seconds.

Answers counted: those of submitted or approved assignments (not rejected, expired or live ones)
of site workers, and of platform workers once the platform confirmed them, on dialogue items, pooled per target turn, so a tie-break HIT's answers join the first three.
A taxonomy label outside the campaign's set (one a worker typed through "Other", e.g.
"Disappointed" in an intents-only campaign) votes for nothing: it never becomes gold; it waits in
the report's proposed-labels queue.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from django.db import transaction
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.models import Label, TurnLabel
from labeling.crowd.dawid_skene import DawidSkeneResult, dawid_skene
from labeling.crowd.majority import MajorityResult, answer_normaliser, known_label_index, majority_vote
from labeling.crowd.redundancy import MODEL_INFORMED, settle
from labeling.label_sets import campaign_labels
from labeling.models import AggregatedLabel, Campaign, Response, counted_assignment_q
from labeling.policy import model_tops, policy_of
from labeling.task_types.last_turn_label import gold_trail

_BATCH = 1000
_UPDATE_BATCH = 200  # bulk_update builds one CASE per field and batch: keep the batches small


class CrowdAnswer(NamedTuple):
    """One answer as the dashboard and aggregation see it (a named tuple: a report makes one per
    answer, and a frozen dataclass took 0.9 s to make 300k of them, a tuple a fifth of that)."""

    item_id: int
    turn_id: int | None
    dialogue_id: int | None
    quiz_gold: str | None  # the gold label when the item is a quiz question
    worker_id: int
    assignment_id: int
    text: str  # the label name, or what was typed through "Other"
    method: str
    seconds: float

    @property
    def through_other(self) -> bool:
        return self.method != Response.TOP3


def load_answers(campaign: Campaign) -> list[CrowdAnswer]:
    # in a fixed order, so that Dawid-Skene sums in the same order and a re-run finds nothing changed
    rows = (
        Response.objects.filter(counted_assignment_q("assignment__"), item__hit__campaign=campaign)
        .order_by("pk")
        .values_list(
            "item_id",
            "item__target_turn_id",
            "item__dialogue_id",
            "item__quiz_question__gold_label__name",
            # a platform landing's identity counts as the worker it was merged into
            Coalesce("assignment__worker__merged_into_id", "assignment__worker_id"),
            "assignment_id",
            "label__name",
            "new_label_text",
            "method",
            "seconds_spent",
        )
    )
    # read whole (no .iterator()): a server-side cursor is planned for its first rows
    # (cursor_tuple_fraction), nested loops over every answer, 3.4 s against 1.2 s at 300k answers,
    # and outside a transaction it is materialised first (docs/benchmarks/report-scale.md)
    return [
        CrowdAnswer(item, turn, dialogue, gold, worker, assignment, label or typed, method, seconds)
        for item, turn, dialogue, gold, worker, assignment, label, typed, method, seconds in rows
    ]


def known_labels() -> dict[str, str]:
    return known_label_index(Label.objects.values_list("name", flat=True))


def voting_labels(campaign: Campaign) -> set[str]:
    """The taxonomy labels an answer of `campaign` may vote for: its label set, plus the labels a
    researcher accepted from the crowd's proposals (kind "proposed", for every campaign)."""
    offered = campaign_labels(campaign).values_list("name", flat=True)
    accepted = Label.objects.filter(kind=Label.PROPOSED).values_list("name", flat=True)
    return {*offered, *accepted}


def campaign_votes(campaign: Campaign) -> dict[int, "TurnVotes"]:
    """votes_by_turn over the campaign's counted answers, a label outside its set voting for nothing."""
    known = known_labels()
    return votes_by_turn(load_answers(campaign), known, outside=set(known.values()) - voting_labels(campaign))


@dataclass
class TurnVotes:
    dialogue_id: int
    answers: list[tuple[int, str]]  # (worker id, normalised answer)

    def majority(self) -> MajorityResult:
        return majority_vote([answer for _, answer in self.answers])


def votes_by_turn(
    answers: Iterable[CrowdAnswer], known: dict[str, str], *, outside: set[str] = frozenset()
) -> dict[int, TurnVotes]:
    """Answers per turn, one per worker: a worker who meets the same turn again (in a tie-break
    HIT, or a second campaign item) is counted once, with their first answer. An answer naming
    a label of `outside` (a taxonomy label not in the campaign's set, after normalise_answer) is
    left out: it is a proposal for the report, never a vote. Typed text that names no label at
    all votes as before (its majority is kept as text and is no label until one is accepted)."""
    by_turn: dict[int, TurnVotes] = {}
    counted: set[tuple[int, int]] = set()
    normalise = answer_normaliser(known)
    for answer in answers:
        if answer.quiz_gold is not None or answer.turn_id is None or (answer.turn_id, answer.worker_id) in counted:
            continue
        text = normalise(answer.text)
        if text in outside:
            continue
        counted.add((answer.turn_id, answer.worker_id))
        votes = by_turn.setdefault(answer.turn_id, TurnVotes(answer.dialogue_id, []))
        votes.answers.append((answer.worker_id, text))
    return by_turn


def aggregate_campaign(campaign: Campaign) -> dict[str, int]:
    """Write the majority (and the Dawid-Skene opinion) of every answered turn; returns counts.

    The campaign row is locked first, so two concurrent runs (a double click, two workers) take
    turns and the second finds the rows the first wrote, instead of both inserting them."""
    with transaction.atomic():
        Campaign.objects.select_for_update().filter(pk=campaign.pk).first()
        by_turn = campaign_votes(campaign)
        majorities = {turn: votes.majority() for turn, votes in by_turn.items()}
        majorities.update(agreed_with_the_model(campaign, by_turn))
        opinion = dawid_skene((t, worker, answer) for t, votes in by_turn.items() for worker, answer in votes.answers)
        labels = {label.name: label for label in Label.objects.all()}
        _write_aggregated(campaign, by_turn, majorities, opinion, labels)
        turn_labels = _write_turn_labels(campaign, majorities, labels, opinion)
    majority = sum(1 for result in majorities.values() if result.is_majority)
    return {
        "items": len(majorities),
        "majority": majority,
        "unresolved": len(majorities) - majority,
        "turn_labels": turn_labels,
    }


def answer_policy(campaign: Campaign) -> str:
    """The redundancy policy (labeling.crowd.redundancy) that bought the campaign's answers."""
    return campaign.redundancy_policy


def agreed_with_the_model(campaign: Campaign, by_turn: dict[int, "TurnVotes"]) -> dict[int, MajorityResult]:
    """model_informed: a turn whose one answer is the confident model's top label is settled with
    that label (labeling.crowd.redundancy: reason "model_agrees"), though one answer is no majority."""
    if campaign.redundancy_policy != MODEL_INFORMED:
        return {}
    single = {turn: [answer for _, answer in votes.answers] for turn, votes in by_turn.items()}
    single = {turn: answers for turn, answers in single.items() if len(answers) == 1}
    tops, policy = model_tops(campaign, list(single)), policy_of(campaign)
    agreed = {}
    for turn, answers in single.items():
        state = settle(policy, answers, *tops.get(turn, (None, None)))
        if state.reason == "model_agrees":
            agreed[turn] = MajorityResult(state.gold, {state.gold: 1}, 1)
    return agreed


def _write_aggregated(campaign, by_turn, majorities, opinion: DawidSkeneResult, labels) -> None:
    """Every change of a row's label or status is recorded (annotation.record.audit, by the system job
    "aggregation"). A reviewer's label (status adjudicated) is kept: only the counts beside it move.
    A row a reviewer sent back for more answers returns to the queue once its answers changed."""
    existing = {row.turn_id: row for row in AggregatedLabel.objects.filter(campaign=campaign)}
    to_create, to_update, log = [], [], []
    for turn_id, result in majorities.items():
        winner = result.label
        values = {
            "dialogue_id": by_turn[turn_id].dialogue_id,
            "label": labels.get(winner) if winner else None,
            "label_text": winner or "",
            "status": AggregatedLabel.MAJORITY if winner else AggregatedLabel.UNRESOLVED,
            "votes": result.votes,
            "answer_count": result.answer_count,
            "agreement": result.agreement,
            "dawid_skene_label": opinion.labels.get(turn_id, ""),
            "dawid_skene_confidence": opinion.confidence.get(turn_id),
        }
        row = existing.pop(turn_id, None)
        if row is None:
            to_create.append(AggregatedLabel(campaign=campaign, turn_id=turn_id, **values))
            continue
        if row.status == AggregatedLabel.ADJUDICATED:
            values |= {name: getattr(row, name) for name in ("label", "label_text", "status")}
        if _unchanged(row, values):
            continue  # a re-run writes nothing: bulk updates are slow, and nothing moved
        if row.sent_back_at and values["answer_count"] != row.answer_count:
            row.sent_back_at = None  # the answers it was sent back for came
        log.extend(gold_trail.aggregated_changed(row, values))
        for name, value in values.items():
            setattr(row, name, value)
        row.updated_at = timezone.now()  # bulk_update does not touch auto_now fields
        to_update.append(row)
    AggregatedLabel.objects.bulk_create(to_create, batch_size=_BATCH)
    fields = [*_AGGREGATED_FIELDS, "sent_back_at", "updated_at"]
    AggregatedLabel.objects.bulk_update(to_update, fields, batch_size=_UPDATE_BATCH)
    log.extend(gold_trail.aggregated_created(row) for row in to_create)
    # turns whose answers were all rejected since the last run have nothing left to aggregate; a
    # reviewer's label stays (it rests on the reviewer's reading, not only on the answers)
    gone = [row for row in existing.values() if row.status != AggregatedLabel.ADJUDICATED]
    log.extend(gold_trail.aggregated_removed(row) for row in gone)
    AggregatedLabel.objects.filter(pk__in=[row.pk for row in gone]).delete()
    gold_trail.write(log)


def _unchanged(row, values: dict) -> bool:
    current = {name: getattr(row, name) for name in values if name not in ("label", "dialogue_id")}
    wanted = {name: value for name, value in values.items() if name not in ("label", "dialogue_id")}
    label = values["label"]
    return (
        current == wanted and row.label_id == (label.pk if label else None) and row.dialogue_id == values["dialogue_id"]
    )


_AGGREGATED_FIELDS = [
    "dialogue",
    "label",
    "label_text",
    "status",
    "votes",
    "answer_count",
    "agreement",
    "dawid_skene_label",
    "dawid_skene_confidence",
]


def _write_turn_labels(
    campaign: Campaign, majorities: dict[int, MajorityResult], labels: dict[str, Label], opinion: DawidSkeneResult
) -> int:
    """One crowd TurnLabel per turn whose majority is a label of the taxonomy (a typed answer that
    is not a label yet gets one once the label is accepted and the campaign aggregated again).
    A turn keeps one crowd label: the last campaign aggregated over it wins. Its provenance carries
    the gold's uncertainty: the answers it rests on, the Dawid-Skene posterior and the policy."""
    winners = {turn: labels[r.label] for turn, r in majorities.items() if r.label and r.label in labels}
    adjudicated = gold_trail.adjudications(campaign)
    winners |= {turn: labels[name] for turn, (name, _) in adjudicated.items() if name in labels}
    crowd = TurnLabel.objects.filter(source=TurnLabel.CROWD, turn_id__in=[*majorities, *adjudicated])
    existing = {tl.turn_id: tl for tl in crowd}
    before = {turn: (row.label_id, (row.provenance or {}).get("campaign")) for turn, row in existing.items()}
    to_create, to_update = [], []
    for turn_id, label in winners.items():
        result = majorities.get(turn_id) or MajorityResult(None, {}, 0)
        provenance = {
            "campaign": campaign.pk,
            "votes": result.votes,
            "workers": result.answer_count,
            "agreement": result.agreement,
            "answers": result.answer_count,
            "posterior": opinion.posterior.get(turn_id, {}),
            "policy": answer_policy(campaign),
        }
        if turn_id in adjudicated:
            provenance["adjudicated"] = adjudicated[turn_id][1]
        row = existing.pop(turn_id, None)
        if row is None:
            to_create.append(
                TurnLabel(
                    turn_id=turn_id,
                    label=label,
                    source=TurnLabel.CROWD,
                    confidence=result.agreement,
                    provenance=provenance,
                )
            )
            continue
        if (row.label_id, row.confidence, row.provenance) == (label.pk, result.agreement, provenance):
            continue
        row.label, row.confidence, row.provenance = label, result.agreement, provenance
        to_update.append(row)
    TurnLabel.objects.bulk_create(to_create, batch_size=_BATCH)
    TurnLabel.objects.bulk_update(to_update, ["label", "confidence", "provenance"], batch_size=_UPDATE_BATCH)
    lost = [row for row in existing.values() if (row.provenance or {}).get("campaign") == campaign.pk]
    names = {label.pk: name for name, label in labels.items()}
    TurnLabel.objects.filter(pk__in=[row.pk for row in lost]).delete()
    gold_trail.write(gold_trail.turn_labels_changed(campaign, before, [*to_create, *to_update], lost, names))
    return len(winners)
