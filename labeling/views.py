"""The annotator's pages: home, tutorial, one HIT screen at a time, review, quiz feedback, done.

Every view is thin: the rules live in labeling.services. An annotator only ever reaches their own
assignments (anyone else's id is a 404). htmx requests get partials from
templates/labeling/partials/; the same URLs serve whole pages to a reload or a browser without JS.
"""

import functools
import hashlib
import hmac
import time
from dataclasses import dataclass

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import get_script_prefix, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_POST

from annotation.models import Label
from annotation.taxonomy import normalise_label_name
from config.pages import refusal
from labeling import hot_reads, screens, services, task_types
from labeling.campaigns import campaign_labels
from labeling.crowd.bundling import choice_order
from labeling.crowd.speed import clamped_seconds
from labeling.models import Assignment, Campaign, HITItem, Response
from labeling.services import SubmissionRefused
from labeling.task_types.last_turn_label import NEW_LABEL


def _is_htmx(request: HttpRequest) -> bool:
    """An htmx swap wants a partial; htmx restoring history after a cache miss wants the page."""
    return request.headers.get("HX-Request") == "true" and "HX-History-Restore-Request" not in request.headers


def _own_assignment(request: HttpRequest, pk: int, *, lock: bool = False) -> Assignment:
    """The signed-in user's assignment, else 404 (never 403: another worker's ids stay unknowable).
    lock: also lock its row (only the assignment's: of=self), inside the caller's transaction."""
    assignment = hot_reads.own_assignment(pk, request.user.pk, lock=lock)
    if assignment is None:
        raise Http404("No such assignment")
    return assignment


def _own_assignment_with_answers(request: HttpRequest, pk: int, positions: list[int]) -> tuple[Assignment, dict | None]:
    """_own_assignment, with the stored answers of the screens at `positions` (as
    _stored_answers) read by the same statement when this process knows the assignment's HIT
    (hot_reads.route_of); else the answers are None, for the caller to read."""
    route = hot_reads.route_of(pk, request.user.pk)
    if route is None or not route.uses_labels:
        return _own_assignment(request, pk), None
    hit_screens = screens.screens_of(route.hit, route.seat)
    item_ids = list(dict.fromkeys(hit_screens[p].item.pk for p in positions if p in hit_screens))
    assignment, stored = hot_reads.own_assignment_with_answers(pk, request.user.pk, item_ids)
    if assignment is None:
        raise Http404("No such assignment")
    if assignment.hit_id != route.hit.pk or assignment.accepted_at != route.accepted_at:
        return assignment, None  # another assignment under a reused id: its answers are read anew
    return assignment, stored


def _is_live(assignment: Assignment) -> bool:
    return assignment.status == Assignment.ACCEPTED and assignment.expires_at > timezone.now()


# --- Home and tutorial --------------------------------------------------------------------------


@login_required
@require_GET
def worker_home(request: HttpRequest) -> HttpResponse:
    worker = services.worker_for_user(request.user)
    open_campaigns = Campaign.objects.filter(status=Campaign.OPEN).order_by("name")
    if request.GET.get("campaign", "").isdigit():
        # a crowd platform's link (labeling.platforms.hit_url) names the campaign to work on
        open_campaigns = open_campaigns.filter(pk=request.GET["campaign"])
    campaigns = [(campaign, services.open_hit_count(worker, campaign)) for campaign in open_campaigns]
    context = {
        "worker": worker,
        "campaigns": campaigns,
        "live": services.live_assignment(worker),
        "history": worker.assignments.select_related("hit__campaign").order_by("-accepted_at")[:50],
    }
    return render(request, "labeling/worker_home.html", context)


@login_required
@require_GET
def instructions(request: HttpRequest) -> HttpResponse:
    return render(request, "labeling/instructions.html", {"labels": _core_labels()})


LABELS_CACHE_SECONDS = 60


@dataclass(frozen=True)
class _LabelSet:
    listed: list[Label]  # the "Other" list: the campaign's label set (every offered label, no campaign)
    html: str  # that list rendered
    known: dict[str, Label]  # listed and every offered label, by folded name: a choice's description
    blurbs: dict[str, str]  # by folded name: a choice's description and examples, rendered


