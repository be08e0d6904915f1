"""A submission's statements, in the order a submission runs them (labeling.actions.submit calls one
entry per step; each runs its read compiled once with ANNOTATOR_FAST_PATH on, its ORM twin with it off):

1. `locked_assignment`: the assignment's row, locked, with its worker (every write of an answer takes
   the same lock first: labeling.actions.lock_live).
2. `unanswered`: the positions of its screens without an answer (none, or the submission is refused).

The quiz score that follows is the task type's (labeling.task_types.last_turn_label.quiz compiles its
own reads with the same machinery).
"""

from labeling.fast_path.compiled import (
    STAND_IN_ASSIGNMENT,
    STAND_IN_HIT,
    STAND_IN_SEAT,
    Compiled,
    enabled,
    instances,
)
from labeling.models import Assignment, HITItem, Worker, seat_items_q

# of=("self",): the assignment's row only, never its worker's (read along, unlocked) nor a HIT's or
# campaign's (that would queue every answer of a campaign behind one another)
LOCKED = Compiled(
    lambda pk: Assignment.objects.select_for_update(of=("self",)).select_related("worker").filter(pk=pk),
    STAND_IN_ASSIGNMENT,
)
UNANSWERED = Compiled(
    lambda assignment_id, hit_id, seat: (
        HITItem.objects.filter(seat_items_q(seat), hit_id=hit_id)
        .exclude(responses__assignment_id=assignment_id)
        .values_list("position", flat=True)
    ),
    STAND_IN_ASSIGNMENT,
    STAND_IN_HIT,
    STAND_IN_SEAT,
)


def locked_assignment(pk: int) -> Assignment:
    """The assignment `pk` with its worker, its row locked (inside the caller's transaction)."""
    if not enabled():
        return LOCKED.queryset(pk).get()
    row = LOCKED.first_row(pk)
    if row is None:
        raise Assignment.DoesNotExist(f"assignment {pk}")
    current, current.worker = instances(row, Assignment, Worker)
    return current


def unanswered(assignment: Assignment) -> list[int]:
    """The positions of the assignment's screens without an answer."""
    values = (assignment.pk, assignment.hit_id, assignment.seat)
    if not enabled():
        return list(UNANSWERED.queryset(*values))
    return [position for (position,) in UNANSWERED.rows(*values)]
