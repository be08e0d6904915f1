"""Bulk annotation: a model version labels every turn of the corpus (each turn read with its
dialogue history), writing one Prediction per turn and model version.

Resumable by construction: turns this model version already labeled are skipped, each chunk is
written in one transaction, and the (turn, model_version) unique constraint plus
`ignore_conflicts` make a re-run or a second worker harmless. A job killed midway and started
again finishes with no missing and no duplicate predictions.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from itertools import groupby
from typing import Any

from django.db import transaction

from annotation.models import Label, ModelVersion, Prediction, Turn
from jobs.models import JobRun
from jobs.runtime import JobCannotRun, report_progress
from mlworkers.registry import load_dialogue_classifier

logger = logging.getLogger(__name__)

DEFAULT_CHUNK_SIZE = 10_000
TOP_K = 5
TurnRow = tuple[int, int, int, str]  # (turn id, dialogue id, position, text)


def annotate_corpus(
    job: JobRun,
    model_version_id: int | None = None,
    dialogue_ids: Sequence[int] | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    batch_size: int = 64,
    on_chunk: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Label every turn of the selected dialogues (all when None) with the model version's top label.

    `on_chunk(done, total)` is called after each chunk is committed (the CLI prints with it; tests
    interrupt with it).
    """
    from mlworkers.ml import inference  # torch loads in the worker, never in a web process

    started = time.perf_counter()
    version = _dialogue_version(model_version_id)
    clf = load_dialogue_classifier(version)
    inference.configure_threads()
    labels = _labels_by_name(clf.label_names)
    selection = Turn.objects.all() if dialogue_ids is None else Turn.objects.filter(dialogue_id__in=dialogue_ids)
    total = selection.count()
    done = Prediction.objects.filter(model_version=version, turn__in=selection).count()
    report_progress(job, done, total, f"{version.name}: {done} of {total} turns already labeled")
    written = 0
    for chunk in _chunks_of_whole_dialogues(dialogue_ids, chunk_size):
        rows = _predict_chunk(clf, version, labels, chunk, batch_size)
        if rows:
            with transaction.atomic():
                Prediction.objects.bulk_create(rows, ignore_conflicts=True, batch_size=1000)
            written += len(rows)
            done = min(total, done + len(rows))
            report_progress(job, done, total, f"{version.name}: labeled {done} of {total} turns")
            logger.info("annotated %s/%s turns (%.0f%%)", done, total, 100 * done / max(total, 1))
        if on_chunk:
            on_chunk(done, total)
    seconds = time.perf_counter() - started
    return {
        "model_version": version.pk,
        "turns": total,
        "labeled": Prediction.objects.filter(model_version=version, turn__in=selection).count(),
        "written_now": written,
        "seconds": round(seconds, 1),
        "turns_per_s": round(written / seconds, 1) if seconds else None,
    }


def _dialogue_version(model_version_id: int | None) -> ModelVersion:
    versions = ModelVersion.objects.filter(kind=ModelVersion.DIALOGUE)
    version = (
        versions.filter(pk=model_version_id).first()
        if model_version_id is not None
        else versions.order_by("-created_at", "-pk").first()
    )
    if version is None:
        wanted = f"model version {model_version_id} is not a dialogue classifier" if model_version_id else ""
        raise JobCannotRun(wanted or "no dialogue classifier yet: run self_label_rounds first")
    return version


def _predict_chunk(clf, version: ModelVersion, labels: dict[str, Label], chunk: list[TurnRow], batch_size: int):
    """Prediction rows for the chunk's turns this version has not labeled yet."""
    from mlworkers.ml import inference

    dialogue_ids = {dialogue_id for _, dialogue_id, _, _ in chunk}
    already = set(
        Prediction.objects.filter(model_version=version, turn__dialogue_id__in=dialogue_ids).values_list(
            "turn_id", flat=True
        )
    )
    turn_ids, encoded = [], []
    for _, rows in groupby(chunk, key=lambda row: row[1]):
        rows = list(rows)
        # every turn is read with the turns before it, so the whole dialogue is encoded
        for row, item in zip(
            rows, inference.encode_dialogue([r[3] for r in rows], clf.tokenizer, clf.config.max_tokens), strict=True
        ):
            if row[0] not in already:
                turn_ids.append(row[0])
                encoded.append(item)
    if not encoded:
        return []
    from mlworkers.ml.calibration import apply_temperature

    # the temperature fitted on validation: the prefilter's 0.9 means about 90 %
    probabilities = apply_temperature(
        inference.predict_encoded_with(clf, encoded, batch_size=batch_size), version.temperature
    )
    predictions = []
    for turn_id, row in zip(turn_ids, probabilities, strict=True):
        best = inference.top_k(row, clf.label_names, TOP_K)
        predictions.append(
            Prediction(
                turn_id=turn_id, model_version=version, label=labels[best[0][0]], confidence=best[0][1], top_k=best
            )
        )
    return predictions


def _chunks_of_whole_dialogues(dialogue_ids: Sequence[int] | None, chunk_size: int) -> Iterator[list[TurnRow]]:
    """About `chunk_size` turns at a time, in (dialogue, position) order, never splitting a dialogue.

    Keyset pagination on the dialogue id: memory holds one chunk, however large the corpus.
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
    turns = Turn.objects.order_by("dialogue_id", "position")
    if dialogue_ids is not None:
        turns = turns.filter(dialogue_id__in=dialogue_ids)
    fields = ("id", "dialogue_id", "position", "text")
    last_dialogue = None
    while True:
        page = turns if last_dialogue is None else turns.filter(dialogue_id__gt=last_dialogue)
        chunk = list(page.values_list(*fields)[:chunk_size])
        if not chunk:
            return
        last_dialogue, last_position = chunk[-1][1], chunk[-1][2]
        # finish the last dialogue so no turn is split from its history
        chunk += list(turns.filter(dialogue_id=last_dialogue, position__gt=last_position).values_list(*fields))
        yield chunk


def _labels_by_name(label_names: Sequence[str]) -> dict[str, Label]:
    """The Label row of every label the model can output; refuse to start if one is missing."""
    found = Label.objects.by_names(label_names)
    missing = [name for name in label_names if name not in found]
    if missing:
        raise ValueError(f"the model's labels {missing} are not in the label taxonomy (annotation.Label)")
    return found