_labels_cache: dict[str | int, tuple[float, _LabelSet]] = {}


def _core_labels() -> list[Label]:
    """The 41 taxonomy labels for display. Every screen lists them all, so each process reads them
    at most once a minute; answers are always checked against the table itself."""
    return _cached_labels().listed


def _label_list_html(checked_name: str, campaign_id: int) -> str:
    """The "Other" list: the campaign's label set, rendered once per campaign and cache period (it
    is the bulk of every screen), with the saved answer's radio checked."""
    html = _cached_labels(campaign_id).html
    if checked_name:
        marker = format_html('value="{}">', checked_name)
        html = html.replace(marker, marker[:-1] + " checked>", 1)
    return mark_safe(html)  # built with format_html from escaped values only


def _cached_labels(campaign_id: int | None = None) -> _LabelSet:
    """Every label annotators see, or (given a campaign) its label set; one query per cache period."""
    now = time.monotonic()
    key = "core" if campaign_id is None else campaign_id
    cached = _labels_cache.get(key)
    if cached is None or cached[0] < now:
        cached = _labels_cache[key] = (now + LABELS_CACHE_SECONDS, _read_label_set(campaign_id))
    return cached[1]


def _read_label_set(campaign_id: int | None) -> _LabelSet:
    offered = Label.objects.offered()
    listed_ids = (campaign_labels(campaign_id) if campaign_id is not None else offered).values("pk")
    rows = list(
        Label.objects.filter(Q(pk__in=listed_ids) | Q(pk__in=offered.values("pk")))
        .annotate(listed=Exists(listed_ids.filter(pk=OuterRef("pk"))))
        .order_by("position", "name")
    )
    listed = [label for label in rows if label.listed]
    html = format_html_join(
        "\n",
        '<li data-filter="{} {}"><label><input type="radio" name="answer" value="{}">'
        ' <strong>{}</strong> <span class="muted">{}</span></label></li>',
        ((lb.name.lower(), lb.description.lower(), lb.name, lb.name, lb.description) for lb in listed),
    )
    blurbs = {normalise_label_name(label.name): _blurb(label) for label in rows}
    return _LabelSet(listed, str(html), {normalise_label_name(label.name): label for label in rows}, blurbs)


def _blurb(label: Label) -> str:
    """What a suggested choice shows under its name: the label's description and examples."""
    examples = format_html_join("", "<li>“{}”</li>", ((example,) for example in label.examples))
    return str(
        format_html(
            '<span class="choice-description muted">{}</span>\n        <ul class="examples">{}</ul>',
            label.description,
            examples,
        )
    )


def _hit_size(assignment: Assignment) -> int:
    return len(screens.screens_of(assignment.hit, assignment.seat))


@login_required
@require_POST
def claim(request: HttpRequest) -> HttpResponse:
    worker = services.worker_for_user(request.user)
    campaign = None
    if request.POST.get("campaign"):
        campaign = get_object_or_404(Campaign, pk=request.POST["campaign"])
    if worker.is_blocked:
        messages.error(request, "Your account is blocked from taking HITs.")
        return redirect("labeling:worker_home")
    assignment = services.claim_next_hit(worker, campaign)
    if assignment is None:
        messages.info(request, "No HIT is available for you right now. Thank you!")
        return redirect("labeling:worker_home")
    return _where_it_stands(assignment)  # straight there: no second redirect through the assignment


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
    return _where_it_stands(assignment)


def _where_it_stands(assignment: Assignment) -> HttpResponse:
    """A live assignment's first open screen, or its review once every screen is answered."""
    answered = set(assignment.responses.values_list("item_id", flat=True))
    hit_screens = screens.screens_of(assignment.hit, assignment.seat)
    first_open = next((p for p in sorted(hit_screens) if hit_screens[p].item.pk not in answered), None)
    if first_open is None:
        return redirect("labeling:assignment_review", pk=assignment.pk)
    return redirect(_screen_urls(assignment.pk, first_open)[0])


def _closed(request: HttpRequest, assignment: Assignment) -> HttpResponse:
    if assignment.status == Assignment.REJECTED:
        message = "This HIT was rejected."
    else:
        message = (
            "The time limit for this HIT has passed, so it was released to other workers. "
            "Answers given after that are not accepted."
        )
    back = reverse("labeling:worker_home")
    return refusal(
        request, "This HIT is closed", message, status=410, next_url=back, next_label="Back to the campaigns"
    )


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
        raise Http404("No such item in this HIT")
    return screen.item


