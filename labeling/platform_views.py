"""Where crowd-platform workers arrive (MTurk's ExternalQuestion, Prolific's study link) and how
they hand their result back to the platform.

A platform worker has no password here: the landing page gets or creates a Worker for the
platform's worker id, ties it to a plain (never staff) site account, signs that account in and
claims a HIT through labeling.services, so from then on the annotator pages serve them like anyone.

Trust: MTurk's ExternalQuestion parameters (workerId, assignmentId, turkSubmitTo) and Prolific's
(PROLIFIC_PID, STUDY_ID, SESSION_ID) are NOT signed. Anyone can type a worker id into the URL, so
a worker id here is trusted exactly as far as the platform trusts it: it only ever opens that
worker's own platform account on this site (never a site or staff account), and payment is still
decided on the platform's side, where the returned assignment must match a real, accepted one.
"""

import re
from dataclasses import dataclass

from django.contrib.auth import get_user_model, login
from django.db import IntegrityError, transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.http import require_GET

from labeling import services
from labeling.models import Assignment, Campaign, Worker

# Platform ids are opaque tokens of letters and digits (MTurk: ~14 upper-case, Prolific: 24 hex).
PLATFORM_ID = re.compile(r"[A-Za-z0-9]{1,64}")
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"
# The only places an MTurk worker's result may be posted back to.
MTURK_SUBMIT_HOSTS = ("https://www.mturk.com", "https://workersandbox.mturk.com")
MTURK_SUBMIT_PATH = "/mturk/externalSubmit"
PROLIFIC_COMPLETE_URL = "https://app.prolific.com/submissions/complete?cc={code}"
SESSION_KEY = "platform_return"
MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


class BadLanding(Exception):
    """A landing URL the platform would never send; the message names the parameter."""


class AccountConflict(Exception):
    """The platform worker's site account cannot be used (taken name, staff or inactive account)."""


@dataclass(frozen=True)
class Landing:
    platform: str  # Worker.MTURK or Worker.PROLIFIC
    worker_id: str
    campaign: Campaign
    preview: bool
    # what the return view needs to hand the result back (stored in the session as is)
    return_info: dict


# --- Entry points -------------------------------------------------------------------------------


@require_GET
@xframe_options_exempt  # MTurk shows the ExternalQuestion inside an iframe on its own site
def mturk_landing(request: HttpRequest) -> HttpResponse:
    try:
        landing = _mturk_landing(request.GET)
    except BadLanding as bad:
        return _bad_request(request, str(bad))
    if landing.preview:
        return render(request, "labeling/platform/preview.html", {"campaign": landing.campaign, "platform": "MTurk"})
    if request.headers.get("Sec-Fetch-Dest") == "iframe":
        # Inside MTurk's frame our session cookie is third-party (SameSite=Lax, often blocked
        # outright) and the HIT pages refuse framing; the same URL opened as a window works.
        return render(
            request,
            "labeling/platform/open_window.html",
            {"campaign": landing.campaign, "url": request.get_full_path()},
        )
    return _land(request, landing)


@require_GET
def prolific_landing(request: HttpRequest) -> HttpResponse:
    try:
        landing = _prolific_landing(request.GET)
    except BadLanding as bad:
        return _bad_request(request, str(bad))
    return _land(request, landing)


