"""The histogram of gaps between adjacent raw cues: the evidence behind the dialogue split threshold."""

from dataclasses import dataclass, field

BIN_SECONDS = 0.5
MAX_SECONDS = 30.0


@dataclass
class CueGapHistogram:
    """Counts of `next.start - previous.end` in 0.5 s bins up to 30 s; overlaps count as 0."""

    bin_seconds: float = BIN_SECONDS
    max_seconds: float = MAX_SECONDS
    counts: list[int] = field(default_factory=list)
    over_max: int = 0
    _last_end: float | None = None

    def __post_init__(self) -> None:
        self.counts = [0] * round(self.max_seconds / self.bin_seconds)

    def add_cue(self, start: float, end: float) -> None:
        last_end = self._last_end
        self._last_end = end
        if last_end is None:
            return
        gap = start - last_end
        if gap >= self.max_seconds:
            self.over_max += 1
        else:
            self.counts[int(gap / self.bin_seconds) if gap > 0 else 0] += 1

    def add_cues(self, cues) -> None:
        """`add_cue` for each of `cues` (objects with `start` and `end`, in order), in one loop."""
        last_end, counts, width, limit = self._last_end, self.counts, self.bin_seconds, self.max_seconds
        for cue in cues:
            if last_end is not None:
                gap = cue.start - last_end
                if gap >= limit:
                    self.over_max += 1
                else:
                    counts[int(gap / width) if gap > 0 else 0] += 1
            last_end = cue.end
        self._last_end = last_end

    def block_start(self, start: float | None) -> None:
        if start is None or self._last_end is None:
            return
        gap = max(0.0, start - self._last_end)
        if gap >= self.max_seconds:
            self.over_max += 1
        else:
            self.counts[int(gap / self.bin_seconds)] += 1

    def block_end(self, end: float | None) -> None:
        if end is not None:
            self._last_end = end

    def as_dict(self) -> dict:
        return {
            "bin_seconds": self.bin_seconds,
            "max_seconds": self.max_seconds,
            "counts": list(self.counts),
            "over_max": self.over_max,
        }
