"""A Next carrying one of its screen's three choices, in one statement (labeling.fast_path.pick.next_with_pick,
through labeling.actions.answer.next_with_pick): it stores and shows what the full path (answer_item
reading the assignment, then save_pick or save_answer) stores and shows, and whenever it is not
that common case it writes nothing and the full path answers.

"The full path" here is the same request with next_with_pick doing nothing (returning None), and,
where it matters, with the autosave's one statement (save_pick) off too, so that the ORM writes.
The statement is PostgreSQL's: these tests are skipped on other databases, and with
ANNOTATOR_FAST_PATH=0 (where the statement never runs) except the last one, which says so itself."""

import re
import threading
import time
from datetime import timedelta
from html import unescape

import pytest
from django.db import connection, connections, transaction
from django.test import Client, override_settings
from django.urls import reverse
from django.utils import timezone

from annotation.models import Label
from labeling.actions import answer as answer_action
from labeling.actions import lock_live
from labeling.actions.answer import save_response
from labeling.actions.submit import submit_assignment
from labeling.fast_path import pick as fast_pick
from labeling.fast_path import screen as screens
from labeling.models import HIT, Assignment, Response
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import answer_everything, make_dialogues, open_campaign
from tests.labeling.test_save_pick import claim, item_at
from tests.threads import run_together

NEW_LABEL = "__new__"  # the "Other: a new label" radio's value
HTMX = {"HTTP_HX_REQUEST": "true"}
on_postgres = pytest.mark.skipif(connection.vendor != "postgresql", reason="the statement is PostgreSQL's")

pytestmark = pytest.mark.usefixtures("quiz_demo_bank")  # quiz screens from the built-in one-turn bank


def build_campaign():
    """One HIT of four screens (three dialogues and a quiz item), three seats."""
    campaign = open_campaign(dialogues_per_hit=3, quiz_per_hit=1)
    build_hits(campaign, make_dialogues(3), seed=5)
    return campaign


@pytest.fixture
def campaign(db):
    return build_campaign()


class Paths:
    """labeling.fast_path.pick's statements behind a switch. `fast`: the real ones, each call of
    next_with_pick counted (`calls`) and each Next it led (`moved`); off, next_with_pick does
    nothing, so the full path answers, and with `orm` save_pick does nothing too (the ORM writes)."""

    def __init__(self, monkeypatch, *, orm: bool = False) -> None:
        self.fast, self.orm, self.calls, self.moved = True, orm, 0, 0
        real_next, real_save = fast_pick.next_with_pick, fast_pick.save_pick

        def next_with_pick(*args, **kwargs):
            if not self.fast:
                return None
            self.calls += 1
            moved = real_next(*args, **kwargs)
            self.moved += moved is not None
            return moved

        def save_pick(*args, **kwargs):
            return False if self.orm and not self.fast else real_save(*args, **kwargs)

        monkeypatch.setattr(fast_pick, "next_with_pick", next_with_pick)
        monkeypatch.setattr(fast_pick, "save_pick", save_pick)


@pytest.fixture
def paths(monkeypatch, fast_path_only):
    return Paths(monkeypatch)


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def fast_and_full(monkeypatch, annotators, orm: bool):
    """(the Paths switch, an assignment walked by the statement, one walked by the full path, a
    signed-in client per assignment id): the two annotators' claims on the same HIT."""
    paths = Paths(monkeypatch, orm=orm)
    fast, full = claim(annotators[0]), claim(annotators[1])
    return paths, fast, full, {fast.pk: logged_in(annotators[0]), full.pk: logged_in(annotators[1])}


def post(client, assignment, position, go="next", answer="", new_label="", seconds=3):
    url = reverse("labeling:answer_item", args=[assignment.pk, position])
    data = {"go": go, "answer": answer, "new_label": new_label, "seconds": str(seconds)}
    return client.post(url, data, **HTMX)