@require_GET
def platform_return(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """Hand a submitted assignment back to the platform the worker came from.

    MTurk: an auto-submitting form POSTs assignmentId and the completion code to the
    externalSubmit URL remembered at landing. Prolific: the code and the study's completion link.
    """
    if not request.user.is_authenticated:
        raise Http404("No such assignment.")
    assignment = get_object_or_404(Assignment, pk=assignment_id, worker__user=request.user)
    remembered = request.session.get(SESSION_KEY)
    if not remembered or remembered.get("assignment") != assignment.pk:
        raise Http404("This assignment did not come from a crowd platform in this browser session.")
    if not assignment.is_done:
        return redirect("labeling:assignment_detail", pk=assignment.pk)
    context = {"assignment": assignment, "info": remembered}
    if remembered["kind"] == Worker.MTURK:
        return render(request, "labeling/platform/return_mturk.html", context)
    context["complete_url"] = PROLIFIC_COMPLETE_URL.format(code=assignment.completion_code)
    return render(request, "labeling/platform/return_prolific.html", context)


# --- Reading the platform's parameters ----------------------------------------------------------


def _mturk_landing(params) -> Landing:
    campaign = _campaign(params)
    assignment_id = params.get("assignmentId", "")
    if assignment_id == MTURK_PREVIEW:
        return Landing(Worker.MTURK, "", campaign, preview=True, return_info={})
    worker_id = _platform_id(params, "workerId")
    assignment_id = _platform_id(params, "assignmentId")
    _platform_id(params, "hitId")
    submit_to = params.get("turkSubmitTo", "").rstrip("/")
    if submit_to not in MTURK_SUBMIT_HOSTS:
        raise BadLanding(f"turkSubmitTo must be one of {', '.join(MTURK_SUBMIT_HOSTS)}; got {submit_to!r}.")
    info = {
        "kind": Worker.MTURK,
        "platform": "MTurk",
        "submit_url": submit_to + MTURK_SUBMIT_PATH,
        "external_assignment": assignment_id,
    }
    return Landing(Worker.MTURK, worker_id, campaign, preview=False, return_info=info)


def _prolific_landing(params) -> Landing:
    campaign = _campaign(params)
    worker_id = _platform_id(params, "PROLIFIC_PID")
    info = {
        "kind": Worker.PROLIFIC,
        "platform": "Prolific",
        "study": _platform_id(params, "STUDY_ID"),
        "session": _platform_id(params, "SESSION_ID"),
    }
    return Landing(Worker.PROLIFIC, worker_id, campaign, preview=False, return_info=info)


def _platform_id(params, name: str) -> str:
    value = params.get(name, "")
    if not PLATFORM_ID.fullmatch(value):
        raise BadLanding(f"{name} must be 1 to 64 letters or digits; got {value[:80]!r}.")
    return value


def _campaign(params) -> Campaign:
    for name in ("campaign", "hit"):
        if params.get(name) and not params[name].isdigit():
            raise BadLanding(f"{name} must be a number; got {params[name][:80]!r}.")
    if not params.get("campaign"):
        raise BadLanding("campaign is missing from the link.")
    return get_object_or_404(Campaign, pk=int(params["campaign"]))


def _bad_request(request: HttpRequest, message: str) -> HttpResponse:
    return render(
        request, "labeling/platform/problem.html", {"title": "This link is not valid", "message": message}, status=400
    )


# --- Signing in and claiming --------------------------------------------------------------------


def _land(request: HttpRequest, landing: Landing) -> HttpResponse:
    campaign = landing.campaign
    if campaign.status != Campaign.OPEN:
        message = f"The campaign “{campaign.name}” is not open for work right now. Please return the HIT."
        return _problem(request, "Campaign not open", message, status=409)
    try:
        worker = platform_worker(landing.platform, landing.worker_id)
    except AccountConflict as conflict:
        return _problem(request, "Account problem", str(conflict), status=409)
    if worker.is_blocked:
        message = "Your worker id is blocked from taking HITs in this project. Please return the HIT."
        return _problem(request, "Not allowed", message, status=403)
    # login() rotates the session key (and empties the session when another user was signed in),
    # so what the return view needs is stored after it.
    login(request, worker.user, backend=MODEL_BACKEND)
    assignment = services.claim_next_hit(worker, campaign)
    if assignment is None:
        message = "Every HIT of this campaign is taken or already done by you. Please return the HIT. Thank you!"
        return _problem(request, "No HIT left", message, status=409)
    if assignment.hit.campaign_id != campaign.pk:
        # claim_next_hit hands back a live HIT of another campaign first; its result belongs to
        # the platform assignment that opened it, not to this one.
        url = reverse("labeling:assignment_detail", args=[assignment.pk])
        message = format_html(
            'You still have an unfinished HIT of “{}”. <a href="{}">Finish it</a> first, then accept this one again.',
            assignment.hit.campaign.name,
            url,
        )
        return _problem(request, "Another HIT is open", message, status=409)
    request.session[SESSION_KEY] = {**landing.return_info, "assignment": assignment.pk}
    return redirect(reverse("labeling:assignment_detail", args=[assignment.pk]))


def _problem(request: HttpRequest, title: str, message: str, *, status: int) -> HttpResponse:
    return render(request, "labeling/platform/problem.html", {"title": title, "message": message}, status=status)


def platform_worker(platform: str, external_id: str) -> Worker:
    """The Worker for a platform id with its own site account, both created on first arrival.

    The Worker row is locked while its account is created, so two tabs landing at once create
    one account. An existing account is reused only if it is this Worker's, active, not staff and
    without a password (see _may_sign_in_from_platform).
    """
    with transaction.atomic():
        worker, _ = Worker.objects.select_for_update().get_or_create(platform=platform, external_id=external_id)
        # a blocked worker is refused by the caller; no account is made for them
        if worker.user_id is None and not worker.is_blocked:
            worker.user = _new_account(f"{platform}-{external_id}")
            worker.save(update_fields=["user"])
        user = worker.user
    if user is not None and not _may_sign_in_from_platform(user):
        raise AccountConflict("This worker id is linked to an account that cannot sign in from a crowd platform.")
    return worker


def _may_sign_in_from_platform(user) -> bool:
    """Only an account made by a landing (no password, no staff rights) opens from an unsigned
    platform id; a Worker linked by hand to a real site account must sign in with its password."""
    return user.is_active and not (user.is_staff or user.is_superuser or user.has_usable_password())


def _new_account(username: str):
    User = get_user_model()
    try:
        with transaction.atomic():
            user = User(username=username, is_staff=False, is_superuser=False)
            user.set_unusable_password()
            user.save()
            return user
    except IntegrityError:
        # a site account of that name exists but belongs to no Worker of this id: never take it over
        raise AccountConflict(f"The account name {username!r} is already taken on this site.") from None
