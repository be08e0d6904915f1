"""Interaction-response pairs as the SubTle corpus extracts them from SubRip cues (no Django import).

Rules, applied to the cues of one file in time order:
- A cue is cut into speaker units: each dash-led line starts a unit, an undashed line continues the
  unit above it; a cue without dashes is one unit. The speaker dash is stripped from the text.
- A unit is *complete* when it starts with a capital letter or a dash (`-`, `‐`, `–`, `—`) and ends
  with `.`, `!` or `?` (closing quotes after it allowed) but not with an ellipsis (`...`, `…`).
- Two adjacent units form a pair when both are complete and the gap between them (the second's start
  minus the first's end, in whole milliseconds) is *under* `max_gap` seconds: a gap of exactly
  `max_gap` is no pair. Units of one cue have a gap of zero.
- A unit ending in an ellipsis, or followed by a unit starting in lower case, is one speaker running
  on: neither is complete there, so no pair.
Cue numbers are 1-based positions in time order (the SRT numbers of a well-formed file).
"""

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from annotation.export.cells import escape_cell
from annotation.ingest.cleaning import strip_markup
from annotation.ingest.records import Cue

SPEAKER_DASHES = "-‐–—"
ENDINGS = (".", "!", "?")
ELLIPSES = ("...", "…")
CLOSING_QUOTES = "\"'”’»)"
DEFAULT_MAX_GAP = 1.0


@dataclass(slots=True)
class Unit:
    """One speaker's text in one cue."""

    text: str  # dash stripped
    dash_led: bool
    cue: int
    start: float
    end: float


@dataclass(slots=True)
class Pair:
    interaction: str
    response: str
    file: str
    interaction_cue: int
    response_cue: int
    interaction_start: float
    interaction_end: float
    response_start: float
    response_end: float

    def as_dict(self) -> dict:
        return asdict(self)


def cue_units(cue: Cue, number: int) -> list[Unit]:
    units: list[Unit] = []
    for raw in strip_markup(cue.text).split("\n"):
        line = raw.strip()
        if not line:
            continue
        dash_led = line[0] in SPEAKER_DASHES
        if dash_led or not units:
            text = line.lstrip(SPEAKER_DASHES).strip() if dash_led else line
            units.append(Unit(text, dash_led, number, cue.start, cue.end))
        else:
            units[-1].text = f"{units[-1].text} {line}".strip()
    return [unit for unit in units if unit.text]


def is_complete(unit: Unit) -> bool:
    """Starts with a capital or a dash; ends with `.`, `!` or `?` but not an ellipsis."""
    text = unit.text
    if not text:
        return False
    if not (unit.dash_led or text[0].isupper()):
        return False
    body = text.rstrip(CLOSING_QUOTES)
    return body.endswith(ENDINGS) and not body.endswith(ELLIPSES)


def gap_under(first: Unit, second: Unit, max_gap: float) -> bool:
    """Whole milliseconds, so that 2.1 - 1.1 is exactly 1.0 s and a gap of `max_gap` is refused."""
    gap_ms = round(second.start * 1000) - round(first.end * 1000)
    return gap_ms < round(max_gap * 1000)


def extract_pairs(cues: Iterable[Cue], file: str, max_gap: float = DEFAULT_MAX_GAP) -> Iterator[Pair]:
    previous: Unit | None = None
    for number, cue in enumerate(cues, 1):
        for unit in cue_units(cue, number):
            # units of one cue have a gap below zero, so they always pass the gap test
            if (
                previous is not None
                and is_complete(previous)
                and is_complete(unit)
                and gap_under(previous, unit, max_gap)
            ):
                yield _pair(previous, unit, file)
            previous = unit


def turn_pairs(
    turns: Iterable[tuple[str, float | None, float | None]], max_gap: float = DEFAULT_MAX_GAP
) -> Iterator[tuple[str, str]]:
    """(interaction, response) for consecutive turns of one stored dialogue, (text, start, end) each,
    under the rules for cues: both complete and the gap under `max_gap` (a turn without times
    counts as adjacent). A stored turn is one speaker's text already: no dash is cut here."""
    previous: Unit | None = None
    previous_timed = False
    for number, (text, start, end) in enumerate(turns, 1):
        unit = Unit(" ".join(text.split()), False, number, start or 0.0, end or 0.0)
        timed = start is not None and end is not None
        close = not (timed and previous_timed) or (previous is not None and gap_under(previous, unit, max_gap))
        if previous is not None and close and is_complete(previous) and is_complete(unit):
            yield previous.text, unit.text
        previous, previous_timed = unit, timed