def responses(assignment) -> list[tuple]:
    """The assignment's stored answers by screen: what a pick stores (seconds to the tenth)."""
    read = Response.objects.filter(assignment=assignment).order_by("item__position")
    fields = ("item__position", "label__name", "method", "new_label_text", "data", "seconds_spent")
    return [(*row[:-1], round(row[-1], 1)) for row in read.values_list(*fields)]


def untouched(assignment) -> list[tuple]:
    """Everything a write changes, to the microsecond."""
    read = Response.objects.filter(assignment=assignment).order_by("pk")
    return list(
        read.values_list("pk", "item_id", "label_id", "new_label_text", "method", "seconds_spent", "answered_at")
    )


CHOICE = re.compile(r'<label class="choice">.*?</label>', re.S)


def shown(response, assignment) -> str:
    """The screen's HTML and pushed URL, with what differs between two assignments of one HIT made
    the same: their id in URLs, the order (so the keys) of the three choices, a form token."""
    html = f"{response.get('HX-Push-Url')}\n{response.content.decode()}"
    html = html.replace(f"/assignments/{assignment.pk}/", "/assignments/N/")
    html = re.sub(r'(name="csrfmiddlewaretoken" value=")[^"]+', r"\1token", html)
    choices = sorted(re.sub(r' data-key="\d"|<kbd>\d</kbd> ', "", choice) for choice in CHOICE.findall(html))
    return "\n".join([CHOICE.sub("<choice>", html), *choices])


def screen_of(response) -> dict:
    """What an annotator sees of the screen a Next led to."""
    assert response.status_code == 200, response.content.decode()[:400]
    html = response.content.decode()
    return {
        "heading": re.search(r"<h1>(.*?)</h1>", html).group(1),
        "position": int(re.search(r'data-position="(\d+)"', html).group(1)),
        "checked": re.findall(r'<input type="radio" name="answer" value="([^"]*)"[^>]* checked>', html),
        "other_open": 'id="other-panel" open' in html,
        "new_label": re.search(r'id="new-label-text" maxlength="64" value="([^"]*)"', html).group(1),
        "error": unescape(re.search(r'<p class="error bad" role="alert">(.*?)</p>', html, re.S).group(1).strip()),
    }


def other_list_label(item) -> str:
    """An active label of the "Other" list that is not one of the screen's three choices."""
    return Label.objects.filter(is_active=True).exclude(name__in=item.choices).order_by("position").first().name


# --- 1. a HIT answered screen by screen: the same rows and screens as the full path --------------


def walk_steps(assignment) -> list[tuple]:
    """(position, go, answer, new label, autosave first): picks, an autosaved pick carried by Next,
    Back, "Other" answers (the full path's in both runs) and the last screen's Next to the review."""
    items = {p: item_at(assignment, p) for p in (1, 2, 3, 4)}
    listed = other_list_label(items[3])
    return [
        (1, "next", items[1].choices[1], "", False),  # written by the statement
        (2, "next", items[2].choices[0], "", True),  # autosaved first: the statement leaves it
        (3, "back", "", "", False),
        (2, "next", items[2].choices[2], "", False),  # a changed pick: rewritten
        (3, "next", listed, "", False),  # "Other" list: the full path's
        (4, "back", "", "", False),
        (3, "back", listed, "", False),
        (2, "next", items[2].choices[2], "", False),  # shows screen 3's "Other" list pick
        (3, "next", NEW_LABEL, "Wistful longing", False),
        (4, "back", "", "", False),
        (3, "back", NEW_LABEL, "Wistful longing", False),
        (2, "next", items[2].choices[1], "", False),  # shows screen 3's new label
        (3, "next", NEW_LABEL, "Wistful longing", False),
        (4, "next", items[4].choices[0], "", False),  # the last screen: the review comes next
    ]


