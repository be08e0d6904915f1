"""Answering: record (or replace) the answer to one screen of a live assignment.

`save_answer` hands the posted form to the campaign's task type and stores what it returns: a
label pick through `save_response`, a dict through `save_structured_response`; `save_pick` is the
autosave's one-statement write of one of a screen's three choices. Each holds the assignment's
row lock while it writes, so answers and the submission queue behind one another.
"""

from contextlib import contextmanager
from datetime import datetime

from django.db import transaction
from django.db.models import Max, Subquery
from django.utils import timezone, translation
from django.utils.translation import gettext

from annotation.models import Label
from annotation.taxonomy import normalise_label_name
from labeling import task_types
from labeling.actions import SubmissionRefused, lock_live, refusal_reason
from labeling.crowd.label_text import LabelTextRefused, clean_label_text
from labeling.fast_path import compiled as fast_path
from labeling.fast_path import pick as fast_pick
from labeling.fast_path import reads as hot_reads
from labeling.fast_path import screen as screens
from labeling.models import HIT, Assignment, Campaign, HITItem, Response
from labeling.services import qualification
from labeling.work import label_texts as study_texts
from labeling.work.label_sets import campaign_labels


def save_response(
    assignment: Assignment,
    item: HITItem,
    *,
    label_name: str | None = None,
    new_label_text: str = "",
    method: str,
    seconds_spent: float = 0,
    assignment_locked: bool = False,
    answered_at: datetime | None = None,
) -> Response:
    """Record (or replace) the answer to one screen of a live assignment.

    answered_at: when the answer was given, for a caller in Python that keeps its own clock (the
    demo's simulated crowd answers a HIT in milliseconds of real time, but in the seconds its
    workers take); never later than now. None (every page): now. The seconds are bounded by it.

    assignment_locked: the caller read `assignment` with select_for_update inside the atomic
    block this call runs in (the autosave view does, saving a second read of the row); the lock
    is then taken as held and only the assignment's state is checked again.

    Normalisation, so aggregation counts like with like:
    - a label picked from the "Other" list that is one of the screen's three choices is stored
      with method top3;
    - an "Other: new" text equal to a label the screen accepts (one of its choices or of the
      campaign's label set; Label.objects.by_name's rule) is stored as that label, with method
      other-list (or top3 when it is one of the choices), and no text;
    - so is a text equal to such a label's name in the participant's language (the researcher's
      version of it): the label is stored, never the translated name;
    - a pick outside the choices and the campaign's label set is refused;
    - any other new label is kept as text (new_label_text), label left empty, in NFKC form;
      text with control, direction or invisible characters is refused (labeling.crowd.label_text).
    seconds_spent adds up over visits to the same screen. The answer records the interface
    language it was given in (interface_language), the latest one when it is replaced.
    """
    with _answering(assignment, item, assignment_locked) as assignment:
        label, text, method = _resolve_answer(item, label_name, new_label_text, method)
        moment = timezone.now() if answered_at is None else min(answered_at, timezone.now())
        spent = _bounded_seconds(assignment, seconds_spent, moment)
        language = interface_language()
        # An update-or-create by hand (no savepoint): the assignment lock held here keeps every
        # other writer of this assignment's answers out until commit.
        response = hot_reads.response_to(assignment.pk, item.pk)
        if response is None:
            response = Response.objects.create(
                assignment=assignment,
                item=item,
                label=label,
                new_label_text=text,
                method=method,
                seconds_spent=spent,
                language=language,
            )
        else:
            response.label, response.new_label_text, response.method = label, text, method
            response.seconds_spent += spent
            response.language = language
            response.save(
                update_fields=["label", "new_label_text", "method", "seconds_spent", "answered_at", "language"]
            )
        if answered_at is not None:  # answered_at is auto_now: the caller's moment replaces it
            Response.objects.filter(pk=response.pk).update(answered_at=moment)
            response.answered_at = moment
        return response


def interface_language() -> str:
    """The interface language an answer is given in: the active language (LocaleMiddleware's pick
    for the request: the language cookie, else Accept-Language, else LANGUAGE_CODE) as one of
    settings.LANGUAGES' codes; "" with translation deactivated. A lookup per answer (Django caches
    the variant), no catalog work."""
    language = translation.get_language()
    if not language:
        return ""
    try:
        return translation.get_supported_language_variant(language)
    except LookupError:
        return ""


def save_pick(assignment_id: int, user_id: int, position: int, answer: str, *, seconds_spent: float = 0) -> bool:
    """The autosave's common case (one of the screen's three choices) written by the fast path's
    one statement (labeling.fast_path.pick.save_pick); False when it was not written, always with
    ANNOTATOR_FAST_PATH off: the caller then takes the full path (save_answer)."""
    if not fast_path.enabled():
        return False
    seconds, language = _seconds(seconds_spent), interface_language()
    return fast_pick.save_pick(assignment_id, user_id, position, answer, seconds, language, screens.screens_of)


def next_with_pick(
    assignment_id: int, user_id: int, position: int, answer: str, *, seconds_spent: float = 0
) -> "fast_pick.Moved | None":
    """A Next that carries one of its screen's three choices, by the fast path's one statement
    (labeling.fast_path.pick.next_with_pick): the pick saved unless already stored, and what the next
    screen needs read. None when it did nothing, always with ANNOTATOR_FAST_PATH off: the caller
    then takes the full path."""
    if not fast_path.enabled():
        return None
    seconds, language = _seconds(seconds_spent), interface_language()
    return fast_pick.next_with_pick(assignment_id, user_id, position, answer, seconds, language, screens.screens_of)