def _pair(first: Unit, second: Unit, file: str) -> Pair:
    return Pair(first.text, second.text, file, first.cue, second.cue, first.start, first.end, second.start, second.end)


@dataclass
class Score:
    matched: int
    extracted: int
    expected: int

    @property
    def precision(self) -> float:
        return self.matched / self.extracted if self.extracted else 0.0

    @property
    def recall(self) -> float:
        return self.matched / self.expected if self.expected else 0.0


PairKey = tuple[str, int, int]


def pair_key(file: str, interaction_cue: int, response_cue: int) -> PairKey:
    """Files are matched by base name, so a reference written elsewhere still lines up."""
    return (file.replace("\\", "/").rsplit("/", 1)[-1], int(interaction_cue), int(response_cue))


def score_pairs(extracted: Iterable[PairKey], expected: Iterable[PairKey]) -> Score:
    """Precision and recall over the files the reference names (pairs of other files are not judged)."""
    expected_set = set(expected)
    files = {key[0] for key in expected_set}
    judged = {key for key in extracted if key[0] in files}
    return Score(len(judged & expected_set), len(judged), len(expected_set))


FIELDS = list(Pair.__dataclass_fields__)


class PairWriter:
    """Writes pairs as JSON lines or CSV (header row `FIELDS`) to an open text handle."""

    def __init__(self, handle, fmt: str) -> None:
        self.handle = handle
        self.fmt = fmt
        if fmt == "csv":
            import csv

            self._csv = csv.writer(handle, lineterminator="\n")
            self._csv.writerow(FIELDS)

    def write(self, pair: Pair) -> None:
        if self.fmt == "csv":
            self._csv.writerow([escape_cell(value) for value in pair.as_dict().values()])
        else:
            self.handle.write(json.dumps(pair.as_dict(), ensure_ascii=False) + "\n")


def read_reference(path: Path) -> list[PairKey]:
    """Expected pairs: JSON lines (or CSV with a header row when the name ends in `.csv`), each with
    `file`, `interaction_cue` and `response_cue`; other keys are ignored, so an `extract_pairs`
    output is a valid reference. A bad row raises ValueError naming `path:line`."""
    with open(path, encoding="utf-8", newline="") as handle:
        if path.name.lower().endswith(".csv"):
            import csv

            rows = ((number, row) for number, row in enumerate(csv.DictReader(handle), 2))
        else:
            rows = ((number, _json_row(path, number, line)) for number, line in enumerate(handle, 1) if line.strip())
        return [_reference_key(path, number, row) for number, row in rows]


def _json_row(path: Path, number: int, line: str) -> dict:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{number}: not JSON ({exc.msg})") from None
    if not isinstance(row, dict):
        raise ValueError(f"{path}:{number}: expected an object with file, interaction_cue, response_cue")
    return row


def _reference_key(path: Path, number: int, row: dict) -> PairKey:
    try:
        return pair_key(str(row["file"]), row["interaction_cue"], row["response_cue"])
    except KeyError as exc:
        raise ValueError(f"{path}:{number}: missing {exc.args[0]!r}") from None
    except (TypeError, ValueError):
        raise ValueError(f"{path}:{number}: cue numbers must be whole numbers") from None


@dataclass
class GenreStats:
    files: int = 0
    cues: int = 0
    pairs: int = 0

    @property
    def pairs_per_cue(self) -> float:
        return self.pairs / self.cues if self.cues else 0.0


def stats_table(stats: dict[str, GenreStats]) -> str:
    """The per-genre table the SubTle paper gives: films, cues, pairs and pairs per cue, and a total."""
    total = GenreStats(*(sum(getattr(s, name) for s in stats.values()) for name in ("files", "cues", "pairs")))
    width = max([len("genre"), len("total"), *map(len, stats)])
    lines = [f"{'genre':<{width}}  {'files':>6}  {'cues':>9}  {'pairs':>9}  {'pairs/cue':>9}"]
    for genre, row in [*sorted(stats.items()), ("total", total)]:
        lines.append(f"{genre:<{width}}  {row.files:>6}  {row.cues:>9}  {row.pairs:>9}  {row.pairs_per_cue:>9.3f}")
    return "\n".join(lines)