@on_postgres
@pytest.mark.parametrize("orm", [False, True], ids=["full-path", "full-path-orm-writes"])
def test_a_hit_walked_through_by_next_stores_and_shows_what_the_full_path_does(
    campaign, annotators, clock, monkeypatch, fast_path_only, orm
):
    paths, fast, full, clients = fast_and_full(monkeypatch, annotators, orm)
    assert fast.hit_id == full.hit_id and fast.seat == full.seat  # the same screens
    Assignment.objects.filter(pk__in=[fast.pk, full.pk]).update(expires_at=fast.expires_at)  # the same time limit shown

    for position, go, answer, new_label, autosave_first in walk_steps(fast):
        clock.advance(5)
        pages = {}
        for assignment in (fast, full):
            paths.fast = assignment is fast
            if autosave_first:
                assert post(clients[assignment.pk], assignment, position, "stay", answer).status_code == 200
                clock.advance(1)
            pages[assignment.pk] = post(clients[assignment.pk], assignment, position, go, answer, new_label)
        step = (position, go, answer)
        assert pages[fast.pk].status_code == pages[full.pk].status_code == 200, step
        assert shown(pages[fast.pk], fast) == shown(pages[full.pk], full), step
        assert responses(fast) == responses(full), step
        if go == "next" and position < 4:
            assert screen_of(pages[fast.pk])["position"] == position + 1, step

    assert paths.moved == 5  # the statement led every Next carrying one of the choices before the last
    assert len(responses(fast)) == 4
    assert "Review and submit" in pages[fast.pk].content.decode()


# --- 2. a pick the autosave stored: the Next writes nothing more ----------------------------------


@on_postgres
@pytest.mark.parametrize("fast", [True, False], ids=["statement", "full-path"])
def test_a_next_carrying_the_pick_the_autosave_stored_writes_nothing(campaign, annotators, clock, paths, fast):
    assignment = claim(annotators[0])
    client = logged_in(annotators[0])
    pick = item_at(assignment, 2).choices[2]
    clock.advance(10)
    post(client, assignment, 1, answer=item_at(assignment, 1).choices[0])
    clock.advance(10)
    assert "Saved" in post(client, assignment, 2, "stay", pick, seconds=4).content.decode()
    before = untouched(assignment)

    clock.advance(10)
    paths.fast, paths.moved = fast, 0
    page = screen_of(post(client, assignment, 2, answer=pick, seconds=9))
    assert page["position"] == 3 and page["checked"] == [] and page["error"] == ""
    assert untouched(assignment) == before  # no seconds added, answered_at as the autosave left it
    assert paths.moved == int(fast)


# --- 3. Next after Back: the next screen's stored answer checked -----------------------------------


@on_postgres
@pytest.mark.parametrize("per_seat", [False, True], ids=["shared-quiz", "per-seat-quiz"])
def test_a_next_after_back_shows_the_next_screens_stored_answer(db, settings, annotators, clock, paths, per_seat):
    settings.QUIZ_ITEMS_PER_SEAT = per_seat  # with it, each seat its own quiz screen: the route's seat's shown
    build_campaign()
    assignment = claim(annotators[0])
    client = logged_in(annotators[0])
    first, second, third = (item_at(assignment, p) for p in (1, 2, 3))
    listed = other_list_label(third)
    for position, answer, new_label in (
        (1, first.choices[0], ""),
        (2, NEW_LABEL, "  Wistful   longing "),  # stored as typed labels are: white space folded
        (3, listed, ""),
        (4, item_at(assignment, 4).choices[1], ""),
    ):
        clock.advance(5)
        post(client, assignment, position, answer=answer, new_label=new_label)
    before = untouched(assignment)

    def next_from(position, answer):
        paths.fast = True
        moved_before = paths.moved
        fast = post(client, assignment, position, answer=answer)
        assert paths.moved == moved_before + 1  # the statement led it
        paths.fast = False
        assert shown(post(client, assignment, position, answer=answer), assignment) == shown(fast, assignment)
        return screen_of(fast)

    # back on screen 1, its stored pick carried again: screen 2's new label, the Other panel open
    page = next_from(1, first.choices[0])
    assert page["position"] == 2 and page["heading"].endswith("2/4")
    assert page["checked"] == [NEW_LABEL] and page["other_open"] and page["new_label"] == "Wistful longing"
    assert untouched(assignment) == before

    # screen 2 changed to one of its choices: written, and screen 3's "Other" list pick shown
    page = next_from(2, second.choices[1])
    assert page["position"] == 3 and page["checked"] == [listed] and page["other_open"]
    assert page["new_label"] == ""
    assert responses(assignment)[1][1:4] == (second.choices[1], Response.TOP3, "")

    # screen 3 changed to a choice: screen 4's stored choice checked, the panel closed
    page = next_from(3, third.choices[2])
    assert page["position"] == 4 and page["checked"] == [item_at(assignment, 4).choices[1]]
    assert not page["other_open"]


