"""Build the dialogue classifier's input from a dialogue (pure: no Django, no torch).

The labeled turn is the LAST of the chronological turns. The input puts it first, then the
preceding turns from the most recent backwards, each followed by the tokenizer's separator:

    [CLS] target [SEP] previous [SEP] the one before [SEP] ...

cut at `max_tokens` in all, so the target always survives truncation and old context goes first.
`turn_index` gives, for every token, the turn it came from (0 = target, 1 = the turn before, ...),
which is how the classifier weights the context less than the target.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from annotation.papers import TURN_WEIGHT_DECAY

DEFAULT_MAX_TOKENS = 100
DEFAULT_TURN_WEIGHT_DECAY = TURN_WEIGHT_DECAY


def build_input(
    turns: Sequence[str], tokenizer: Any, max_tokens: int = DEFAULT_MAX_TOKENS
) -> tuple[list[int], list[int]]:
    """(input_ids, turn_index) for one dialogue whose last turn is the one to classify."""
    if not turns:
        raise ValueError("a dialogue needs at least one turn (the last one is classified)")
    return build_input_from_tokens(tokenize_turns(turns, tokenizer, max_tokens), *special_ids(tokenizer), max_tokens)


def tokenize_turns(turns: Sequence[str], tokenizer: Any, max_tokens: int = DEFAULT_MAX_TOKENS) -> list[list[int]]:
    """Token ids of each turn without special tokens; no turn needs more than `max_tokens`."""
    encoded = tokenizer(list(turns), add_special_tokens=False, truncation=True, max_length=max_tokens)
    return [list(ids) for ids in encoded["input_ids"]]


def special_ids(tokenizer: Any) -> tuple[int | None, int]:
    """(start token id or None, separator id) of a BERT- or RoBERTa-style tokenizer."""
    start = tokenizer.cls_token_id if tokenizer.cls_token_id is not None else tokenizer.bos_token_id
    sep = tokenizer.sep_token_id if tokenizer.sep_token_id is not None else tokenizer.eos_token_id
    if sep is None:
        raise ValueError(f"tokenizer {type(tokenizer).__name__} has neither a sep nor an eos token")
    return start, sep


def build_input_from_tokens(
    turn_tokens: Sequence[Sequence[int]], start_id: int | None, sep_id: int, max_tokens: int = DEFAULT_MAX_TOKENS
) -> tuple[list[int], list[int]]:
    """The same as `build_input` from turns already tokenized (chronological, last = target).

    Bulk annotation tokenizes each turn of a dialogue once and builds every turn's input from the
    cached ids, instead of re-tokenizing the history for every turn.
    """
    if max_tokens < 3:
        raise ValueError(f"max_tokens={max_tokens} leaves no room for a turn between the special tokens")
    input_ids = [start_id] if start_id is not None else []
    turn_index = [0] if start_id is not None else []
    for distance, tokens in enumerate(reversed(turn_tokens)):
        room = max_tokens - len(input_ids) - 1  # keep one place for this turn's separator
        if room <= 0:
            break
        kept = list(tokens[:room])
        input_ids += [*kept, sep_id]
        turn_index += [distance] * (len(kept) + 1)
    return input_ids, turn_index


def turn_weights(turn_index: Sequence[int], decay: float = DEFAULT_TURN_WEIGHT_DECAY) -> list[float]:
    """Weight of every token: 1 for the target turn, `decay`**k for the turn k steps back.

    decay=1 switches the weighting off; decay must be in (0, 1] so context never outweighs the target.
    """
    if not 0 < decay <= 1:
        raise ValueError(f"turn weight decay must be in (0, 1], got {decay}")
    return [decay**index for index in turn_index]
