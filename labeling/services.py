"""The annotator's state changes, one function each: build HITs, claim one, answer, submit.

Views, the API, admin actions and tasks all call these, so every path obeys the same rules.

Concurrency: a claim locks the worker's row (one claim at a time per worker) and then a HIT row
(SELECT ... FOR UPDATE SKIP LOCKED on PostgreSQL, so concurrent claimers spread over HITs instead
of queueing on one) and counts the HIT's seats again under that lock. A submission is a
conditional UPDATE accepted -> submitted, so a double click submits once. SQLite ignores row locks
but serialises writers, and the unique (hit, worker) constraint still refuses a duplicate.
"""

import random
import secrets
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import (
    Case,
    DateTimeField,
    Exists,
    ExpressionWrapper,
    IntegerField,
    Max,
    OuterRef,
    Subquery,
    Value,
    When,
)
from django.utils import timezone

from annotation.models import Dialogue, Label, ModelVersion, Prediction, Turn
from annotation.taxonomy import normalise_label_name
from labeling import fast_path, hot_reads, quiz_pool, seats
from labeling.campaigns import campaign_labels, record_suggestion_model
from labeling.crowd.bundling import bundle_count, plan_bundles, quiz_sets_per_seat, top_choices
from labeling.hits import write_hits
from labeling.models import HIT, Assignment, Campaign, HITItem, Publication, Response, Worker, seat_items_q
from labeling.policy import first_seat_groups