def _render_item(
    request: HttpRequest, assignment: Assignment, item: HITItem, error: str = "", stored: dict | None = None
) -> HttpResponse:
    """`stored`: the assignment's answers already read for this request (see _stored_answers);
    the screen's own answer is read when its item is not among the keys."""
    task_type = task_types.of(assignment.hit.campaign)
    if not task_type.uses_labels:
        return _render_typed_item(request, assignment, item, task_type, error)
    template = "labeling/partials/hit_item.html" if _is_htmx(request) else "labeling/hit_item_page.html"
    if stored is None or item.pk not in stored:
        stored = _stored_answers(assignment, [item.pk])
    context = _item_context(assignment, item, error, stored.get(item.pk))
    response = render(request, template, context)
    if _is_htmx(request):
        response["HX-Push-Url"] = context["item_url"]
    return response


def _item_context(assignment: Assignment, item: HITItem, error: str, saved: tuple | None) -> dict:
    """What one screen shows. A quiz item is a real dialogue, rendered by the same code as work
    items, and carries nothing of its gold label or explanation."""
    blurbs = _cached_labels(assignment.hit.campaign_id).blurbs
    screen = screens.screens_of(assignment.hit, assignment.seat)[item.position]
    saved_name, saved_text, saved_method = saved or (None, "", "")
    other_open = saved_method in (Response.OTHER_LIST, Response.OTHER_NEW)
    checked = "" if other_open else saved_name
    item_url, answer_url = _screen_urls(assignment.pk, item.position)
    return {
        "assignment": assignment,
        "position": item.position,
        "total": _hit_size(assignment),
        "turns_html": mark_safe(screen.turns_html),  # escaped by format_html_join in labeling.screens
        "item_url": item_url,
        "answer_url": answer_url,
        # each choice with its key, description and examples (the blurb escaped when the label set
        # was read), built here rather than by a template loop: a visible share of a screen's CPU
        "choices_html": format_html_join(
            "\n      ",
            '<label class="choice">\n        <input type="radio" name="answer" value="{}" data-key="{}"{}>\n'
            '        <span class="choice-name"><kbd>{}</kbd> {}</span>\n        {}\n      </label>',
            (
                (
                    name,
                    key,
                    mark_safe(" checked") if name == checked else "",
                    key,
                    name,
                    mark_safe(blurbs.get(normalise_label_name(name), "")),
                )
                for key, name in enumerate(_choices_shown(assignment, item), start=1)
            ),
        ),
        "label_list": _label_list_html(saved_name if other_open else "", assignment.hit.campaign_id),
        "saved": bool(saved_method),
        "saved_name": saved_name or "",
        "saved_text": saved_text,
        "saved_method": saved_method,
        "other_open": other_open,
        "new_label": NEW_LABEL,
        "error": error,
    }


_URL_IDS = (900_000_001, 900_000_002)  # stand-ins for an assignment and a position in a reversed URL


@functools.cache
def _screen_url_forms(script_prefix: str) -> tuple[str, str]:
    """The screen's and its answer's URL with {a} and {p} for assignment and position, reversed
    once per script prefix (reverse() is a visible share of a screen's CPU)."""
    forms = []
    for name in ("labeling:assignment_item", "labeling:answer_item"):
        url = reverse(name, args=_URL_IDS)
        forms.append(url.replace(str(_URL_IDS[0]), "{a}").replace(str(_URL_IDS[1]), "{p}"))
    return forms[0], forms[1]


def _screen_urls(assignment_id: int, position: int) -> tuple[str, str]:
    """(the screen's URL, the URL its answers post to): what reverse() gives for them."""
    item_form, answer_form = _screen_url_forms(get_script_prefix())
    return item_form.format(a=assignment_id, p=position), answer_form.format(a=assignment_id, p=position)


