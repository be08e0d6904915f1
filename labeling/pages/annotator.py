"""The annotator's pages: home, tutorial, one HIT screen at a time, review, quiz feedback, done.

Every view is thin: the rules live in labeling.actions, and what a screen shows and what its
answer is are the campaign's task type's (labeling.task_types): one screen template for every
type, with the type's own block. An annotator only reaches their own assignments (anyone else's
id is a 404). htmx requests get partials; the same URLs serve whole pages without JS.
"""

import functools
from typing import NamedTuple

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_POST

from annotation.models import Label
from config.web.pages import refusal
from labeling import task_types
from labeling.actions import SubmissionRefused, refusal_reason
from labeling.actions.answer import next_with_pick, save_answer, save_pick
from labeling.actions.claim import claim_next_hit, live_assignment, open_hit_count
from labeling.actions.submit import feedback_shown, quiz_result, submit_assignment
from labeling.crowd.speed import clamped_seconds
from labeling.fast_path import reads as hot_reads
from labeling.fast_path import screen as screens
from labeling.models import Assignment, Campaign, HITItem, Response
from labeling.pages import qualification as qualification_views
from labeling.services import qualification
from labeling.services.workers import worker_for_user
from labeling.study_flow import gate as study_gate


def _is_htmx(request: HttpRequest) -> bool:
    """An htmx swap wants a partial; htmx restoring history after a cache miss wants the page."""
    # META, not request.headers: that builds a dict of every header on first use, for two lookups
    meta = request.META
    return meta.get("HTTP_HX_REQUEST") == "true" and "HTTP_HX_HISTORY_RESTORE_REQUEST" not in meta


def _own_assignment(request: HttpRequest, pk: int, *, lock: bool = False) -> Assignment:
    """The signed-in user's assignment, else 404 (never 403: another worker's ids stay unknowable).
    lock: also lock its row (only the assignment's: of=self), inside the caller's transaction."""
    assignment = hot_reads.own_assignment(pk, request.user.pk, lock=lock)
    if assignment is None:
        raise Http404(gettext("No such assignment"))
    return assignment


def _own_assignment_with_answers(request: HttpRequest, pk: int, positions: list[int]) -> tuple[Assignment, dict | None]:
    """_own_assignment, with the stored answers (as the type's stored_answers) of the screens at `positions`, read by
    the same statement when this process knows the HIT (route_of) and its type reads them so; else answers None."""
    route = hot_reads.route_of(pk, request.user.pk)
    reader = task_types.find(route.task_type) if route else None  # None: the route's type is gone
    if not reader:
        return _own_assignment(request, pk), None
    hit_screens = screens.screens_of(route.hit, route.seat)
    item_ids = list(dict.fromkeys(hit_screens[p].item.pk for p in positions if p in hit_screens))
    read = reader.read_with_answers(pk, request.user.pk, item_ids)
    if read is None:
        return _own_assignment(request, pk), None
    assignment, stored = read
    if assignment is None:
        raise Http404(gettext("No such assignment"))
    if assignment.hit_id != route.hit.pk or assignment.accepted_at != route.accepted_at:
        return assignment, None  # another assignment under a reused id: its answers are read anew
    return assignment, stored


def _is_live(assignment: Assignment) -> bool:
    return assignment.status == Assignment.ACCEPTED and assignment.expires_at > timezone.now()


# --- Home and tutorial --------------------------------------------------------------------------


def _live_among(history: list[Assignment], worker) -> Assignment | None:
    """live_assignment(worker) (accepted, inside its time limit, in an open campaign, the earliest accepted), taken
    from the worker's history when that holds all of theirs (under HISTORY_SHOWN): one read less; else read."""
    if len(history) >= hot_reads.HISTORY_SHOWN:
        return live_assignment(worker)
    live = [a for a in history if _is_live(a) and a.hit.campaign.status == Campaign.OPEN]
    return min(live, key=lambda a: a.accepted_at, default=None)


HOME_COUNT_CAP = 50  # "50+" past it: an annotator needs no exact count, and this one costs the same at any size


def _shown_count(count: int) -> int | str:
    return f"{HOME_COUNT_CAP}+" if count > HOME_COUNT_CAP else count