class SubmissionRefused(Exception):
    """An answer or a submission that breaks a rule; the message says which, for the annotator."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# --- Building HITs ------------------------------------------------------------------------------


def build_hits(
    campaign: Campaign,
    dialogues: Iterable[Dialogue],
    *,
    seed: int | None = None,
    suggester: ModelVersion | None = None,
) -> list[HIT]:
    """Bundle the dialogues, in the order given, into HITs of `campaign.dialogues_per_hit` dialogues
    plus `campaign.quiz_per_hit` quiz dialogues from the secret pool, shuffled (see
    labeling.crowd.bundling and labeling.quiz_pool), and write them with `labeling.hits.write_hits`.

    Each dialogue's target is its last turn; its three choices are frozen now, best first: the
    suggestion model's top 3 among the campaign's label set (the campaign records which model
    version; `suggester` overrides ModelVersion.objects.suggester()), else the campaign's fallback. A quiz
    dialogue (its known answer in the label set) gets its choices exactly the same way, its answer
    not forced among them (see quiz_pool.quiz_item); every screen's order is drawn per assignment.

    Each HIT needs the campaign's redundancy policy's first seats (labeling.policy.first_seat_groups):
    `fixed` workers_per_hit; `until_agreement` two; `model_informed` one for dialogues whose model
    top probability reaches the threshold (bundled apart), two for the rest.
    """
    rng = random.Random(seed)
    dialogues = list(dialogues)
    last_turns = _last_turns([d.pk for d in dialogues])
    suggester = suggester or ModelVersion.objects.suggester()
    groups = first_seat_groups(campaign, dialogues, last_turns, suggester)
    with transaction.atomic():
        # the quiz seats are reserved in the same transaction as the HITs: nothing is half-saved
        return [
            hit
            for seats_wanted, group in groups
            for hit in _build_group(campaign, group, last_turns, seats_wanted, rng, suggester)
        ]


def _build_group(campaign, dialogues, last_turns, workers: int, rng, suggester) -> list[HIT]:
    """build_hits for dialogues that all get `workers` first seats (see labeling.policy)."""
    slots = workers if settings.QUIZ_ITEMS_PER_SEAT else 1
    # per seat, an item is one seat's: it reserves one exposure, not one per worker of the HIT
    quiz_sets = quiz_pool.draw(
        bundle_count(len(dialogues), campaign.dialogues_per_hit),
        campaign.quiz_per_hit * slots,
        1 if slots > 1 else workers,
        rng=rng,
        exclude_dialogue_ids=[d.pk for d in dialogues],
        label_ids=campaign_labels(campaign).values_list("pk", flat=True),
    )
    quiz_by_id = {q.pk: q for quiz_set in quiz_sets for q in quiz_set}
    quiz_turns = _last_turns([q.dialogue_id for q in quiz_by_id.values() if q.dialogue_id is not None])
    per_seat = [quiz_sets_per_seat(quiz_set, slots) for quiz_set in quiz_sets]
    bundles = plan_bundles(
        [d.pk for d in dialogues],
        [[q.pk for q in seats_of_hit[0]] for seats_of_hit in per_seat],
        dialogues_per_hit=campaign.dialogues_per_hit,
        rng=rng,
    )
    turn_ids = [last_turns[d.pk].pk for d in dialogues] + [turn.pk for turn in quiz_turns.values()]
    ranked = _suggested_top_k(suggester, turn_ids, _label_set_names(campaign))
    if suggester is not None and ranked:
        record_suggestion_model(campaign, suggester)
    fallback = campaign.fallback_choices
    screens = [
        [_screen(planned, seats_of_hit, quiz_turns, last_turns, ranked, fallback) for planned in bundle]
        for bundle, seats_of_hit in zip(bundles, per_seat, strict=True)
    ]
    return write_hits(campaign, screens, required_workers=workers)


def _screen(planned, seats_of_hit, quiz_turns, last_turns, ranked, fallback) -> HITItem | list[HITItem]:
    """A work screen (one item every seat sees), or a quiz screen: with QUIZ_ITEMS_PER_SEAT one
    item per seat slot at the same position, the planned (seat 1) item's place in each seat's set."""
    if planned.quiz_id is not None:
        index = [q.pk for q in seats_of_hit[0]].index(planned.quiz_id)
        if len(seats_of_hit) == 1:
            return quiz_pool.quiz_item(seats_of_hit[0][index], quiz_turns, ranked, fallback)
        items = []
        for slot, seat_set in enumerate(seats_of_hit, start=1):
            item = quiz_pool.quiz_item(seat_set[index], quiz_turns, ranked, fallback)
            item.seat = slot
            items.append(item)
        return items
    turn = last_turns[planned.dialogue_id]
    choices = _choices_for(turn, ranked.get(turn.pk, []), fallback)
    return HITItem(dialogue_id=planned.dialogue_id, target_turn=turn, choices=choices)


def _label_set_names(campaign: Campaign) -> set[str]:
    return {normalise_label_name(name) for name in campaign_labels(campaign).values_list("name", flat=True)}


def _last_turns(dialogue_ids: list[int]) -> dict[int, Turn]:
    last_position = Turn.objects.filter(dialogue=OuterRef("dialogue")).order_by("-position").values("position")[:1]
    turns = Turn.objects.filter(dialogue_id__in=dialogue_ids, position=Subquery(last_position))
    by_dialogue = {turn.dialogue_id: turn for turn in turns}
    missing = [d for d in dialogue_ids if d not in by_dialogue]
    if missing:
        raise ValueError(f"dialogues without any turn cannot be labeled: ids {missing[:10]}")
    return by_dialogue


def _suggested_top_k(version: ModelVersion | None, turn_ids: list[int], label_set: set[str]) -> dict[int, list[str]]:
    """Label names best first, per turn, from the suggestion model (ModelVersion.objects.suggester:
    learned from gold once there is gold, else the newest weak labeler; empty when there is none),
    keeping only the names in `label_set` (folded by normalise_label_name)."""
    if version is None:
        return {}
    found = Prediction.objects.filter(model_version=version, turn_id__in=turn_ids).values_list("turn_id", "top_k")
    return {
        turn_id: [entry[0] for entry in top_k if normalise_label_name(entry[0]) in label_set]
        for turn_id, top_k in found
    }


def _choices_for(turn: Turn, ranked: list[str], fallback: list[str]) -> list[str]:
    try:
        return top_choices(ranked, fallback)
    except ValueError as error:
        raise ValueError(f"dialogue {turn.dialogue_id}: {error}; give the campaign three fallback_choices") from error


# --- Workers and claims -------------------------------------------------------------------------


def worker_for_user(user) -> Worker:
    """The site Worker of a site account, created on first use."""
    # every claim starts here (with the fast path on, a read by SQL built once)
    worker = fast_path.worker_of(user.pk) if fast_path.enabled() else Worker.objects.filter(user=user).first()
    if worker is not None:
        return worker
    worker, _ = Worker.objects.get_or_create(
        user=user, defaults={"platform": Worker.SITE, "external_id": user.get_username()}
    )
    return worker


def expire_stale_assignments(now: datetime | None = None) -> int:
    """Mark accepted assignments past their time limit expired, freeing their seat. Returns how many.

    Run before every claim (holding no lock), so the common case (nothing lapsed) is one read of
    the partial index `assignment_live_expiry`. Lapsed rows are locked in id order before they
    change. A row another transaction holds is waited for, not skipped: when that one is another
    claim's expiry, the row is re-checked after it commits and left out (it is expired), so each
    freed seat is counted once however many claims run this at the same time, and this claim's
    search then sees the seat it freed. (Skipping it let a claim answer "no HIT left" while a
    seat was being freed.) An answer or submission holds the row for milliseconds and changes no
    seat.
    """
    now = now or timezone.now()
    lapsed = Assignment.objects.filter(status=Assignment.ACCEPTED, expires_at__lte=now)
    if not lapsed.exists():
        return 0
    with transaction.atomic():
        locked = list(lapsed.select_for_update().order_by("pk").values_list("pk", "hit_id"))
        Assignment.objects.filter(pk__in=[pk for pk, _ in locked]).update(status=Assignment.EXPIRED)
        seats.free(hit_id for _, hit_id in locked)
    return len(locked)


def live_assignment(worker: Worker, campaign: Campaign | None = None) -> Assignment | None:
    """The worker's accepted, unexpired assignment in an open campaign, if any."""
    assignments = Assignment.objects.live().filter(worker=worker, hit__campaign__status=Campaign.OPEN)
    if campaign is not None:
        assignments = assignments.filter(hit__campaign=campaign)
    return assignments.select_related("hit__campaign").order_by("accepted_at").first()


