"""The study report's models-as-raters section: each model rater against the crowd's gold (the
majority with typed labels normalised), beside the human workers against the same gold, and what
Dawid-Skene's gold would be with the model counted as one more rater.

A human worker's answer is part of the majority it is compared with, so the workers' figures lean
high; the bench (bench/model_rater.py) compares both with the other raters' majority instead."""

from collections import defaultdict
from statistics import median

from labeling.crowd.dawid_skene import dawid_skene
from labeling.crowd.majority import majority_vote_normalised, normalise_answer
from labeling.crowd.rater_agreement import rater_agreement
from labeling.models import Campaign, RaterAnswer
from labeling.task_types.last_turn_label.aggregation import CrowdAnswer, known_labels


def model_rater_figures(campaign: Campaign, answers: list[CrowdAnswer]) -> list[dict]:
    rows = list(
        RaterAnswer.objects.filter(campaign=campaign)
        .order_by("rater", "turn_id")
        .values_list("rater", "turn_id", "label_text", "confidence", "status", "calls", "prompt_tokens", "seconds")
    )
    if not rows:
        return []
    known = known_labels()
    by_turn: dict[int, list[str]] = defaultdict(list)
    for a in answers:
        by_turn[a.turn_id].append(a.text)
    gold = {turn: r.label for turn, texts in by_turn.items() if (r := majority_vote_normalised(texts, known)).label}
    crowd_triples = [(a.turn_id, ("worker", a.worker_id), normalise_answer(a.text, known)) for a in answers]
    crowd_ds = dawid_skene(crowd_triples).labels
    humans = _human_figures(answers, gold, known)
    by_rater: dict[str, list[tuple]] = defaultdict(list)
    for row in rows:
        by_rater[row[0]].append(row[1:])
    return [_one_rater(name, found, gold, crowd_triples, crowd_ds, humans) for name, found in by_rater.items()]


def _one_rater(name: str, found: list[tuple], gold: dict, crowd_triples, crowd_ds: dict, humans: dict) -> dict:
    ok = [(turn, label, confidence) for turn, label, confidence, status, *_ in found if status == RaterAnswer.OK]
    scored = [(label, gold[turn], confidence) for turn, label, confidence in ok if turn in gold]
    figures = rater_agreement([s[0] for s in scored], [s[1] for s in scored], [s[2] for s in scored])
    with_model = dawid_skene([*crowd_triples, *((turn, ("model", name), label) for turn, label, _ in ok)])
    statuses: dict[str, int] = defaultdict(int)
    for _, _, _, status, *_ in found:
        statuses[status] += 1
    return {
        "rater": name,
        "answered": len(found),
        "items": figures.items,
        "accuracy": figures.accuracy,
        "kappa": figures.kappa,
        "ac1": figures.ac1,
        "calibration_error": figures.calibration_error,
        "confusion": {"labels": figures.labels, "counts": figures.confusion},
        "statuses": dict(statuses),
        "calls": sum(row[4] for row in found),
        "prompt_tokens": sum(row[5] for row in found),
        "seconds": round(sum(row[6] for row in found), 3),
        "gold_changed": sum(1 for turn, label in with_model.labels.items() if crowd_ds.get(turn) != label),
        "dawid_skene_accuracy": with_model.worker_accuracy.get(("model", name)),
        "humans": humans,
    }


def _human_figures(answers: list[CrowdAnswer], gold: dict, known) -> dict:
    """Each worker against the same gold: the median of the workers' accuracy, kappa and AC1."""
    per_worker: dict[int, list[tuple[str, str]]] = defaultdict(list)
    for a in answers:
        if a.turn_id in gold:
            per_worker[a.worker_id].append((normalise_answer(a.text, known), gold[a.turn_id]))
    figures = [rater_agreement([p[0] for p in pairs], [p[1] for p in pairs]) for pairs in per_worker.values()]

    def middle(name: str):
        values = [getattr(f, name) for f in figures if getattr(f, name) is not None]
        return median(values) if values else None

    return {"workers": len(figures), "accuracy": middle("accuracy"), "kappa": middle("kappa"), "ac1": middle("ac1")}
