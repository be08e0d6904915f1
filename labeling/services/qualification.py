"""The qualification step: a quiz-only HIT first, paid HITs only for workers who reach the mark.

A campaign with `qualification_required` gets one qualification HIT (`build_qualification_hit`,
kind HIT.QUALIFICATION) of `qualification_items` quiz screens and one seat per worker it may
qualify; each seat has its own quiz dialogues from the secret pool.

- Items: feedback shows each screen's known answer at once to a proven attempt (a site worker,
  a landing its platform stood behind: a Prolific session asked at landing, or a confirmed one);
  an unproven landing's (MTurk's until it submits) answers show once the platform confirms its
  submission, so made-up ids spend no item and hold no seat for good. A shown item is spent: it is drawn only among items never shown, with every
  exposure the cap allows reserved (quiz_pool.draw with QUIZ_MAX_EXPOSURES seats), so it retires at
  once and is scored for no one else, ever. Each feedback counts as a reveal (record_reveals),
  and a claim skips any HIT with an item the worker was shown (quiz_pool.seen_by), as for any quiz.
- Feedback: after a screen is answered (Next), `check_screen` records a QuizCheck (right or wrong)
  and the page shows the verdict and the known answer; from then on that answer cannot change
  (`is_checked`, refused by labeling.actions.answer). Paid HITs keep their rules (feedback after
  submission, a platform worker's only once confirmed).
- Result: at submission `record_result` writes the worker's QualificationResult (score, passed:
  labeling.crowd.qualification.passes against `qualification_mark`).
- Gate (`claimable_q`, a filter of labeling.actions.claim.open_hits_for; `may_take_paid_work`): in such
  a campaign a worker is offered its paid HITs only with a passing result, and the qualification
  HIT only while they never held a seat on one (one attempt per proven person and campaign: a
  retry would come after the known answers were shown; an attempt left to expire is spent too).
  A platform worker is one person across their landings (same platform and worker id), but only
  the landings the platform stood behind spend the person's attempt (`_attempts`: a borrowed id
  cannot spend its owner's), and their pass counts once the platform confirmed the quiz's
  submission (what sync also waits for before
  granting it on the platform: MTurk's qualification, Prolific's participant group).
- Pay: the qualification HIT pays `qualification_reward`, no bonus (`reward_and_bonus`); its
  minutes are the paid HIT's per screen (crowd.qualification.quiz_minutes), checked against the
  platform's hourly minimum like the paid HIT's (`pay_refusals`).
- History: every quiz answer a worker gave, in every campaign, right or wrong (`quiz_histories`),
  shown per worker on the campaign dashboard (`dashboard_rows`: its first DASHBOARD_QUIZ_ROWS
  workers) and on the campaign's quiz history page (every worker, a page at a time).
"""

import random
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Q, QuerySet, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext_lazy

from annotation.models import ModelVersion
from labeling import task_types
from labeling.crowd.qualification import QuizHistory, answered_right, histories, passes
from labeling.models import (
    HIT,
    Assignment,
    Campaign,
    HITItem,
    PlatformQualification,
    Publication,
    QualificationResult,
    QuizCheck,
    Response,
    Worker,
    counted_assignment_q,
)
from labeling.services import workers
from labeling.work import quiz_pool
from labeling.work.hits import write_hits
from labeling.work.label_sets import campaign_labels

# the dashboard shows the quiz history of this many workers; the quiz history page all, a page at a time
DASHBOARD_QUIZ_ROWS = 50
QUIZ_HISTORY_PAGE = 200

CHECKED = gettext_lazy("This answer was checked against the known answer; it can no longer change.")


# --- Building the qualification HIT -------------------------------------------------------------


def build_qualification_hit(campaign: Campaign, seats: int, *, seed: int | None = None) -> HIT:
    """A qualification HIT of `seats` seats (workers who may take the quiz), each seat with its own
    `campaign.qualification_items` spent quiz dialogues. Raises ValueError (PoolTooSmall among
    them) saying why it cannot be built; nothing is saved then."""
    if seats < 1:
        raise ValueError("seats: a qualification HIT needs at least one seat")
    rng = random.Random(seed)
    suggester = campaign.suggestion_model or ModelVersion.objects.suggester()
    task_types.of(campaign).qualification_screens(campaign, [], suggester)  # a type without a quiz refuses here
    with transaction.atomic():
        per_seat = _draw_spent(campaign, seats, rng)
        screens = task_types.of(campaign).qualification_screens(campaign, per_seat, suggester)
        (hit,) = write_hits(campaign, [screens], kind=HIT.QUALIFICATION, required_workers=seats)
    return hit


