"""A crowd-platform worker's landing, once its link is read and checked (labeling.pages.landings):
the platform asked whether it stands behind the landing (where its API can say), the landing's
identity (labeling.services.workers), a HIT claimed and bound to the platform's id of the work. The view
signs the worker in and renders; every row this writes or locks is written or locked by the
services called here.

What a landing may take (docs/crowd/identity-and-integrity.md):
- Prolific: the SESSION_ID must be a submission of this campaign's study, of this PROLIFIC_PID,
  and live (ACTIVE, or RESERVED: the place held for them). Prolific is asked by a job
  (labeling.platforms.prolific_checks), never in the web request: until its answer is stored the landing
  gets a page that polls (LandingPending) and nothing else. A session Prolific does not stand
  behind gets nothing; one Prolific could not be asked about keeps polling (fail closed). A proven
  landing is the participant's at once.
- MTurk cannot be asked before the work is submitted, but it admits only MaxAssignments real
  workers to each HIT it lists: a landing for a HIT we published gets a phantom place on the HIT
  of ours it maps to (claim.take_phantom_place), which takes no seat, so made-up ids cost honest
  workers nothing; a hitId we never published is refused. Only a study made by hand (no HIT of
  the campaign published on MTurk) gives its landings an unproven seat, capped per address and
  given back by itself (labeling.actions.claim's sweep).
- Either way one landing is one HIT of its own campaign (labeling.actions.claim).
"""

from dataclasses import dataclass

from django.utils.translation import gettext, gettext_lazy

from labeling.actions import claim
from labeling.models import HIT, Assignment, Campaign, ProlificSessionCheck, Worker
from labeling.platforms import prolific_checks
from labeling.platforms.prolific_checks import prolific_studies, session_refusal
from labeling.services import workers

__all__ = [
    "Landing",
    "LandingPending",
    "LandingRefused",
    "claim_for",
    "identify",
    "land",
    "prolific_studies",
    "session_refusal",
]

