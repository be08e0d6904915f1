"""Step 5, the self-labeling rounds (Django side): job `self_label_rounds`, Table 5's four rounds.

Reads the crowd gold of the three splits and the workers' votes (`gold`), the turn embeddings and
the unlabeled training dialogues (`expansion`); runs Base -> +SBERT -> +self-labeled ->
+SBERT(self) for the dialogue classifier and fastText (`mlworkers.ml.rounds.self_labeling`); writes the last
round's two ModelVersions (measured like every model, `weak_labeler.measured`) and the rounds'
TurnLabel(sbert) and TurnLabel(self) rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings

from annotation.models import ModelVersion, TurnLabel
from annotation.papers import SELF_LABEL_MIN_CONFIDENCE, SELF_LABELS_PER_LABEL
from annotation.taxonomy import LABEL_NAMES
from jobs.models import JobRun
from jobs.runtime import report_progress
from mlworkers.classifier.weak_labeler import measured
from mlworkers.expansion.sbert import save_new_labels, unlabeled_targets
from mlworkers.expansion.vectors import DialogueVectors, turn_embedding_store
from mlworkers.gold import NoGoldLabels, crowd_votes, dialogue_items, gold_labels, gold_split, no_majority_items
from mlworkers.ml.rounds import self_labeling as rounds_core
from mlworkers.naming import stamped
from mlworkers.registry import artifact_path, register_model_version

RECIPES = ("measured", "paper")


def dialogue_classifier_learner(
    epochs: int,
    validation: list[rounds_core.Item],
    lr: float | None = None,
    head_lr: float | None = None,
    recipe: str = "measured",
    votes: dict[int, tuple[str, ...]] | None = None,
    no_majority: Sequence[rounds_core.Item] = (),
) -> rounds_core.Learner:
    """The dialogue classifier as a rounds learner. `recipe` "paper" is TrainConfig's defaults (hard
    majority targets); "measured" is `MEASURED_RECIPE` (bench/classifier_edos.py): each gold item
    trains on its workers' `votes` (turn id -> the answers among the labels), and the `no_majority`
    items (training split, votes only) join every round's training set. lr / head_lr override both."""
    from mlworkers.ml.classifier import dialogue_classifier as dc
    from mlworkers.ml.classifier.model import DialogueExample, TrainConfig

    if recipe not in RECIPES:
        raise ValueError(f"recipe={recipe!r} must be one of {', '.join(RECIPES)}")
    values = dict(dc.MEASURED_RECIPE) if recipe == "measured" else {}
    values.update({"lr": float(lr)} if lr else {})
    values.update({"head_lr": float(head_lr)} if head_lr else {})
    config = TrainConfig(base_model=settings.CLASSIFIER_MODEL, epochs=int(epochs), device=settings.ML_DEVICE, **values)
    votes = votes if recipe == "measured" else {}
    extra = list(no_majority) if recipe == "measured" else []

    def as_examples(items: Iterable[rounds_core.Item]) -> list:
        return [DialogueExample(list(i.turns), i.label, (votes or {}).get(i.key, ())) for i in items]

    return rounds_core.Learner(
        name="dialogue",
        train=lambda items: dc.train(as_examples([*items, *extra]), as_examples(validation), list(LABEL_NAMES), config),
        predict_proba=lambda model, items: dc.predict_proba(model, as_examples(items)),
    )


def fasttext_learner() -> rounds_core.Learner:
    from mlworkers.ml.rounds import fasttext_baseline as ft

    return rounds_core.Learner(
        name="fasttext",
        train=lambda items: ft.train_fasttext([i.turns for i in items], [i.label for i in items], list(LABEL_NAMES)),
        predict_proba=lambda model, items: model.predict_proba([i.turns for i in items]),
    )


class DialoguePool:
    """The unlabeled dialogues of the rounds (a `rounds.Pool`): their target turn ids, read once,
    and their texts read `config.chunk_size` at a time when the rounds ask."""

    def __init__(self, target_turn_ids: Sequence[int]):
        self.target_turn_ids = np.asarray(target_turn_ids, dtype=np.int64)

    def all_keys(self) -> np.ndarray:
        return self.target_turn_ids

    def read(self, keys: Sequence[int]) -> list[rounds_core.Item]:
        return dialogue_items([int(key) for key in keys])


def self_label_rounds(
    job: JobRun,
    epochs: int = 2,
    lr: float | None = None,
    head_lr: float | None = None,
    first_threshold: float | None = None,
    second_threshold: float | None = None,
    self_per_label: int = SELF_LABELS_PER_LABEL,
    self_min_confidence: float = SELF_LABEL_MIN_CONFIDENCE,
    method: str = "faiss",
    chunk_size: int = 2000,
    recipe: str = "measured",
) -> dict[str, Any]:
    """Base -> +SBERT -> +self-labeled -> +SBERT(self), both learners scored on the fixed test split
    every round; registers the last round's dialogue classifier and fastText model versions.
    The dialogue classifier trains with `recipe` (see `dialogue_classifier_learner`): "measured"
    learns from every worker's answer, the training-split dialogues with no majority included.
    The unlabeled dialogues are read `chunk_size` at a time; the result reports the job's peak
    resident memory (`peak_rss_mb`). Empty thresholds: the encoder's calibration's (the paper recipe: 0.92, 0.9)."""
    from mlworkers.expansion.calibration import rounds_thresholds
    from mlworkers.ml.memory import PeakMemory

    first_threshold, second_threshold = rounds_thresholds(first_threshold, second_threshold, paper=recipe == "paper")
    with PeakMemory() as peak:
        result = _self_label_rounds(
            job, epochs, first_threshold, second_threshold, self_per_label, self_min_confidence, method, chunk_size,
            lr=lr, head_lr=head_lr, recipe=recipe,
        )  # fmt: skip
    result.update(peak.as_result())
    report_progress(job, 4, 4, f"rounds done; peak memory {peak.megabytes} MB")
    return result


