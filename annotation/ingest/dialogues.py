"""The dialogue split and the turn rules that cut a dialogue short."""

from collections import Counter
from collections.abc import Iterable, Iterator

from annotation.ingest.cleaning import AFTER_REMOVED_TURN, CleaningRules, turn_rule_check
from annotation.ingest.records import DialogueRecord, TurnRecord

MAX_DIALOGUE_TURNS = 1000


class DialogueSplitter:
    """Splits a turn stream at long gaps and applies the turn rules as it goes.

    The first removed turn ends its dialogue: it and every later turn up to the next gap go (only
    counted, never buffered). Dialogues left with too few turns are dropped. A dialogue that reaches
    `max_turns` (only a file with no times at all gets there) is closed and a new one begins, so
    memory stays bounded and positions fit the database."""

    def __init__(
        self, gap_seconds: float, rules: CleaningRules, removed: Counter, max_turns: int = MAX_DIALOGUE_TURNS
    ) -> None:
        self.gap_seconds = gap_seconds
        self.max_turns = max_turns
        self.rules = rules
        self.removed = removed
        self.turn_count = 0

    def split(self, turns: Iterable[TurnRecord]) -> Iterator[DialogueRecord]:
        kept: list[TurnRecord] = []
        previous_tokens: list[str] | None = None
        cut = False
        position = 0
        last_end: float | None = None
        started = False
        # The loop runs once per turn: attributes and rule switches are read into locals once, here.
        gap, max_turns, removed = self.gap_seconds, self.max_turns, self.removed
        removal_reason = turn_rule_check(self.rules)
        for turn in turns:
            start = turn.start
            # a gap OVER `gap` starts a new dialogue (exactly `gap` does not); an unknown time never does
            scene_break = started and start is not None and last_end is not None and start - last_end > gap
            if scene_break or len(kept) >= max_turns:
                yield from self._finish(kept, position)
                kept, previous_tokens, cut, position = [], None, False, position + 1
            started, last_end = True, turn.end
            self.turn_count += 1
            if cut:
                removed[AFTER_REMOVED_TURN] += 1
                continue
            text = turn.text
            tokens = text.casefold().split()  # normalise_text(text) is their join
            reason = removal_reason(text, tokens, previous_tokens)
            if reason:
                removed[reason] += 1
                cut = True
                continue
            kept.append(turn)
            previous_tokens = tokens
        if started:
            yield from self._finish(kept, position)

    def _finish(self, kept: list[TurnRecord], position: int) -> Iterator[DialogueRecord]:
        if not kept or (self.rules.too_few_turns and len(kept) < self.rules.min_dialogue_turns):
            self.removed["too_few_turns"] += 1
            return
        yield DialogueRecord(kept, position)
