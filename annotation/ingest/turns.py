"""Turn segmentation: which sentences one speaker says in a row.

Subtitles rarely name speakers, so turns are guessed. `TurnSegmenter` is the seam where a trained
segmenter plugs in later; `PunctuationSegmenter` is the default rule.
"""

from collections.abc import Iterable, Iterator
from typing import Protocol

from annotation.ingest.records import Sentence, TurnRecord
from annotation.ingest.sentences import CLOSERS, TERMINALS, starts_lower_case
from annotation.papers import DIALOGUE_GAP_SECONDS

ELLIPSES = ("...", "…")


class TurnSegmenter(Protocol):
    def segment(self, sentences: Iterable[Sentence]) -> Iterator[TurnRecord]: ...


class PunctuationSegmenter:
    """A dash-led sentence starts a new turn. Otherwise a sentence joins the previous turn when that
    turn does not end in terminal punctuation, or ends with an ellipsis and this sentence starts in
    lower case ("I was going to..." / "...tell you"); every other sentence starts a new turn.
    A sentence starting more than `max_join_gap` seconds after the turn ends never joins it.
    `segment` inlines `continues` (it runs once per sentence): a subclass that changes the rule
    overrides `segment`."""

    def __init__(self, max_join_gap: float = DIALOGUE_GAP_SECONDS) -> None:
        self.max_join_gap = max_join_gap

    def segment(self, sentences: Iterable[Sentence]) -> Iterator[TurnRecord]:
        turn: TurnRecord | None = None
        max_gap = self.max_join_gap
        for sentence in sentences:
            if (
                turn is not None
                and not sentence.new_speaker
                and not (sentence.start is not None and turn.end is not None and sentence.start - turn.end > max_gap)
            ):
                # self.continues(turn.text, sentence.text), inlined: it runs once per sentence.
                trimmed = turn.text.rstrip(CLOSERS)
                if not trimmed.endswith(TERMINALS) or (trimmed.endswith(ELLIPSES) and starts_lower_case(sentence.text)):
                    # "I was going to..." + "...tell you" reads "I was going to... tell you".
                    turn.text += " " + sentence.text.lstrip(".… ")
                    # The turn's end is its last sentence's: an unknown end stays unknown, so a
                    # missing time keeps the dialogue together rather than inventing a gap.
                    turn.end = sentence.end
                    turn.sentence_count += 1
                    continue
            if turn is not None:
                yield turn
            turn = TurnRecord(sentence.text, sentence.start, sentence.end)
        if turn is not None:
            yield turn

    @staticmethod
    def continues(previous: str, sentence: str) -> bool:
        trimmed = previous.rstrip(CLOSERS)
        if not trimmed.endswith(TERMINALS):
            return True
        return trimmed.endswith(ELLIPSES) and starts_lower_case(sentence)
