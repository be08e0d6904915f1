"""Where crowd-platform workers arrive (MTurk's ExternalQuestion, Prolific's study link) and how
they hand their result back to the platform.

A platform worker has no password here: each landing is a pending identity of its own (a Worker
keyed by the platform's worker id AND the platform's id of this piece of work: MTurk
assignmentId, Prolific SESSION_ID), tied to a plain (never staff) site account, signed in, and
given a HIT through labeling.platforms.landing, so from then on the annotator pages serve them like
anyone. A landing never inherits another landing's account on the strength of the worker id
alone: the identity is merged into the platform id's proven Worker only when the platform
confirms the submission it made (labeling.actions.submit.confirm_platform_submission).

This module reads the link, asks before switching accounts, signs in and renders; it writes and
locks no row. The identities, their accounts and the landing caps are labeling.services.workers', the
claim and its binding to the platform's id of the work labeling.platforms.landing's.

Trust: MTurk's ExternalQuestion parameters (workerId, assignmentId, turkSubmitTo) and Prolific's
(PROLIFIC_PID, STUDY_ID, SESSION_ID) are NOT signed. So:
- every link carries its publication's token (labeling.services.entry_tokens: one per campaign and
  platform); without it a landing is a 403 and creates nothing (no user, no worker, no session),
  and the Prolific link's token does not open the MTurk landing, nor the other way round;
- a Prolific landing is asked of Prolific first, by a job (labeling.platforms.landing,
  labeling.platforms.prolific_checks): until the answer is stored it gets the "checking" page, which polls
  the landing (no web worker held waiting); a session Prolific does not list as this
  participant's active session of this study gets a 403 and nothing; one it could not be asked
  about keeps polling (fail closed);
- new unproven identities are capped by the live work their client address (an IPv6 address
  counted by its /PLATFORM_IPV6_PREFIX network and its /48) holds, never by what it was refused,
  and per campaign and hour (counted by labeling.services.workers): a 429, nothing created; an address that
  cannot be read is refused;
- a browser signed in as another account is never switched without a confirmation posted from our
  own page (CSRF-checked), so a forged link cannot sign a victim into the forger's worker; nor is
  one mid-HIT switched to another session of its own worker id;
- a worker id with a made-up assignment or session id opens an empty identity of its own,
  never the history, completion codes or live HIT of the worker it names;
- a platform worker's answers count only once the platform confirms the submission
  (labeling.actions.submit.confirm_platform_submission).
"""

import re

from django.conf import settings
from django.contrib.auth import login
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from config.web.client_ip import client_ip
from config.web.pages import refusal
from labeling.actions.claim import live_assignment
from labeling.models import HIT, Assignment, Campaign, Publication, Worker
from labeling.pages import study as study_views
from labeling.platforms import prolific_events
from labeling.platforms.costs import money
from labeling.platforms.landing import Landing, LandingPending, LandingRefused, claim_for, identify
from labeling.services import qualification, workers
from labeling.services.entry_tokens import TOKEN_PARAMETER, token_matches
from labeling.study_flow import progress as study_progress

# Platform ids are opaque tokens of letters and digits (MTurk: ~14 upper-case, Prolific: 24 hex).
PLATFORM_ID = re.compile(r"[A-Za-z0-9]{1,64}")
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"
# The only places an MTurk worker's result may be posted back to.
MTURK_SUBMIT_HOSTS = ("https://www.mturk.com", "https://workersandbox.mturk.com")
MTURK_SUBMIT_PATH = "/mturk/externalSubmit"
PROLIFIC_COMPLETE_URL = "https://app.prolific.com/submissions/complete?cc={code}"
CHECK_AGAIN_SECONDS = 2  # the "checking your Prolific session" page polls the landing this often
SESSION_KEY = "platform_return"
# What MTurk's preview (no assignment accepted yet) shows: a made-up screen of the task, never one
# of the campaign's own dialogues (quiz answers must not leak to a worker who has not accepted).
PREVIEW_SAMPLE = {
    "turns": [
        ("A", "You kept the ticket? After all these years?"),
        ("B", "I couldn't throw it away. It was our first film together."),
    ],
    "choices": ["Nostalgic", "Surprised", "Sentimental"],
}


class BadLanding(Exception):
    """A landing URL the platform would never send; the message names the parameter."""


class BadToken(Exception):
    """The link's entry token is missing or not the campaign's."""


