"""Bulk annotation: a model version labels every turn of the corpus (each turn read with its
dialogue history), writing one Prediction per turn and model version.

Resumable by construction: turns this model version already labeled are skipped, each chunk is
written in one transaction, and the (turn, model_version) unique constraint plus
`ignore_conflicts` make a re-run or a second worker harmless. A job killed midway and started
again finishes with no missing and no duplicate predictions.
"""

from __future__ import annotations

import json
import logging
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import groupby
from typing import Any

from django.db import connection, transaction

from annotation.models import Dialogue, Label, ModelVersion, Prediction, Turn
from jobs.models import JobRun
from jobs.runtime import JobCannotRun, report_progress
from mlworkers.registry import load_dialogue_classifier

logger = logging.getLogger(__name__)

DEFAULT_CHUNK_SIZE = 10_000
# chunks are also the progress bar's steps: a selection smaller than PROGRESS_STEPS chunks is cut into
# that many (of at least MIN_CHUNK turns), so the demo's 6,000 turns are not one step that never moves
PROGRESS_STEPS, MIN_CHUNK = 20, 250
TOP_K = 5
PIPELINE_DEPTH = 2  # chunks scored ahead of the one being written (memory: about 3 chunks)
TurnRow = tuple[int, int, int, str]  # (turn id, dialogue id, position, text)


