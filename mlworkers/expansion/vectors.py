"""The turn embeddings every step after SBERT expansion reads (Django side): written once per
encoder, read as decayed dialogue embeddings.

    turn_embedding_store  reads every turn; writes their embeddings under
                          MEDIA_ROOT/embeddings/<model>/ (again only when the corpus's turns changed)
    DialogueVectors       reads those files and the turns: a dialogue's decayed embedding

The files and the decay are `mlworkers.ml.expansion.embeddings`'s.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
from django.conf import settings

from annotation.models import Turn
from mlworkers.ml.expansion.embeddings import EmbeddingStore, dialogue_embedding, normalise_rows, write_embeddings

EMBEDDINGS_SUBDIR = "embeddings"


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