def _render_typed_item(request: HttpRequest, assignment: Assignment, item: HITItem, task_type, error: str = ""):
    """A screen of a task type other than last_turn_label: the shared frame (position, nav, save
    status) around the type's own template, fed by its screen_context."""
    saved = Response.objects.filter(assignment=assignment, item=item).values_list("data", flat=True).first()
    context = {
        "assignment": assignment,
        "position": item.position,
        "total": _hit_size(assignment),
        "item_url": reverse("labeling:assignment_item", args=[assignment.pk, item.position]),
        "answer_url": reverse("labeling:answer_item", args=[assignment.pk, item.position]),
        "task_template": task_type.template,
        "saved": saved is not None,
        "error": error,
        **task_type.screen_context(assignment.hit.campaign, item, saved or {}),
    }
    htmx = _is_htmx(request)
    response = render(request, "labeling/partials/task_item.html" if htmx else "labeling/task_item_page.html", context)
    if htmx:
        response["HX-Push-Url"] = context["item_url"]
    return response


def _answer_typed(request: HttpRequest, assignment: Assignment, item: HITItem, go: str) -> HttpResponse:
    """answer_item for a type whose answer is data: save whatever was posted (a complete answer),
    then stay, go back, or go on (which needs a saved answer)."""
    posted_any = any(name not in ("go", "seconds", "csrfmiddlewaretoken") for name in request.POST)
    target = max(item.position - 1, 1) if go == "back" else item.position + 1
    try:
        reason = services.refusal_reason(assignment)
        if reason is not None:
            raise SubmissionRefused(reason)
        if posted_any:
            try:
                _save_posted_answer(request, assignment, item)
            except SubmissionRefused:
                if go != "back":
                    raise
        elif go == "next" and not Response.objects.filter(assignment=assignment, item=item).exists():
            raise SubmissionRefused("Answer every question before going on.")
    except SubmissionRefused as refused:
        return _refuse(request, assignment, item, refused.message, go)
    if go == "stay":
        if _is_htmx(request):
            return render(request, "labeling/partials/save_status.html", {"message": "Saved"})
        return redirect("labeling:assignment_item", pk=assignment.pk, position=item.position)
    return _go_to(request, assignment, target)


def _choices_shown(assignment: Assignment, item: HITItem) -> list[str]:
    """The three choices in this assignment's own order (drawn from a secret per assignment and
    item), the same rule for quiz and work screens: neither rank nor answer sets the order, and
    workers who compare notes see different orders."""
    key = hmac.new(settings.SECRET_KEY.encode(), f"choices:{assignment.pk}:{item.pk}".encode(), hashlib.sha256)
    return choice_order(item.choices, key.digest())


@login_required
@require_POST
def answer_item(request: HttpRequest, pk: int, position: int) -> HttpResponse:
    """Save the answer given on one screen (if any), then go where the button said:
    stay (autosave on every change), back, or next (which needs an answer)."""
    go = request.POST.get("go", "stay")
    if go == "stay" and request.POST.get("answer"):
        return _autosave(request, pk, position)
    # Next and Back show the neighbouring screen with its answer: one read for both screens'
    # answers, together with the assignment's when this process knows its HIT already
    target = max(position - 1, 1) if go == "back" else position + 1
    assignment, stored = _own_assignment_with_answers(request, pk, [position, target])
    item = _item_at(assignment, position)
    if not task_types.of(assignment.hit.campaign).uses_labels:
        return _answer_typed(request, assignment, item, go)
    try:
        reason = services.refusal_reason(assignment)
        if reason is not None:
            raise SubmissionRefused(reason)
        if stored is None:
            neighbour = screens.screens_of(assignment.hit, assignment.seat).get(target)
            stored = _stored_answers(assignment, [item.pk] + ([neighbour.item.pk] if neighbour else []))
        changed, answered = _compare_with_stored(request, stored.get(item.pk))
        if changed:
            _save_posted_answer(request, assignment, item)
            stored.pop(item.pk, None)  # now stale (Back on the first screen shows it again)
        elif go == "next" and not answered:
            raise SubmissionRefused("Choose a label (or Other) before going on.")
    except SubmissionRefused as refused:
        return _refuse(request, assignment, item, refused.message, go)
    if go == "stay" and _is_htmx(request):
        return render(request, "labeling/partials/save_status.html", {"message": "Saved"})
    if go == "stay":
        return redirect("labeling:assignment_item", pk=pk, position=position)
    return _go_to(request, assignment, target, stored)


