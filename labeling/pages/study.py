"""The participant's pages of a campaign's study flow: consent, declined, instructions, practice
(with its feedback, retry and outcome) and the exit survey. Each page names its step in the
data-step of its <main> (templates/labeling/study/). Nothing here takes a seat: the last step
before the work hands over to the claim (labeling.pages.annotator.start_work), or, for a participant who
came from a crowd platform, to their landing link again, which claims as every landing does.

Texts are the campaign's own, in the participant's language where the researcher gave one
(labeling.study_flow.texts with Django's active language); every other word goes through gettext.

How a platform participant who leaves before the work is sent back (no submission is made, so
nothing is paid):
- Prolific: the study's no-consent / screen-out completion code where the researcher set one up
  (https://docs.prolific.com/api-reference/studies/the-study-object, completion codes and their
  actions), else a request to return the submission ("Cancel participation" on Prolific's page;
  a researcher may ask for a return when a participant was fairly screened out:
  https://participant-help.prolific.com/en/articles/445041-how-to-return-a-submission-on-prolific);
- MTurk: return the HIT with MTurk's Return button; an assignment never submitted to the
  externalSubmit URL is never Submitted, so it cannot be approved or paid
  (https://docs.aws.amazon.com/AWSMechTurk/latest/AWSMturkAPI/ApiReference_AssignmentDataStructureArticle.html).
"""

import contextlib
from urllib.parse import urlsplit

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.utils.translation import get_language, gettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from labeling import task_types
from labeling.models import Assignment, Campaign, Worker
from labeling.pages import annotator as work_views
from labeling.services.workers import worker_for_user
from labeling.study_flow import config, markdown, progress
from labeling.study_flow import texts as flow_texts
from labeling.work import label_texts
from labeling.work.label_sets import campaign_labels

LANDING_KEY = "study_landing"  # the session's record of a platform landing whose flow comes first
PROLIFIC_COMPLETE_URL = "https://app.prolific.com/submissions/complete?cc={code}"
PAGES = {
    config.CONSENT: "labeling:study_consent",
    config.DECLINED: "labeling:study_declined",
    config.INSTRUCTIONS: "labeling:study_instructions",
    config.PRACTICE: "labeling:study_practice",
    config.PRACTICE_FAILED: "labeling:study_practice",
}


def _campaign(pk: int) -> Campaign:
    campaign = get_object_or_404(Campaign, pk=pk)
    if campaign.status != Campaign.OPEN:
        raise Http404("This campaign is not open.")
    return campaign


def _texts(campaign: Campaign) -> dict:
    return flow_texts.texts_in(campaign.study_flow or {}, get_language())


def _context(request: HttpRequest, campaign: Campaign, step: str, **extra) -> dict:
    return {"campaign": campaign, "step": step, "platform": _platform_of(request, campaign), **extra}


def _platform_of(request: HttpRequest, campaign: Campaign) -> dict | None:
    """The platform landing this browser came from for this campaign, if any."""
    landed = request.session.get(LANDING_KEY)
    return landed if landed and landed.get("campaign") == campaign.pk else None


def _go_on(request: HttpRequest, worker: Worker, campaign: Campaign) -> HttpResponse:
    """The participant's next page: the next step before the work, else the work itself."""
    step = progress.next_step(worker, campaign)
    if step is not None:
        return redirect(PAGES[step], pk=campaign.pk)
    landed = _platform_of(request, campaign)
    if landed:  # a platform participant claims through their landing, as every landing does
        return redirect(landed["url"])
    if request.method == "POST":
        return work_views.start_work(request, worker, campaign)
    return redirect(f"{reverse('labeling:worker_home')}?campaign={campaign.pk}")


@login_required
@require_GET
def entry(request: HttpRequest, pk: int) -> HttpResponse:
    """Where a claim or a landing sends a participant whose flow comes first."""
    campaign = _campaign(pk)
    worker = worker_for_user(request.user)
    progress.record(worker.pk, campaign.pk, config.ARRIVED)
    return _go_on(request, worker, campaign)


# --- consent ------------------------------------------------------------------------------------


@login_required
@require_http_methods(["GET", "POST"])
def consent(request: HttpRequest, pk: int) -> HttpResponse:
    campaign = _campaign(pk)
    worker = worker_for_user(request.user)
    shown = _texts(campaign).get("consent")
    if shown is None:
        return _go_on(request, worker, campaign)
    if request.method == "POST":
        decision = request.POST.get("decision")
        if decision not in ("agree", "decline"):
            return render(
                request, "labeling/study/consent.html", _consent_context(request, campaign, shown), status=400
            )
        progress.decide_consent(worker, campaign, decision == "agree")
        return _go_on(request, worker, campaign)
    progress.record(worker.pk, campaign.pk, config.ARRIVED, config.CONSENT)
    return render(request, "labeling/study/consent.html", _consent_context(request, campaign, shown))