BLOCKED = gettext_lazy("Your worker id is blocked from taking HITs in this project. Please return the HIT.")
OPENED_ELSEWHERE = gettext_lazy(
    "This HIT is open under another platform assignment of your worker id. Go back to that one, "
    "or accept this one again once it expired."
)
ONE_HIT = gettext_lazy(
    "This link's HIT was already given out ({status}). Each {platform} session gets one HIT; "
    "please return to {platform}."
)
OTHER_STUDY = gettext_lazy("This session belongs to another study of this site. Please open that study's own link.")
NOT_PUBLISHED = gettext_lazy("This is not a HIT this study published on MTurk. Please return it.")
NOT_OPEN_TO_YOU = gettext_lazy(
    "This HIT is not open to you: you hold a place on it under another MTurk HIT, or the study's "
    "qualification quiz comes first. Please return it."
)
ADDRESS_UNREADABLE = gettext_lazy(
    "Your address could not be read, so this landing cannot be checked; please try again."
)
YOUR_TURN = gettext_lazy(
    "Many sessions from your address were not confirmed by Prolific, so its sessions are checked one "
    "at a time; yours is checked in turn."
)
PROLIFIC_NOT_REACHED = gettext_lazy("Prolific could not be reached just now; we keep asking.")
NOT_PROVEN = gettext_lazy(
    "Prolific does not list this as an active session of this study for your Prolific id ({why})."
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


class LandingPending(Exception):
    """The platform's answer is not there yet (its check waits for it, or the platform could not
    be asked): nothing is created, the page polls. The message, if any, is for the page."""


def land(landing: Landing, *, ip: str | None) -> tuple[Worker, Assignment | None]:
    """The landing's worker and the HIT it gets (None when none is left). Raises LandingRefused
    for a blocked platform id, a session the platform does not stand behind, an account that
    cannot be used, the landing caps, a session of another campaign or whose HIT was given out,
    and a HIT bound to another platform assignment; LandingPending when Prolific cannot be asked."""
    worker = identify(landing, ip=ip)
    return worker, claim_for(worker, landing)


def identify(landing: Landing, *, ip: str | None) -> Worker:
    """The landing's worker, every check of `land` but the claim made: what a landing whose
    campaign's study flow comes first gets (consent and practice take nothing scarce), before it
    comes back for its HIT (claim_for)."""
    blocked, proven_before = workers.landing_standing(landing.platform, landing.worker_id, landing.external_assignment)
    if blocked:
        raise LandingRefused(gettext_lazy("Not allowed"), BLOCKED, status=403)
    proven = landing.platform == Worker.PROLIFIC and (proven_before or _prolific_proven(landing, ip))
    # a hitId of ours (prefer_hit_id) is one we published: the campaign is on MTurk, no query needed
    phantom = landing.platform == Worker.MTURK and (
        landing.prefer_hit_id is not None or _published_on_mturk(landing.campaign)
    )
    if phantom and landing.prefer_hit_id is None:
        raise LandingRefused(gettext_lazy("Not a HIT of this study"), NOT_PUBLISHED, status=403)
    try:
        worker = workers.platform_worker(
            landing.platform,
            landing.worker_id,
            landing_key=landing.external_assignment,
            campaign=landing.campaign,
            ip=ip,
            proven=proven,
        )
    except workers.AccountConflict as conflict:
        raise LandingRefused(gettext_lazy("Account problem"), str(conflict), status=409) from conflict
    except workers.AddressUnreadable as unreadable:
        raise LandingRefused(gettext_lazy("Address not readable"), str(unreadable), status=403) from unreadable
    except workers.SignupLimited as limited:
        raise LandingRefused(gettext_lazy("Too many new workers"), str(limited), status=429) from limited
    if worker.is_blocked:
        raise LandingRefused(gettext_lazy("Not allowed"), BLOCKED, status=403)
    if worker.signup_campaign_id != landing.campaign.pk:
        raise LandingRefused(gettext_lazy("Another study's session"), OTHER_STUDY, status=409)
    return worker


def claim_for(worker: Worker, landing: Landing) -> Assignment | None:
    """The landing's one HIT: a phantom place on the MTurk HIT's own HIT of ours, or a seat."""
    phantom = landing.platform == Worker.MTURK and landing.prefer_hit_id is not None
    if phantom:
        assignment = claim.take_phantom_place(
            worker, landing.campaign, landing.prefer_hit_id, bind_to=landing.external_assignment
        )
    else:
        assignment = claim.claim_next_hit(
            worker, landing.campaign, prefer_hit_id=landing.prefer_hit_id, bind_to=landing.external_assignment
        )
    if assignment is None:
        _refuse_a_second_hit(worker, landing)
        if phantom:
            raise LandingRefused(gettext_lazy("HIT not open to you"), NOT_OPEN_TO_YOU, status=409)
    elif not _bound_to(assignment, landing):
        # someone who knows the worker id but not the platform's assignment id: no sign-in
        raise LandingRefused(gettext_lazy("HIT opened elsewhere"), OPENED_ELSEWHERE, status=409)
    return assignment


def _published_on_mturk(campaign: Campaign) -> bool:
    """Whether any HIT of the campaign was published on MTurk (has MTurk's HIT id)."""
    return HIT.objects.filter(campaign=campaign).exclude(external_id="").exists()


def _refuse_a_second_hit(worker: Worker, landing: Landing) -> None:
    """A landing whose one HIT was given out (reloaded after submitting, or left to expire) is told
    so; None from the claim otherwise means that no HIT is left."""
    status = claim.held_status(worker)
    if status is not None:
        platform = "Prolific" if landing.platform == Worker.PROLIFIC else "MTurk"
        raise LandingRefused(
            gettext_lazy("HIT already given"), ONE_HIT.format(status=status, platform=platform), status=409
        )


def _bound_to(assignment: Assignment, landing: Landing) -> bool:
    """Bind the assignment to the platform's id of the work at its first landing (one conditional
    UPDATE, so two racing landings bind one id; a seat the claim just made for this landing came
    bound); True when it is bound to this landing's id."""
    if assignment.platform_assignment_id == landing.external_assignment:
        return True  # made for this landing by its claim (claim_next_hit's bind_to), or bound before
    if Assignment.objects.filter(pk=assignment.pk, platform_assignment_id="").update(
        platform_assignment_id=landing.external_assignment
    ):
        return True  # bound now, by this landing (the common case: one statement)
    bound = Assignment.objects.filter(pk=assignment.pk).values_list("platform_assignment_id", flat=True).first()
    return bound == landing.external_assignment


# --- Prolific stands behind the landing, or it gets nothing ---------------------------------------


def _prolific_proven(landing: Landing, ip: str | None) -> bool:
    """True when Prolific stands behind the landing (asked of a landing whose identity was not
    proven before: workers.landing_standing); LandingRefused when it does not, LandingPending
    while its check waits for Prolific's answer (or Prolific could not be asked). Prolific is asked
    by a job, never here (labeling.platforms.prolific_checks): this reads the session's check, or
    queues it.

    Made-up sessions cost a call to Prolific and a place in the queue each, so the checks an
    address holds are capped before anything is queued (prolific_checks.checks_in_flight): past
    the cap the page polls and nothing is queued until some are answered. What the address was
    refused never shuts it (honest participants share a university's or a carrier's address): past
    its refused sessions' caps it is asked about one session at a time."""
    if ip is None:
        raise LandingRefused(gettext_lazy("Address not readable"), ADDRESS_UNREADABLE, status=403)
    check = prolific_checks.check_of(landing.external_assignment)
    if prolific_checks.queued(check):
        # its job is on its way to Prolific: nothing to count or queue until the answer is stored
        # (the "Checking" page's poll, every CHECK_AGAIN_SECONDS of every waiting participant)
        raise LandingPending("")
    studies = prolific_checks.prolific_studies(landing.campaign)
    if not studies:
        raise LandingRefused(
            gettext_lazy("Not a study of this site"), NOT_PROVEN.format(why=gettext("no study published")), status=403
        )
    failed = check is not None and check.status == ProlificSessionCheck.FAILED
    # a new session Prolific does not list yet is still being checked, not a failure to reach it
    problem = PROLIFIC_NOT_REACHED if failed and not prolific_checks.waiting_for_listing(check) else ""
    if check is None or check.status != ProlificSessionCheck.ANSWERED:
        if (check is None or failed) and prolific_checks.checks_in_flight(ip):
            # the address's checks fill its share of the queue: wait a poll
            raise LandingPending(problem or (YOUR_TURN if prolific_checks.refusals_capped(ip) else ""))
        session = landing.external_assignment
        check = prolific_checks.ask(session, participant=landing.worker_id, campaign=landing.campaign, ip=ip)
    if check.status != ProlificSessionCheck.ANSWERED:
        unreached = check.status == ProlificSessionCheck.FAILED and not prolific_checks.waiting_for_listing(check)
        raise LandingPending(PROLIFIC_NOT_REACHED if unreached else problem)
    why = session_refusal(check.submission, landing.worker_id, studies)
    if why:
        raise LandingRefused(gettext_lazy("Session not confirmed"), NOT_PROVEN.format(why=why), status=403)
    return True