def annotate_corpus(
    job: JobRun,
    model_version_id: int | None = None,
    dialogue_ids: Sequence[int] | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    batch_size: int = 64,
    on_chunk: Callable[[int, int], None] | None = None,
    precision: str | None = None,
    shards: int = 1,
    dialogue_id_range: Sequence[int] | None = None,
) -> dict[str, Any]:
    """Label every turn of the selected dialogues (all when None) with the model version's top label.

    Three stages overlap, one chunk apart: a tokenizer thread builds chunk k+2's inputs while a model
    thread scores chunk k+1 (softmax and top-k on the device) and this thread writes chunk k (COPY on
    PostgreSQL). The database is only touched from this thread. `on_chunk(done, total)` is called
    after each chunk is committed (the CLI prints with it; tests interrupt with it). `precision`:
    fp32, bf16, fp16, int8 (CPU only) or auto (None: ML_PRECISION); the result names the one used.

    `shards` > 1 splits the dialogues into that many id ranges of about equal size, each a job of
    its own run by whichever worker of the ml queue is free (jobs.runtime.run_in_shards); a shard
    is the same job with `dialogue_id_range` [first, last] set.
    """
    from mlworkers.ml.classifier import inference  # torch loads in the worker, never in a web process

    started = time.perf_counter()
    version = _dialogue_version(model_version_id)
    if shards > 1 and dialogue_id_range is None:
        return _run_sharded(job, version, dialogue_ids, shards, chunk_size=chunk_size, batch_size=batch_size,
                            precision=precision)  # fmt: skip
    inference.configure_threads()  # before loading: "auto" on a CPU times fp32 and int8 with these threads
    clf = load_dialogue_classifier(version, precision=precision)
    if clf.precision_choice is not None:
        logger.info("%s runs in %s", version.name, clf.precision_choice.summary())
    labels = _labels_by_name(clf.label_names)
    selection = _selected_turns(dialogue_ids, dialogue_id_range)
    total = selection.count()
    done = Prediction.objects.filter(model_version=version, turn__in=selection).count()
    report_progress(job, done, total, f"{version.name}: {done} of {total} turns already labeled")
    chunk_size = min(chunk_size, max(MIN_CHUNK, -(-(total - done) // PROGRESS_STEPS)))
    timings = dict.fromkeys(("read", "tokenize", "model", "write"), 0.0)
    written = 0

    def write(scored) -> None:
        nonlocal done, written
        turn_ids, indices, values, stage_seconds = scored.result()
        timings["tokenize"] += stage_seconds["tokenize"]
        timings["model"] += stage_seconds["model"]
        tick = time.perf_counter()
        added = write_predictions(version, labels, clf.label_names, turn_ids, indices, values)
        timings["write"] += time.perf_counter() - tick
        if len(turn_ids):
            written += added
            done = min(total, done + len(turn_ids))
            report_progress(job, done, total, f"{version.name}: labeled {done} of {total} turns")
            logger.info("annotated %s/%s turns (%.0f%%)", done, total, 100 * done / max(total, 1))
        if on_chunk:
            on_chunk(done, total)

    tokenizer_thread = ThreadPoolExecutor(1, thread_name_prefix="bulk-tokenize")
    model_thread = ThreadPoolExecutor(1, thread_name_prefix="bulk-model")
    pending: deque = deque()
    try:
        tick = time.perf_counter()
        for chunk in _chunks_of_whole_dialogues(dialogue_ids, chunk_size, dialogue_id_range):
            already = _already_labeled(version, chunk)
            timings["read"] += time.perf_counter() - tick
            encoding = tokenizer_thread.submit(_encode_chunk, clf, chunk, already)
            pending.append(model_thread.submit(_score_chunk, clf, encoding, batch_size, version.temperature))
            if len(pending) > PIPELINE_DEPTH:
                write(pending.popleft())
            tick = time.perf_counter()
        while pending:
            write(pending.popleft())
    finally:
        for stage in (tokenizer_thread, model_thread):
            stage.shutdown(wait=True, cancel_futures=True)
    seconds = time.perf_counter() - started
    return {
        "model_version": version.pk,
        "turns": total,
        "labeled": Prediction.objects.filter(model_version=version, turn__in=selection).count(),
        "written_now": written,
        "seconds": round(seconds, 1),
        "turns_per_s": round(written / seconds, 1) if seconds else None,
        "precision": clf.precision,
        # "auto" on a CPU: why this precision, with the timings of both on this machine
        "precision_choice": clf.precision_choice.as_dict() if clf.precision_choice is not None else None,
        "stage_seconds": {name: round(value, 2) for name, value in timings.items()},
    }


def _selected_turns(dialogue_ids: Sequence[int] | None, dialogue_id_range: Sequence[int] | None):
    turns = Turn.objects.all()
    if dialogue_ids is not None:
        turns = turns.filter(dialogue_id__in=dialogue_ids)
    if dialogue_id_range is not None:
        first, last = dialogue_id_range
        turns = turns.filter(dialogue_id__gte=first, dialogue_id__lte=last)
    return turns


def _run_sharded(job: JobRun, version: ModelVersion, dialogue_ids, shards: int, **parameters) -> dict[str, Any]:
    """Split the selected dialogues into `shards` id ranges of about equal dialogue counts and run
    each as a shard job; returns the combined result when a rerun finds every shard done."""
    from jobs.runtime import run_in_shards

    ranges = dialogue_id_ranges(dialogue_ids, shards)
    if not ranges:
        raise JobCannotRun("no dialogues to annotate")
    common = {"model_version_id": version.pk, "dialogue_ids": dialogue_ids, **parameters}
    result = run_in_shards(
        job,
        [{**common, "dialogue_id_range": list(bounds)} for bounds in ranges],
        message=f"{version.name}: {len(ranges)} shards queued",
    )
    result["model_version"] = version.pk
    return result


def dialogue_id_ranges(dialogue_ids: Sequence[int] | None, shards: int) -> list[tuple[int, int]]:
    """Up to `shards` [first, last] dialogue id ranges covering the selection, with about the same
    number of dialogues each (ids are cut at quantiles: one indexed OFFSET query per cut)."""
    ids = Dialogue.objects.order_by("pk").values_list("pk", flat=True)
    if dialogue_ids is not None:
        ids = ids.filter(pk__in=dialogue_ids)
    count = ids.count()
    if not count:
        return []
    shards = max(1, min(shards, count))
    starts = [ids[(count * index) // shards] for index in range(shards)]
    last = ids.reverse()[0] if dialogue_ids is None else max(dialogue_ids)
    ends = [start - 1 for start in starts[1:]] + [last]
    return list(zip(starts, ends, strict=True))


def _already_labeled(version: ModelVersion, chunk: list[TurnRow]) -> set[int]:
    dialogue_ids = {dialogue_id for _, dialogue_id, _, _ in chunk}
    return set(
        Prediction.objects.filter(model_version=version, turn__dialogue_id__in=dialogue_ids).values_list(
            "turn_id", flat=True
        )
    )


def _encode_chunk(clf, chunk: list[TurnRow], already: set[int]) -> tuple[list[int], list, float]:
    """(turn ids, model inputs, seconds) for the chunk's turns not labeled yet. Every turn is read
    with the turns before it, so whole dialogues are tokenized (one tokenizer call per chunk)."""
    from mlworkers.ml.classifier import inference

    tick = time.perf_counter()
    dialogues = [list(rows) for _, rows in groupby(chunk, key=lambda row: row[1])]
    inputs = inference.encode_dialogues(
        [[row[3] for row in rows] for rows in dialogues], clf.tokenizer, clf.config.max_tokens
    )
    turn_ids, encoded = [], []
    for rows, items in zip(dialogues, inputs, strict=True):
        for row, item in zip(rows, items, strict=True):
            if row[0] not in already:
                turn_ids.append(row[0])
                encoded.append(item)
    return turn_ids, encoded, time.perf_counter() - tick


def _score_chunk(clf, encoding: Future, batch_size: int, temperature: float = 1.0):
    """(turn ids, top-k label indices, top-k probabilities, stage seconds) for one encoded chunk.
    Probabilities are tempered by the version's temperature (fitted on validation), so the
    prefilter's 0.9 means about 90 %."""
    from mlworkers.ml.classifier import inference

    turn_ids, encoded, tokenize_seconds = encoding.result()
    tick = time.perf_counter()
    indices, values = inference.predict_top_k_encoded(
        clf.model,
        encoded,
        k=TOP_K,
        pad_id=clf.tokenizer.pad_token_id or 0,
        decay=clf.config.turn_weight_decay,
        batch_size=batch_size,
        device=clf.device,
        temperature=temperature,
    )
    return turn_ids, indices, values, {"tokenize": tokenize_seconds, "model": time.perf_counter() - tick}


def write_predictions(version, labels, label_names, turn_ids, indices, values) -> int:
    """Store one Prediction per turn (top-1 label and confidence, the top-k list) in one transaction;
    a turn this version already labeled is left as it is. Returns how many rows were added.
    PostgreSQL: COPY into a temporary table, then INSERT ... ON CONFLICT DO NOTHING; elsewhere
    bulk_create with ignore_conflicts."""
    if not len(turn_ids):
        return 0
    rows = [
        (
            turn_id,
            labels[label_names[best[0]]].pk,
            round(float(probabilities[0]), 6),
            [[label_names[i], round(float(p), 6)] for i, p in zip(best, probabilities, strict=True)],
        )
        for turn_id, best, probabilities in zip(turn_ids, indices.tolist(), values.tolist(), strict=True)
    ]
    if connection.vendor == "postgresql":
        return _copy_predictions(version, rows)
    with transaction.atomic():
        before = Prediction.objects.filter(model_version=version, turn_id__in=turn_ids).count()
        Prediction.objects.bulk_create(
            [
                Prediction(turn_id=turn_id, model_version=version, label_id=label_id, confidence=confidence, top_k=top)
                for turn_id, label_id, confidence, top in rows
            ],
            ignore_conflicts=True,
            batch_size=1000,
        )
        return Prediction.objects.filter(model_version=version, turn_id__in=turn_ids).count() - before


def _copy_predictions(version: ModelVersion, rows) -> int:
    table = connection.ops.quote_name(Prediction._meta.db_table)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "CREATE TEMPORARY TABLE IF NOT EXISTS bulk_prediction_load "
            "(turn_id bigint, label_id bigint, confidence double precision, top_k jsonb) ON COMMIT DELETE ROWS"
        )
        cursor.execute("TRUNCATE bulk_prediction_load")
        with cursor.cursor.copy("COPY bulk_prediction_load (turn_id, label_id, confidence, top_k) FROM STDIN") as copy:
            for turn_id, label_id, confidence, top in rows:
                copy.write_row((turn_id, label_id, confidence, json.dumps(top)))
        cursor.execute(
            f"INSERT INTO {table} (turn_id, model_version_id, label_id, confidence, top_k, created_at) "
            "SELECT turn_id, %s, label_id, confidence, top_k, now() FROM bulk_prediction_load "
            "ON CONFLICT (turn_id, model_version_id) DO NOTHING",
            [version.pk],
        )
        return cursor.rowcount


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


def _chunks_of_whole_dialogues(
    dialogue_ids: Sequence[int] | None, chunk_size: int, dialogue_id_range: Sequence[int] | None = None
) -> Iterator[list[TurnRow]]:
    """About `chunk_size` turns at a time, in (dialogue, position) order, never splitting a dialogue.

    Keyset pagination on the dialogue id: memory holds one chunk, however large the corpus.
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
    turns = _selected_turns(dialogue_ids, dialogue_id_range).order_by("dialogue_id", "position")
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
