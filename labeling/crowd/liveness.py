"""Can a campaign finish? What its HITs need of the quiz pool and of the crowd, before publishing.

Each claim rule narrows who may take a HIT's last seats: one seat per HIT per worker (so a HIT of
three seats needs three different workers), no dialogue twice, no quiz item twice, the quiz
items' exposure cap, the qualification step, and on a platform one HIT per landing. A study that
runs out of people who may take its last seats strands them in the middle of the study, paid for
and never done. This module says, from the figures alone, whether a campaign can complete and
how many workers and pool items it needs, so the campaign page and the publish page can say it
(and publishing can refuse) before anything is spent. Plain data, no Django.

Pool items. A quiz item shared by a HIT's seats is seen by each of them, so it uses one exposure
per seat: it fits in `exposure_cap // seats_per_hit` HITs (the default cap, 3, is one HIT of
three seats; a worker then can never meet it in a second HIT). An item per seat
(QUIZ_ITEMS_PER_SEAT) uses one exposure per HIT and fits in `exposure_cap` HITs, never two seats
of one.

Workers. The last HIT needs `seats_per_hit` different workers. Where a worker takes at most
`hits_per_worker` HITs (a platform identity: one landing, one HIT), the seats need
`ceil(seats / hits_per_worker)` workers. With per-seat quiz items a worker who did a HIT has met
`quiz_per_hit` items that each sit in up to `exposure_cap - 1` other HITs, closed to them from then
on: a crowd whose work is done by a few busy workers then runs out of HITs they may take.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class CampaignNeeds:
    hits: int
    seats: int  # answers bought: hits x seats per HIT
    workers_needed: int  # different workers the seats need at least
    pool_items_needed: int  # quiz pool items the HITs need at least (0: built already, or no quiz)
    pool_items: int | None  # usable pool items now (None: not asked)
    workers: int | None  # the crowd that may take them (None: unknown, a platform's own)
    problems: tuple[str, ...]  # why it cannot finish; empty: it can
    notes: tuple[str, ...] = ()  # what narrows it without stopping it

    @property
    def can_complete(self) -> bool:
        return not self.problems


def pool_items_needed(hits: int, seats_per_hit: int, quiz_per_hit: int, exposure_cap: int, items_per_seat: bool) -> int:
    """Pool items `hits` new HITs draw at least (0 when they have no quiz screens). Raises
    ValueError when no pool is large enough (a shared item needs seats_per_hit exposures)."""
    if hits == 0 or quiz_per_hit == 0:
        return 0
    if items_per_seat:
        places = hits * quiz_per_hit * seats_per_hit
        return max(quiz_per_hit * seats_per_hit, -(-places // min(exposure_cap, hits)))
    hits_per_item = exposure_cap // seats_per_hit
    if hits_per_item == 0:
        raise ValueError(
            f"a quiz item shared by {seats_per_hit} seats needs QUIZ_MAX_EXPOSURES >= {seats_per_hit} "
            f"(it is {exposure_cap})"
        )
    return max(quiz_per_hit, -(-hits * quiz_per_hit // hits_per_item))


def assess(
    *,
    hits: int,
    seats_per_hit: int,
    quiz_per_hit: int,
    exposure_cap: int,
    items_per_seat: bool = False,
    pool_items: int | None = None,
    built: bool = False,
    workers: int | None = None,
    hits_per_worker: int | None = None,
) -> CampaignNeeds:
    """Whether `hits` HITs of `seats_per_hit` seats and `quiz_per_hit` quiz screens can all be
    done, and what they need. built: their quiz items are drawn already (the pool is not asked
    again); pool_items: usable pool items now; workers: the crowd that may take them (site
    annotators, or platform places bought); hits_per_worker: the most HITs one worker takes."""
    for name, value in (("hits", hits), ("seats_per_hit", seats_per_hit), ("quiz_per_hit", quiz_per_hit)):
        if value < 0:
            raise ValueError(f"{name}: must be 0 or more, not {value}")
    if exposure_cap < 1:
        raise ValueError(f"exposure_cap: must be at least 1, not {exposure_cap}")
    seats = hits * seats_per_hit
    problems: list[str] = []
    items = 0
    if not built:
        try:
            items = pool_items_needed(hits, seats_per_hit, quiz_per_hit, exposure_cap, items_per_seat)
        except ValueError as error:
            problems.append(str(error))
        if pool_items is not None and pool_items < items:
            problems.append(
                f"the quiz pool has {pool_items} usable items; {hits} HITs of {quiz_per_hit} quiz screens "
                f"need {items} (add {items - pool_items} with `manage.py import_quiz`)"
            )
    needed = _workers_needed(hits, seats_per_hit, seats, hits_per_worker)
    if workers is not None and seats and workers < needed:
        problems.append(
            f"{seats} seats ({hits} HITs x {seats_per_hit}) need at least {needed} different workers; "
            f"{workers} can take them"
        )
    return CampaignNeeds(
        hits,
        seats,
        needed,
        items,
        pool_items,
        workers,
        tuple(problems),
        _notes(items_per_seat, quiz_per_hit, exposure_cap, hits),
    )


def _workers_needed(hits: int, seats_per_hit: int, seats: int, hits_per_worker: int | None) -> int:
    if hits == 0:
        return 0
    if hits_per_worker is None:
        return seats_per_hit
    return max(seats_per_hit, -(-seats // max(hits_per_worker, 1)))


def _notes(items_per_seat: bool, quiz_per_hit: int, exposure_cap: int, hits: int) -> tuple[str, ...]:
    if not items_per_seat or quiz_per_hit == 0 or min(exposure_cap, hits) < 2:
        return ()
    closed = quiz_per_hit * (min(exposure_cap, hits) - 1)
    return (
        f"quiz items per seat: each HIT a worker does closes up to {closed} other HITs to them "
        "(no quiz item twice); a few busy workers may then be unable to take the last seats",
    )