# --- Entry points -------------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])  # POST: the confirmation to switch accounts
@xframe_options_exempt  # MTurk shows the ExternalQuestion inside an iframe on its own site
def mturk_landing(request: HttpRequest) -> HttpResponse:
    try:
        landing = _mturk_landing(request.GET)
    except BadLanding as bad:
        return _bad_request(request, str(bad))
    except BadToken:
        return _bad_token(request)
    if landing.preview:
        campaign = landing.campaign
        context = {
            "campaign": campaign,
            "platform": "MTurk",
            "sample": PREVIEW_SAMPLE,
            "reward": money(campaign.reward, campaign.currency),
            "bonus": money(campaign.bonus, campaign.currency),
        }
        return render(request, "labeling/platform/preview.html", context)
    if request.headers.get("Sec-Fetch-Dest") == "iframe":
        # Inside MTurk's frame our session cookie is third-party (SameSite=Lax, often blocked
        # outright) and the HIT pages refuse framing; the same URL opened as a window works.
        return render(
            request,
            "labeling/platform/open_window.html",
            {"campaign": landing.campaign, "url": request.get_full_path()},
        )
    return _land(request, landing)


@require_http_methods(["GET", "POST"])
def prolific_landing(request: HttpRequest) -> HttpResponse:
    try:
        landing = _prolific_landing(request.GET)
    except BadLanding as bad:
        return _bad_request(request, str(bad))
    except BadToken:
        return _bad_token(request)
    return _land(request, landing)


@csrf_exempt  # Prolific's own POST: its signature is what is checked (labeling.platforms.prolific_events)
@require_POST
def prolific_event(request: HttpRequest) -> HttpResponse:
    """Prolific's webhook deliveries: verified, recorded once and acted on by prolific_events.receive."""
    status, detail = prolific_events.receive(request.headers, request.body, timezone.now().timestamp())
    response = JsonResponse({"detail": detail}, status=status)
    if status == 503:
        response["Retry-After"] = prolific_events.RETRY_AFTER_SECONDS
    return response


