"""Claiming: a seat on a HIT for a worker, and the seats that lapse.

A claim locks the worker's row (one claim at a time per worker), then finds a HIT with a free seat
by one indexed SELECT ... FOR UPDATE SKIP LOCKED on the free-seat count (labeling.work.seats), counts
its seats again under that lock and takes one. Before every claim (and on Celery beat), one probe
finds the seats that come back: an assignment past its time limit, and unproven work (a platform
identity its platform had not proven) still unconfirmed a grace after its time limit.

A crowd-platform landing's identity (Worker.landing_key) gets one HIT, of the campaign whose link
it came by (Worker.signup_campaign), ever: the platform gives each of its sessions one piece of
work, so a second HIT (the home page's "Start another HIT", a reload after submitting, another
campaign's page) would be a seat no platform stands behind.

The claim reads top to bottom here, and the SQL it runs top to bottom in labeling.fast_path.claim,
one call per step: the probe, the worker's lock, the HIT they hold, the search, the seat.
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.db import OperationalError, transaction
from django.db.models import Case, Exists, IntegerField, OuterRef, Q, QuerySet, Value, When
from django.utils import timezone

from labeling.fast_path import claim as fast_claim
from labeling.fast_path import compiled as fast_path
from labeling.models import HIT, Assignment, Campaign, HITItem, Worker
from labeling.services import qualification, workers
from labeling.work import quiz_pool, seats


def expire_stale_assignments(now: datetime | None = None) -> int:
    """Mark the assignments whose seat comes back (labeling.fast_path.claim.lapsed_q) expired,
    freeing their seat. Returns how many. Expired unconfirmed work never counts and shows no feedback.

    Run before every claim (holding no lock), so the common case (nothing lapsed) is one read of
    the partial indexes `assignment_live_expiry` and `assignment_unproven_expiry` (one probe: a
    bitmap OR on PostgreSQL). Lapsed rows are locked in id order before they change. A row another
    transaction holds is waited for, not skipped: when that one is another claim's expiry, the
    row is re-checked after it commits and left out (it is expired), so each
    freed seat is counted once however many claims run this at the same time, and this claim's
    search then sees the seat it freed. (Skipping it let a claim answer "no HIT left" while a
    seat was being freed.) An answer or submission holds the row for milliseconds and changes no
    seat.
    """
    now = now or timezone.now()
    before = _unconfirmed_before(now)
    if not fast_claim.any_lapsed(now, before):
        return 0
    return _expire_lapsed(now, before)


def _expire_lapsed(now: datetime, before: datetime) -> int:
    """expire_stale_assignments past its probe (a claim's own probe found a seat coming back)."""
    lapsed = fast_claim.lapsed(now, before)
    with transaction.atomic():
        locked = list(lapsed.select_for_update().order_by("pk").values_list("pk", "hit_id", "phantom"))
        Assignment.objects.filter(pk__in=[pk for pk, _, _ in locked]).update(status=Assignment.EXPIRED)
        seats.free(hit_id for _, hit_id, phantom in locked if not phantom)  # a phantom place held none
    return len(locked)


def _unconfirmed_before(now: datetime) -> datetime:
    return now - timedelta(minutes=settings.PLATFORM_UNCONFIRMED_GRACE_MINUTES)


def live_assignment(worker: Worker, campaign: Campaign | None = None) -> Assignment | None:
    """The worker's accepted, unexpired assignment in an open campaign, if any."""
    return fast_claim.live_assignment(worker.pk, campaign.pk if campaign is not None else None)


def claim_next_hit(
    worker: Worker, campaign: Campaign | None = None, *, prefer_hit_id: int | None = None, bind_to: str = ""
) -> Assignment | None:
    """Give the worker a seat on a HIT: their live assignment if they have one (in whichever open
    campaign), else a new one on the first open HIT (of `campaign`, when given) with a free seat
    that they have never held, `prefer_hit_id` first when it has one (the HIT a platform offered
    them). None when nothing is left, the worker is blocked, or the campaign is not open.
    `bind_to`: the platform's id of the work (a landing's), written on a new assignment as it is
    made (labeling.platforms.landing binds a live one it is given back).

    The HIT is found by one indexed SELECT ... FOR UPDATE SKIP LOCKED on the free-seat count
    (labeling.work.seats); its seats are counted again under the lock before one is taken.
    """
    if worker.landing_key:
        campaign = _landing_campaign(worker, campaign)
        if campaign is None:
            return None
    if worker.is_blocked or (campaign is not None and campaign.status != Campaign.OPEN):
        return None
    probed = prefer_hit_id is None and fast_path.enabled()
    fast = probed and fast_claim.usable()
    if probed and not worker.landing_key:
        now = timezone.now()
        before = _unconfirmed_before(now)
        lapsed, free = fast_claim.probe(now, before)
        if lapsed:
            _expire_lapsed(now, before)
        elif not free:
            return live_assignment(worker)  # nothing to take: their live HIT, if any, as _claim gives
    else:
        expire_stale_assignments()
    deadlocks = 0
    while True:
        try:
            return _claim(worker, campaign, prefer_hit_id, fast=fast, bind_to=bind_to)
        except _HitFull:
            # the fast path's HIT had no seat by its assignments (a count a hand edit left high):
            # nothing of this claim was kept; the full path repairs the count and searches on
            fast = False
        except OperationalError as error:
            # PostgreSQL ended this transaction to break a deadlock between claimers (rare:
            # seen under twenty concurrent claimers in tests/labeling/test_claim_concurrency.py):
            # nothing of it was written, so the claim is simply made again
            in_caller_transaction = transaction.get_connection().in_atomic_block
            if deadlocks == DEADLOCK_RETRIES or not _is_deadlock(error) or in_caller_transaction:
                raise  # (inside a caller's transaction, that transaction is what failed)
            deadlocks += 1


DEADLOCK_RETRIES = 3


def _is_deadlock(error: OperationalError) -> bool:
    return getattr(error.__cause__, "sqlstate", None) == "40P01"  # deadlock_detected


def _claim(
    worker: Worker, campaign: Campaign | None, prefer_hit_id: int | None, *, fast: bool, bind_to: str = ""
) -> Assignment | None:
    """claim_next_hit's transaction: lock the worker, return their live HIT or take a seat (`fast`:
    by the search compiled once and labeling.fast_path.claim's one statement)."""
    with transaction.atomic():
        # One claim at a time per worker, so a double click cannot take two HITs.
        locked_worker = fast_claim.locked_worker(worker.pk)
        if locked_worker.is_blocked:
            return None
        # One live HIT per worker across campaigns: finish (or let expire) the current one first;
        # a platform landing's one HIT, whatever became of it
        existing = (
            fast_claim.landing_assignment(locked_worker.pk) if worker.landing_key else live_assignment(locked_worker)
        )
        if existing is not None:
            return existing if _is_live(existing) else None
        if fast:
            return _take_first_free_seat(locked_worker, campaign, bind_to)
        hit = _lock_hit_with_free_seat(locked_worker, campaign, prefer_hit_id)
        if hit is None:
            return None
        minutes = hit.campaign.time_limit_minutes
        return Assignment.objects.create(
            hit=hit,
            worker=locked_worker,
            expires_at=timezone.now() + timedelta(minutes=minutes),
            seat=seats.slot_for_new_seat(hit.pk),  # under the HIT's row lock, taken above
            unproven=locked_worker.is_pending_identity,
            platform_assignment_id=bind_to,
        )


def _take_first_free_seat(worker: Worker, campaign: Campaign | None, bind_to: str = "") -> Assignment | None:
    """The fast path's seat: the first claimable HIT locked by the search compiled once (skipping
    locked rows, or waiting when every candidate is locked: this transaction holds no HIT lock
    then) and a seat on it taken by one statement (labeling.fast_path.claim). _HitFull, to roll the
    claim back, when the HIT has no seat by its assignments."""
    hit = _CLAIM_SEARCH.first_free(worker, campaign)
    if hit is None:
        return None
    expires_at = timezone.now() + timedelta(minutes=hit.campaign.time_limit_minutes)
    assignment = fast_claim.take_seat(
        hit, worker, expires_at=expires_at, unproven=worker.is_pending_identity, bind_to=bind_to
    )
    if assignment is None:
        raise _HitFull(hit.pk)
    return assignment


def _landing_campaign(worker: Worker, asked: Campaign | None) -> Campaign | None:
    """The one campaign a platform landing's identity may claim in: its link's (None when asked
    for another one: nothing to claim)."""
    if asked is not None:
        return asked if asked.pk == worker.signup_campaign_id else None
    return Campaign.objects.filter(pk=worker.signup_campaign_id).first()


def _is_live(assignment: Assignment) -> bool:
    return (
        assignment.status == Assignment.ACCEPTED
        and assignment.expires_at > timezone.now()
        and assignment.hit.campaign.status == Campaign.OPEN
    )


def held_status(worker: Worker) -> str | None:
    """The state of the one HIT a platform landing was given ("submitted", "expired", ...), or
    None while it was given none."""
    return Assignment.objects.filter(worker=worker).order_by("-pk").values_list("status", flat=True).first()


def take_phantom_place(worker: Worker, campaign: Campaign, hit_id: int, *, bind_to: str = "") -> Assignment | None:
    """An MTurk landing's place on the HIT of ours its MTurk HIT maps to, taking no seat
    (Assignment.phantom: MTurk admits only MaxAssignments real workers to its HIT, so the place
    a real worker needs is always there, and a made-up id's costs nothing). The landing's one
    HIT, as in claim_next_hit; None when the HIT is not open to this worker (its qualification
    gate, or another landing of the same person holding a place on it). `bind_to` as claim_next_hit's."""
    campaign = _landing_campaign(worker, campaign)
    if worker.is_blocked or campaign is None or campaign.status != Campaign.OPEN:
        return None
    expire_stale_assignments()
    with transaction.atomic():
        locked_worker = fast_claim.locked_worker(worker.pk)
        existing = fast_claim.landing_assignment(locked_worker.pk)
        if locked_worker.is_blocked or existing is not None:
            return existing if existing is not None and _is_live(existing) else None
        hit = _CLAIM_SEARCH.phantom_hit(locked_worker, campaign, hit_id)
        if hit is None:
            return None
        return Assignment.objects.create(
            hit=hit,
            worker=locked_worker,
            expires_at=timezone.now() + timedelta(minutes=hit.campaign.time_limit_minutes),
            seat=seats.slot_for_new_seat(hit.pk),
            unproven=locked_worker.is_pending_identity,
            phantom=True,
            platform_assignment_id=bind_to,
        )


def open_hits_for(worker: Worker, campaign: Campaign | None, *, now: datetime | None = None, free_seat: bool = True):
    """The HITs the worker may claim, in claim order: open campaign, a free seat by the count,
    never held by this worker, no dialogue they hold elsewhere, no quiz item they have seen.
    Each exclusion is a NOT EXISTS probe of the candidate HIT's own rows (indexed by hit), so
    taking the first one reads the index `hit_free_seats` up to it and no further."""
    # never two seats of one item: a dialogue the worker already holds in another HIT (a tie-break
    # HIT, or the same dialogue bundled twice) keeps every HIT with it closed to them
    held_turns = HITItem.objects.filter(
        hit__in=Assignment.objects.holding_a_seat(now).filter(worker=worker).values("hit"),
        quiz_question__isnull=True,
        target_turn__isnull=False,
    ).values("target_turn_id")
    hits = HIT.objects.filter(campaign__status=Campaign.OPEN)
    if free_seat:  # (a phantom place needs none)
        hits = hits.filter(seats_free__gt=0)
    if campaign is not None:
        hits = hits.filter(campaign=campaign)
    person = workers.same_person(worker.pk)  # a platform id's every landing; a site worker's own row
    return hits.filter(
        ~Exists(Assignment.objects.filter(hit=OuterRef("pk"), worker=worker)),
        # one real worker never in two seats of one HIT, whatever platform HITs it is offered by
        # (two MTurk HITs mapped to one of ours); the qualification quiz counts attempts apart
        # (qualification.claimable_q), so a borrowed id's attempt does not lock its owner out
        Q(kind=HIT.QUALIFICATION) | ~Exists(_seats_of(person)),
        ~Exists(HITItem.objects.filter(hit=OuterRef("pk"), target_turn_id__in=held_turns)),
        # no quiz item twice per person (not per landing); the quiz HIT's items are spent per seat
        # and its attempts counted apart, so another landing's (a borrowed id's) never close it
        Q(kind=HIT.QUALIFICATION) | ~Exists(_quiz_seen(person)),
        qualification.claimable_q(worker),  # a campaign's qualification quiz first, paid HITs after a pass
    ).order_by("campaign_id", "position", "pk")


def _seats_of(person) -> QuerySet[Assignment]:
    """The candidate HIT's seats the person holds or held (expired ones were never seats)."""
    return Assignment.objects.filter(hit=OuterRef("pk"), worker__in=person).exclude(status=Assignment.EXPIRED)


def _quiz_seen(person) -> QuerySet[HITItem]:
    return HITItem.objects.filter(hit=OuterRef("pk"), quiz_question__in=quiz_pool.seen_by(person))


class _HitFull(Exception):
    def __init__(self, hit_id: int) -> None:
        super().__init__(hit_id)
        self.hit_id = hit_id


def _take_seat(hit: HIT) -> bool:
    """Count the locked HIT's seats again; if one is free, write the count less the seat taken
    now (the true figure: repairs a count a hand edit left high) and say so."""
    taken = _seats_taken(hit)
    if taken >= hit.required_workers:
        return False
    hit.seats_free = hit.required_workers - taken - 1
    seats.set_free(hit.pk, hit.seats_free)
    return True


def _lock_hit_with_free_seat(worker: Worker, campaign: Campaign | None, prefer_hit_id: int | None = None) -> HIT | None:
    """Lock the first claimable HIT row, count its seats again and take one (the count in the
    row may be too high after a hand edit, see labeling.work.seats). Locked rows are skipped so
    concurrent claimers spread over HITs; only when every candidate is locked does a claimer
    wait for one. Through the ORM: every claim with the fast path off; with it on, a platform's
    preferred HIT and a claim made again after the fast path found its HIT full.

    Each try runs in a savepoint that is rolled back when the HIT turns out full, which lets go
    of its lock: a claimer that waits then holds no HIT lock, so two claimers cannot deadlock.
    A HIT found full gets its true count written after that rollback.
    """
    checked: list[int] = []
    candidates = open_hits_for(worker, campaign)
    if prefer_hit_id is not None:
        first = Case(When(pk=prefer_hit_id, then=Value(0)), default=Value(1), output_field=IntegerField())
        candidates = candidates.order_by(first, "campaign_id", "position", "pk")
    for _attempt in range(10):
        try:
            with transaction.atomic():
                # the campaign comes along (unlocked: of=self) for the time limit; no second read
                remaining = candidates.exclude(pk__in=checked).select_related("campaign")
                hit = remaining.select_for_update(skip_locked=True, of=("self",)).first()
                if hit is None:
                    hit = remaining.select_for_update(of=("self",)).first()
                if hit is None:
                    return None
                if not _take_seat(hit):
                    raise _HitFull(hit.pk)
                return hit
        except _HitFull as full:
            checked.append(full.hit_id)
            seats.recount(HIT.objects.filter(pk=full.hit_id))
    return None


def _seats_taken(hit: HIT) -> int:
    return seats.taken(hit.pk)


# the claim search compiled once (with the fast path on), over the claim's own rule
_CLAIM_SEARCH = fast_claim.ClaimSearch(open_hits_for)


def open_hit_count(worker: Worker, campaign: Campaign | None, *, cap: int | None = None) -> int:
    """How many HITs the worker may claim (of `campaign`, when given): open_hits_for's count
    (the home page asks it for every open campaign; with the fast path on, by SQL compiled once).
    cap: count no further than that (the home page's count then costs the same at any campaign
    size: the search's probes run for `cap` HITs, not for every HIT of the campaign)."""
    if worker.landing_key and (campaign is None or campaign.pk != worker.signup_campaign_id or held_status(worker)):
        return 0  # a platform landing's one HIT was given out, or this is not its link's campaign
    if fast_path.enabled():
        return _CLAIM_SEARCH.count(worker, campaign, cap=cap)
    hits = open_hits_for(worker, campaign)
    return (hits[:cap] if cap is not None else hits).count()