def _draw_spent(campaign: Campaign, seats: int, rng: random.Random):
    """Per seat, its quiz items: never shown before, all their exposures reserved (see the module)."""
    try:
        return quiz_pool.draw(
            seats,
            campaign.qualification_items,
            settings.QUIZ_MAX_EXPOSURES,
            rng=rng,
            label_ids=campaign_labels(campaign).values_list("pk", flat=True),
        )
    except quiz_pool.PoolTooSmall as error:
        raise quiz_pool.PoolTooSmall(
            f"the qualification quiz takes quiz dialogues never shown before (each is spent by its feedback): {error}"
        ) from error


def qualification_hits(campaign: Campaign):
    return HIT.objects.filter(campaign=campaign, kind=HIT.QUALIFICATION)


def is_qualification(hit: HIT) -> bool:
    return hit.kind == HIT.QUALIFICATION


# --- The gate -----------------------------------------------------------------------------------


def _passing(worker_id, campaign_ref) -> QuerySet[QualificationResult]:
    """Passing results of the person in the campaign that count: a site worker's at once, a
    platform worker's once the platform confirmed the quiz's submission."""
    return QualificationResult.objects.filter(
        Q(worker__platform=Worker.SITE) | Q(assignment__platform_confirmed_at__isnull=False),
        campaign_id=campaign_ref,
        passed=True,
        worker__in=workers.same_person(worker_id),
    )


def _attempts(worker_id, campaign_ref) -> QuerySet[Assignment]:
    """The attempts that spend the person's one: this identity's own seats on the campaign's
    qualification HITs, and those of the person's landings the platform stood behind (merged
    into the proven worker). A landing nobody proved (a made-up session, a borrowed id's) spends
    only its own: it cannot spend the owner's attempt."""
    return Assignment.objects.filter(
        _own_or_proven(worker_id),
        hit__campaign_id=campaign_ref,
        hit__kind=HIT.QUALIFICATION,
        worker__in=workers.same_person(worker_id),
    )


def _own_or_proven(worker_id) -> Q:
    """Rows (with a `worker`) of this identity, or of a landing of the person its platform stood
    behind (merged into the proven worker), or of the proven worker itself."""
    return Q(worker_id=worker_id) | Q(worker__merged_into__isnull=False) | Q(worker__landing_key="")


def claimable_q(worker: Worker) -> Q:
    """The HITs a worker may claim as far as the qualification goes (a filter on HIT): a campaign
    without the step as before; with it, its paid HITs with a passing result, its qualification
    HIT without an attempt. Only the worker's id enters the SQL."""
    campaign = OuterRef("campaign_id")
    paid = ~Q(kind=HIT.QUALIFICATION) & (
        Q(campaign__qualification_required=False) | Q(Exists(_passing(worker.pk, campaign)))
    )
    quiz = Q(kind=HIT.QUALIFICATION, campaign__qualification_required=True) & ~Q(Exists(_attempts(worker.pk, campaign)))
    return paid | quiz


def may_take_paid_work(worker: Worker, campaign: Campaign) -> bool:
    """Whether the worker may be offered the campaign's paid HITs."""
    if not campaign.qualification_required:
        return True
    return _passing(worker.pk, campaign.pk).exists()


@dataclass(frozen=True)
class QualificationStatus:
    """Where a worker stands with one campaign's qualification (for the worker's home page)."""

    state: str  # "required", "taking", "pending", "passed", "failed", "expired"
    result: QualificationResult | None = None
    mark: int = 0


def status_of(worker: Worker, campaign: Campaign) -> QualificationStatus | None:
    """None for a campaign without the step."""
    if not campaign.qualification_required:
        return None
    mark = campaign.qualification_mark
    person = workers.same_person(worker.pk)
    results = QualificationResult.objects.filter(_own_or_proven(worker.pk), campaign=campaign, worker__in=person)
    result = results.order_by("-passed").first()
    if result is not None:
        if not result.passed:
            return QualificationStatus("failed", result, mark)
        return QualificationStatus("passed" if may_take_paid_work(worker, campaign) else "pending", result, mark)
    attempts = _attempts(worker.pk, campaign.pk)
    if attempts.filter(status=Assignment.ACCEPTED).exists():
        return QualificationStatus("taking", None, mark)
    if attempts.exists():
        return QualificationStatus("expired", None, mark)
    return QualificationStatus("required", None, mark)


def annotate_statuses(worker: Worker, campaigns: Iterable[Campaign]) -> None:
    """Set `qualification_status` on each campaign (the worker's home page shows it)."""
    for campaign in campaigns:
        campaign.qualification_status = status_of(worker, campaign)