def claim_next_hit(
    worker: Worker, campaign: Campaign | None = None, *, prefer_hit_id: int | None = None
) -> Assignment | None:
    """Give the worker a seat on a HIT: their live assignment if they have one (in whichever open
    campaign), else a new one on the first open HIT (of `campaign`, when given) with a free seat
    that they have never held, `prefer_hit_id` first when it has one (the HIT a platform offered
    them). None when nothing is left, the worker is blocked, or the campaign is not open.

    The HIT is found by one indexed SELECT ... FOR UPDATE SKIP LOCKED on the free-seat count
    (labeling.seats); its seats are counted again under the lock before one is taken.
    """
    if worker.is_blocked or (campaign is not None and campaign.status != Campaign.OPEN):
        return None
    expire_stale_assignments()
    with transaction.atomic():
        # One claim at a time per worker, so a double click cannot take two HITs.
        locked_worker = Worker.objects.select_for_update().get(pk=worker.pk)
        if locked_worker.is_blocked:
            return None
        # One live HIT per worker across campaigns: finish (or let expire) the current one first.
        existing = live_assignment(locked_worker)
        if existing is not None:
            return existing
        hit = _lock_hit_with_free_seat(locked_worker, campaign, prefer_hit_id)
        if hit is None:
            return None
        minutes = hit.campaign.time_limit_minutes
        return Assignment.objects.create(
            hit=hit,
            worker=locked_worker,
            expires_at=timezone.now() + timedelta(minutes=minutes),
            seat=seats.slot_for_new_seat(hit.pk),  # under the HIT's row lock, taken above
        )


def open_hits_for(worker: Worker, campaign: Campaign | None, *, now: datetime | None = None):
    """The HITs the worker may claim, in claim order: open campaign, a free seat by the count,
    never held by this worker, no dialogue they hold elsewhere, no quiz item they have seen.
    Each exclusion is a NOT EXISTS probe of the candidate HIT's own rows (indexed by hit), so
    taking the first one reads the index `hit_free_seats` up to it and no further."""
    # never two seats of one item: a dialogue the worker already holds in another HIT (a tie-break
    # HIT, or the same dialogue bundled twice) keeps every HIT with it closed to them
    held_turns = HITItem.objects.filter(
        hit__in=Assignment.objects.holding_a_seat(now).filter(worker=worker).values("hit"),
        quiz_question__isnull=True,
        target_turn__isnull=False,
    ).values("target_turn_id")
    hits = HIT.objects.filter(campaign__status=Campaign.OPEN, seats_free__gt=0)
    if campaign is not None:
        hits = hits.filter(campaign=campaign)
    return hits.filter(
        ~Exists(Assignment.objects.filter(hit=OuterRef("pk"), worker=worker)),
        ~Exists(HITItem.objects.filter(hit=OuterRef("pk"), target_turn_id__in=held_turns)),
        # no quiz item twice
        ~Exists(HITItem.objects.filter(hit=OuterRef("pk"), quiz_question__in=quiz_pool.seen_by(worker))),
    ).order_by("campaign_id", "position", "pk")


