"""Step 4, SBERT expansion (Django side): job `sbert_expand`, and the embeddings every later step reads.

    turn_embedding_store  reads every turn; writes their embeddings under
                          MEDIA_ROOT/embeddings/<model>/ (again only when the corpus's turns changed)
    DialogueVectors       reads those files and the turns: a dialogue's decayed embedding
    unlabeled_targets     reads the training-split dialogues with no TurnLabel at all
    save_new_labels       writes TurnLabel rows (source sbert or self) in one transaction
    sbert_expand          reads the train and validation gold (`gold`), writes TurnLabel(sbert) on the
                          last turn of every unlabeled dialogue similar enough to a gold dialogue

The search lives in `mlworkers.ml.rounds.self_labeling` and `mlworkers.ml.expansion.similarity`; the threshold left empty
is the encoder's calibration's (`mlworkers.expansion.calibration`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, Subquery

from annotation.models import Label, Turn, TurnLabel
from jobs.models import JobRun
from jobs.runtime import report_progress
from mlworkers.gold import NoGoldLabels, gold_labels, gold_split
from mlworkers.ml.expansion.embeddings import EmbeddingStore, dialogue_embedding, normalise_rows, write_embeddings
from mlworkers.ml.rounds import self_labeling as rounds_core

EMBEDDINGS_SUBDIR = "embeddings"
SEARCH_CHUNK = 4096  # unlabeled dialogues embedded and searched at a time


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "model"


def turn_embedding_store(model_name: str | None = None, progress=None) -> EmbeddingStore:
    """Embeddings of every turn under MEDIA_ROOT/embeddings/<model>/, computed when the stored ids
    are not exactly the corpus's turns (a new import recomputes them all)."""
    from mlworkers.ml import loading

    model_name = model_name or settings.ENCODER_MODEL
    store = EmbeddingStore(Path(settings.MEDIA_ROOT) / EMBEDDINGS_SUBDIR / _slug(model_name))
    turn_ids = np.fromiter(Turn.objects.order_by("pk").values_list("pk", flat=True), dtype=np.int64)
    if store.exists() and np.array_equal(np.load(store.ids_path), turn_ids):
        return store
    encoder = loading.load_sentence_transformer(model_name, device=loading.pick_device(settings.ML_DEVICE))
    return write_embeddings(
        store,
        turn_ids,
        _turn_texts(),
        lambda chunk: encoder.encode(chunk, batch_size=128, convert_to_numpy=True),
        _embedding_dimension(encoder),
        progress=progress,
    )


def _turn_texts(chunk_size: int = 4096) -> Iterable[str]:
    """Every turn's text in pk order, a page at a time (keyset): no cursor stays open while a chunk
    is encoded, so the job's heartbeat and progress writes never wait on it (SQLite would lock)."""
    last_pk = 0
    while page := list(Turn.objects.filter(pk__gt=last_pk).order_by("pk").values_list("pk", "text")[:chunk_size]):
        yield from (text for _, text in page)
        last_pk = page[-1][0]


def _embedding_dimension(encoder) -> int:
    # sentence-transformers renamed the method; accept both spellings.
    method = getattr(encoder, "get_embedding_dimension", None) or encoder.get_sentence_embedding_dimension
    return int(method())


class DialogueVectors:
    """Decayed dialogue embeddings looked up by target turn id: the target turn and the turns of
    its dialogue before it, last heaviest. The turn vectors stay memory-mapped and nothing is kept
    between calls, so looking up a corpus chunk by chunk holds one chunk at a time."""

    def __init__(self, store: EmbeddingStore):
        self.turn_ids, self.vectors = store.load()

    def histories(self, target_turn_ids: Iterable[int]) -> dict[int, list[int]]:
        """target turn id -> the turn ids of its dialogue up to it, in order."""
        target_rows = Turn.objects.filter(pk__in=list(target_turn_ids)).values_list("pk", "dialogue_id", "position")
        wanted = defaultdict(list)
        for pk, dialogue_id, position in target_rows:
            wanted[dialogue_id].append((position, pk))
        turns = Turn.objects.filter(dialogue_id__in=list(wanted)).order_by("dialogue_id", "position")
        by_dialogue = defaultdict(list)
        for pk, dialogue_id, position in turns.values_list("pk", "dialogue_id", "position").iterator(chunk_size=5000):
            by_dialogue[dialogue_id].append((position, pk))
        return {
            pk: [t for p, t in by_dialogue[dialogue_id] if p <= position]
            for dialogue_id, targets_here in wanted.items()
            for position, pk in targets_here
        }

    def __call__(self, target_turn_ids: Sequence[int]) -> np.ndarray:
        history = self.histories(target_turn_ids)
        out = np.zeros((len(target_turn_ids), self.vectors.shape[1]), dtype=np.float32)
        for index, target in enumerate(target_turn_ids):
            rows = np.searchsorted(self.turn_ids, history[target])
            out[index] = dialogue_embedding(self.vectors[rows])
        return normalise_rows(out)