def save_answer(
    assignment: Assignment,
    item: HITItem,
    posted,
    *,
    seconds_spent: float = 0,
    assignment_locked: bool = False,
) -> Response:
    """Record the answer posted on one screen, whatever the campaign's task type: the type reads
    `posted` (the form's fields) and returns the answer, stored here: a label pick through
    save_response (which checks it against the screen's choices and the campaign's label set), a
    dict through save_structured_response. Raises SubmissionRefused saying what is wrong."""
    campaign = assignment.hit.campaign
    try:
        answer = task_types.of(campaign).clean_answer(campaign, item, posted)
    except task_types.AnswerRefused as refused:
        raise SubmissionRefused(refused.message) from refused
    if isinstance(answer, task_types.LabelPick):
        return save_response(
            assignment,
            item,
            label_name=answer.label_name,
            new_label_text=answer.new_label_text,
            method=answer.method,
            seconds_spent=seconds_spent,
            assignment_locked=assignment_locked,
        )
    return save_structured_response(
        assignment, item, answer, seconds_spent=seconds_spent, assignment_locked=assignment_locked
    )


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
        spent, language = _bounded_seconds(assignment, seconds_spent), interface_language()
        response = Response.objects.filter(assignment=assignment, item=item).first()
        if response is None:
            return Response.objects.create(
                assignment=assignment,
                item=item,
                data=answer,
                method=Response.STRUCTURED,
                seconds_spent=spent,
                language=language,
            )
        response.data, response.method, response.language = answer, Response.STRUCTURED, language
        response.seconds_spent += spent
        response.save(update_fields=["data", "method", "seconds_spent", "answered_at", "language"])
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
            assignment = lock_live(assignment)
        if item.hit_id != assignment.hit_id or item.seat not in (0, assignment.seat):
            raise SubmissionRefused(gettext("That item is not part of this HIT."))
        if qualification.is_checked(assignment, item):
            raise SubmissionRefused(str(qualification.CHECKED))
        yield assignment


def _seconds(seconds_spent: float) -> float:
    """Seconds on a screen as stored: never negative, at most an hour a visit."""
    return min(max(float(seconds_spent), 0.0), 3600.0)


def _bounded_seconds(assignment: Assignment, seconds_spent: float, now: datetime | None = None) -> float:
    """The browser's seconds on a screen, never more than the server's own clock allows: the time
    since this assignment's last answer was received (or since it was accepted). So the seconds
    of all of an assignment's answers add up to at most the time it has been open, whatever the
    page posts. Called under the assignment's row lock, so two answers cannot both count the
    same interval."""
    last = Response.objects.filter(assignment_id=assignment.pk).aggregate(last=Max("answered_at"))["last"]
    since = max(assignment.accepted_at, last) if last else assignment.accepted_at
    return min(_seconds(seconds_spent), max(((now or timezone.now()) - since).total_seconds(), 0.0))


def _resolve_answer(item: HITItem, label_name: str | None, new_text: str, method: str) -> tuple[Label | None, str, str]:
    if method == Response.OTHER_NEW:
        typed = _typed_label(new_text)
        existing = _label_named(typed, item) or _label_shown_as(typed, item)
        if existing is None:
            return None, typed, Response.OTHER_NEW
        label_name, method = existing.name, Response.OTHER_LIST
    elif method not in (Response.TOP3, Response.OTHER_LIST):
        raise SubmissionRefused(gettext("Unknown answer method %(method)r.") % {"method": method})
    label = _label_named(label_name or "", item)
    if label is None:
        raise SubmissionRefused(gettext("There is no label called %(name)r in this campaign.") % {"name": label_name})
    in_choices = _is_a_choice(label, item)
    if method == Response.TOP3 and not in_choices:
        raise SubmissionRefused(gettext("%(name)r is not one of this item's three choices.") % {"name": label.name})
    return label, "", Response.TOP3 if in_choices else Response.OTHER_LIST


def _typed_label(text: str) -> str:
    """A label typed through "Other" as stored (labeling.crowd.label_text: NFKC, no control,
    direction or invisible character, at most 64 characters)."""
    try:
        return clean_label_text(text or "")
    except LabelTextRefused as refused:
        message = str(refused)
        raise SubmissionRefused(f"new_label_text: {message[0].upper()}{message[1:]}.") from refused


def _label_named(name: str, item: HITItem) -> Label | None:
    """The active label called `name` (Label.objects.by_name's rule) that this screen accepts:
    one of its three choices, or a label of its campaign's label set."""
    label = hot_reads.active_label_named(name)
    if label is None or _is_a_choice(label, item):
        return label
    campaign_id = Subquery(HIT.objects.filter(pk=item.hit_id).values("campaign_id"))
    return label if campaign_labels(campaign_id).filter(pk=label.pk).exists() else None


def _label_shown_as(typed: str, item: HITItem) -> Label | None:
    """The label this screen accepts whose name in the participant's language (the researcher's
    version, Campaign.study_flow) is `typed`: stored as that label, never as the translated text.
    Read only for a typed text that names no label (one query)."""
    flow = Campaign.objects.filter(hits=item.hit_id).values_list("study_flow", flat=True).first() or {}
    own = study_texts.label_named(study_texts.labels_in(flow, translation.get_language()), typed)
    return None if own is None else _label_named(own, item)


def _is_a_choice(label: Label, item: HITItem) -> bool:
    return _is_a_choice_name(label.name, item)


def _is_a_choice_name(name: str, item: HITItem) -> bool:
    """Whether `name` is one of the item's three choices (case and white space aside)."""
    return normalise_label_name(name) in {normalise_label_name(c) for c in item.choices}