class _HitFull(Exception):
    def __init__(self, hit_id: int) -> None:
        super().__init__(hit_id)
        self.hit_id = hit_id


def _lock_hit_with_free_seat(worker: Worker, campaign: Campaign | None, prefer_hit_id: int | None = None) -> HIT | None:
    """Lock the first claimable HIT row, count its seats again and take one (the count in the
    row may be too high after a hand edit, see labeling.seats). Locked rows are skipped so
    concurrent claimers spread over HITs; only when every candidate is locked does a claimer
    wait for one.

    Each try runs in a savepoint that is rolled back when the HIT turns out full, which lets go
    of its lock: a claimer that waits then holds no HIT lock, so two claimers cannot deadlock.
    A HIT found full gets its true count written after that rollback.
    """
    if prefer_hit_id is None and fast_path.enabled():
        # the common claim: the search compiled once per process (fast_path.ClaimSearch)
        try:
            with transaction.atomic():
                hit = _CLAIM_SEARCH.first(worker, campaign, skip_locked=True) or _CLAIM_SEARCH.first(
                    worker, campaign, skip_locked=False
                )
                if hit is None:
                    return None
                if _take_seat(hit):
                    return hit
                raise _HitFull(hit.pk)
        except _HitFull as full:
            seats.recount(HIT.objects.filter(pk=full.hit_id))
            return _lock_hit_with_free_seat_by_orm(worker, campaign, None, [full.hit_id])
    return _lock_hit_with_free_seat_by_orm(worker, campaign, prefer_hit_id, [])


def _take_seat(hit: HIT) -> bool:
    """Count the locked HIT's seats again; if one is free, write the count less the seat taken
    now (the true figure: repairs a count a hand edit left high) and say so."""
    taken = _seats_taken(hit)
    if taken >= hit.required_workers:
        return False
    hit.seats_free = hit.required_workers - taken - 1
    seats.set_free(hit.pk, hit.seats_free)
    return True


def _lock_hit_with_free_seat_by_orm(
    worker: Worker, campaign: Campaign | None, prefer_hit_id: int | None, checked: list[int]
) -> HIT | None:
    """The search through the ORM: every claim with the fast path off; with it on, a platform's
    preferred HIT and the search after a HIT turned out full."""
    candidates = open_hits_for(worker, campaign)
    if prefer_hit_id is not None:
        first = Case(When(pk=prefer_hit_id, then=Value(0)), default=Value(1), output_field=IntegerField())
        candidates = candidates.order_by(first, "campaign_id", "position", "pk")
    for _attempt in range(10):
        try:
            with transaction.atomic():
                # the campaign comes along (unlocked: of=self) for the time limit; no second read
                remaining = candidates.exclude(pk__in=checked).select_related("campaign")
                hit = remaining.select_for_update(skip_locked=True, of=("self",)).first()
                if hit is None:
                    hit = remaining.select_for_update(of=("self",)).first()
                if hit is None:
                    return None
                if not _take_seat(hit):
                    raise _HitFull(hit.pk)
                return hit
        except _HitFull as full:
            checked.append(full.hit_id)
            seats.recount(HIT.objects.filter(pk=full.hit_id))
    return None


def _seats_taken(hit: HIT) -> int:
    return seats.taken(hit.pk)


_CLAIM_SEARCH = fast_path.ClaimSearch(open_hits_for)


def open_hit_count(worker: Worker, campaign: Campaign | None) -> int:
    """How many HITs the worker may claim (of `campaign`, when given): open_hits_for's count
    (the home page asks it for every open campaign; with the fast path on, by SQL compiled once)."""
    if fast_path.enabled():
        return _CLAIM_SEARCH.count(worker, campaign)
    return open_hits_for(worker, campaign).count()


