"""Faults a stand-in injects into the calls it answers: which call fails, and how.

Four kinds, each the way a real platform call fails:
- LOST: the platform did the work, then the answer never arrived (a read timeout after it acted);
- THROTTLED: refused before doing anything, with a Retry-After (HTTP 429; MTurk's ThrottlingException);
- SERVER: an internal error (HTTP 500; MTurk's ServiceFault), nothing done;
- TIMEOUT: the request timed out before the platform acted.

A plan is either "the n-th call" (`at`, to walk a fault through every call of a study in turn) or
"each call with probability `rate`" (a seeded generator, for the soak bench). Pure: no Django.
"""

import random
from dataclasses import dataclass, field

LOST, THROTTLED, SERVER, TIMEOUT = "lost", "throttled", "server", "timeout"
KINDS = (LOST, THROTTLED, SERVER, TIMEOUT)


@dataclass
class FaultPlan:
    at: dict[int, str] = field(default_factory=dict)  # call number (from 1) -> kind
    rate: float = 0.0
    seed: int = 0
    calls: int = 0
    injected: list[tuple[int, str, str]] = field(default_factory=list)  # (call, operation, kind)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)

    def next_fault(self, operation: str) -> str | None:
        """Count one call and say which fault (if any) it meets."""
        self.calls += 1
        kind = self.at.get(self.calls)
        if kind is None and self.rate and self._random.random() < self.rate:
            kind = KINDS[self._random.randrange(len(KINDS))]
        if kind is not None:
            self.injected.append((self.calls, operation, kind))
        return kind


def no_faults() -> FaultPlan:
    return FaultPlan()
