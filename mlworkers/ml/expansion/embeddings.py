"""Turn embeddings kept in files, and the decaying dialogue embedding. Pure: numpy only, no Django.

A store is a folder with `vectors.npy` (float32, one row per turn, L2-normalised) and
`turn_ids.npy` (int64, same order). Vectors are written chunk by chunk into a memmap, so a corpus
of millions of turns never sits in memory at once, and read back with mmap_mode="r".
"""

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from annotation.papers import TURN_WEIGHT_DECAY

EncodeFunction = Callable[[list[str]], np.ndarray]


def decay_weights(turn_count: int) -> np.ndarray:
    """Chronological weights that halve going back in time, last turn heaviest, summing to 1:
    three turns give 1/7, 2/7, 4/7."""
    if turn_count < 1:
        raise ValueError("a dialogue needs at least one turn")
    raw = TURN_WEIGHT_DECAY ** np.arange(turn_count - 1, -1, -1, dtype=np.float64)
    return raw / raw.sum()


def normalise_rows(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


def dialogue_embedding(turn_vectors: np.ndarray) -> np.ndarray:
    """The half-decaying weighted mean of a dialogue's turn vectors (chronological rows)."""
    weights = decay_weights(len(turn_vectors))
    return (weights[:, None] * np.asarray(turn_vectors, dtype=np.float64)).sum(axis=0).astype(np.float32)


def dialogue_embeddings(turn_vectors: np.ndarray, dialogues: Sequence[Sequence[int]]) -> np.ndarray:
    """One L2-normalised embedding per dialogue; `dialogues` lists, per dialogue, the row numbers
    of its turns in chronological order."""
    out = np.zeros((len(dialogues), turn_vectors.shape[1]), dtype=np.float32)
    for index, rows in enumerate(dialogues):
        out[index] = dialogue_embedding(turn_vectors[np.asarray(rows, dtype=np.int64)])
    return normalise_rows(out)


@dataclass(frozen=True)
class EmbeddingStore:
    folder: Path

    @property
    def vectors_path(self) -> Path:
        return self.folder / "vectors.npy"

    @property
    def ids_path(self) -> Path:
        return self.folder / "turn_ids.npy"

    def exists(self) -> bool:
        return self.vectors_path.exists() and self.ids_path.exists()

    def load(self) -> tuple[np.ndarray, np.ndarray]:
        """(turn ids, vectors memmap)."""
        return np.load(self.ids_path), np.load(self.vectors_path, mmap_mode="r")


def write_embeddings(
    store: EmbeddingStore,
    turn_ids: Sequence[int],
    texts: Iterable[str],
    encode: EncodeFunction,
    dim: int,
    *,
    chunk_size: int = 4096,
    progress: Callable[[int, int], None] | None = None,
) -> EmbeddingStore:
    """Encode `texts` chunk by chunk into the store's memmap; written to temporary names and
    renamed at the end, so a crash never leaves a store that looks complete."""
    store.folder.mkdir(parents=True, exist_ok=True)
    total = len(turn_ids)
    partial_vectors = store.folder / "vectors.partial.npy"
    vectors = np.lib.format.open_memmap(partial_vectors, mode="w+", dtype=np.float32, shape=(total, dim))
    row = 0
    chunk: list[str] = []
    for text in texts:
        chunk.append(text)
        if len(chunk) == chunk_size:
            row = _write_chunk(vectors, row, chunk, encode, total, progress)
            chunk = []
    if chunk:
        row = _write_chunk(vectors, row, chunk, encode, total, progress)
    if row != total:
        raise ValueError(f"got {row} texts for {total} turn ids")
    vectors.flush()
    del vectors
    partial_ids = store.folder / "turn_ids.partial.npy"
    np.save(partial_ids, np.asarray(turn_ids, dtype=np.int64))
    partial_ids.replace(store.ids_path)
    partial_vectors.replace(store.vectors_path)
    return store


def _write_chunk(vectors, row, chunk, encode, total, progress) -> int:
    encoded = normalise_rows(np.asarray(encode(chunk), dtype=np.float32))
    vectors[row : row + len(chunk)] = encoded
    row += len(chunk)
    if progress:
        progress(row, total)
    return row