def confirm_platform_submission(assignment: Assignment, *, confirmed_at: datetime | None = None) -> bool:
    """The crowd platform confirmed this submitted assignment: from now on its answers count toward
    aggregation, agreement and payments. The one writer of `platform_confirmed_at`.

    Returns True when this call confirmed it, False when it was confirmed already (a repeat is a
    no-op: one conditional UPDATE). Refuses, with SubmissionRefused, a site worker's assignment
    (it counts at once) and one that is not submitted or approved.
    """
    if assignment.worker.platform == Worker.SITE:
        raise SubmissionRefused(f"Assignment {assignment.pk} is a site worker's; it needs no platform confirmation.")
    stamp = confirmed_at or timezone.now()
    updated = (
        Assignment.objects.done()
        .filter(pk=assignment.pk, platform_confirmed_at__isnull=True)
        .update(platform_confirmed_at=stamp)
    )
    assignment.refresh_from_db(fields=["status", "platform_confirmed_at"])
    if updated:
        _merge_proven_identity(assignment.worker)
        # the quiz feedback shows from now on (see feedback_shown): its answers count as revealed
        quiz_pool.record_reveals(wrong.question_id for wrong in quiz_result(assignment).wrong)
        return True
    if assignment.platform_confirmed_at is None:
        raise SubmissionRefused(f"Assignment {assignment.pk} is {assignment.status}; only submitted work is confirmed.")
    return False


def _merge_proven_identity(identity: Worker) -> None:
    """The platform confirmed work of this landing's identity: it is the platform id's worker.
    Point it at the id's proven Worker (made now if it is the first), through which aggregation,
    agreement and reports count it; its own account keeps its own pages (history, feedback)."""
    if not identity.is_pending_identity:
        return
    proven, _ = Worker.objects.get_or_create(
        platform=identity.platform,
        external_id=identity.external_id,
        landing_key="",
        defaults={"signup_ip": identity.signup_ip, "signup_network": identity.signup_network},
    )
    Worker.objects.filter(pk=identity.pk, merged_into__isnull=True).update(merged_into=proven)
    identity.merged_into = proven


def feedback_shown(assignment: Assignment) -> bool:
    """Whether the worker may see this submitted assignment's quiz score and answers: a site
    worker's at once, a platform worker's only once the platform confirmed the submission (a
    made-up worker id is never confirmed, so what it learns cannot pass to another seat)."""
    if assignment.status not in Assignment.FINAL:
        return False
    return assignment.worker.platform == Worker.SITE or assignment.platform_confirmed_at is not None


def free_unconfirmed_seats(campaign: Campaign, *, now: datetime | None = None) -> int:
    """Expire submitted platform work of `campaign` that the platform does not know: submitted
    more than PLATFORM_UNCONFIRMED_SEAT_HOURS ago, and a sync run at least that long after its
    submission found no submission of the platform for it (real work is listed by the platform
    from the moment it is accepted, so it is matched long before). Frees its seats well before
    PLATFORM_UNMATCHED_EXPIRE_HOURS; a campaign never synced (a study made by hand) is left to
    the researcher. Returns how many were expired."""
    window = timedelta(hours=settings.PLATFORM_UNCONFIRMED_SEAT_HOURS)
    now = now or timezone.now()
    synced_later = Publication.objects.filter(
        campaign_id=OuterRef("hit__campaign_id"),
        platform=OuterRef("worker__platform"),
        last_synced_at__gt=ExpressionWrapper(OuterRef("submitted_at") + window, output_field=DateTimeField()),
    )
    stale = Assignment.objects.pending_confirmation().filter(
        Exists(synced_later), hit__campaign=campaign, platform_submission__isnull=True, submitted_at__lt=now - window
    )
    ids = list(stale.values_list("pk", flat=True))
    return expire_unconfirmed(ids) if ids else 0


def expire_unconfirmed(assignment_ids: list[int]) -> int:
    """Done platform work that its platform never reported (sync found no submission for it in
    the review window): it expires, freeing its seat, and never counts. Confirmed work is kept."""
    with transaction.atomic():
        locked = list(
            Assignment.objects.pending_confirmation()
            .filter(pk__in=assignment_ids)
            .select_for_update(of=("self",))
            .order_by("pk")
            .values_list("pk", "hit_id")
        )
        Assignment.objects.filter(pk__in=[pk for pk, _ in locked]).update(status=Assignment.EXPIRED)
        seats.free(hit_id for _, hit_id in locked)  # done work held a seat; expired work does not
    return len(locked)


# --- Answering and submitting -------------------------------------------------------------------


def refusal_reason(assignment: Assignment) -> str | None:
    """Why this assignment's answers can no longer change, for the annotator; None while live."""
    if assignment.is_done:
        return "This HIT was already submitted; its answers can no longer change."
    if assignment.status == Assignment.REJECTED:
        return "This HIT was rejected; its answers can no longer change."
    if assignment.status == Assignment.EXPIRED or assignment.expires_at <= timezone.now():
        return "The time limit for this HIT has passed; it was released to other workers."
    return None


