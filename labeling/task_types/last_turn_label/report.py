"""A label campaign's sections of the dashboard's report (labeling.reports.campaign): agreement, the label
table, the confusion matrix, the worker table, "Other" answers and proposals, anchoring on the
suggestions. Computed live from the counted answers (submitted or approved; a platform worker's
once the platform confirmed it, see Assignment.objects.counted), with the same normalisation and
majority rule as `aggregate_campaign`, so the dashboard is right even before aggregating.
"""

import json
from collections import Counter, defaultdict
from functools import partial

from django.conf import settings
from django.db.models import TextField
from django.db.models.functions import Cast, Coalesce

from annotation.models import Turn
from labeling.crowd.agreement import (
    agreement_with_majority,
    fleiss_kappa,
    gwet_ac1,
    majority_confusion,
    observed_agreement,
    per_label_kappa,
    quiz_accuracy,
    rating_table,
    top_confusions,
    unanimous_share,
)
from labeling.crowd.label_text import look_alike_of, mixed_scripts, visible
from labeling.crowd.majority import MajorityResult, answer_normaliser, majority_vote
from labeling.crowd.speed import is_too_fast, median_seconds
from labeling.models import AggregatedLabel, Assignment, Campaign, HITItem, Worker
from labeling.task_types.last_turn_label.aggregation import (
    CrowdAnswer,
    known_labels,
    load_answers,
    votes_by_turn,
    voting_labels,
)

EXAMPLES_PER_PROPOSAL = 3


def label_report(campaign: Campaign) -> dict:
    """The label campaign's sections of the dashboard: agreement, labels, confusion, workers,
    "Other" answers and proposals, anchoring on the suggestions."""
    known = known_labels()
    voting = voting_labels(campaign)
    answers = load_answers(campaign)
    normalise = answer_normaliser(known)
    normalised = {id(a): normalise(a.text) for a in answers}
    dialogue_answers = [a for a in answers if a.quiz_gold is None and a.turn_id is not None]
    by_turn = {
        turn: [text for _, text in votes.answers]
        for turn, votes in votes_by_turn(answers, known, outside=set(known.values()) - voting).items()
    }
    majorities = {turn: majority_vote(texts) for turn, texts in by_turn.items()}
    winners = {turn: result.label for turn, result in majorities.items()}
    table = rating_table(by_turn.values())
    kappa = fleiss_kappa(table)
    majority = sum(1 for result in majorities.values() if result.is_majority)
    return {
        "agreement": {
            "items": len(majorities),
            "majority": majority,
            "majority_rate": _ratio(majority, len(majorities)),
            "fleiss_kappa": _round(kappa),
            "gwet_ac1": _round(gwet_ac1(table)),
            "pairwise_agreement": _round(observed_agreement(table)),
            "unanimous_share": _round(unanimous_share(by_turn.values())),
        },
        "labels": _label_table(by_turn, majorities, per_label_kappa(table)),
        "confusion": _confusion(by_turn, winners),
        "workers": _worker_table(campaign, answers, normalised, winners),
        "other_answers": _other_answers(dialogue_answers, normalised, voting),
        "anchoring": _anchoring(answers, normalised, winners),
        "suggestions": _suggestions(campaign, dialogue_answers, normalised, known),
    }


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _label_table(by_turn, majorities: dict[int, MajorityResult], kappas: dict) -> list[dict]:
    answered: Counter = Counter()
    won: Counter = Counter()
    for turn, texts in by_turn.items():
        for label in set(texts):
            answered[label] += 1
        if majorities[turn].label:
            won[majorities[turn].label] += 1
    confusions = top_confusions(
        (majorities[turn].label, text) for turn, texts in by_turn.items() if majorities[turn].label for text in texts
    )
    rows = [
        {
            "label": label,
            "items": count,
            "majority": won[label],
            "majority_rate": _ratio(won[label], count),
            "kappa": _round(kappas.get(label)),
            "top_confusions": [{"label": other, "count": n} for other, n in confusions.get(label, [])],
        }
        for label, count in answered.items()
    ]
    return sorted(rows, key=lambda row: (-row["items"], row["label"]))