def unlabeled_targets() -> list[int]:
    """The last turn of every training-split dialogue none of whose turns has any TurnLabel: SBERT
    and self labels are training data, so a validation or test dialogue never gets one."""
    last_position = Turn.objects.filter(dialogue=OuterRef("dialogue")).order_by("-position").values("position")[:1]
    labeled = TurnLabel.objects.filter(turn__dialogue=OuterRef("dialogue"))
    return list(
        Turn.objects.filter(position=Subquery(last_position), dialogue__split=TurnLabel.TRAIN)
        .exclude(Exists(labeled))
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def save_new_labels(new_labels: Sequence[rounds_core.NewLabel]) -> int:
    """TurnLabel rows for SBERT and self labels, all in one transaction (nothing half-saved)."""
    labels = Label.objects.by_names({n.label for n in new_labels})
    dialogue_of = dict(
        Turn.objects.filter(pk__in={n.source_key for n in new_labels if n.source_key}).values_list("pk", "dialogue_id")
    )
    rows = []
    for new in new_labels:
        provenance: dict[str, Any] = {"round": new.round}
        if new.source == rounds_core.SBERT:
            provenance.update(
                source_dialogue=dialogue_of.get(new.source_key),
                source_turn=new.source_key,
                similarity=round(float(new.similarity), 6),
            )
        rows.append(
            TurnLabel(
                turn_id=new.key,
                label=labels[new.label],
                source=new.source,
                confidence=new.confidence,
                provenance=provenance,
            )
        )
    with transaction.atomic():
        created = TurnLabel.objects.bulk_create(rows, ignore_conflicts=True)
    return len(created)


def sbert_expand(
    job: JobRun, threshold: float | None = None, round_number: int = 1, method: str = "faiss"
) -> dict[str, Any]:
    """Every unlabeled dialogue at or above `threshold` (empty: calibrated to the encoder, else the paper's)
    of a gold training dialogue takes its label on its last turn (most similar wins; never test gold)."""
    from mlworkers.expansion.calibration import expansion_threshold
    from mlworkers.ml.expansion.similarity import SEARCHERS

    chosen = expansion_threshold(threshold)
    gold_split(job)
    gold = gold_labels([TurnLabel.TRAIN, TurnLabel.VALIDATION])
    if not gold:
        raise NoGoldLabels("no crowd gold labels yet: aggregate a campaign first")
    store = turn_embedding_store(progress=lambda d, t: report_progress(job, d, t, f"embedding turns {d}/{t}"))
    targets = unlabeled_targets()
    expand = rounds_core.vector_expander(DialogueVectors(store), search=SEARCHERS[method])
    sources = [rounds_core.Item(k, (), v) for k, v in gold.items()]
    report_progress(job, 0, 1, f"searching {len(targets)} unlabeled dialogues against {len(sources)} gold")
    matches = []
    for start in range(0, len(targets), SEARCH_CHUNK):  # one chunk's dialogue vectors at a time
        candidates = [rounds_core.Item(k, ()) for k in targets[start : start + SEARCH_CHUNK]]
        matches += expand(sources, candidates, chosen.value)
    new = [
        rounds_core.NewLabel(key, gold[source], rounds_core.SBERT, int(round_number), similarity, source, similarity)
        for key, source, similarity in matches
    ]
    created = save_new_labels(new) if new else 0
    found = f"{created} dialogues labeled by similarity" if created else "no unlabeled dialogue matched: nothing saved"
    report_progress(job, 1, 1, f"{found} ({chosen.note()})")
    return {"labeled": created, "gold_sources": len(sources), "unlabeled": len(targets), **chosen.as_result()}
