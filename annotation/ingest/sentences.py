"""From cues (or OPUS sentences) to cleaned sentences.

A cue may hold several sentences, and a sentence may run on over several cues: an unfinished
sentence waits for the next piece of text unless that piece is dash-led (another speaker).
Lines that cleaning leaves empty vanish: they neither end a sentence nor start one.
"""

import re
from collections import Counter
from collections.abc import Iterable, Iterator

from annotation.ingest.cleaning import (
    DASHES,
    CleaningRules,
    is_advert,
    join_split_contractions,
    line_cleaner,
    split_mid_line_dashes,
    strip_markup,
    strip_sound_cues,
)
from annotation.ingest.opus_reader import RawSentence
from annotation.ingest.records import Cue, Sentence
from annotation.papers import DIALOGUE_GAP_SECONDS

TERMINALS = (".", "!", "?", "…")
CLOSERS = "\"'”’»)]"
_CLOSERS_AND_TERMINALS = CLOSERS + ".!?…"
# A boundary is terminal punctuation (plus closing quotes) followed by white space.
_BOUNDARY = re.compile(r"(?<=[.!?…])[\"'”’»)\]]*\s+")
_ABBREVIATIONS = {"mr", "mrs", "ms", "dr", "st", "jr", "sr", "prof", "mt", "vs", "lt", "sgt", "capt", "col", "gen"}


def starts_lower_case(text: str) -> bool:
    for char in text:
        if char.isalpha():
            return char.islower()
    return False


def split_sentences(text: str) -> list[str] | tuple[str]:
    body = text.rstrip(_CLOSERS_AND_TERMINALS)
    if "." not in body and "!" not in body and "?" not in body and "…" not in body:
        return (text,)  # no boundary possible: most subtitle lines, spared the regex
    pieces: list[str] = []
    start = 0
    for boundary in _BOUNDARY.finditer(text):
        end = boundary.start() + len(boundary.group().rstrip())
        if _ends_with_abbreviation(text, start, end):
            continue
        pieces.append(text[start:end])
        start = boundary.end()
    pieces.append(text[start:])
    return pieces


def _ends_with_abbreviation(text: str, start: int, end: int) -> bool:
    if text[end - 1] != ".":
        return False
    word = text[start : end - 1].rsplit(" ", 1)[-1]
    return word.lower() in _ABBREVIATIONS or (len(word) == 1 and word.isupper())


