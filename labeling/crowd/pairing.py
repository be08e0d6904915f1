"""Building pairwise items, without Django: pairs from a CSV, sides drawn per pair, and the
degenerate dialogues that make quiz items whose better side is obvious."""

import csv
import io
import random
from collections.abc import Sequence
from dataclasses import dataclass

MAX_CSV_LINES = 20_000


class PairsRefused(ValueError):
    """A pairs file that cannot be used; `errors` holds one message per bad line."""

    def __init__(self, errors: Sequence[str]) -> None:
        self.errors = list(errors)
        shown = "; ".join(self.errors[:10])
        more = f" (and {len(self.errors) - 10} more)" if len(self.errors) > 10 else ""
        super().__init__(f"{shown}{more}")


@dataclass(frozen=True)
class Pair:
    a: int  # dialogue id from source a
    b: int  # dialogue id from source b


@dataclass(frozen=True)
class PlacedPair:
    pair: Pair
    left_is: str  # "a" or "b": which source is shown on the left


def parse_pairs_csv(text: str, name: str = "pairs.csv") -> list[tuple[int, Pair]]:
    """(line number, pair) for each `a,b` line of dialogue ids; an optional first line such as
    `dialogue_a,dialogue_b` (any non-numeric header) is skipped, and blank lines are ignored.
    Every bad line is reported at once, named by file and line; nothing is returned then."""
    errors, pairs = [], []
    rows = list(csv.reader(io.StringIO(text)))
    if len(rows) > MAX_CSV_LINES:
        raise PairsRefused([f"{name}: {len(rows)} lines; at most {MAX_CSV_LINES} pairs per file"])
    for number, row in enumerate(rows, start=1):
        cells = [cell.strip() for cell in row]
        if not any(cells):
            continue
        if number == 1 and not any(cell.isdigit() for cell in cells):
            continue  # a header
        if len(cells) != 2:
            errors.append(f"{name} line {number}: expected two dialogue ids (a,b), got {len(cells)} cells")
            continue
        bad = [cell for cell in cells if not cell.isdigit() or int(cell) == 0]
        if bad:
            errors.append(f"{name} line {number}: {bad[0]!r} is not a dialogue id")
            continue
        a, b = int(cells[0]), int(cells[1])
        if a == b:
            errors.append(f"{name} line {number}: dialogue {a} on both sides")
            continue
        pairs.append((number, Pair(a, b)))
    if errors:
        raise PairsRefused(errors)
    if not pairs:
        raise PairsRefused([f"{name}: no pairs (one `dialogue_a,dialogue_b` per line)"])
    return pairs


def place(pairs: Sequence[Pair], seed: int) -> list[PlacedPair]:
    """Draw, per pair, which source goes on the left: seeded, so a rebuild places alike."""
    rng = random.Random(f"pairwise-sides:{seed}")
    return [PlacedPair(pair, rng.choice("ab")) for pair in pairs]


def zip_sources(a_ids: Sequence[int], b_ids: Sequence[int], count: int, seed: int) -> list[Pair]:
    """`count` pairs (fewer when a source runs out) of a dialogue from each source, drawn without
    replacement in a seeded order; a dialogue found in both sources is used on one side only."""
    rng = random.Random(f"pairwise-draw:{seed}")
    shared = set(a_ids) & set(b_ids)
    a_pool = [d for d in a_ids if d not in shared]
    b_pool = [d for d in b_ids if d not in shared]
    rng.shuffle(a_pool)
    rng.shuffle(b_pool)
    return [Pair(a, b) for a, b in zip(a_pool, b_pool, strict=False)][:count]


def repeated_turns(turns: Sequence[str]) -> list[str]:
    """A degenerate dialogue: its opening turn said over and over, as long as the original."""
    first = next((t for t in turns if t.strip()), "Hello.")
    return [first] * max(len(turns), 4)


def nonsense(turns: Sequence[str], rng: random.Random) -> list[str]:
    """A degenerate dialogue: each turn's words reversed and shuffled across turns (word salad)."""
    words = [word for turn in turns for word in turn.split()] or ["the", "of", "and", "a"]
    rng.shuffle(words)
    count = max(len(turns), 4)
    size = max(len(words) // count, 3)
    return [" ".join((words * 3)[i * size : (i + 1) * size]).lower() for i in range(count)]


def degenerate(turns: Sequence[str], rng: random.Random) -> list[str]:
    """One of the two degenerate forms, drawn."""
    return repeated_turns(turns) if rng.random() < 0.5 else nonsense(turns, rng)
