"""The qualification quiz's feedback after each screen (labeling.services.qualification), and the
researcher's button that opens seats on a campaign's qualification quiz.

The annotator's Next on a qualification screen (labeling.pages.annotator.answer_item) comes here once the
answer is saved: the answer is checked (and frozen), then the screen's verdict and known answer
are shown, with a Next that leads on. An htmx request gets the partial in place of the screen; a
plain form post is redirected to the check's own page (GET, which changes nothing).
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_POST

from config.web.access import staff_required
from labeling.models import Assignment, Campaign, HITItem, QuizCheck, Response, seat_items_q
from labeling.services import qualification
from labeling.work.quiz_pool import PoolTooSmall

MAX_SEATS = 500


def show_check(request: HttpRequest, assignment: Assignment, item: HITItem) -> HttpResponse:
    """Check the saved answer of one qualification screen, then show the verdict."""
    check = qualification.check_screen(assignment, item)
    if check is None:  # not a quiz screen, or no answer saved: nothing to check
        return redirect("labeling:assignment_detail", pk=assignment.pk)
    if request.headers.get("HX-Request") == "true":
        response = render(request, "labeling/partials/quiz_check.html", _context(assignment, check))
        response["HX-Push-Url"] = reverse("labeling:quiz_check", args=[assignment.pk, item.position])
        return response
    return redirect("labeling:quiz_check", pk=assignment.pk, position=item.position)


@login_required
@require_GET
def quiz_check(request: HttpRequest, pk: int, position: int) -> HttpResponse:
    """A checked qualification screen: right or wrong, and the known answer (the signed-in
    worker's own assignment only; anyone else's id is a 404)."""
    assignment = get_object_or_404(Assignment.objects.select_related("hit__campaign"), pk=pk, worker__user=request.user)
    check = (
        QuizCheck.objects.filter(assignment=assignment, item__position=position)
        .filter(seat_items_q(assignment.seat, "item__"))
        .select_related("item__quiz_question__gold_label")
        .first()
    )
    if check is None:
        raise Http404(gettext("This screen was not checked."))
    return render(request, "labeling/quiz_check_page.html", _context(assignment, check))


def _context(assignment: Assignment, check: QuizCheck) -> dict:
    item = check.item
    total = HITItem.objects.filter(seat_items_q(assignment.seat), hit_id=assignment.hit_id).count()
    given = Response.objects.filter(assignment=assignment, item=item).select_related("label").first()
    if item.position < total:
        next_url = reverse("labeling:assignment_item", args=[assignment.pk, item.position + 1])
    else:
        next_url = reverse("labeling:assignment_review", args=[assignment.pk])
    return {
        "assignment": assignment,
        "position": item.position,
        "total": total,
        "check": check,
        "text": item.quiz_question.text,
        "given": given.answer if given is not None else "",
        "gold": item.quiz_question.gold_label.name,
        "explanation": item.quiz_question.explanation,
        "next_url": next_url,
    }


@staff_required
@require_POST
def open_qualification_seats(request: HttpRequest, pk: int) -> HttpResponse:
    """Build a qualification HIT of the posted number of seats for the campaign."""
    campaign = get_object_or_404(Campaign, pk=pk)
    raw = request.POST.get("seats", "")
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_SEATS:
        messages.error(request, f"seats: a whole number from 1 to {MAX_SEATS}.")
        return redirect("labeling:campaign_detail", pk=pk)
    try:
        hit = qualification.build_qualification_hit(campaign, int(raw))
    except (PoolTooSmall, ValueError) as error:
        messages.error(request, f"No qualification HIT built: {error}")
    else:
        messages.success(request, f"Qualification HIT #{hit.position} built with {hit.required_workers} seats.")
    return redirect("labeling:campaign_detail", pk=pk)


@staff_required
@require_GET
def campaign_quiz_history(request: HttpRequest, pk: int) -> HttpResponse:
    """Every worker's quiz history of a campaign, QUIZ_HISTORY_PAGE at a time (the dashboard shows
    the first DASHBOARD_QUIZ_ROWS)."""
    campaign = get_object_or_404(Campaign, pk=pk)
    raw = request.GET.get("page", "1")
    if not raw.isdigit() or int(raw) < 1:
        return HttpResponseBadRequest("page: a whole number from 1")
    page = int(raw)
    everyone = qualification.dashboard_people(campaign)
    people = len(everyone)
    pages = max(1, -(-people // qualification.QUIZ_HISTORY_PAGE))
    if page > pages:
        raise Http404(f"page {page}: the quiz history has {pages} page(s)")
    start = (page - 1) * qualification.QUIZ_HISTORY_PAGE
    rows = qualification.dashboard_rows(campaign, start, start + qualification.QUIZ_HISTORY_PAGE, everyone)
    context = {
        "campaign": campaign,
        "rows": rows,
        "page": page,
        "pages": pages,
        "people": people,
        "first": start + 1,
        "last": start + len(rows),
    }
    return render(request, "labeling/researcher/quiz_history.html", context)