@login_required
@require_GET
def worker_home(request: HttpRequest) -> HttpResponse:
    worker = worker_for_user(request.user)
    open_campaigns = hot_reads.open_campaigns()
    if request.GET.get("campaign", "").isdigit():
        # a crowd platform's link (labeling.platforms.hit_url) names the campaign to work on
        open_campaigns = [campaign for campaign in open_campaigns if str(campaign.pk) == request.GET["campaign"]]
    campaigns = [
        (campaign, _shown_count(open_hit_count(worker, campaign, cap=HOME_COUNT_CAP + 1)))
        for campaign in open_campaigns
    ]
    qualification.annotate_statuses(worker, [campaign for campaign, _ in campaigns])
    history = hot_reads.history(worker)
    context = {"worker": worker, "campaigns": campaigns, "live": _live_among(history, worker), "history": history}
    return render(request, "labeling/worker_home.html", context)


@login_required
@require_GET
def instructions(request: HttpRequest) -> HttpResponse:
    labels = Label.objects.offered().order_by("position", "name")
    return render(request, "labeling/instructions.html", {"labels": labels})


def _hit_size(assignment: Assignment) -> int:
    return len(screens.screens_of(assignment.hit, assignment.seat))


@login_required
@require_POST
def claim(request: HttpRequest) -> HttpResponse:
    worker = worker_for_user(request.user)
    campaign = get_object_or_404(Campaign, pk=request.POST["campaign"]) if request.POST.get("campaign") else None
    return start_work(request, worker, campaign)


def start_work(request: HttpRequest, worker, campaign: Campaign | None) -> HttpResponse:
    """Claim a HIT of `campaign` (None: any) and show it; the study flow first (labeling.study_flow.gate)."""
    if worker.is_blocked:
        messages.error(request, gettext("Your account is blocked from taking HITs."))
        return redirect("labeling:worker_home")
    gate = study_gate.flow_first(worker, campaign, htmx=_is_htmx(request))
    if gate.redirect is not None:
        return gate.redirect
    asked_at = timezone.now()
    assignment = claim_next_hit(worker, gate.campaign)
    if assignment is None:
        messages.info(request, gettext("No HIT is available for you right now. Thank you!"))
        return redirect("labeling:worker_home")
    study_gate.started_work(worker.pk, gate)
    # accepted by this claim (not a live one resumed): nothing of it is answered yet
    fresh = assignment.accepted_at >= asked_at
    return _where_it_stands(request, assignment, whole_page=True, fresh=fresh)  # straight there, in this one answer


# --- One assignment -----------------------------------------------------------------------------


@login_required
@require_GET
def assignment_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """Send the annotator where this assignment stands: the first open screen, the review, the
    quiz feedback, or a page saying it is over."""
    assignment = _own_assignment(request, pk)
    if assignment.is_done:
        return redirect("labeling:assignment_feedback", pk=pk)
    if not _is_live(assignment):
        return _closed(request, assignment)
    return _where_it_stands(request, assignment)


def _where_it_stands(
    request: HttpRequest, assignment: Assignment, *, whole_page: bool = False, fresh: bool = False
) -> HttpResponse:
    """A live assignment's first open screen, or its review once every screen is answered: a redirect there, or with
    `whole_page` for htmx (a claim from the home page) the screen's whole page in this answer, its URL pushed: the
    first second of a study is every arrival's claim and first screen at once, and one request less each is what lets
    the burst drain (issue 37). htmx pushes the URL it is sent (https://htmx.org/headers/hx-push-url/), so a reload or
    Back behave as after a redirect.
    `fresh`: accepted just now, so no answer is read (there is none)."""
    first_open = _first_open(assignment, fresh=fresh)
    if first_open is None:
        return _redirect(request, "labeling:assignment_review", assignment.pk)
    if whole_page and _is_htmx(request):
        # an open screen has no stored answer, in any task type's terms
        return _render_item(request, assignment, first_open, stored={first_open.pk: None}, whole_page=True)
    return redirect(screens.urls(assignment.pk, first_open.position)[0])


def _first_open(assignment: Assignment, *, fresh: bool = False) -> HITItem | None:
    """The item of the assignment's first screen without a stored answer (None: all answered)."""
    hit_screens = screens.screens_of(assignment.hit, assignment.seat)
    if fresh:
        stored = dict.fromkeys(screen.item.pk for screen in hit_screens.values())
    else:
        stored = hot_reads.stored_answers(assignment.pk, [screen.item.pk for screen in hit_screens.values()])
    return next((hit_screens[p].item for p in sorted(hit_screens) if stored[hit_screens[p].item.pk] is None), None)