# --- Feedback after each screen -----------------------------------------------------------------


def is_checked(assignment: Assignment, item: HITItem) -> bool:
    """Whether the answer to this screen was checked (its known answer shown): it cannot change.
    Every answer asks, so a screen known not to be a qualification quiz screen costs no query."""
    if item.quiz_question_id is None:
        return False
    if Assignment.hit.is_cached(assignment) and assignment.hit.kind != HIT.QUALIFICATION:
        return False
    return QuizCheck.objects.filter(assignment=assignment, item=item).exists()


def check_screen(assignment: Assignment, item: HITItem) -> QuizCheck | None:
    """Check the saved answer to one screen of a live qualification assignment against the known
    answer, and count the reveal (once: a second check returns the first). None when the screen
    is not a quiz screen of this assignment's qualification HIT, or has no answer yet."""
    if item.hit_id != assignment.hit_id or item.seat not in (0, assignment.seat) or item.quiz_question_id is None:
        return None
    if assignment.hit.kind != HIT.QUALIFICATION or assignment.worker.is_pending_identity:
        # an unproven landing's (a made-up id's) answers are shown once the platform confirms its
        # submission, like a paid HIT's: no item is spent on it, no seat held for good
        return None
    existing = QuizCheck.objects.filter(assignment=assignment, item=item).first()
    if existing is not None:
        return existing
    answer = (
        Response.objects.filter(assignment=assignment, item=item).values_list("label__name", "new_label_text").first()
    )
    if answer is None:
        return None
    correct = answered_right(answer[0] or answer[1], item.quiz_question.gold_label.name)
    try:
        with transaction.atomic():
            check = QuizCheck.objects.create(assignment=assignment, item=item, correct=correct)
            quiz_pool.record_reveals([item.quiz_question_id])
    except IntegrityError:  # a double click: the other request checked it
        return QuizCheck.objects.get(assignment=assignment, item=item)
    return check


def not_yet_revealed(assignment: Assignment, question_ids: Iterable[int]) -> list[int]:
    """The quiz questions among `question_ids` whose answer this assignment's feedback did not show
    yet (a qualification screen's was shown when checked): what a submission's feedback reveals."""
    ids = list(question_ids)
    if not ids or (Assignment.hit.is_cached(assignment) and assignment.hit.kind != HIT.QUALIFICATION):
        return ids  # a paid HIT shows no answer before its submission: no query
    shown = set(QuizCheck.objects.filter(assignment=assignment).values_list("item__quiz_question_id", flat=True))
    return [pk for pk in ids if pk not in shown]


# --- The result ---------------------------------------------------------------------------------


def record_result(assignment: Assignment, correct: int, total: int) -> QualificationResult | None:
    """The worker's result for a submitted qualification assignment (in the submission's
    transaction); None for any other HIT. One per worker identity and campaign."""
    hit = assignment.hit
    if hit.kind != HIT.QUALIFICATION:
        return None
    campaign = hit.campaign
    result, _ = QualificationResult.objects.get_or_create(
        worker_id=assignment.worker_id,
        campaign=campaign,
        defaults={
            "assignment": assignment,
            "correct": correct,
            "total": total,
            "passed": passes(correct, total, campaign.qualification_mark),
        },
    )
    return result


def grants_due(publication: Publication) -> list[QualificationResult]:
    """Passing, confirmed results of the publication's platform workers not yet granted there."""
    return list(
        QualificationResult.objects.filter(
            campaign_id=publication.campaign_id,
            passed=True,
            granted_at__isnull=True,
            worker__platform=publication.platform,
            assignment__platform_confirmed_at__isnull=False,
        )
        .select_related("worker")
        .order_by("pk")
    )


def mark_granted(results: Iterable[QualificationResult]) -> int:
    ids = [result.pk for result in results]
    return QualificationResult.objects.filter(pk__in=ids, granted_at__isnull=True).update(granted_at=timezone.now())


# --- Pay ----------------------------------------------------------------------------------------


def reward_and_bonus(campaign: Campaign, hit_kind: str) -> tuple[Decimal, Decimal]:
    """What an approved assignment of a HIT of this kind earns: the qualification quiz its own
    reward and no bonus; any other HIT the campaign's reward and bonus."""
    if hit_kind == HIT.QUALIFICATION:
        return campaign.qualification_reward, Decimal(0)
    return campaign.reward, campaign.bonus


# --- Platforms ----------------------------------------------------------------------------------


def quiz_completion_code(assignment: Assignment) -> str:
    """The Prolific quiz study's completion code for a qualification assignment, else ""."""
    if assignment.hit.kind != HIT.QUALIFICATION:
        return ""
    setup = PlatformQualification.objects.filter(campaign_id=assignment.hit.campaign_id, platform=Worker.PROLIFIC)
    return setup.values_list("completion_code", flat=True).first() or ""


