"""Train / validation / test: the one function that assigns a dialogue its split (pure, no Django).

A dialogue's split is a hash of its content hash, computed once when the dialogue is stored and
kept in `Dialogue.split`; the exporter, the `gold_split` job, the SBERT expansion and the rounds
all read that column and never compute a split themselves. Hashing the content (not the row id)
gives the same dialogue the same split in every database that holds it.
"""

import hashlib

TRAIN, VALIDATION, TEST = "train", "validation", "test"
SPLITS = (TRAIN, VALIDATION, TEST)
# 80 % train, 10 % validation, 10 % test.
SPLIT_BUCKETS = ((80, TRAIN), (90, VALIDATION), (100, TEST))


def split_for(content_hash: str) -> str:
    """The split of the dialogue whose `content_hash` this is; the same input, the same split."""
    bucket = int.from_bytes(hashlib.sha256(f"split:{content_hash}".encode()).digest()[:4], "big") % 100
    return next(name for limit, name in SPLIT_BUCKETS if bucket < limit)