def _confusion(by_turn, winners) -> dict:
    """The majority label (rows, only those that won an item) against every answer given."""
    matrix = majority_confusion((winners[turn], texts) for turn, texts in by_turn.items())
    rows = [
        {"label": label, "counts": counts, "total": sum(counts)}
        for label, counts in zip(matrix.labels, matrix.counts, strict=True)
        if sum(counts)
    ]
    return {"labels": matrix.labels, "rows": rows}


def _worker_table(campaign, answers: list[CrowdAnswer], normalised, winners) -> list[dict]:
    work = [(a.turn_id, a.worker_id, normalised[id(a)]) for a in answers if a.quiz_gold is None]
    agreement = agreement_with_majority(work, winners)
    # and with the Dawid-Skene label the last aggregation stored (too slow to refit on every reload)
    opinion = AggregatedLabel.objects.filter(campaign=campaign).exclude(dawid_skene_label="")
    with_opinion = agreement_with_majority(work, dict(opinion.values_list("turn_id", "dawid_skene_label")))
    quiz = quiz_accuracy((a.worker_id, normalised[id(a)], a.quiz_gold) for a in answers if a.quiz_gold is not None)
    seconds: dict[int, float] = defaultdict(float)
    for a in answers:
        seconds[a.assignment_id] += a.seconds
    # keyed by the person: a platform landing's identity counts as the proven worker it was merged
    # into, as the answers above are (load_answers), so a platform worker's row carries its flags
    assignments = (
        Assignment.objects.filter(hit__campaign=campaign)
        .counted()
        .annotate(person=Coalesce("worker__merged_into_id", "worker_id"))
        .values_list("pk", "person", "quiz_correct")
    )
    per_worker: dict[int, dict] = defaultdict(lambda: {"hits": 0, "seconds": 0.0, "quiz_marks": []})
    for pk, worker_id, quiz_correct in assignments:
        row = per_worker[worker_id]
        row["hits"] += 1
        row["seconds"] += seconds.get(pk, 0.0)
        if quiz_correct is not None:
            row["quiz_marks"].append(quiz_correct)
    workers = Worker.objects.in_bulk(list(per_worker))
    speed = _speed(answers)
    table = []
    for worker_id, row in per_worker.items():
        worker = workers[worker_id]
        marks = row["quiz_marks"]
        table.append(
            {
                "id": worker_id,
                "worker": worker.external_id,
                "platform": worker.platform,
                "status": worker.status,
                "hits": row["hits"],
                "quiz_mark": round(sum(marks) / len(marks), 2) if marks else None,
                "quiz_accuracy": _round(quiz[worker_id].rate) if worker_id in quiz else None,
                "agreement_with_majority": _round(agreement[worker_id].rate) if worker_id in agreement else None,
                "agreement_with_dawid_skene": _round(with_opinion[worker_id].rate)
                if worker_id in with_opinion
                else None,
                "seconds_per_hit": round(row["seconds"] / row["hits"], 1) if row["hits"] else None,
                **speed.get(worker_id, {"median_seconds": None, "too_fast": False}),
            }
        )
    return sorted(table, key=lambda row: (-row["hits"], row["worker"]))


def _speed(answers: list[CrowdAnswer]) -> dict[int, dict]:
    """Each worker's median seconds per dialogue screen, flagged when implausibly fast."""
    dialogue_seconds = [(a.worker_id, a.seconds) for a in answers if a.quiz_gold is None]
    medians = median_seconds(dialogue_seconds)
    counts = Counter(worker for worker, _ in dialogue_seconds)
    flag = partial(
        is_too_fast, threshold=settings.FAST_WORKER_MEDIAN_SECONDS, min_answers=settings.FAST_WORKER_MIN_ANSWERS
    )
    return {
        worker: {"median_seconds": round(value, 1), "too_fast": flag(value, counts[worker])}
        for worker, value in medians.items()
    }


