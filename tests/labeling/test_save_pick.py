"""The autosave's one-statement write (actions.answer.save_pick): it stores exactly what the full path
(save_response) stores for a pick among the three choices, and writes nothing, leaving the
full path to answer, whenever anything about the request is not that common case.

The write is the annotator fast path's (labeling.fast_path.compiled): with ANNOTATOR_FAST_PATH=0 its own
tests are skipped (save_pick then never writes); the Next tests at the end run both ways."""

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection, connections, transaction
from django.utils import timezone

from annotation.models import Label
from labeling.actions.answer import save_pick, save_response
from labeling.actions.claim import claim_next_hit
from labeling.fast_path import compiled as fast_path
from labeling.fast_path import reads as hot_reads
from labeling.models import Assignment, HITItem, Response
from labeling.services.workers import worker_for_user
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import make_dialogues, open_campaign, screen_item

# the HITs here take their quiz screens from the built-in one-turn quiz bank
pytestmark = pytest.mark.usefixtures("quiz_demo_bank")


@pytest.fixture
def campaign(db):
    campaign = open_campaign(dialogues_per_hit=3, quiz_per_hit=1)
    build_hits(campaign, make_dialogues(3), seed=5)
    return campaign


# the tests of the one-statement write itself; with the fast path off save_pick writes nothing
fast_path_only = pytest.mark.usefixtures("fast_path_only")


def claim(user) -> Assignment:
    """A claimed assignment whose route this process knows (as after the annotator's first screen)."""
    assignment = claim_next_hit(worker_for_user(user))
    assert hot_reads.own_assignment(assignment.pk, user.pk) is not None
    return assignment


def item_at(assignment, position) -> HITItem:
    return screen_item(assignment, position)


def stored(assignment):
    return list(
        Response.objects.filter(assignment=assignment).values_list(
            "item_id", "label__name", "new_label_text", "method", "seconds_spent"
        )
    )


@fast_path_only
def test_a_pick_is_stored_as_the_full_path_stores_it(campaign, annotators, clock):
    fast, full = claim(annotators[0]), claim(annotators[1])
    assert fast.hit_id == full.hit_id  # same screens, so the two rows can be compared
    item = item_at(fast, 2)
    clock.advance(10)
    pick = item.choices[1]
    assert save_pick(fast.pk, annotators[0].pk, 2, pick.upper(), seconds_spent=4)
    save_response(full, item, label_name=pick.upper(), method=Response.OTHER_LIST, seconds_spent=4)
    assert stored(fast) == stored(full) == [(item.pk, pick, "", Response.TOP3, 4.0)]

    # a second pick replaces the label and adds the seconds up, as save_response does
    clock.advance(10)
    assert save_pick(fast.pk, annotators[0].pk, 2, item.choices[0], seconds_spent=2.5)
    save_response(full, item, label_name=item.choices[0], method=Response.OTHER_LIST, seconds_spent=2.5)
    assert stored(fast) == stored(full) == [(item.pk, item.choices[0], "", Response.TOP3, 6.5)]
    assert Response.objects.get(assignment=fast).data == {}


@fast_path_only
def test_seconds_are_clamped_as_the_full_path_clamps_them(campaign, annotators, clock):
    fast, full = claim(annotators[0]), claim(annotators[1])
    item = item_at(fast, 1)
    clock.advance(30)
    assert save_pick(fast.pk, annotators[0].pk, 1, item.choices[0], seconds_spent=-3)
    save_response(full, item, label_name=item.choices[0], method=Response.TOP3, seconds_spent=-3)
    clock.advance(20)
    assert save_pick(fast.pk, annotators[0].pk, 1, item.choices[0], seconds_spent=1e9)
    save_response(full, item, label_name=item.choices[0], method=Response.TOP3, seconds_spent=1e9)
    # never more than the server saw pass since the last answer (20 s), whatever the page posts
    for assignment in (fast, full):
        assert Response.objects.get(assignment=assignment).seconds_spent == pytest.approx(20, abs=0.5)


@fast_path_only
def test_it_writes_nothing_for_an_assignment_this_process_has_not_read(campaign, annotators):
    assignment = claim(annotators[0])
    fast_path.forget_routes()
    assert not save_pick(assignment.pk, annotators[0].pk, 1, item_at(assignment, 1).choices[0])
    assert stored(assignment) == []


@fast_path_only
def test_another_users_request_writes_nothing_even_with_the_route_known(campaign, annotators):
    assignment = claim(annotators[0])
    choice = item_at(assignment, 1).choices[0]
    assert not save_pick(assignment.pk, annotators[1].pk, 1, choice)
    # a forged route (a cache gone wrong) still meets the ownership check in the SQL
    route = fast_path.route_of(assignment.pk, annotators[0].pk)
    with fast_path._routes_lock:
        fast_path._routes[assignment.pk] = fast_path.Route(
            annotators[1].pk, route.hit, route.task_type, route.accepted_at
        )
    assert not save_pick(assignment.pk, annotators[1].pk, 1, choice)
    assert stored(assignment) == []