# --- 4. seconds bounded as the full path bounds them ------------------------------------------------


@on_postgres
@pytest.mark.parametrize("orm", [False, True], ids=["full-path", "full-path-orm-writes"])
def test_seconds_are_bounded_as_the_full_path_bounds_them(
    campaign, annotators, frozen_clock, monkeypatch, fast_path_only, orm
):
    clock = frozen_clock
    paths, fast, full, clients = fast_and_full(monkeypatch, annotators, orm)
    steps = [  # (clock advance, position, choice, posted seconds, seconds stored on that screen)
        (12, 1, 0, 500, 12),  # bounded by the time since acceptance
        (30, 1, 1, -3, 12),  # a negative count adds nothing
        (20, 1, 2, 1e9, 32),  # bounded by the time since the last answer
        (7, 2, 0, "9e99", 7),
        (10, 3, 0, "nan", 0),
        (10, 3, 1, 4, 4),  # well inside the bound: added as posted
    ]
    for advance, position, choice, seconds, expected in steps:
        clock.advance(advance)
        for assignment in (fast, full):
            paths.fast = assignment is fast
            post(
                clients[assignment.pk],
                assignment,
                position,
                answer=item_at(fast, position).choices[choice],
                seconds=seconds,
            )
        spent = {a.pk: Response.objects.get(assignment=a, item__position=position).seconds_spent for a in (fast, full)}
        assert spent[fast.pk] == pytest.approx(spent[full.pk], abs=0.5), (position, seconds)
        assert spent[fast.pk] == pytest.approx(expected, abs=0.5), (position, seconds)
    assert paths.moved == len(steps)
    assert [row[:-1] for row in responses(fast)] == [row[:-1] for row in responses(full)]  # seconds above


# --- 5. refusals: the full path answers, nothing written by the statement -------------------------