def _lock_live(assignment: Assignment) -> Assignment:
    """Lock the assignment row (answers and the submission queue behind one another) and check it
    can still change; raise SubmissionRefused saying why not."""
    # of=("self",): should a join ever be added here, lock only this row, not a HIT or campaign
    # (that would queue every answer of a campaign behind one another).
    current = Assignment.objects.select_for_update(of=("self",)).get(pk=assignment.pk)
    reason = refusal_reason(current)
    if reason is not None:
        raise SubmissionRefused(reason)
    return current


def save_response(
    assignment: Assignment,
    item: HITItem,
    *,
    label_name: str | None = None,
    new_label_text: str = "",
    method: str,
    seconds_spent: float = 0,
    assignment_locked: bool = False,
) -> Response:
    """Record (or replace) the answer to one screen of a live assignment.

    assignment_locked: the caller read `assignment` with select_for_update inside the atomic
    block this call runs in (the autosave view does, saving a second read of the row); the lock
    is then taken as held and only the assignment's state is checked again.

    Normalisation, so aggregation counts like with like:
    - a label picked from the "Other" list that is one of the screen's three choices is stored
      with method top3;
    - an "Other: new" text equal to a label the screen accepts (one of its choices or of the
      campaign's label set; Label.objects.by_name's rule) is stored as that label, with method
      other-list (or top3 when it is one of the choices), and no text;
    - a pick outside the choices and the campaign's label set is refused;
    - any other new label is kept as text (new_label_text), label left empty.
    seconds_spent adds up over visits to the same screen.
    """
    with _answering(assignment, item, assignment_locked) as assignment:
        label, text, method = _resolve_answer(item, label_name, new_label_text, method)
        spent = _bounded_seconds(assignment, seconds_spent)
        # An update-or-create by hand (no savepoint): the assignment lock held here keeps every
        # other writer of this assignment's answers out until commit.
        response = hot_reads.response_to(assignment.pk, item.pk)
        if response is None:
            return Response.objects.create(
                assignment=assignment, item=item, label=label, new_label_text=text, method=method, seconds_spent=spent
            )
        response.label, response.new_label_text, response.method = label, text, method
        response.seconds_spent += spent
        response.save(update_fields=["label", "new_label_text", "method", "seconds_spent", "answered_at"])
        return response


def save_pick(assignment_id: int, user_id: int, position: int, answer: str, *, seconds_spent: float = 0) -> bool:
    """The autosave's common case (one of the screen's three choices) written by the fast path's
    one statement (labeling.fast_path.save_pick); False when it was not written, always with
    ANNOTATOR_FAST_PATH off: the caller then takes the full path (save_answer)."""
    if not fast_path.enabled():
        return False
    return fast_path.save_pick(assignment_id, user_id, position, answer, _seconds(seconds_spent))


def save_answer(
    assignment: Assignment,
    item: HITItem,
    posted,
    *,
    seconds_spent: float = 0,
    assignment_locked: bool = False,
) -> Response:
    """Record the answer posted on one screen, whatever the campaign's task type: the type reads
    `posted` (the form's fields) and stores it through save_response or save_structured_response.
    Raises SubmissionRefused saying what is wrong."""
    from labeling import task_types

    task_type = task_types.of(assignment.hit.campaign)
    try:
        return task_type.save_answer(
            assignment, item, posted, seconds_spent=seconds_spent, assignment_locked=assignment_locked
        )
    except task_types.AnswerRefused as refused:
        raise SubmissionRefused(refused.message) from refused


def save_structured_response(
    assignment: Assignment,
    item: HITItem,
    answer: dict,
    *,
    seconds_spent: float = 0,
    assignment_locked: bool = False,
) -> Response:
    """Record (or replace) a task type's own answer (`Response.data`, already checked by the
    type's clean_answer) to one screen of a live assignment; the same locking as save_response."""
    with _answering(assignment, item, assignment_locked) as assignment:
        spent = _bounded_seconds(assignment, seconds_spent)
        response = Response.objects.filter(assignment=assignment, item=item).first()
        if response is None:
            return Response.objects.create(
                assignment=assignment, item=item, data=answer, method=Response.STRUCTURED, seconds_spent=spent
            )
        response.data, response.method = answer, Response.STRUCTURED
        response.seconds_spent += spent
        response.save(update_fields=["data", "method", "seconds_spent", "answered_at"])
        return response