@pytest.mark.parametrize(
    "change",
    [
        {"status": Assignment.SUBMITTED},
        {"status": Assignment.EXPIRED},
        {"status": Assignment.REJECTED},
        {"expires_at": "past"},
        {"accepted_at": "other"},  # the id handed out again to another assignment (a rolled-back one)
    ],
    ids=["submitted", "expired", "rejected", "out-of-time", "another-incarnation"],
)
@fast_path_only
def test_an_assignment_that_is_no_longer_live_gets_nothing_written(campaign, annotators, change):
    assignment = claim(annotators[0])
    if change.get("expires_at") == "past":
        change = {"expires_at": timezone.now() - timedelta(seconds=1)}
    if change.get("accepted_at") == "other":
        change = {"accepted_at": assignment.accepted_at - timedelta(microseconds=1)}
    Assignment.objects.filter(pk=assignment.pk).update(**change)
    assert not save_pick(assignment.pk, annotators[0].pk, 1, item_at(assignment, 1).choices[0])
    assert stored(assignment) == []


@fast_path_only
def test_only_a_pick_among_the_three_choices_takes_the_fast_path(campaign, annotators):
    assignment = claim(annotators[0])
    item = item_at(assignment, 1)
    user = annotators[0].pk
    other_list = Label.objects.exclude(name__in=item.choices).filter(is_active=True).first()
    for answer in (other_list.name, "__new__", "", "   ", "Sad\u00e9"):
        assert not save_pick(assignment.pk, user, 1, answer), answer
    assert not save_pick(assignment.pk, user, 99, item.choices[0])  # no such screen
    assert stored(assignment) == []


@fast_path_only
def test_a_choice_whose_label_was_retired_gets_nothing_written(campaign, annotators):
    assignment = claim(annotators[0])
    item = item_at(assignment, 1)
    Label.objects.filter(name__iexact=item.choices[0]).update(is_active=False)
    assert not save_pick(assignment.pk, annotators[0].pk, 1, item.choices[0])
    assert stored(assignment) == []


@fast_path_only
@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL row locks (set DATABASE_URL)")
@pytest.mark.django_db(transaction=True)
def test_a_pick_waits_for_a_submission_holding_the_row_and_then_writes_nothing(annotators):
    campaign = open_campaign(dialogues_per_hit=3, quiz_per_hit=1)
    build_hits(campaign, make_dialogues(3), seed=5)
    assignment = claim(annotators[0])
    choice = item_at(assignment, 1).choices[0]
    locked, result = threading.Event(), {}

    def submit_slowly():
        try:
            with transaction.atomic():
                Assignment.objects.select_for_update().get(pk=assignment.pk)
                locked.set()
                time.sleep(0.5)  # the pick arrives while the submission holds the row
                Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.SUBMITTED)
        finally:
            connections.close_all()

    def pick():
        try:
            locked.wait(10)
            started = time.monotonic()
            result["saved"] = save_pick(assignment.pk, annotators[0].pk, 1, choice)
            result["waited"] = time.monotonic() - started
        finally:
            connections.close_all()

    threads = [threading.Thread(target=submit_slowly), threading.Thread(target=pick)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert result["saved"] is False
    assert result["waited"] >= 0.3  # it queued behind the submission's lock, then saw it submitted
    assert stored(assignment) == []


# --- Next's one read: the assignment with its two screens' answers ------------------------------


def test_the_one_read_of_next_returns_only_the_owners_assignment_and_its_own_answers(campaign, annotators):
    mine, theirs = claim(annotators[0]), claim(annotators[1])
    first, second = item_at(mine, 1), item_at(mine, 2)
    save_response(theirs, first, label_name=first.choices[2], method=Response.OTHER_LIST)
    save_response(mine, second, label_name=second.choices[1], method=Response.OTHER_LIST)

    found, stored = hot_reads.own_assignment_with_answers(mine.pk, annotators[0].pk, [first.pk, second.pk])
    assert found.pk == mine.pk and found.hit.campaign.pk == campaign.pk
    assert stored == {first.pk: None, second.pk: (second.choices[1], "", Response.TOP3)}

    assert hot_reads.own_assignment_with_answers(mine.pk, annotators[1].pk, [first.pk]) == (None, {first.pk: None})


def test_next_by_another_user_is_a_404_even_with_the_route_known(campaign, annotators, client):
    from django.test import Client
    from django.urls import reverse

    assignment = claim(annotators[0])
    other = Client()
    other.force_login(annotators[1])
    url = reverse("labeling:answer_item", args=[assignment.pk, 1])
    refused = other.post(url, {"go": "next", "answer": item_at(assignment, 1).choices[0]}, HTTP_HX_REQUEST="true")
    assert refused.status_code == 404
    assert stored(assignment) == []