@on_postgres
def test_a_next_on_an_assignment_past_its_time_limit_says_so(campaign, annotators, paths):
    assignment = claim(annotators[0])
    client = logged_in(annotators[0])
    Assignment.objects.filter(pk=assignment.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    refused = post(client, assignment, 1, answer=item_at(assignment, 1).choices[0])
    assert refused.status_code == 204
    assert refused["HX-Redirect"] == reverse("labeling:assignment_detail", args=[assignment.pk])
    closed = client.get(refused["HX-Redirect"])
    assert closed.status_code == 410 and "The time limit for this HIT has passed" in closed.content.decode()
    assert (paths.calls, paths.moved) == (1, 0)
    assert responses(assignment) == []


@on_postgres
def test_a_next_on_a_submitted_assignment_writes_nothing(campaign, annotators, clock, paths):
    assignment = claim(annotators[0])
    client = logged_in(annotators[0])
    answer_everything(assignment)
    submit_assignment(assignment)
    before = untouched(assignment)
    clock.advance(5)
    first = item_at(assignment, 1)
    changed = next(c for c in first.choices if c != Response.objects.get(assignment=assignment, item=first).label.name)
    refused = post(client, assignment, 1, answer=changed)
    assert refused.status_code == 204 and refused["HX-Redirect"].endswith(f"/assignments/{assignment.pk}/")
    assert (paths.calls, paths.moved) == (1, 0)
    assert untouched(assignment) == before


@on_postgres
def test_a_next_on_another_users_assignment_is_a_404_and_writes_nothing(campaign, annotators, paths):
    mine, theirs = claim(annotators[0]), claim(annotators[1])  # both routes known to this process
    refused = post(logged_in(annotators[1]), mine, 1, answer=item_at(mine, 1).choices[0])
    assert refused.status_code == 404
    assert paths.moved == 0
    assert responses(mine) == responses(theirs) == []


@on_postgres
def test_a_next_whose_pick_was_retired_is_refused_as_the_full_path_refuses_it(campaign, annotators, paths):
    fast, full = claim(annotators[0]), claim(annotators[1])
    choice = item_at(fast, 1).choices[0]
    Label.objects.filter(name__iexact=choice).update(is_active=False)
    pages = {}
    for assignment, user in ((fast, annotators[0]), (full, annotators[1])):
        paths.fast = assignment is fast
        pages[assignment.pk] = screen_of(post(logged_in(user), assignment, 1, answer=choice))
    assert pages[fast.pk] == pages[full.pk]
    assert pages[fast.pk]["position"] == 1  # the same screen again, saying why
    assert pages[fast.pk]["error"] == f"There is no label called {choice!r} in this campaign."
    assert (paths.calls, paths.moved) == (1, 0)
    assert responses(fast) == responses(full) == []  # nothing half-written


@on_postgres
def test_the_last_screens_next_saves_the_pick_and_shows_the_review(campaign, annotators, clock, paths):
    assignment = claim(annotators[0])
    client = logged_in(annotators[0])
    for position in (1, 2, 3):
        save_response(
            assignment,
            item_at(assignment, position),
            label_name=item_at(assignment, position).choices[0],
            method=Response.TOP3,
        )
    clock.advance(5)
    calls = paths.calls
    last = item_at(assignment, 4)
    review = post(client, assignment, 4, answer=last.choices[2], seconds=2)
    assert review.status_code == 200 and "Review and submit" in review.content.decode()
    assert review["HX-Push-Url"] == reverse("labeling:assignment_review", args=[assignment.pk])
    assert "4 of 4 dialogues answered." in review.content.decode()
    assert (paths.calls - calls, paths.moved) == (1, 0)  # asked, and it left the review to the full path
    assert responses(assignment)[-1] == (4, last.choices[2], Response.TOP3, "", {}, 2.0)


# --- 6. a stale route --------------------------------------------------------------------------------


@on_postgres
def test_a_next_on_a_route_of_an_earlier_acceptance_is_stored_once_by_the_full_path(campaign, annotators, clock, paths):
    assignment = claim(annotators[0])  # the route names this acceptance
    client = logged_in(annotators[0])
    clock.advance(10)
    Assignment.objects.filter(pk=assignment.pk).update(accepted_at=assignment.accepted_at + timedelta(seconds=1))
    first = item_at(assignment, 1)
    page = screen_of(post(client, assignment, 1, answer=first.choices[1], seconds=3))
    assert page["position"] == 2 and page["error"] == ""
    assert (paths.calls, paths.moved) == (1, 0)  # the statement found nothing
    assert responses(assignment) == [(1, first.choices[1], Response.TOP3, "", {}, 3.0)]  # stored once
    # the full path read the assignment anew: the next Next is the statement's again
    clock.advance(5)
    post(client, assignment, 2, answer=item_at(assignment, 2).choices[0])
    assert paths.moved == 1 and len(responses(assignment)) == 2


# --- 7. a Next and a submission of the same assignment at once -----------------------------------


def every_screen_answered(assignment) -> tuple[str, str]:
    """Every screen answered; (the first screen's stored pick, another of its choices)."""
    answer_everything(assignment)
    first = item_at(assignment, 1)
    old = Response.objects.get(assignment=assignment, item=first).label.name
    return old, next(choice for choice in first.choices if choice != old)


def nothing_after_submission(assignment) -> None:
    assignment.refresh_from_db()
    if assignment.status == Assignment.SUBMITTED:
        last = Response.objects.filter(assignment=assignment).order_by("-answered_at").first()
        assert last.answered_at <= assignment.submitted_at


def next_pick(assignment, user, answer, *, seconds=1):
    return answer_action.next_with_pick(assignment.pk, user.pk, 1, answer, seconds_spent=seconds)


def concurrent(test):
    """A race between two connections: PostgreSQL row locks, a transactional test (tests/conftest.py
    re-seeds the labels after each flush), the statement on."""
    marks = (on_postgres, pytest.mark.postgres, pytest.mark.usefixtures("fast_path_only"))
    for mark in (*marks, pytest.mark.django_db(transaction=True)):
        test = mark(test)
    return test


def in_threads(*works) -> list:
    """Run each of `works` in its own thread (its own connection); their results or exceptions."""
    results: list = [None] * len(works)

    def body(index):
        try:
            results[index] = works[index]()
        except Exception as error:
            results[index] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=body, args=(index,)) for index in range(len(works))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results