@contextmanager
def _answering(assignment: Assignment, item: HITItem, assignment_locked: bool):
    """The transaction one answer is written in: yields the assignment, live and row-locked (by the
    caller when `assignment_locked`, else here), after checking the item is one of its HIT's."""
    if assignment_locked and not transaction.get_connection().in_atomic_block:
        raise ValueError("assignment_locked=True needs the caller's transaction that holds the row lock")
    # No savepoint inside the caller's locking transaction: a refusal rolls all of it back anyway.
    with transaction.atomic(savepoint=not assignment_locked):
        if assignment_locked:
            reason = refusal_reason(assignment)
            if reason is not None:
                raise SubmissionRefused(reason)
        else:
            assignment = _lock_live(assignment)
        if item.hit_id != assignment.hit_id or item.seat not in (0, assignment.seat):
            raise SubmissionRefused("That item is not part of this HIT.")
        yield assignment


def _seconds(seconds_spent: float) -> float:
    """Seconds on a screen as stored: never negative, at most an hour a visit."""
    return min(max(float(seconds_spent), 0.0), 3600.0)


def _bounded_seconds(assignment: Assignment, seconds_spent: float) -> float:
    """The browser's seconds on a screen, never more than the server's own clock allows: the time
    since this assignment's last answer was received (or since it was accepted). So the seconds
    of all of an assignment's answers add up to at most the time it has been open, whatever the
    page posts. Called under the assignment's row lock, so two answers cannot both count the
    same interval."""
    last = Response.objects.filter(assignment_id=assignment.pk).aggregate(last=Max("answered_at"))["last"]
    since = max(assignment.accepted_at, last) if last else assignment.accepted_at
    return min(_seconds(seconds_spent), max((timezone.now() - since).total_seconds(), 0.0))


def _resolve_answer(item: HITItem, label_name: str | None, new_text: str, method: str) -> tuple[Label | None, str, str]:
    if method == Response.OTHER_NEW:
        if any((ord(char) < 32 and char not in "\t\n\r") or ord(char) == 127 for char in new_text or ""):
            raise SubmissionRefused("new_label_text: a new label cannot contain a NUL byte or other control character.")
        typed = " ".join((new_text or "").split())
        if not typed:
            raise SubmissionRefused("Type the new label, or pick one from the list.")
        if len(typed) > 64:
            raise SubmissionRefused("A new label can be at most 64 characters long.")
        existing = _label_named(typed, item)
        if existing is None:
            return None, typed, Response.OTHER_NEW
        label_name, method = existing.name, Response.OTHER_LIST
    elif method not in (Response.TOP3, Response.OTHER_LIST):
        raise SubmissionRefused(f"Unknown answer method {method!r}.")
    label = _label_named(label_name or "", item)
    if label is None:
        raise SubmissionRefused(f"There is no label called {label_name!r} in this campaign.")
    in_choices = _is_a_choice(label, item)
    if method == Response.TOP3 and not in_choices:
        raise SubmissionRefused(f"{label.name!r} is not one of this item's three choices.")
    return label, "", Response.TOP3 if in_choices else Response.OTHER_LIST


def _label_named(name: str, item: HITItem) -> Label | None:
    """The active label called `name` (Label.objects.by_name's rule) that this screen accepts:
    one of its three choices, or a label of its campaign's label set."""
    label = hot_reads.active_label_named(name)
    if label is None or _is_a_choice(label, item):
        return label
    campaign_id = Subquery(HIT.objects.filter(pk=item.hit_id).values("campaign_id"))
    return label if campaign_labels(campaign_id).filter(pk=label.pk).exists() else None


def _is_a_choice(label: Label, item: HITItem) -> bool:
    return _is_a_choice_name(label.name, item)


def _is_a_choice_name(name: str, item: HITItem) -> bool:
    """Whether `name` is one of the item's three choices (case and white space aside)."""
    return normalise_label_name(name) in {normalise_label_name(c) for c in item.choices}


@dataclass(frozen=True)
class WrongQuizAnswer:
    position: int
    text: str
    given: str
    gold_label: str
    explanation: str
    question_id: int = 0


@dataclass(frozen=True)
class SubmissionResult:
    quiz_correct: int
    quiz_total: int
    wrong: list[WrongQuizAnswer] = field(default_factory=list)
    completion_code: str = ""