def _consent_context(request: HttpRequest, campaign: Campaign, shown: dict) -> dict:
    information = mark_safe(markdown.to_html(shown["information"]))  # escaped by markdown.to_html
    return _context(request, campaign, config.CONSENT, information=information, consent=shown)


@login_required
@require_GET
def declined(request: HttpRequest, pk: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=pk)
    worker = worker_for_user(request.user)
    if config.DECLINED not in progress.reached(worker.pk, campaign.pk):
        return redirect("labeling:study_entry", pk=campaign.pk)
    code = (campaign.study_flow or {}).get("platform", {}).get("prolific_no_consent_code", "")
    return render(request, "labeling/study/declined.html", _leaving(request, campaign, config.DECLINED, code))


def _leaving(request: HttpRequest, campaign: Campaign, step: str, code: str) -> dict:
    """A page that sends the participant away before the work: their platform's way back."""
    context = _context(request, campaign, step)
    platform = context["platform"]
    if platform and platform["kind"] == Worker.PROLIFIC and code:
        context["complete_url"] = PROLIFIC_COMPLETE_URL.format(code=code)
    return context


# --- instructions -------------------------------------------------------------------------------


@login_required
@require_http_methods(["GET", "POST"])
def instructions(request: HttpRequest, pk: int) -> HttpResponse:
    """The campaign's instructions: a step of the flow (Continue), and the page every screen links
    to (Back to where you were)."""
    campaign = get_object_or_404(Campaign, pk=pk)
    worker = worker_for_user(request.user)
    texts = _texts(campaign)
    if request.method == "POST":
        if progress.next_step(worker, campaign) == config.INSTRUCTIONS:  # read: the step is done
            progress.record(worker.pk, campaign.pk, config.INSTRUCTIONS, config.INSTRUCTIONS_READ)
        return _go_on(request, worker, campaign)
    in_flow = campaign.status == Campaign.OPEN and progress.next_step(worker, campaign) == config.INSTRUCTIONS
    if in_flow:  # shown: the step's time starts here
        progress.record(worker.pk, campaign.pk, config.INSTRUCTIONS)
    context = _context(
        request,
        campaign,
        config.INSTRUCTIONS,
        text=mark_safe(markdown.to_html(texts.get("instructions", ""))),  # escaped by markdown.to_html
        labels=_labels_shown(campaign, texts["labels"]),
        in_flow=in_flow,
        back=_back(request),
    )
    return render(request, "labeling/study/instructions.html", context)


def _labels_shown(campaign: Campaign, translated: dict) -> list[dict]:
    """The campaign's label set with its descriptions and examples, in the participant's language
    where the researcher gave them."""
    if not task_types.of(campaign).study_report:  # a type whose answers are not one label from a set (pairwise)
        return []
    rows = []
    for label in campaign_labels(campaign).order_by("position", "name"):
        given = translated.get(label.name, {})
        rows.append(
            {
                "name": given.get("name", label.name),
                "description": given.get("description", label.description),
                "examples": given.get("examples", label.examples),
            }
        )
    return rows


def _back(request: HttpRequest) -> str:
    """The page the participant came from, when it is a page of this site (else no link)."""
    came_from = urlsplit(request.META.get("HTTP_REFERER", ""))
    if came_from.netloc != request.get_host() or not came_from.path.startswith("/"):
        return ""
    return came_from.path + (f"?{came_from.query}" if came_from.query else "")


# --- practice -----------------------------------------------------------------------------------


@login_required
@require_http_methods(["GET", "POST"])
def practice(request: HttpRequest, pk: int) -> HttpResponse:
    """One practice screen; after each answer its feedback (right or wrong, the right label, why);
    after the last one the attempt's outcome: passed, a retry, or thanked and let go."""
    campaign = _campaign(pk)
    worker = worker_for_user(request.user)
    if not (campaign.study_flow or {}).get("practice"):
        return _go_on(request, worker, campaign)
    step = progress.next_step(worker, campaign)
    if step in (config.CONSENT, config.DECLINED, config.INSTRUCTIONS):  # a step before this one first
        return _go_on(request, worker, campaign)
    if request.method == "POST":
        return _practice_answer(request, worker, campaign)
    state = progress.practice_state(worker, campaign)
    if not state.answers and step is None:  # no practice of theirs to show (none asked when they passed)
        return _go_on(request, worker, campaign)
    progress.record(worker.pk, campaign.pk, config.PRACTICE)
    texts = _texts(campaign)
    if request.GET.get("feedback", "").isdigit() and int(request.GET["feedback"]) in state.answers:
        return _practice_feedback(request, campaign, texts, state, int(request.GET["feedback"]))
    if state.result is not None and not (request.GET.get("retry") and _may_retry(state)):
        return _practice_outcome(request, worker, campaign, state)
    index = 0 if state.result is not None else state.next_item
    return _practice_screen(request, campaign, texts, state, index)


def _may_retry(state: progress.PracticeState) -> bool:
    return state.result is not None and not state.result.passed and state.result.retries_left > 0


