"""A HIT's free seats, counted once and kept in `HIT.seats_free` so a claim never counts them.

A seat is held by a live (accepted, inside its time limit) or done (submitted, approved)
assignment; `HIT.seats_free` is `required_workers` minus those. Every service that takes or frees
a seat moves the count in the transaction that changes the assignment, with an atomic
`seats_free = seats_free +/- n` (the HIT row is locked by that UPDATE, so concurrent writers add
up): claiming takes one (labeling.services.claim_next_hit); expiring a stale or unconfirmed
assignment, rejecting done work, and adding a seat (labeling.hits.add_seat) free one.

What keeps the count safe even when something bypasses these services (an admin edit, a test
writing rows by hand): a claim locks the HIT row, then counts its seats again from the
assignments (`taken`, one indexed count) and writes the true figure back. So a count that is too
high costs one more try and is repaired; it never puts a fourth worker on a HIT. A count that is
too low would hide a free seat: `recount` writes the truth for a campaign (run when a campaign
opens, and by the EDOS import after it writes its own assignments).
"""

from collections import Counter
from collections.abc import Iterable

from django.db.models import Count, F, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from labeling.models import HIT, Assignment


def taken(hit_id: int) -> int:
    """Seats of one HIT held right now, counted from its assignments (index on hit, status)."""
    return Assignment.objects.holding_a_seat().filter(hit_id=hit_id).count()


def free(hit_ids: Iterable[int]) -> None:
    """One seat freed per id given (an id twice: two seats), in the caller's transaction. HITs
    are updated in id order so two writers freeing seats on the same HITs cannot deadlock."""
    for hit_id, count in sorted(Counter(hit_ids).items()):
        HIT.objects.filter(pk=hit_id).update(seats_free=F("seats_free") + count)


def set_free(hit_id: int, count: int) -> None:
    """Write the count a claim found under the HIT's row lock (labeling.services)."""
    HIT.objects.filter(pk=hit_id).update(seats_free=count)


def recount(hits=None) -> int:
    """Write the true free-seat count of `hits` (a HIT queryset; default all); returns how many
    HITs were updated. One UPDATE with a correlated count per HIT: for repairs, not for claims."""
    held = (
        Assignment.objects.holding_a_seat(timezone.now())
        .filter(hit=OuterRef("pk"))
        .values("hit")
        .annotate(n=Count("pk"))
        .values("n")
    )
    hits = HIT.objects.all() if hits is None else hits
    return hits.update(
        seats_free=F("required_workers") - Coalesce(Subquery(held, output_field=IntegerField()), Value(0))
    )