@concurrent
def test_a_next_behind_a_submission_waits_then_writes_nothing(annotators):
    build_campaign()
    assignment = claim(annotators[0])
    old, changed = every_screen_answered(assignment)
    before = untouched(assignment)
    locked = threading.Event()

    def submit_slowly():
        with transaction.atomic():
            lock_live(assignment)
            locked.set()
            time.sleep(0.5)  # the Next arrives while the submission holds the row
            submit_assignment(assignment)

    def next_meanwhile():
        locked.wait(10)
        started = time.monotonic()
        return next_pick(assignment, annotators[0], changed), time.monotonic() - started

    submitted, (moved, waited) = in_threads(submit_slowly, next_meanwhile)
    assert submitted is None  # no SubmissionRefused
    assert moved is None  # refused: the full path then says the HIT was submitted
    assert waited >= 0.3  # it queued behind the submission's lock
    assert untouched(assignment) == before
    nothing_after_submission(assignment)


@concurrent
def test_a_submission_behind_a_next_includes_its_pick(annotators):
    build_campaign()
    assignment = claim(annotators[0])
    answer_everything(assignment)
    first = item_at(assignment, 1)
    Response.objects.filter(assignment=assignment, item=first).delete()  # the first screen open
    locked = threading.Event()

    def next_slowly():
        with transaction.atomic():  # the statement's row lock kept to the end of this transaction
            moved = next_pick(assignment, annotators[0], first.choices[1])
            locked.set()
            time.sleep(0.5)  # the submission arrives while the Next holds the row
        return moved

    def submit_meanwhile():
        locked.wait(10)
        started = time.monotonic()
        submit_assignment(Assignment.objects.get(pk=assignment.pk))
        return time.monotonic() - started

    moved, waited = in_threads(next_slowly, submit_meanwhile)
    assert moved is not None and moved.item.position == 2
    assert waited >= 0.3  # it queued behind the Next's lock, then found every screen answered
    assignment.refresh_from_db()
    assert assignment.status == Assignment.SUBMITTED
    assert Response.objects.get(assignment=assignment, item=first).label.name == first.choices[1]
    nothing_after_submission(assignment)


@concurrent
def test_a_next_and_a_submission_released_together_never_leave_an_answer_after_the_submission(annotators):
    build_campaign()
    for user in annotators:  # the HIT's three seats, one race each
        assignment = claim(user)
        old, changed = every_screen_answered(assignment)
        moved, submitted = run_together(
            2,
            lambda index, a=assignment, u=user, c=changed: (
                next_pick(a, u, c) if index == 0 else submit_assignment(Assignment.objects.get(pk=a.pk))
            ),
        )
        assert not isinstance(moved, Exception) and not isinstance(submitted, Exception), (moved, submitted)
        stored = Response.objects.get(assignment=assignment, item=item_at(assignment, 1)).label.name
        # either the pick came first and the submission holds it, or the Next was refused
        assert stored == (old if moved is None else changed)
        assignment.refresh_from_db()
        assert assignment.status == Assignment.SUBMITTED
        nothing_after_submission(assignment)