def _self_label_rounds(
    job, epochs, first_threshold, second_threshold, self_per_label, self_min_confidence, method, chunk_size,
    lr=None, head_lr=None, recipe="measured",
) -> dict[str, Any]:  # fmt: skip
    from mlworkers.ml.expansion.similarity import SEARCHERS

    gold_split(job)
    train_gold, test_gold = gold_labels([TurnLabel.TRAIN]), gold_labels([TurnLabel.TEST])
    validation_gold = gold_labels([TurnLabel.VALIDATION])
    if not train_gold or not validation_gold or not test_gold:
        # no validation: no epoch could be chosen; no test: every figure would be a meaningless 0.0
        raise NoGoldLabels("the rounds need crowd gold labels in the train, validation and test splits")
    store = turn_embedding_store(progress=lambda d, t: report_progress(job, d, t, f"embedding turns {d}/{t}"))
    # the workers' answers: soft targets for the gold, and the no-majority dialogues as extra training
    votes = crowd_votes([TurnLabel.TRAIN]) if recipe == "measured" else {}
    no_majority = no_majority_items(votes)
    validation_items = dialogue_items(list(validation_gold), validation_gold)
    learners = [
        dialogue_classifier_learner(epochs, validation_items, lr, head_lr, recipe, votes, no_majority),
        fasttext_learner(),
    ]
    config = rounds_core.RoundsConfig(
        label_names=list(LABEL_NAMES),
        first_threshold=first_threshold.value,
        second_threshold=second_threshold.value,
        expansion_notes={2: first_threshold.as_result(), 4: second_threshold.as_result()},
        self_per_label=self_per_label,
        self_min_confidence=self_min_confidence,
        chunk_size=int(chunk_size),
    )
    test_items = dialogue_items(list(test_gold), test_gold)
    outcome = rounds_core.run_rounds(
        dialogue_items(list(train_gold), train_gold),
        test_items,
        # a no-majority dialogue trains on its votes: it never takes an SBERT or self label as well
        DialoguePool(sorted(set(unlabeled_targets()) - {item.key for item in no_majority})),
        learners,
        rounds_core.vector_expander(DialogueVectors(store), search=SEARCHERS[method]),
        config,
        progress=partial(report_progress, job),
    )
    calibrated = {
        learner.name: _measured_learner(learner, outcome.models[learner.name], validation_items, test_items)
        for learner in learners
    }
    crowd = {"recipe": recipe, "gold_with_votes": len(set(votes) & set(train_gold)), "no_majority": len(no_majority)}
    crowd["why_no_gain"] = rounds_core.why_no_gain(outcome.table(), len(test_items))
    return _save_rounds(job, outcome, calibrated, crowd)


def _measured_learner(learner: rounds_core.Learner, model, validation, test) -> dict[str, Any]:
    """The last round's model: temperature on the validation gold, figures on the test gold."""
    by_key = {item.key: item for item in [*validation, *test]}
    return measured(
        f"the {learner.name} model",
        lambda keys: learner.predict_proba(model, [by_key[k] for k in keys]),
        [(item.key, item.label) for item in validation],
        [(item.key, item.label) for item in test],
    )


def _save_rounds(
    job: JobRun, outcome: rounds_core.RoundsOutcome, calibrated: dict[str, dict[str, Any]], crowd: dict[str, Any]
) -> dict[str, Any]:
    table = outcome.table()
    last = outcome.rounds[-1]
    training = {"job": job.pk, "rounds": table, **crowd}
    dialogue_version = register_model_version(
        ModelVersion.DIALOGUE,
        stamped(f"dialogue classifier, round {last.round} ({last.name})"),
        outcome.models["dialogue"],
        training_data=training,
        metrics={**calibrated["dialogue"], "rounds": table, "why_no_gain": crowd["why_no_gain"]},
    )
    fasttext_version = register_model_version(
        ModelVersion.FASTTEXT,
        stamped(f"fastText, round {last.round} ({last.name})"),
        outcome.models["fasttext"],
        base_model="fasttext",
        label_names=list(LABEL_NAMES),
        training_data=training,
        metrics={**calibrated["fasttext"], "rounds": table, "why_no_gain": crowd["why_no_gain"]},
    )
    created = save_new_labels(outcome.new_labels)
    return {
        "table": table,
        "model_version": dialogue_version.pk,
        "fasttext_version": fasttext_version.pk,
        "fasttext_bytes": _folder_bytes(artifact_path(fasttext_version)),
        "new_labels": created,
        "by_source": dict(Counter(n.source for n in outcome.new_labels)),
        **crowd,
    }


def _folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())
