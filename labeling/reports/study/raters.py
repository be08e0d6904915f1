"""The study report's models-as-raters section: each model rater against the crowd's gold (the
majority with typed labels normalised), beside the human workers against the same gold, and what
Dawid-Skene's gold would be with the model counted as one more rater.

A model is scored only on items it did not learn from (rater_exposure.py): a model trained on the
crowd gold is scored on the test split, its training and validation items reported apart
(`by_role`), and the humans are scored on the same items as the model, so a model never appears
to beat the humans on its own training data.

A human worker's answer is part of the majority it is compared with, so the workers' figures lean
high; the bench (bench/model_rater.py) compares both with the other raters' majority instead."""

from collections import defaultdict
from statistics import median

from annotation.models import ModelVersion
from labeling.crowd.dawid_skene import dawid_skene
from labeling.crowd.majority import majority_vote_normalised, normalise_answer
from labeling.crowd.rater_agreement import rater_agreement
from labeling.models import Campaign, RaterAnswer
from labeling.reports.study.rater_exposure import EXPOSURE_TEXT, ROLES, SCORED_ROLES, exposure, item_roles
from labeling.task_types.last_turn_label.aggregation import CrowdAnswer, known_labels


def model_rater_figures(campaign: Campaign, answers: list[CrowdAnswer]) -> list[dict]:
    rows = list(
        RaterAnswer.objects.filter(campaign=campaign)
        .order_by("rater", "turn_id")
        .values_list(
            "rater",
            "turn_id",
            "label_text",
            "confidence",
            "status",
            "calls",
            "prompt_tokens",
            "seconds",
            "model_version",
        )
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
    by_rater: dict[str, list[tuple]] = defaultdict(list)
    for row in rows:
        by_rater[row[0]].append(row[1:])
    versions = ModelVersion.objects.in_bulk({row[8] for row in rows if row[8] is not None})
    context = (gold, crowd_triples, crowd_ds, answers, known)
    return [_one_rater(name, found, versions.get(found[0][7]), context) for name, found in by_rater.items()]


def _one_rater(name: str, found: list[tuple], version: ModelVersion | None, context: tuple) -> dict:
    gold, crowd_triples, crowd_ds, answers, known = context
    how = exposure(version)
    roles = item_roles([row[0] for row in found], how)
    ok = [(turn, label, confidence) for turn, label, confidence, status, *_ in found if status == RaterAnswer.OK]
    by_role = {role: _scored(ok, gold, answers, known, {t for t, r in roles.items() if r == role}) for role in ROLES}
    scored_turns = {turn for turn, role in roles.items() if role in SCORED_ROLES}
    headline = _scored(ok, gold, answers, known, scored_turns)
    # the model counted as one more rater, on the items it did not learn from
    with_model = dawid_skene(
        [*crowd_triples, *((turn, ("model", name), label) for turn, label, _ in ok if turn in scored_turns)]
    )
    statuses: dict[str, int] = defaultdict(int)
    for _, _, _, status, *_ in found:
        statuses[status] += 1
    return {
        "rater": name,
        "answered": len(found),
        "exposure": how,
        "exposure_text": EXPOSURE_TEXT[how],
        **{key: headline[key] for key in ("items", "accuracy", "kappa", "ac1", "calibration_error", "confusion")},
        "by_role": {role: figures for role, figures in by_role.items() if figures["items"] or _answered(roles, role)},
        "statuses": dict(statuses),
        "calls": sum(row[4] for row in found),
        "prompt_tokens": sum(row[5] for row in found),
        "seconds": round(sum(row[6] for row in found), 3),
        # only items the humans answered: on a model-only item there is no crowd gold to change
        "gold_changed": sum(
            1 for turn, label in with_model.labels.items() if turn in crowd_ds and crowd_ds[turn] != label
        ),
        "dawid_skene_accuracy": with_model.worker_accuracy.get(("model", name)),
        "humans": headline["humans"],
    }


def _answered(roles: dict[int, str], role: str) -> bool:
    return any(r == role for r in roles.values())


def _scored(ok: list[tuple], gold: dict, answers: list[CrowdAnswer], known, turns: set[int]) -> dict:
    """The rater against the gold on `turns`, and the human workers against the same gold there."""
    scored = [(label, gold[turn], confidence) for turn, label, confidence in ok if turn in turns and turn in gold]
    figures = rater_agreement([s[0] for s in scored], [s[1] for s in scored], [s[2] for s in scored])
    return {
        "items": figures.items,
        "accuracy": figures.accuracy,
        "kappa": figures.kappa,
        "ac1": figures.ac1,
        "calibration_error": figures.calibration_error,
        "confusion": {"labels": figures.labels, "counts": figures.confusion},
        "humans": _human_figures(
            [a for a in answers if a.turn_id in turns], {t: g for t, g in gold.items() if t in turns}, known
        ),
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