def _other_answers(dialogue_answers: list[CrowdAnswer], normalised, label_names: set[str]) -> dict:
    """Answers given through "Other", and the typed labels that are not labels of the campaign
    (proposals: a taxonomy label outside the campaign's set is one too, never a vote)."""
    through_other = [a for a in dialogue_answers if a.through_other]
    methods = Counter(a.method for a in dialogue_answers)
    proposals: dict[str, list[CrowdAnswer]] = defaultdict(list)
    for a in through_other:
        if normalised[id(a)] not in label_names:
            proposals[normalised[id(a)]].append(a)
    example_turns = {a.turn_id for group in proposals.values() for a in group[:EXAMPLES_PER_PROPOSAL]}
    texts = dict(Turn.objects.filter(pk__in=example_turns).values_list("pk", "text"))
    names = known_labels().values()
    proposed = [
        {
            "text": text,
            # what a researcher sees before accepting: the text with any invisible or direction
            # character written as its code point, and the existing label it looks like
            "shown": visible(text),
            "looks_like": look_alike_of(text, names),
            "mixed_scripts": mixed_scripts(text),  # UTS #39 5.2: refused on the accept page too
            "count": len(group),
            "examples": [texts.get(a.turn_id, "") for a in group[:EXAMPLES_PER_PROPOSAL]],
        }
        for text, group in proposals.items()
    ]
    return {
        "answers": len(dialogue_answers),
        "through_other": len(through_other),
        "by_method": dict(methods),
        "typed_matching_a_label": sum(
            1 for a in through_other if normalised[id(a)] in label_names and a.method != "other-list"
        ),
        "proposed_labels": sorted(proposed, key=lambda row: (-row["count"], row["text"])),
    }


def _anchoring(answers: list[CrowdAnswer], normalised, winners) -> dict:
    """Agreement with the majority and quiz accuracy, for answers taken from the three suggestions
    versus answers through "Other": how strongly the suggestions anchor the workers."""
    groups = {"top3": lambda a: not a.through_other, "other": lambda a: a.through_other}
    result = {}
    for name, belongs in groups.items():
        mine = [a for a in answers if belongs(a)]
        agree = [
            normalised[id(a)] == winners[a.turn_id] for a in mine if a.quiz_gold is None and winners.get(a.turn_id)
        ]
        quiz = [normalised[id(a)] == a.quiz_gold for a in mine if a.quiz_gold is not None]
        result[name] = {
            "answers": len(mine),
            "agreement_with_majority": _ratio(sum(agree), len(agree)),
            "quiz_answers": len(quiz),
            "quiz_accuracy": _ratio(sum(quiz), len(quiz)),
        }
    return result


def _suggestions(campaign: Campaign, dialogue_answers: list[CrowdAnswer], normalised, known) -> dict:
    """How the crowd treats the suggester's three choices (dialogue screens only; quiz screens put
    the known answer among them): how often workers leave them for "Other", and how often the
    top-1 suggestion wins. An item's `choices` hold the ranked suggestions best first (the order on
    the screen is drawn per assignment), so rank k is choices[k-1]. Items without three stored
    choices (imported results) count toward the "Other" rate only."""
    # items repeat a few choice lists: each distinct one is decoded and normalised once
    stored = HITItem.objects.filter(hit__campaign=campaign, quiz_question__isnull=True).values_list(
        "pk", Cast("choices", TextField())
    )
    normalise = answer_normaliser(known)
    lists: dict[str, list[str] | None] = {}
    ranked = {}
    for pk, text in stored:
        if text not in lists:
            names = json.loads(text)
            lists[text] = [normalise(name) for name in names] if len(names) == 3 else None
        if lists[text] is not None:
            ranked[pk] = lists[text]
    by_rank: Counter = Counter()
    for a in dialogue_answers:
        if a.item_id in ranked and not a.through_other:
            names = ranked[a.item_id]
            by_rank[names.index(normalised[id(a)]) + 1 if normalised[id(a)] in names else 0] += 1
    other = sum(1 for a in dialogue_answers if a.through_other)
    with_ranks = sum(1 for a in dialogue_answers if a.item_id in ranked)
    other_rate = _ratio(other, len(dialogue_answers))
    threshold, minimum = settings.SUGGESTER_OTHER_WARN_RATE, settings.SUGGESTER_WARN_MIN_ANSWERS
    model = campaign.suggestion_model
    return {
        "model_version": {"id": model.pk, "name": model.name, "kind": model.kind} if model else None,
        "answers": len(dialogue_answers),
        "through_other": other,
        "other_rate": other_rate,
        "ranked_answers": with_ranks,
        "top1": by_rank[1],
        "top1_rate": _ratio(by_rank[1], with_ranks),
        "by_rank": {str(rank): by_rank[rank] for rank in (1, 2, 3)},
        "warn_rate": threshold,
        "warn_min_answers": minimum,
        "weak": other_rate is not None and len(dialogue_answers) >= minimum and other_rate > threshold,
    }