def _closed(request: HttpRequest, assignment: Assignment) -> HttpResponse:
    if assignment.status == Assignment.REJECTED:
        message = gettext("This HIT was rejected.")
    else:
        message = gettext(
            "The time limit for this HIT has passed, so it was released to other workers. "
            "Answers given after that are not accepted."
        )
    back = reverse("labeling:worker_home")
    title, next_label = gettext("This HIT is closed"), gettext("Back to the campaigns")
    return refusal(request, title, message, status=410, next_url=back, next_label=next_label)


@login_required
@require_GET
def assignment_item(request: HttpRequest, pk: int, position: int) -> HttpResponse:
    assignment = _own_assignment(request, pk)
    if not _is_live(assignment):
        return redirect("labeling:assignment_detail", pk=pk)
    item = _item_at(assignment, position)
    return _render_item(request, assignment, item)


def _item_at(assignment: Assignment, position: int) -> HITItem:
    """The item on one screen of the assignment's HIT (from the per-process screen cache)."""
    screen = screens.screens_of(assignment.hit, assignment.seat).get(position)
    if screen is None:
        raise Http404(gettext("No such item in this HIT"))
    return screen.item


def _render_item(
    request: HttpRequest,
    assignment: Assignment,
    item: HITItem,
    error: str = "",
    stored: dict | None = None,
    *,
    whole_page: bool = False,
    task_type=None,
) -> HttpResponse:
    """One screen: the shared frame (position, Back/Next, save status, the time limit) around the
    task type's block. `stored`: the assignment's answers already read for this request (as the
    type's stored_answers); the screen's own answer is read when its item is not among the keys.
    htmx gets the screen's partial, unless `whole_page` (an htmx swap of the whole body)."""
    task_type = task_type or task_types.of(assignment.hit.campaign)
    if stored is None or item.pk not in stored:
        stored = task_type.stored_answers(assignment.pk, [item.pk])
    saved = stored.get(item.pk)
    item_url, answer_url = screens.urls(assignment.pk, item.position)
    htmx = _is_htmx(request)
    partial = htmx and not whole_page
    position, total = item.position, _hit_size(assignment)
    context = {
        "assignment": assignment,
        "position": position,
        "total": total,
        "item_url": item_url,
        "answer_url": answer_url,
        "screen_template": task_type.screen_template,
        "screen_noun": task_type.screen_noun,
        "task_template": task_type.template,
        "saved": saved is not None,
        "error": error,
        **screens.frame(task_type.screen_noun, position, total, assignment.expires_at),
        # a swap's form needs no token of its own: htmx sends the page's (base.html's hx-headers),
        # and masking a fresh one (32 random draws) was a visible share of a Next's CPU
        "form_token": not partial,
        **_NO_PARTS,  # (a type's screen context may fill them: the frame renders them as they are)
        **task_type.screen(assignment, item, saved),
    }
    if partial:
        # a swap's screen needs nothing of the request's context processors (user, messages,
        # csrf: the page's token is sent by htmx), whose work was a sixth of its render
        response = HttpResponse(render_to_string(task_type.screen_template, context))
    else:
        response = render(request, "labeling/screen_page.html", context)
    if htmx:
        response["HX-Push-Url"] = item_url
    return response


_NO_PARTS = {"lead_html": "", "answers_html": "", "hints_html": "", "autosave_trigger": "change"}


@login_required
@require_POST
def answer_item(request: HttpRequest, pk: int, position: int) -> HttpResponse:
    """Save the answer given on one screen (if any), then go where the button said:
    stay (autosave on every change), back, or next (which needs an answer)."""
    go = request.POST.get("go", "stay")
    if go == "stay" and request.POST.get("answer"):
        return _autosave(request, pk, position)
    if go == "next" and _is_htmx(request):
        # the common Next (one of the three choices, a screen after this one): one statement
        answer = request.POST.get("answer", "")
        moved = next_with_pick(pk, request.user.pk, position, answer, seconds_spent=_posted_seconds(request))
        if moved is not None:
            task_type = task_types.get(moved.task_type)
            return _render_item(request, moved.assignment, moved.item, stored=moved.stored, task_type=task_type)
    # Next and Back show the neighbouring screen with its answer: one read for both screens'
    # answers, together with the assignment's when this process knows its HIT already
    target = max(position - 1, 1) if go == "back" else position + 1
    assignment, stored = _own_assignment_with_answers(request, pk, [position, target])
    item = _item_at(assignment, position)
    task_type = task_types.of(assignment.hit.campaign)
    try:
        reason = refusal_reason(assignment)
        if reason is not None:
            raise SubmissionRefused(reason)
        if stored is None:
            neighbour = screens.screens_of(assignment.hit, assignment.seat).get(target)
            stored = task_type.stored_answers(assignment.pk, [item.pk] + ([neighbour.item.pk] if neighbour else []))
        if task_type.answer_changed(request.POST, stored.get(item.pk)):
            _save_on_the_way(request, assignment, item, go, task_type)
            stored.pop(item.pk, None)  # now stale (Back on the first screen shows it again)
        elif go == "next" and stored.get(item.pk) is None:
            raise SubmissionRefused(task_type.unanswered_message)
    except SubmissionRefused as refused:
        return _refuse(request, assignment, item, refused.message, go)
    if go == "stay" and _is_htmx(request):
        return HttpResponse(_saved_html(translation.get_language()))
    if go == "stay":
        return redirect("labeling:assignment_item", pk=pk, position=position)
    if go == "next" and qualification.is_qualification(assignment.hit):
        return qualification_views.show_check(request, assignment, item)  # feedback after each screen
    return _go_to(request, assignment, target, stored)


