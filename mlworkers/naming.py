"""Names that say which run made a row, and are never repeated. Pure: no Django.

Re-running a pipeline step used to give a second "weak labeler (weak_seed.csv)" model version or a
second "Weak-labeled candidates" campaign, told apart by nothing. A generated name carries the
UTC minute it was made (`stamped`); any name, given or generated, that is already taken gets
" #2", " #3", ... (`unique_name`).
"""

from collections.abc import Callable
from datetime import UTC, datetime

MAX_LENGTH = 200  # ModelVersion.name and Campaign.name


def stamp(when: datetime | None = None) -> str:
    return (when or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")


def stamped(name: str, when: datetime | None = None) -> str:
    """`name` with the UTC minute after it, e.g. "fastText, round 4 (2026-11-23 12:05 UTC)"."""
    suffix = f" ({stamp(when)})"
    return name[: MAX_LENGTH - len(suffix)] + suffix


def unique_name(name: str, taken: Callable[[str], bool]) -> str:
    """`name` when `taken(name)` is false, else the first free of "name #2", "name #3", ..."""
    name = name.strip()[:MAX_LENGTH]
    candidate, number = name, 1
    while taken(candidate):
        number += 1
        suffix = f" #{number}"
        candidate = name[: MAX_LENGTH - len(suffix)] + suffix
    return candidate