def _autosave(request: HttpRequest, pk: int, position: int) -> HttpResponse:
    """The autosave (go=stay with an answer): the browser sends it when the answer changes, so it
    is saved outright. With the annotator fast path on, the common case (one of the three
    choices, on an assignment this process served before) is one SQL statement
    (services.save_pick); anything else, and everything with it off, reads the assignment once,
    locked, for both the ownership check and the save. Saving replaces the stored answer."""
    seconds = clamped_seconds(request.POST.get("seconds", 0), settings.SCREEN_SECONDS_CAP)
    if services.save_pick(pk, request.user.pk, position, request.POST.get("answer", ""), seconds_spent=seconds):
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
def _saved_html() -> str:
    return render_to_string("labeling/partials/save_status.html", {"message": "Saved"})


def _saved(request: HttpRequest, pk: int, position: int) -> HttpResponse:
    """What an autosave answers: the "Saved" status for htmx (the same words every time, rendered
    once), the screen again without JavaScript."""
    if _is_htmx(request):
        return HttpResponse(_saved_html())
    return redirect("labeling:assignment_item", pk=pk, position=position)


def _stored_answers(assignment: Assignment, item_ids: list[int]) -> dict[int, tuple[str | None, str, str] | None]:
    """item id -> (label name, new label text, method) of the assignment's stored answer, or
    None for an item not answered yet; every id asked for is a key."""
    return hot_reads.stored_answers(assignment.pk, item_ids)


def _compare_with_stored(request: HttpRequest, stored: tuple | None) -> tuple[bool, bool]:
    """(whether the posted answer differs from the stored one, whether the screen is answered).

    Next and Back carry the answer the autosave stored a moment before; saving it again would
    double every write, so an unchanged answer is left alone.
    """
    answer = request.POST.get("answer", "")
    if not answer:
        return False, stored is not None
    if stored is None:
        return True, False
    name, text, method = stored
    if answer == NEW_LABEL:
        typed = " ".join(request.POST.get("new_label", "").split())
        return not (method == Response.OTHER_NEW and text == typed), True
    return name != answer, True


def _save_posted_answer(
    request: HttpRequest, assignment: Assignment, item: HITItem, *, assignment_locked: bool = False
) -> None:
    """Hand the posted form to the campaign's task type (labeling.services.save_answer); for
    last_turn_label a list pick that is one of the three choices is stored as top3."""
    seconds = clamped_seconds(request.POST.get("seconds", 0), settings.SCREEN_SECONDS_CAP)
    services.save_answer(assignment, item, request.POST, seconds_spent=seconds, assignment_locked=assignment_locked)


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
    answers = {r.item_id: r for r in assignment.responses.select_related("label")}
    hit_screens = screens.screens_of(assignment.hit, assignment.seat)
    rows = [(position, answers.get(hit_screens[position].item.pk)) for position in sorted(hit_screens)]
    return {
        "assignment": assignment,
        "rows": rows,
        "total": len(rows),
        "answered": sum(1 for _, r in rows if r is not None),
    }


@login_required
@require_POST
def submit(request: HttpRequest, pk: int) -> HttpResponse:
    """Submit, then show the quiz feedback. A second submit (a double click, or a replay after the
    answer to the first was lost) changes nothing: it is refused with a message and leads to the
    assignment, whose page is then the feedback."""
    assignment = _own_assignment(request, pk)
    try:
        services.submit_assignment(assignment)
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
    a crowd-platform worker only once the platform confirmed the submission (services.feedback_shown)."""
    assignment = _own_assignment(request, pk)
    if assignment.status not in Assignment.FINAL:
        return redirect("labeling:assignment_detail", pk=pk)
    result = services.quiz_result(assignment) if services.feedback_shown(assignment) else None
    return render(request, "labeling/feedback.html", {"assignment": assignment, "result": result})


@login_required
@require_GET
def assignment_done(request: HttpRequest, pk: int) -> HttpResponse:
    assignment = _own_assignment(request, pk)
    if assignment.status not in Assignment.FINAL:
        return redirect("labeling:assignment_detail", pk=pk)
    return render(request, "labeling/done.html", {"assignment": assignment})
