"""The reads every annotator request makes: the annotator's own assignment (with its HIT and
campaign), the stored answers, the label an answer names and the answer it replaces; and the home
page's, which every arrival of a study's first minute opens (the open campaigns, one's history).

Plain ORM queries; with ANNOTATOR_FAST_PATH on, each is answered by its twin in
labeling.fast_path.compiled (the same rows, read by SQL built once per process), the one place that
decides. An assignment is found only together with its owner (anyone else's id reads as missing,
which the views turn into a 404), and `lock` takes the assignment's row lock only (FOR UPDATE OF
the assignment), never its HIT's or campaign's.
"""

from annotation.models import Label
from config import rows
from labeling.fast_path import compiled as fast_path
from labeling.models import Assignment, Campaign, Response

HISTORY_SHOWN = 50  # the home page's last HITs
# the home page's reads, compiled once per process with the fast path on (their ORM twins are
# these querysets, run as they are with it off)
OPEN_CAMPAIGNS = fast_path.Compiled(lambda: Campaign.objects.filter(status=Campaign.OPEN).order_by("name"))
HISTORY = fast_path.Compiled(
    lambda worker_id: (
        Assignment.objects.filter(worker_id=worker_id)
        .select_related("hit__campaign")
        .order_by("-accepted_at")[:HISTORY_SHOWN]
    ),
    fast_path.STAND_IN_WORKER,
)


def open_campaigns() -> list[Campaign]:
    """The open campaigns, by name."""
    if not fast_path.enabled():
        return list(OPEN_CAMPAIGNS.queryset())
    return [rows.build(Campaign, row) for row in OPEN_CAMPAIGNS.rows()]


def history(worker) -> list[Assignment]:
    """The worker's last HISTORY_SHOWN assignments, newest first, with their HIT and campaign."""
    if not fast_path.enabled():
        return list(HISTORY.queryset(worker.pk))
    return [fast_path.assignment_with_hit(row) for row in HISTORY.rows(worker.pk)]


def own_assignment(pk: int, user_id: int, *, lock: bool = False) -> Assignment | None:
    """The assignment `pk` if `user_id`'s worker holds it, with `.hit` and `.hit.campaign`
    loaded; None otherwise. lock: inside the caller's transaction, lock its row (only its)."""
    if fast_path.enabled():
        return fast_path.own_assignment(pk, user_id, lock=lock)
    found = Assignment.objects.select_related("hit__campaign").filter(pk=pk, worker__user_id=user_id)
    if lock:
        found = found.select_for_update(of=("self",))
    return found.first()


def own_assignment_with_answers(
    pk: int, user_id: int, item_ids: list[int]
) -> tuple[Assignment | None, dict[int, tuple[str | None, str, str] | None]]:
    """own_assignment and stored_answers(pk, item_ids): (the assignment or None, item id ->
    stored answer or None for every id asked for)."""
    if fast_path.enabled():
        return fast_path.own_assignment_with_answers(pk, user_id, item_ids)
    assignment = own_assignment(pk, user_id)
    if assignment is None:
        return None, dict.fromkeys(item_ids)
    return assignment, stored_answers(assignment.pk, item_ids)


def route_of(assignment_id: int, user_id: int) -> "fast_path.Route | None":
    """What this process already knows of the assignment (its owner, HIT, seat): only the fast
    path remembers it; None otherwise."""
    return fast_path.route_of(assignment_id, user_id) if fast_path.enabled() else None


def stored_answers(assignment_id: int, item_ids: list[int]) -> dict[int, tuple[str | None, str, str] | None]:
    """item id -> (label name, new label text, method) of the assignment's stored answer, or
    None for an item not answered yet; every id asked for is a key."""
    if fast_path.enabled():
        return fast_path.stored_answers(assignment_id, item_ids)
    stored: dict[int, tuple[str | None, str, str] | None] = dict.fromkeys(item_ids)
    if item_ids:
        answers = Response.objects.filter(assignment_id=assignment_id, item_id__in=item_ids)
        for item_id, name, text, method in answers.values_list("item_id", "label__name", "new_label_text", "method"):
            stored[item_id] = (name, text, method)
    return stored


def active_label_named(name: str) -> Label | None:
    """The active label called `name` (Label.objects.by_name's case rule), or None."""
    if fast_path.enabled():
        return fast_path.active_label_named(name)
    return Label.objects.filter(is_active=True).by_name(name)


def response_to(assignment_id: int, item_id: int) -> Response | None:
    """The assignment's stored answer to one item, or None."""
    if fast_path.enabled():
        return fast_path.response_to(assignment_id, item_id)
    return Response.objects.filter(assignment_id=assignment_id, item_id=item_id).first()
