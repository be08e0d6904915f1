from datetime import timedelta

import pytest
from django.utils import timezone

from labeling.actions import SubmissionRefused
from labeling.actions.answer import save_response
from labeling.actions.claim import claim_next_hit
from labeling.actions.submit import submit_assignment
from labeling.models import Assignment, HITItem, Response, Worker
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import answer_everything, make_dialogues, open_campaign, screen_item

# the HITs here take their quiz screens from the built-in one-turn quiz bank
pytestmark = pytest.mark.usefixtures("quiz_demo_bank")


@pytest.fixture
def assignment(db):
    campaign = open_campaign(dialogues_per_hit=3, quiz_per_hit=2)
    build_hits(campaign, make_dialogues(6), seed=3)
    return claim_next_hit(Worker.objects.create(external_id="w1"))


def dialogue_item(assignment) -> HITItem:
    return assignment.hit.items.filter(quiz_question__isnull=True).first()


def snapshot(assignment):
    row = Assignment.objects.get(pk=assignment.pk)
    answers = list(
        Response.objects.filter(assignment=assignment).values_list("item_id", "label_id", "new_label_text", "method")
    )
    return row.status, row.completion_code, row.quiz_correct, sorted(answers)


# --- answers ------------------------------------------------------------------------------------


def test_it_saves_one_answer_per_item_and_replaces_it_when_changed(assignment, clock):
    item = dialogue_item(assignment)
    clock.advance(5)
    save_response(assignment, item, label_name=item.choices[0], method=Response.TOP3, seconds_spent=4)
    clock.advance(5)
    save_response(assignment, item, label_name=item.choices[1], method=Response.TOP3, seconds_spent=2)
    response = Response.objects.get(assignment=assignment, item=item)
    assert response.label.name == item.choices[1]
    assert response.seconds_spent == 6


def test_a_label_from_the_other_list_is_stored_as_other_list(assignment):
    item = dialogue_item(assignment)
    response = save_response(assignment, item, label_name="Nostalgic", method=Response.OTHER_LIST)
    assert (response.label.name, response.method) == ("Nostalgic", Response.OTHER_LIST)


def test_a_list_pick_that_is_one_of_the_three_choices_counts_as_top3(assignment):
    item = dialogue_item(assignment)
    response = save_response(assignment, item, label_name=item.choices[2].upper(), method=Response.OTHER_LIST)
    assert (response.label.name, response.method) == (item.choices[2], Response.TOP3)


def test_a_new_label_is_kept_as_text(assignment):
    item = dialogue_item(assignment)
    response = save_response(assignment, item, new_label_text="  Mildly   amused ", method=Response.OTHER_NEW)
    assert (response.label, response.new_label_text, response.method) == (None, "Mildly amused", Response.OTHER_NEW)


def test_a_new_label_equal_to_an_existing_one_is_stored_as_that_label(assignment):
    item = dialogue_item(assignment)
    response = save_response(assignment, item, new_label_text=" nOSTALGIC ", method=Response.OTHER_NEW)
    assert (response.label.name, response.new_label_text, response.method) == ("Nostalgic", "", Response.OTHER_LIST)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"label_name": "Nostalgic", "method": Response.TOP3}, "not one of this item's three choices"),
        ({"label_name": "Bananas", "method": Response.OTHER_LIST}, "no label called 'Bananas'"),
        ({"new_label_text": "   ", "method": Response.OTHER_NEW}, "Type the new label"),
        ({"new_label_text": "x" * 65, "method": Response.OTHER_NEW}, "at most 64"),
        ({"label_name": "Sad", "method": "guess"}, "Unknown answer method"),
    ],
)
def test_it_refuses_a_bad_answer_and_saves_nothing(assignment, kwargs, message):
    with pytest.raises(SubmissionRefused, match=message):
        save_response(assignment, dialogue_item(assignment), **kwargs)
    assert not Response.objects.exists()


def test_it_refuses_an_answer_for_an_item_of_another_hit(assignment):
    foreign = HITItem.objects.exclude(hit=assignment.hit).first()
    with pytest.raises(SubmissionRefused, match="not part of this HIT"):
        save_response(assignment, foreign, label_name=foreign.choices[0], method=Response.TOP3)
    assert not Response.objects.exists()


# --- submission ---------------------------------------------------------------------------------


def test_submission_scores_the_quiz_and_gives_a_completion_code(assignment):
    answer_everything(assignment, wrong_quiz=1)
    result = submit_assignment(assignment)
    assert (result.quiz_correct, result.quiz_total) == (1, 2)
    (wrong,) = result.wrong
    quiz_item = screen_item(assignment, wrong.position)
    assert wrong.gold_label == quiz_item.quiz_question.gold_label.name != wrong.given
    assert wrong.explanation == quiz_item.quiz_question.explanation and wrong.explanation
    assert len(result.completion_code) == 12
    row = Assignment.objects.get(pk=assignment.pk)
    assert (row.status, row.quiz_correct, row.completion_code) == (Assignment.SUBMITTED, 1, result.completion_code)
    assert row.submitted_at is not None


def test_it_refuses_a_submission_with_unanswered_items(assignment):
    answer_everything(assignment)
    last = assignment.hit.items.order_by("-position").first()
    Response.objects.filter(assignment=assignment, item=last).delete()
    before = snapshot(assignment)
    with pytest.raises(SubmissionRefused, match=f"still open: {last.position}"):
        submit_assignment(assignment)
    assert snapshot(assignment) == before


def test_it_refuses_a_second_submission(assignment):
    answer_everything(assignment)
    first = submit_assignment(assignment)
    before = snapshot(assignment)
    with pytest.raises(SubmissionRefused, match="already submitted"):
        submit_assignment(assignment)
    assert snapshot(assignment) == before
    assert before[1] == first.completion_code


def test_it_refuses_a_change_to_a_submitted_assignment(assignment):
    answer_everything(assignment)
    submit_assignment(assignment)
    before = snapshot(assignment)
    item = dialogue_item(assignment)
    with pytest.raises(SubmissionRefused, match="already submitted"):
        save_response(assignment, item, label_name=item.choices[1], method=Response.TOP3)
    assert snapshot(assignment) == before


def test_it_refuses_a_submission_after_the_time_limit(assignment):
    answer_everything(assignment)
    Assignment.objects.filter(pk=assignment.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    before = snapshot(assignment)
    with pytest.raises(SubmissionRefused, match="time limit"):
        submit_assignment(assignment)
    item = dialogue_item(assignment)
    with pytest.raises(SubmissionRefused, match="time limit"):
        save_response(assignment, item, label_name=item.choices[1], method=Response.TOP3)
    assert snapshot(assignment) == before


def test_it_refuses_answers_to_an_expired_assignment_even_after_release(assignment):
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.EXPIRED)
    item = dialogue_item(assignment)
    with pytest.raises(SubmissionRefused, match="time limit"):
        save_response(assignment, item, label_name=item.choices[0], method=Response.TOP3)