def _practice_answer(request: HttpRequest, worker: Worker, campaign: Campaign) -> HttpResponse:
    item, answer = request.POST.get("item", ""), request.POST.get("answer", "")
    items = campaign.study_flow["practice"]["items"]
    if not item.isdigit() or int(item) >= len(items) or answer not in items[int(item)]["choices"]:
        texts, state = _texts(campaign), progress.practice_state(worker, campaign)
        index = int(item) if item.isdigit() and int(item) < len(items) else (state.next_item or 0)
        return _practice_screen(request, campaign, texts, state, index, error=True, status=400)
    with contextlib.suppress(progress.PracticeClosed):  # passed, or no try left: the outcome page says so
        progress.answer_practice(worker, campaign, int(item), answer)
    return redirect(f"{reverse('labeling:study_practice', args=[campaign.pk])}?feedback={int(item)}")


def _item_shown(texts: dict, index: int) -> dict:
    item = texts["practice"]["items"][index]
    choices = [(name, label_texts.label_shown(texts["labels"], name)) for name in item["choices"]]
    return {**item, "index": index, "number": index + 1, "options": choices}


def _practice_screen(request, campaign, texts, state, index, *, error=False, status=200) -> HttpResponse:
    attempt = state.attempt + 1 if state.result is not None else state.attempt
    context = _context(
        request,
        campaign,
        config.PRACTICE,
        item=_item_shown(texts, index),
        total=state.total,
        attempt=attempt,
        error=error,
    )
    return render(request, "labeling/study/practice.html", context, status=status)


def _practice_feedback(request, campaign, texts, state, index) -> HttpResponse:
    given, correct = state.answers[index]
    item = _item_shown(texts, index)
    context = _context(
        request,
        campaign,
        config.PRACTICE,
        item=item,
        total=state.total,
        given=label_texts.label_shown(texts["labels"], given),
        right=label_texts.label_shown(texts["labels"], item["answer"]),
        correct=correct,
        last=state.result is not None,
    )
    return render(request, "labeling/study/practice_feedback.html", context)


def _practice_outcome(request, worker, campaign, state) -> HttpResponse:
    result = state.result
    failed = not result.passed and result.retries_left == 0
    code = (campaign.study_flow or {}).get("platform", {}).get("prolific_screen_out_code", "") if failed else ""
    context = {**_leaving(request, campaign, config.PRACTICE, code), "result": result, "failed": failed}
    return render(request, "labeling/study/practice_outcome.html", context)


@login_required
@require_POST
def begin(request: HttpRequest, pk: int) -> HttpResponse:
    """ "Start the work" after the last step before it: the claim (or the landing link again)."""
    campaign = _campaign(pk)
    return _go_on(request, worker_for_user(request.user), campaign)


# --- the exit survey ----------------------------------------------------------------------------


@login_required
@require_http_methods(["GET", "POST"])
def survey(request: HttpRequest, pk: int) -> HttpResponse:
    """The exit survey, after a submitted HIT and before the completion page; every question is
    optional, and the whole survey may be skipped. Once answered or skipped it is not asked again."""
    campaign = get_object_or_404(Campaign, pk=pk)
    worker = worker_for_user(request.user)
    assignment = _submitted_assignment(request, worker)
    done_url = reverse("labeling:assignment_done", args=[assignment.pk])
    if not progress.survey_due(worker.pk, campaign) or assignment.hit.campaign_id != campaign.pk:
        return redirect(done_url)
    questions = _texts(campaign)["survey"]
    error = None
    if request.method == "POST":
        try:
            skipped = request.POST.get("action") == "skip"
            answers = {} if skipped else config.clean_survey_answers(campaign.study_flow["survey"], request.POST)
        except config.FlowRefused as refused:
            asked = next((q["question"] for q in questions if q["key"] == refused.field), refused.field)
            message = gettext(
                "Your answer to “%(question)s” could not be read (%(key)s): choose one of the answers shown."
            )
            error = message % {"question": asked, "key": refused.field}
        else:
            progress.save_survey(worker, campaign, answers, skipped=skipped, language=get_language() or "")
            return redirect(done_url)
    progress.record(worker.pk, campaign.pk, config.SURVEY)
    context = _context(request, campaign, config.SURVEY, questions=questions, error=error, assignment=assignment)
    context["scale"] = config.SCALE_VALUES
    return render(request, "labeling/study/survey.html", context, status=400 if error else 200)


def _submitted_assignment(request: HttpRequest, worker: Worker) -> Assignment:
    """The participant's own submitted assignment the survey follows (its id in the URL)."""
    raw = request.GET.get("assignment", "")
    if not raw.isdigit():
        raise Http404("No such assignment.")
    found = Assignment.objects.select_related("hit").filter(pk=int(raw), worker=worker).first()
    if found is None or found.status not in Assignment.FINAL:
        raise Http404("No such assignment.")
    return found
