"""A HIT's free seats, counted once and kept in `HIT.seats_free` so a claim never counts them.

The count is by status: an assignment holds a seat while it is accepted, submitted or approved
(labeling.fast_path.claim.SEAT_STATUSES), and `HIT.seats_free` is `required_workers` minus those. An accepted assignment
past its time limit still holds its seat in this count until `expire_stale_assignments` turns it
expired and frees the seat, in one transaction. (Counting by time instead let a recount free a
lapsed seat and the expiry free it again: the count drifted one too high.) Every service that takes
or frees a seat moves the count in the transaction that changes the assignment, with an atomic
`seats_free = seats_free +/- n` (the HIT row is locked by that UPDATE, so concurrent writers add
up): claiming takes one (labeling.actions.claim.claim_next_hit); expiring a stale or unconfirmed
assignment, rejecting done work, and adding a seat (labeling.work.hits.add_seat) free one.

What keeps the count safe even when something bypasses these services (an admin edit, a test
writing rows by hand): a claim locks the HIT row, then counts its seats again from the
assignments (`taken`, one indexed count) and writes the true figure back. So a count that is too
high costs one more try and is repaired; it never puts a fourth worker on a HIT. A count that is
too low would hide a free seat: `recount` writes the truth for a campaign (run when a campaign
opens, and by the EDOS import after it writes its own assignments). Both count under the HIT's
row lock, in a statement that starts after the lock is held, so they see every change committed
by a writer that held the lock before them, and a writer still waiting for it moves the count
after them.

An MTurk landing's phantom place (Assignment.phantom: MTurk itself admits only MaxAssignments real
workers to the HIT) holds no seat: it is never counted, taken or freed.

A qualification seat (labeling.services.qualification) whose holder was shown a known answer (a QuizCheck)
holds its seat for good, whatever became of the assignment: its quiz items are spent, so the slot
is never handed to another worker. An expiry or rejection still frees it in the count; the next
claim's recount under the lock finds it held and writes the truth.
"""

from collections import Counter
from collections.abc import Iterable

from django.db import transaction
from django.db.models import Count, F, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce

from labeling.fast_path import claim as fast_claim
from labeling.fast_path import compiled as fast_path
from labeling.models import HIT, Assignment


def taken(hit_id: int) -> int:
    """Seats of one HIT held by status, counted from its assignments (index on hit, status). The
    caller holds the HIT's row lock (labeling.actions.claim)."""
    if fast_path.enabled():
        return fast_claim.TAKEN.count(hit_id)
    return fast_claim.TAKEN.queryset(hit_id).count()


def slot_for_new_seat(hit_id: int) -> int:
    """The seat slot (HITItem.seat) a new assignment of the HIT takes, under the HIT's row lock:
    the first slot no assignment holds or held, but for expired ones (an expired assignment never
    saw feedback: it was never submitted, or its submission was never confirmed). 0 when the HIT
    has no per-seat items. A seat added past the slots (a tie-break seat, a seat freed by a
    rejection) takes the slot with the fewest holders: its quiz items were seen, never answered
    in feedback, by the earlier holder only if that one was rejected after confirmation."""
    slots = (
        {seat for (seat,) in fast_claim.SLOTS.rows(hit_id)}
        if fast_path.enabled()
        else set(fast_claim.SLOTS.queryset(hit_id))
    )
    if not slots:
        return 0
    held = Counter(fast_claim.HELD.queryset(hit_id).filter(seat__in=slots).values_list("seat", flat=True))
    return min(sorted(slots), key=lambda slot: held[slot])


def free(hit_ids: Iterable[int]) -> None:
    """One seat freed per id given (an id twice: two seats), in the caller's transaction. HITs
    are updated in id order so two writers freeing seats on the same HITs cannot deadlock."""
    for hit_id, count in sorted(Counter(hit_ids).items()):
        HIT.objects.filter(pk=hit_id).update(seats_free=F("seats_free") + count)


def set_free(hit_id: int, count: int) -> None:
    """Write the count a claim found under the HIT's row lock (labeling.actions.claim)."""
    if fast_path.enabled():
        fast_claim.set_free_seats(hit_id, count)  # the same UPDATE, written once (labeling.fast_path.claim)
        return
    HIT.objects.filter(pk=hit_id).update(seats_free=count)


def recount(hits=None) -> int:
    """Write the true free-seat count of `hits` (a HIT queryset; default all); returns how many
    HITs were updated. The rows are locked first (in id order, as `free` updates them), then
    counted and written by one UPDATE with a correlated count per HIT: a statement of its own,
    so under READ COMMITTED it sees what the lock's previous holders committed (an UPDATE that
    waits for a row lock would re-check that row but keep counting with its old snapshot).
    For repairs, not for claims."""
    held = (
        Assignment.objects.filter(fast_claim.holds_a_seat(), hit=OuterRef("pk"))
        .values("hit")
        .annotate(n=Count("pk"))
        .values("n")
    )
    hits = HIT.objects.all() if hits is None else hits
    with transaction.atomic():
        list(hits.order_by("pk").select_for_update().values_list("pk", flat=True))  # the locks
        return hits.update(
            seats_free=F("required_workers") - Coalesce(Subquery(held, output_field=IntegerField()), Value(0))
        )