def _posted_seconds(request: HttpRequest) -> float:
    """The seconds on the screen the page posted, clamped as every save stores them."""
    return clamped_seconds(request.POST.get("seconds", 0), settings.SCREEN_SECONDS_CAP)


def _save_on_the_way(request: HttpRequest, assignment: Assignment, item: HITItem, go: str, task_type) -> None:
    """Save the answer posted with Next, Back or a save; an answer the type refuses is refused,
    except on Back for a type whose refused answers are unfinished ones (left unsaved there).
    Most Nexts carry a pick not saved yet (the autosave waits AUTOSAVE_DELAY_MS): one of the three
    choices is written by the autosave's one statement (save_pick), anything else in full."""
    seconds = _posted_seconds(request)
    if save_pick(assignment.pk, request.user.pk, item.position, request.POST.get("answer", ""), seconds_spent=seconds):
        return
    try:
        _save_posted_answer(request, assignment, item)
    except SubmissionRefused:
        if go != "back" or not task_type.back_leaves_refused_answers:
            raise


def _autosave(request: HttpRequest, pk: int, position: int) -> HttpResponse:
    """The autosave (go=stay with an answer): the browser sends it when the answer changes, so it is saved outright.
    With the annotator fast path on, the common case (one of the three choices, on an assignment this process served
    before) is one SQL statement (actions.answer.save_pick); anything else, and everything with it off, reads the
    assignment once, locked, for both the ownership check and the save. Saving replaces the stored answer."""
    seconds = _posted_seconds(request)
    if save_pick(pk, request.user.pk, position, request.POST.get("answer", ""), seconds_spent=seconds):
        return _saved(request, pk, position)
    try:
        with transaction.atomic():
            assignment = _own_assignment(request, pk, lock=True)
            item = _item_at(assignment, position)
            _save_posted_answer(request, assignment, item, assignment_locked=True)
    except SubmissionRefused as refused:
        return _refuse(request, assignment, item, refused.message, "stay")
    return _saved(request, pk, position)


@functools.cache
def _saved_html(language: str) -> str:
    """The "Saved" status in `language` (the active one), rendered once per language."""
    return render_to_string("labeling/partials/save_status.html", {"message": gettext("Saved")})


def _saved(request: HttpRequest, pk: int, position: int) -> HttpResponse:
    """What an autosave answers: the "Saved" status for htmx (the same words every time, rendered
    once), the screen again without JavaScript."""
    if _is_htmx(request):
        return HttpResponse(_saved_html(translation.get_language()))
    return redirect("labeling:assignment_item", pk=pk, position=position)


def _save_posted_answer(
    request: HttpRequest, assignment: Assignment, item: HITItem, *, assignment_locked: bool = False
) -> None:
    """Hand the posted form to the campaign's task type (labeling.actions.answer.save_answer)."""
    seconds = _posted_seconds(request)
    save_answer(assignment, item, request.POST, seconds_spent=seconds, assignment_locked=assignment_locked)