class SentenceBuilder:
    """Turns cue or OPUS text into `Sentence`s, counting every cleaning removal in `removed`.

    An unfinished sentence runs on into the next piece of text only if that piece starts within
    `max_join_gap` seconds of its end (the dialogue split's gap): a line 60 s later is not its end."""

    def __init__(self, rules: CleaningRules, removed: Counter, max_join_gap: float = DIALOGUE_GAP_SECONDS) -> None:
        self.rules = rules
        self.removed = removed
        self.max_join_gap = max_join_gap
        self.count = 0
        self._pending: Sentence | None = None
        self._advert_on, self._markup_on, self._sound_on = rules.advert, rules.markup, rules.sound_cue
        self._mid_dash_on = rules.mid_line_dash
        self._clean_line = line_cleaner(rules, removed)
        self._sound_open = False

    def from_cues(self, cues: Iterable[Cue]) -> Iterator[Sentence]:
        # The hot loop of the SubRip path, once per cue: `_push` and the no-boundary test of
        # `split_sentences` are inlined, and the pending sentence lives in a local.
        speaker_runs = self._speaker_runs
        pending = self._pending
        max_gap = self.max_join_gap
        for cue in cues:
            runs = speaker_runs(cue.text)
            if not runs:
                continue
            start, end = cue.start, cue.end
            for text, new_speaker in runs:
                body = text.rstrip(_CLOSERS_AND_TERMINALS)
                boundary_possible = "." in body or "!" in body or "?" in body or "…" in body
                for piece in split_sentences(text) if boundary_possible else (text,):
                    if (
                        new_speaker
                        or pending is None
                        or start - pending.end > max_gap
                        or pending.text.rstrip(CLOSERS).endswith(TERMINALS)
                    ):
                        finished, pending = pending, Sentence(piece, start, end, new_speaker)
                        if finished is not None:
                            self.count += 1
                            yield finished
                    else:  # an unfinished sentence runs on
                        pending.text += " " + piece
                        pending.end = end
                    new_speaker = False  # only a run's first sentence follows the dash
        self._pending = pending
        yield from self._flush()

    def from_opus(self, sentences: Iterable[RawSentence]) -> Iterator[Sentence]:
        contractions = self.rules.opus_contraction
        for raw in sentences:
            text = raw.text
            if contractions:
                text, joined = join_split_contractions(text)
                if joined:
                    self.removed["opus_contraction"] += joined
            for run_text, new_speaker in self._speaker_runs(text):
                finished = self._push(run_text, new_speaker, raw.start, raw.end)
                if finished is not None:
                    yield finished
        yield from self._flush()

    def _speaker_runs(self, text: str) -> list[tuple[str, bool]] | tuple:
        """The cleaned text of one cue as runs of lines by one speaker: [(text, dash-led), ...]."""
        if ("<" in text or "{" in text or "\\" in text) and self._markup_on:
            stripped = strip_markup(text)
            if stripped != text:
                self.removed["markup"] += 1
                text = stripped
        if self._advert_on and is_advert(text, self.rules, self.removed):
            return ()
        if ("(" in text or "[" in text or self._sound_open) and self._sound_on:
            text, self._sound_open, cut = strip_sound_cues(text, self._sound_open)
            if cut:
                self.removed["sound_cue"] += 1
        if "\n" not in text and not ((" -" in text or " –" in text or " ‐" in text) and self._mid_dash_on):
            # the common one-line cue of one speaker, without the bookkeeping below
            line = text.strip()
            if not line:
                return ()
            dash_led = line[0] in DASHES  # split_dash(line), inlined
            if dash_led:
                line = line.lstrip(DASHES).lstrip()
                if not line:
                    return ()
            line = self._clean_line(line)
            return ((line, dash_led),) if line else ()
        return self._multi_line_runs(text)

    def _multi_line_runs(self, text: str) -> list[tuple[str, bool]]:
        clean, mid_line_dash = self._clean_line, self._mid_dash_on
        runs: list[tuple[str, bool]] = []
        for raw_line in text.split("\n"):
            line = raw_line.strip()
            if not line:
                continue
            dash_led = line[0] in DASHES  # split_dash(line), inlined
            if dash_led:
                line = line.lstrip(DASHES).lstrip()
                if not line:
                    continue
            if (" -" in line or " –" in line or " ‐" in line) and mid_line_dash:
                pieces = split_mid_line_dashes(line)
                if len(pieces) > 1:  # the rare line with a second speaker in it
                    self.removed["mid_line_dash"] += len(pieces) - 1
                    self._add_speakers(runs, pieces, dash_led)
                    continue
            line = clean(line)
            if not line:
                continue
            if dash_led or not runs:
                runs.append((line, dash_led))
            else:  # an undashed line continues the run above it
                previous, previous_dash_led = runs[-1]
                runs[-1] = (previous + " " + line, previous_dash_led)
        return runs

    def _add_speakers(self, runs: list[tuple[str, bool]], pieces: list[str], dash_led: bool) -> None:
        """A line cut at mid-line dashes: the first piece as the line would be, each later one a new speaker."""
        for number, piece in enumerate(pieces):
            piece = self._clean_line(piece)
            if not piece:
                continue
            if number or dash_led or not runs:
                runs.append((piece, dash_led or number > 0))
            else:
                previous, previous_dash_led = runs[-1]
                runs[-1] = (previous + " " + piece, previous_dash_led)

    def _push(self, text: str, new_speaker: bool, start: float | None, end: float | None) -> Sentence | None:
        """Add a piece of text; returns the sentence it completes, if any. A sentence is complete
        when it ends in terminal punctuation (a closing quote after it allowed), or when the next
        piece starts more than `max_join_gap` after it (both times known)."""
        pending = self._pending
        if (
            pending is not None
            and not new_speaker
            and not pending.text.rstrip(CLOSERS).endswith(TERMINALS)
            and not (start is not None and pending.end is not None and start - pending.end > self.max_join_gap)
        ):
            pending.text += " " + text
            pending.end = end
            return None
        self._pending = Sentence(text, start, end, new_speaker)
        if pending is not None:
            self.count += 1
        return pending

    def _flush(self) -> Iterator[Sentence]:
        if self._pending is not None:
            self.count += 1
            yield self._pending
            self._pending = None
