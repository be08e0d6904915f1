"""The annotator's actions, one module each (in the manner of wagtail's actions/): `claim` (a seat
on a HIT), `answer` (one screen's answer) and `submit` (the assignment, and a platform's
confirmation of it). Views, the API, the platform sync, commands and the simulated crowd all call
these, so every path obeys the same rules.

Concurrency: a claim locks the worker's row (one claim at a time per worker) and then a HIT row
(SELECT ... FOR UPDATE SKIP LOCKED on PostgreSQL, so concurrent claimers spread over HITs instead
of queueing on one) and counts the HIT's seats again under that lock. An answer and a submission
lock the assignment's row, so they queue behind one another; a submission is a conditional
UPDATE accepted -> submitted, so a double click submits once. SQLite ignores row locks but
serialises writers, and the unique (hit, worker) constraint still refuses a duplicate.

What every action shares is here: the refusal an annotator is shown, and the live assignment's lock.
"""

from django.utils import timezone
from django.utils.translation import gettext

from labeling.fast_path import submit as fast_submit
from labeling.models import Assignment


class SubmissionRefused(Exception):
    """An answer or a submission that breaks a rule; the message says which, for the annotator."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def refusal_reason(assignment: Assignment) -> str | None:
    """Why this assignment's answers can no longer change, for the annotator; None while live."""
    if assignment.is_done:
        return gettext("This HIT was already submitted; its answers can no longer change.")
    if assignment.status == Assignment.REJECTED:
        return gettext("This HIT was rejected; its answers can no longer change.")
    if assignment.status == Assignment.EXPIRED or assignment.expires_at <= timezone.now():
        return gettext("The time limit for this HIT has passed; it was released to other workers.")
    return None


def lock_live(assignment: Assignment) -> Assignment:
    """Lock the assignment row (answers and the submission queue behind one another) and check it
    can still change; raise SubmissionRefused saying why not."""
    current = fast_submit.locked_assignment(assignment.pk)
    reason = refusal_reason(current)
    if reason is not None:
        raise SubmissionRefused(reason)
    return current