def submit_assignment(assignment: Assignment) -> SubmissionResult:
    """Submit a live assignment whose every screen is answered; score its quiz questions.

    The status moves accepted -> submitted in one conditional UPDATE, so two concurrent submissions
    of one assignment succeed once; the other gets SubmissionRefused and nothing changes.
    """
    with transaction.atomic():
        current = _lock_live(assignment)
        if Assignment.hit.is_cached(assignment):
            current.hit = assignment.hit  # what the quiz needs of it (items, task type) never changes
        unanswered = (
            HITItem.objects.filter(seat_items_q(current.seat), hit_id=current.hit_id)
            .exclude(responses__assignment=current)
            .values_list("position", flat=True)
        )
        if unanswered:
            positions = ", ".join(str(p) for p in unanswered)
            raise SubmissionRefused(f"Answer every item before submitting (still open: {positions}).")
        result = quiz_result(current)
        code = secrets.token_hex(6).upper()
        now = timezone.now()
        changes = {
            "status": Assignment.SUBMITTED,
            "submitted_at": now,
            "quiz_correct": result.quiz_correct,
            "completion_code": code,
        }
        updated = Assignment.objects.filter(pk=current.pk, status=Assignment.ACCEPTED, expires_at__gt=now).update(
            **changes
        )
        if updated != 1:
            raise SubmissionRefused("This HIT was already submitted or has expired.")
        # the feedback page shows these answers: each showing counts toward the item's retirement
        # (a platform worker's only once the platform confirms it: confirm_platform_submission)
        if current.worker.platform == Worker.SITE:
            quiz_pool.record_reveals(wrong.question_id for wrong in result.wrong)
    # The caller's object now holds what the row holds (read under the lock, plus this update),
    # without reading it a third time.
    for model_field in Assignment._meta.concrete_fields:
        setattr(assignment, model_field.attname, getattr(current, model_field.attname))
    for name, value in changes.items():
        setattr(assignment, name, value)
    return SubmissionResult(result.quiz_correct, result.quiz_total, result.wrong, code)


def quiz_result(assignment: Assignment) -> SubmissionResult:
    """Score the quiz screens of an assignment from its saved answers (no side effects)."""
    from labeling import task_types

    task_type = task_types.of(assignment.hit.campaign)
    if not task_type.uses_labels:
        return _typed_quiz_result(assignment, task_type)
    responses = {
        r.item_id: r
        for r in Response.objects.filter(assignment=assignment, item__quiz_question__isnull=False).select_related(
            "label"
        )
    }
    quiz_items = (
        HITItem.objects.filter(seat_items_q(assignment.seat), hit_id=assignment.hit_id, quiz_question__isnull=False)
        .select_related("quiz_question__gold_label")
        .order_by("position")
    )
    correct, wrong = 0, []
    for item in quiz_items:
        gold = item.quiz_question.gold_label
        response = responses.get(item.pk)
        if response is not None and response.label_id == gold.pk:
            correct += 1
            continue
        given = response.answer if response is not None else "(no answer)"
        wrong.append(
            WrongQuizAnswer(
                item.position,
                item.quiz_question.text,
                given,
                gold.name,
                item.quiz_question.explanation,
                item.quiz_question_id,
            )
        )
    return SubmissionResult(correct, len(quiz_items), wrong, assignment.completion_code)


def _typed_quiz_result(assignment: Assignment, task_type) -> SubmissionResult:
    """quiz_result for a type whose answers are data: its quiz_correct decides."""
    campaign = assignment.hit.campaign
    responses = {
        r.item_id: r for r in Response.objects.filter(assignment=assignment, item__quiz_question__isnull=False)
    }
    quiz_items = (
        HITItem.objects.filter(seat_items_q(assignment.seat), hit_id=assignment.hit_id, quiz_question__isnull=False)
        .select_related("quiz_question")
        .order_by("position")
    )
    correct, wrong = 0, []
    for item in quiz_items:
        response = responses.get(item.pk)
        answer = response.data if response is not None else {}
        if response is not None and task_type.quiz_correct(campaign, item, answer):
            correct += 1
            continue
        given = task_type.describe_answer(campaign, item, answer)
        gold = task_type.describe_gold(campaign, item)
        question = item.quiz_question
        wrong.append(WrongQuizAnswer(item.position, question.text, given, gold, question.explanation, question.pk))
    return SubmissionResult(correct, len(quiz_items), wrong, assignment.completion_code)