def behind_an_autosave(annotators, clock, second):
    """An autosave of screen 1's first choice (4 s) holds the assignment's row for half a second
    while `second(assignment, pick)` is sent: (what the autosave returned, what `second` did, the
    assignment)."""
    build_campaign()
    assignment = claim(annotators[0])
    pick = item_at(assignment, 1).choices[0]
    clock.advance(30)
    locked = threading.Event()

    def autosave_slowly():
        with transaction.atomic():
            assert answer_action.save_pick(assignment.pk, annotators[0].pk, 1, pick, seconds_spent=4)
            locked.set()
            time.sleep(0.5)  # the second write arrives before the autosave commits

    def meanwhile():
        locked.wait(10)
        return second(assignment, pick)

    return *in_threads(autosave_slowly, meanwhile), assignment


@concurrent
def test_a_next_behind_the_autosave_of_its_pick_adds_its_seconds_once(annotators, clock):
    saved, moved, assignment = behind_an_autosave(
        annotators, clock, lambda assignment, pick: next_pick(assignment, annotators[0], pick, seconds=4)
    )
    # the pick is found stored once the statement holds the row: nothing written (its stale read
    # said otherwise), and the Next is left to the full path, which reads the stored pick afresh
    assert saved is None and moved is None
    # the ORM path (save_response under the lock) adds at most the half second since the autosave
    assert Response.objects.get(assignment=assignment).seconds_spent < 5


@concurrent
def test_two_autosaves_of_one_pick_in_a_race_add_the_seconds_once(annotators, clock):
    """save_pick's upsert bounds the seconds again by the stored row as it is once locked."""
    _, again, assignment = behind_an_autosave(
        annotators,
        clock,
        lambda assignment, pick: answer_action.save_pick(assignment.pk, annotators[0].pk, 1, pick, seconds_spent=4),
    )
    assert again  # the autosave replaces the stored answer outright
    assert Response.objects.filter(assignment=assignment).count() == 1
    assert Response.objects.get(assignment=assignment).seconds_spent < 5


# --- 8. with the fast path off --------------------------------------------------------------------


@on_postgres
@override_settings(ANNOTATOR_FAST_PATH=False)
def test_with_the_fast_path_off_the_action_writes_nothing(campaign, annotators):
    with override_settings(ANNOTATOR_FAST_PATH=True):
        assignment = claim(annotators[0])  # its route known, as after a first screen with it on
    pick = item_at(assignment, 1).choices[0]
    assert answer_action.next_with_pick(assignment.pk, annotators[0].pk, 1, pick, seconds_spent=2) is None
    assert responses(assignment) == []
    # the statement itself would have written it: only the switch kept it from running
    moved = fast_pick.next_with_pick(assignment.pk, annotators[0].pk, 1, pick, 2, "en", screens.screens_of)
    assert moved is not None and responses(assignment)[0][1] == pick


@on_postgres
@pytest.mark.django_db
def test_the_assignment_a_next_hands_back_has_a_hit_of_its_own(annotators):
    """The route's HIT is shared by every request for the assignment: a campaign read on demand
    through one Next's assignment must not stay cached on it for the next requests."""
    from labeling.fast_path import compiled as fast_path

    build_campaign()
    assignment = claim(annotators[0])
    moved = next_pick(assignment, annotators[0], item_at(assignment, 1).choices[0])
    route = fast_path.route_of(assignment.pk, annotators[0].pk)
    assert moved is not None and moved.assignment.hit is not route.hit
    assert moved.assignment.hit.pk == route.hit.pk and moved.assignment.hit.campaign_id == route.hit.campaign_id
    assert moved.assignment.hit.campaign.pk == route.hit.campaign_id  # read on demand, on its own HIT
    assert not HIT.campaign.is_cached(route.hit)