@require_GET
def platform_return(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """Hand a submitted assignment back to the platform the worker came from.

    MTurk: an auto-submitting form POSTs assignmentId and the completion code to the
    externalSubmit URL remembered at landing. Prolific: the code and the study's completion link.
    """
    if not request.user.is_authenticated:
        raise Http404(gettext("No such assignment."))
    assignment = get_object_or_404(Assignment, pk=assignment_id, worker__user=request.user)
    remembered = request.session.get(SESSION_KEY)
    if not remembered or remembered.get("assignment") != assignment.pk:
        raise Http404(gettext("This assignment did not come from a crowd platform in this browser session."))
    if not assignment.is_done:
        return redirect("labeling:assignment_detail", pk=assignment.pk)
    context = {"assignment": assignment, "info": remembered}
    if remembered["kind"] == Worker.MTURK:
        return render(request, "labeling/platform/return_mturk.html", context)
    # Prolific accepts the study's completion code (set when the study was created); a study made
    # by hand on Prolific's site takes our per-assignment code
    study = Publication.objects.filter(campaign=assignment.hit.campaign_id, platform=Worker.PROLIFIC).first()
    context["code"] = study.completion_code if study and study.completion_code else assignment.completion_code
    context["code"] = qualification.quiz_completion_code(assignment) or context["code"]  # the quiz's own study
    context["complete_url"] = PROLIFIC_COMPLETE_URL.format(code=context["code"])
    return render(request, "labeling/platform/return_prolific.html", context)


# --- Reading the platform's parameters ----------------------------------------------------------


def _mturk_landing(params) -> Landing:
    campaign = _campaign(params, Worker.MTURK)
    assignment_id = params.get("assignmentId", "")
    if assignment_id == MTURK_PREVIEW:
        return Landing(Worker.MTURK, "", campaign, preview=True, return_info={})
    worker_id = _platform_id(params, "workerId")
    assignment_id = _platform_id(params, "assignmentId")
    hit_id = _platform_id(params, "hitId")
    submit_to = params.get("turkSubmitTo", "").rstrip("/")
    if submit_to not in MTURK_SUBMIT_HOSTS:
        message = gettext("turkSubmitTo must be one of %(hosts)s; got %(value)r.")
        raise BadLanding(message % {"hosts": ", ".join(MTURK_SUBMIT_HOSTS), "value": submit_to})
    info = {
        "kind": Worker.MTURK,
        "platform": "MTurk",
        "submit_url": submit_to + MTURK_SUBMIT_PATH,
        "external_assignment": assignment_id,
    }
    offered = HIT.objects.filter(campaign=campaign, external_id=hit_id).values_list("pk", flat=True).first()
    return Landing(
        Worker.MTURK,
        worker_id,
        campaign,
        preview=False,
        return_info=info,
        external_assignment=assignment_id,
        prefer_hit_id=offered,
    )


def _prolific_landing(params) -> Landing:
    campaign = _campaign(params, Worker.PROLIFIC)
    worker_id = _platform_id(params, "PROLIFIC_PID")
    info = {
        "kind": Worker.PROLIFIC,
        "platform": "Prolific",
        "study": _platform_id(params, "STUDY_ID"),
        "session": _platform_id(params, "SESSION_ID"),
    }
    return Landing(
        Worker.PROLIFIC, worker_id, campaign, preview=False, return_info=info, external_assignment=info["session"]
    )


def _platform_id(params, name: str) -> str:
    value = params.get(name, "")
    if not PLATFORM_ID.fullmatch(value):
        message = gettext("%(name)s must be 1 to 64 letters or digits; got %(value)r.")
        raise BadLanding(message % {"name": name, "value": value[:80]})
    return value


def _campaign(params, platform: str) -> Campaign:
    for name in ("campaign", "hit"):
        if params.get(name) and not params[name].isdigit():
            raise BadLanding(
                gettext("%(name)s must be a number; got %(value)r.") % {"name": name, "value": params[name][:80]}
            )
    if not params.get("campaign"):
        raise BadLanding(gettext("campaign is missing from the link."))
    campaign = Campaign.objects.filter(pk=int(params["campaign"])).first()
    # an unknown campaign reads like a wrong token: a forged link learns nothing
    if campaign is None or not token_matches(campaign, params.get(TOKEN_PARAMETER), platform):
        raise BadToken()
    return campaign


def _bad_token(request: HttpRequest) -> HttpResponse:
    message = gettext("This link is not a valid link of an open study (its entry token is missing or out of date).")
    return _problem(request, gettext("This link is not valid"), message, status=403)


def _bad_request(request: HttpRequest, message: str) -> HttpResponse:
    return refusal(request, gettext("This link is not valid"), message, status=400)


# --- Signing in and claiming --------------------------------------------------------------------


def _land(request: HttpRequest, landing: Landing) -> HttpResponse:
    campaign = landing.campaign
    if campaign.status != Campaign.OPEN:
        message = gettext("The campaign “%(name)s” is not open for work right now. Please return the HIT.")
        return _problem(request, gettext("Campaign not open"), message % {"name": campaign.name}, status=409)
    if _needs_confirmation(request, landing):
        return render(
            request, "labeling/platform/confirm_switch.html", {"landing": landing, "url": request.get_full_path()}
        )
    try:
        worker = identify(landing, ip=client_ip(request))
        flow_first = not study_progress.cleared(worker, campaign)
        assignment = None if flow_first else claim_for(worker, landing)
    except LandingRefused as refused:
        return _problem(request, refused.title, refused.message, status=refused.status)
    except LandingPending as pending:
        return _checking(request, landing, str(pending))
    # login() rotates the session key (and empties the session when another user was signed in),
    # so what the return view needs is stored after it.
    login(request, worker.user, backend=settings.MODEL_BACKEND)
    if flow_first:
        # consent, instructions and practice come first and take nothing; the flow's last step
        # sends the participant back to this link, which then claims their HIT (labeling.study_flow)
        request.session[study_views.LANDING_KEY] = {
            "campaign": campaign.pk,
            "url": request.get_full_path(),
            "kind": landing.platform,
            "platform": landing.return_info["platform"],
        }
        return redirect(reverse("labeling:study_entry", args=[campaign.pk]))
    if assignment is None:
        message = gettext(
            "Every HIT of this campaign is taken or already done by you. Please return the HIT. Thank you!"
        )
        return _problem(request, gettext("No HIT left"), message, status=409)
    request.session[SESSION_KEY] = {**landing.return_info, "assignment": assignment.pk}
    return redirect(reverse("labeling:assignment_detail", args=[assignment.pk]))


def _checking(request: HttpRequest, landing: Landing, problem: str) -> HttpResponse:
    """Prolific's answer about the session is not there yet (a job asks, labeling.platforms.prolific_checks):
    nothing was created; the page reloads this landing by itself, which reads the answer once it is
    stored, so no web worker waits on Prolific. `problem`: Prolific could not be reached."""
    context = {
        "campaign": landing.campaign,
        "platform": "Prolific",
        "url": request.get_full_path(),
        "retry_seconds": CHECK_AGAIN_SECONDS,
        "problem": problem,
    }
    # 202, not 503: a proxy may put its own page in place of a 5xx body, and this one must reload
    return render(request, "labeling/platform/checking.html", context, status=202)


def _needs_confirmation(request: HttpRequest, landing: Landing) -> bool:
    """A browser signed in as another account switches only after a confirmation it POSTs from
    our own page (CSRF-checked): a link alone never signs a victim into someone else's worker."""
    if not request.user.is_authenticated:
        return False
    if request.method == "POST" and request.POST.get("confirm") == "switch":
        return False
    # a browser signed in as another landing of the same platform id (the next HIT) switches
    # freely once its HIT is done: its work goes to that id either way, and only the platform's
    # confirmation proves it; mid-HIT, another session id asks first (never a silent switch)
    same_id = request.user.pk in workers.accounts_of_platform_id(landing.platform, landing.worker_id)
    return not same_id or _mid_hit_elsewhere(request, landing)


def _mid_hit_elsewhere(request: HttpRequest, landing: Landing) -> bool:
    current = getattr(request.user, "worker", None)
    if current is None or current.landing_key == landing.external_assignment:
        return False
    return live_assignment(current) is not None


def _problem(request: HttpRequest, title: str, message: str, *, status: int) -> HttpResponse:
    return refusal(request, title, message, status=status)
