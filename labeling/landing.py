"""A crowd-platform worker's landing, once its link is read and checked (labeling.platform_views):
the landing's identity (labeling.workers), the seats of unconfirmed work freed, a HIT claimed and
bound to the platform's id of the work. The view signs the worker in and renders; every row this
writes or locks is written or locked by the services called here.
"""

from dataclasses import dataclass

from labeling import workers
from labeling.actions import claim, submit
from labeling.models import Assignment, Campaign, Worker

BLOCKED = "Your worker id is blocked from taking HITs in this project. Please return the HIT."
OPENED_ELSEWHERE = (
    "This HIT is open under another platform assignment of your worker id. Go back to that one, "
    "or accept this one again once it expired."
)


@dataclass(frozen=True)
class Landing:
    platform: str  # Worker.MTURK or Worker.PROLIFIC
    worker_id: str
    campaign: Campaign
    preview: bool
    # what the return view needs to hand the result back (stored in the session as is)
    return_info: dict
    # the platform's id of this piece of work (MTurk assignmentId, Prolific SESSION_ID)
    external_assignment: str = ""
    # our HIT the platform offered (MTurk: the HIT whose hitId it sent), claimed first
    prefer_hit_id: int | None = None


class LandingRefused(Exception):
    """The landing gets no HIT and no sign-in: `title` and `message` for the refusal page, with
    its HTTP `status`."""

    def __init__(self, title: str, message: str, *, status: int):
        super().__init__(message)
        self.title, self.message, self.status = title, message, status


def land(landing: Landing, *, ip: str | None) -> tuple[Worker, Assignment | None]:
    """The landing's worker and the HIT it gets (None when none is left). Raises LandingRefused
    for a blocked platform id, an account that cannot be used, the landing caps, and a HIT bound
    to another platform assignment of the same worker id."""
    if workers.platform_id_blocked(landing.platform, landing.worker_id):
        raise LandingRefused("Not allowed", BLOCKED, status=403)
    submit.free_unconfirmed_seats(landing.campaign)
    try:
        worker = workers.platform_worker(
            landing.platform,
            landing.worker_id,
            landing_key=landing.external_assignment,
            campaign=landing.campaign,
            ip=ip,
        )
    except workers.AccountConflict as conflict:
        raise LandingRefused("Account problem", str(conflict), status=409) from conflict
    except workers.SignupLimited as limited:
        raise LandingRefused("Too many new workers", str(limited), status=429) from limited
    if worker.is_blocked:
        raise LandingRefused("Not allowed", BLOCKED, status=403)
    assignment = claim.claim_next_hit(worker, landing.campaign, prefer_hit_id=landing.prefer_hit_id)
    if assignment is not None and not _bound_to(assignment, landing):
        # someone who knows the worker id but not the platform's assignment id: no sign-in
        raise LandingRefused("HIT opened elsewhere", OPENED_ELSEWHERE, status=409)
    return worker, assignment


def _bound_to(assignment: Assignment, landing: Landing) -> bool:
    """Bind the assignment to the platform's id of the work at its first landing (one conditional
    UPDATE, so two racing landings bind one id); True when it is bound to this landing's id.
    A live HIT of another campaign is left alone: the caller sends the worker back to it."""
    if assignment.hit.campaign_id != landing.campaign.pk:
        return True
    Assignment.objects.filter(pk=assignment.pk, platform_assignment_id="").update(
        platform_assignment_id=landing.external_assignment
    )
    bound = Assignment.objects.filter(pk=assignment.pk).values_list("platform_assignment_id", flat=True).first()
    return bound == landing.external_assignment