def _refuse(request: HttpRequest, assignment: Assignment, item: HITItem, message: str, go: str) -> HttpResponse:
    assignment.refresh_from_db()
    if not _is_htmx(request):
        messages.error(request, message)
        if _is_live(assignment):
            return redirect("labeling:assignment_item", pk=assignment.pk, position=item.position)
        return redirect("labeling:assignment_detail", pk=assignment.pk)
    if go == "stay":
        return render(request, "labeling/partials/save_status.html", {"message": message, "error": True})
    if not _is_live(assignment):
        # Back or Next on a HIT that is over: leave the screen for the page that says why.
        messages.error(request, message)
        response = HttpResponse(status=204)
        response["HX-Redirect"] = reverse("labeling:assignment_detail", args=[assignment.pk])
        return response
    return _render_item(request, assignment, item, error=message)


def _go_to(request: HttpRequest, assignment: Assignment, position: int, stored: dict | None = None) -> HttpResponse:
    """The screen at `position`, or the review once past the last one."""
    try:
        item = _item_at(assignment, max(position, 1))
    except Http404:
        if _is_htmx(request):
            response = render(request, "labeling/partials/review.html", _review_context(assignment))
            response["HX-Push-Url"] = reverse("labeling:assignment_review", args=[assignment.pk])
            return response
        return redirect("labeling:assignment_review", pk=assignment.pk)
    if _is_htmx(request):
        return _render_item(request, assignment, item, stored=stored)
    return redirect("labeling:assignment_item", pk=assignment.pk, position=item.position)


@login_required
@require_GET
def assignment_review(request: HttpRequest, pk: int) -> HttpResponse:
    assignment = _own_assignment(request, pk)
    if not _is_live(assignment):
        return redirect("labeling:assignment_detail", pk=pk)
    template = "labeling/partials/review.html" if _is_htmx(request) else "labeling/review_page.html"
    return render(request, template, _review_context(assignment))


def _review_context(assignment: Assignment) -> dict:
    """Each screen's position, URL and answer as shown (None: not answered yet). The answers are
    read as values and the URLs filled in from one reversed form: model instances and a reverse()
    per row cost the HIT's last Next more than all its other screens' reads."""
    read = assignment.responses.values_list("item_id", "data", "label__name", "new_label_text")
    answers = {item_id: Response.answer_shown(data, name, text) for item_id, data, name, text in read}
    hit_screens = screens.screens_of(assignment.hit, assignment.seat)
    rows = [
        ReviewRow(position, screens.urls(assignment.pk, position)[0], answers.get(hit_screens[position].item.pk))
        for position in sorted(hit_screens)
    ]
    return {
        "assignment": assignment,
        "rows": rows,
        "total": len(rows),
        "answered": sum(1 for row in rows if row.answer is not None),
        "last_url": screens.urls(assignment.pk, len(rows))[0],  # Back: the last screen
    }


class ReviewRow(NamedTuple):
    position: int
    url: str
    answer: str | None


@login_required
@require_POST
def submit(request: HttpRequest, pk: int) -> HttpResponse:
    """Submit, then show the quiz feedback. A second submit (a double click, or a replay after the
    answer to the first was lost) changes nothing: it is refused with a message and leads to the
    assignment, whose page is then the feedback."""
    assignment = _own_assignment(request, pk)
    try:
        submit_assignment(assignment)
    except SubmissionRefused as refused:
        messages.error(request, refused.message)
        return _redirect(request, "labeling:assignment_detail", pk)
    return _redirect(request, "labeling:assignment_feedback", pk)


def _redirect(request: HttpRequest, name: str, pk: int) -> HttpResponse:
    """A redirect; for htmx, an HX-Redirect (a 302 would be followed and swapped in place)."""
    if _is_htmx(request):
        response = HttpResponse(status=204)
        response["HX-Redirect"] = reverse(name, args=[pk])
        return response
    return redirect(name, pk=pk)


@login_required
@require_GET
def assignment_feedback(request: HttpRequest, pk: int) -> HttpResponse:
    """After submission only: the quiz questions answered wrong, with the right label and why; for
    a crowd-platform worker only once the platform confirmed the submission (feedback_shown)."""
    assignment = _own_assignment(request, pk)
    if assignment.status not in Assignment.FINAL:
        return redirect("labeling:assignment_detail", pk=pk)
    result = quiz_result(assignment) if feedback_shown(assignment) else None
    return render(request, "labeling/feedback.html", {"assignment": assignment, "result": result})


@login_required
@require_GET
def assignment_done(request: HttpRequest, pk: int) -> HttpResponse:
    assignment = _own_assignment(request, pk)
    if assignment.status not in Assignment.FINAL:
        return redirect("labeling:assignment_detail", pk=pk)
    return study_gate.survey_first(assignment) or render(request, "labeling/done.html", {"assignment": assignment})