# --- History and the dashboard ------------------------------------------------------------------


def _person():
    return Coalesce("assignment__worker__merged_into_id", "assignment__worker_id")


def quiz_histories(person_ids: Iterable[int]) -> dict[int, QuizHistory]:
    """Every counted quiz answer of these workers (a platform worker's landings count as the worker
    they were merged into), right or wrong, over every campaign: from the Response rows of quiz
    items whose known answer is a label."""
    ids = list(person_ids)
    rows = (
        Response.objects.filter(
            counted_assignment_q("assignment__"),
            Q(assignment__worker_id__in=ids) | Q(assignment__worker__merged_into_id__in=ids),
            item__quiz_question__gold_label__isnull=False,
        )
        .annotate(person=_person())
        .values_list(
            "person", "item__hit__campaign_id", "label__name", "new_label_text", "item__quiz_question__gold_label__name"
        )
    )
    # a typed label has no label id: it is judged by its text (answered_right), never left unknown
    return histories(
        (person, campaign, answered_right(label or typed, gold)) for person, campaign, label, typed, gold in rows
    )


def dashboard_people(campaign: Campaign) -> list[tuple[str, int]]:
    """(external id, id) of every person with counted work in the campaign (a site worker's
    submitted work, a platform worker's once confirmed, under the proven worker), in the order of
    the dashboard's quiz history: by external id (as Python orders strings), then id."""
    people = (
        Assignment.objects.filter(hit__campaign=campaign)
        .counted()
        .annotate(person=Coalesce("worker__merged_into_id", "worker_id"))
        .values("person")
    )
    return sorted(Worker.objects.filter(pk__in=people).values_list("external_id", "pk"))


def dashboard_rows(
    campaign: Campaign, start: int = 0, stop: int | None = None, people: list[tuple[str, int]] | None = None
) -> list[dict]:
    """Per person with counted work in the campaign, rows start:stop of dashboard_people (`people`
    when the caller read them already): their qualification result here (if the campaign has the
    step) and their quiz history over every campaign. Only the rows asked for are read (a campaign
    of 1M answers has 5,000 people)."""
    if people is None:
        people = dashboard_people(campaign)
    chosen = [pk for _, pk in people[start:stop]]
    if not chosen:
        return []
    workers = Worker.objects.in_bulk(chosen)
    found = quiz_histories(chosen)
    results = _results_by_person(campaign, chosen)
    return [_row(workers[pk], found.get(pk, QuizHistory()), results.get(pk)) for pk in chosen]


def _results_by_person(campaign: Campaign, people: list[int]) -> dict[int, QualificationResult]:
    results = (
        QualificationResult.objects.filter(campaign=campaign)
        .annotate(person=Coalesce("worker__merged_into_id", "worker_id"))
        .filter(person__in=people)
    )
    return {result.person: result for result in results.order_by("passed")}


def _row(worker: Worker, history: QuizHistory, result: QualificationResult | None) -> dict:
    return {
        "id": worker.pk,
        "worker": worker.external_id,
        "platform": worker.platform,
        "result": result,
        "right": history.overall.right,
        "total": history.overall.total,
        "accuracy": history.overall.accuracy,
        "campaigns": history.campaigns,
    }


def campaign_summary(campaign: Campaign, rows: int | None = None) -> dict:
    """What the campaign page shows of the step: its settings' effect, the seats, who passed, and
    the quiz history of its first `rows` workers (DASHBOARD_QUIZ_ROWS; every one of them on the
    quiz history page)."""
    seats = qualification_hits(campaign).aggregate(seats=Sum("required_workers"), free=Sum("seats_free"))
    # people, on results that count (a platform worker's once the platform confirmed the quiz)
    results = (
        QualificationResult.objects.filter(campaign=campaign)
        .filter(Q(worker__platform=Worker.SITE) | Q(assignment__platform_confirmed_at__isnull=False))
        .annotate(person=Coalesce("worker__merged_into_id", "worker_id"))
    )
    passed = set(results.filter(passed=True).values_list("person", flat=True))
    people = dashboard_people(campaign)
    return {
        "seats": seats["seats"] or 0,
        "free": seats["free"] or 0,
        "passed": len(passed),
        "failed": len(set(results.filter(passed=False).values_list("person", flat=True)) - passed),
        "minutes": campaign.qualification_minutes,
        "people": len(people),
        "rows": dashboard_rows(campaign, 0, DASHBOARD_QUIZ_ROWS if rows is None else rows, people),
    }
