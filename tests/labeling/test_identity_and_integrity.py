"""Issue 23's holes, each written as the attack: a borrowed worker id, a /64 of addresses, a
made-up id harvesting quiz answers, labels from outside the campaign's set, and a browser that
posts whatever seconds it likes. Every attack must fail."""

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from annotation.models import Label, TurnLabel
from labeling.actions import SubmissionRefused
from labeling.actions.answer import save_response
from labeling.actions.claim import claim_next_hit
from labeling.actions.submit import confirm_platform_submission, free_unconfirmed_seats, submit_assignment
from labeling.fast_path.screen import screens_of
from labeling.models import (
    AggregatedLabel,
    Assignment,
    ProlificSessionCheck,
    Publication,
    QuizQuestion,
    Response,
    Worker,
    seat_items_q,
)
from labeling.reports.campaign import campaign_report
from labeling.services.workers import worker_for_user
from labeling.task_types.last_turn_label.aggregation import aggregate_campaign
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import answer_everything, make_dialogues, open_campaign
from tests.labeling.platform_helpers import mturk_landing, prolific_landing, prolific_sessions

__all__ = ["prolific_sessions"]
# HITs built with the built-in quiz bank; every Prolific landing is asked of Prolific (its stand-in)
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("quiz_demo_bank", "prolific_sessions")]

HTMX = {"HTTP_HX_REQUEST": "true"}
EXPLANATION = "A loss said plainly is sadness."


@pytest.fixture
def study(settings):
    """An open campaign of four HITs (two dialogues and one quiz screen each, three seats), its
    quiz items drawn from a secret pool of real dialogues."""
    settings.QUIZ_DEMO_BANK = False
    settings.QUIZ_ITEMS_PER_SEAT = True
    settings.QUIZ_MAX_EXPOSURES = 3
    settings.QUIZ_RETIRE_AFTER_REVEALS = 1
    sad = Label.objects.get(name="Sad")
    for dialogue in make_dialogues(12, prefix="pool"):
        text = dialogue.turns.last().text
        QuizQuestion.objects.create(
            dialogue=dialogue, text=text, gold_label=sad, explanation=EXPLANATION, source=QuizQuestion.IMPORTED
        )
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=1, workers_per_hit=3)
    build_hits(campaign, make_dialogues(8), seed=7)
    return campaign


def land(client: Client, campaign, *, worker: str, session: str, made_up: bool = False):
    """A Prolific landing: a session Prolific knows (the stand-in), unless `made_up`."""
    link = prolific_landing(campaign, worker=worker, session=session, study="STUDY1", made_up=made_up)
    return client.get(link)


def unproven_land(client: Client, campaign, *, worker: str, session: str):
    """An MTurk landing: MTurk cannot be asked before the work is submitted, so it is unproven
    (a made-up workerId and assignmentId land like this too)."""
    return client.get(mturk_landing(campaign, worker=worker, assignment=session, hit_id="HIT1"))


def landed_assignment(response) -> Assignment:
    assert response.status_code == 302, response.content.decode()[:300]
    return Assignment.objects.get(pk=int(re.search(r"/assignments/(\d+)/", response["Location"]).group(1)))


def submit_through_page(client: Client, assignment: Assignment, *, wrong_quiz: int = 0):
    answer_everything(assignment, wrong_quiz=wrong_quiz)
    response = client.post(reverse("labeling:assignment_submit", args=[assignment.pk]))
    assert response.status_code == 302
    return client.get(reverse("labeling:assignment_feedback", args=[assignment.pk])).content.decode()


# --- identities that cannot be borrowed ---------------------------------------------------------


def test_it_refuses_to_sign_a_borrowed_worker_id_in_as_its_owner(study):
    victim = Client(REMOTE_ADDR="198.51.100.7")
    owned = landed_assignment(land(victim, study, worker="VICTIM", session="REALSESSION1"))
    submit_through_page(victim, owned)
    confirm_platform_submission(owned)
    code = Assignment.objects.get(pk=owned.pk).completion_code

    # the attacker knows the victim's PROLIFIC_PID and makes up a SESSION_ID: Prolific does not
    # list it, so the landing gets nothing (was: an empty identity of its own with a HIT)
    attacker = Client(REMOTE_ADDR="203.0.113.9")
    # within the session's first minutes Prolific's 404 is asked again on a reload (still checking)
    assert land(attacker, study, worker="VICTIM", session="MADEUP", made_up=True).status_code == 202
    ProlificSessionCheck.objects.filter(session_id="MADEUP").update(
        created_at=timezone.now() - timedelta(minutes=10), answered_at=timezone.now() - timedelta(minutes=1)
    )
    assert land(attacker, study, worker="VICTIM", session="MADEUP", made_up=True).status_code == 403
    assert "_auth_user_id" not in attacker.session
    assert not Worker.objects.filter(landing_key="MADEUP").exists()
    done_page = attacker.get(reverse("labeling:assignment_done", args=[owned.pk]))
    assert done_page.status_code == 302 and "/login/" in done_page["Location"]  # signed in as no one
    assert code not in done_page.content.decode()

    # ...and the victim's next real landing is not refused: it gets a HIT of its own
    again = landed_assignment(land(Client(REMOTE_ADDR="198.51.100.7"), study, worker="VICTIM", session="REAL2"))
    assert again.pk != owned.pk


def test_a_confirmed_landing_is_merged_into_the_platform_ids_worker(study):
    browser = Client(REMOTE_ADDR="198.51.100.7")
    # (an MTurk landing: a Prolific one is proven, and merged, at landing)
    assignment = landed_assignment(unproven_land(browser, study, worker="PROVEN1", session="S1"))
    assert Worker.objects.get(pk=assignment.worker_id).is_pending_identity
    submit_through_page(browser, assignment)
    confirm_platform_submission(assignment)
    identity = Worker.objects.get(pk=assignment.worker_id)
    proven = Worker.objects.get(platform=Worker.MTURK, external_id="PROVEN1", landing_key="")
    assert identity.merged_into == proven and not identity.is_pending_identity
    # the identity keeps its own pages
    assert browser.get(reverse("labeling:assignment_done", args=[assignment.pk])).status_code == 200


def test_a_blocked_platform_id_is_refused_whatever_session_it_brings(study):
    landed_assignment(land(Client(), study, worker="BAD1", session="S1"))
    Worker.objects.filter(external_id="BAD1").update(status=Worker.BLOCKED)
    before = Worker.objects.count()
    assert land(Client(), study, worker="BAD1", session="OTHER").status_code == 403
    assert Worker.objects.count() == before


def test_it_counts_an_ipv6_slash_64_as_one_address(study, settings):
    settings.PLATFORM_NEW_WORKERS_PER_IP_PER_HOUR = 10
    settings.PLATFORM_IPV6_PREFIX = 64
    # (MTurk landings: the caps count unproven identities; a Prolific one is proven at landing)
    statuses = [
        unproven_land(Client(REMOTE_ADDR=f"2001:db8:7:1::{n:x}"), study, worker=f"SIXW{n}", session=f"S{n}").status_code
        for n in range(1, 13)
    ]
    assert statuses == [302] * 10 + [429] * 2
    assert Worker.objects.filter(external_id__startswith="SIXW").count() == 10
    # another /64 is another address
    assert (
        unproven_land(Client(REMOTE_ADDR="2001:db8:7:2::1"), study, worker="SIXW99", session="S99").status_code == 302
    )


# --- quiz answers that cannot be harvested ------------------------------------------------------


def test_a_made_up_ids_feedback_shows_no_quiz_answer(study):
    harvester = Client(REMOTE_ADDR="203.0.113.9")
    assignment = landed_assignment(unproven_land(harvester, study, worker="MADEUP1", session="JUNK1"))
    page = submit_through_page(harvester, assignment, wrong_quiz=1)
    quiz = assignment.hit.items.get(quiz_question__isnull=False, seat=assignment.seat).quiz_question
    assert 'id="quiz-pending"' in page and 'id="quiz-score"' not in page
    assert "the right answer is" not in page and EXPLANATION not in page
    home = harvester.get(reverse("labeling:worker_home")).content.decode()
    assert "once confirmed" in home
    quiz.refresh_from_db()
    assert quiz.reveals == 0  # nothing was shown, so nothing retires yet


def test_a_confirmed_platform_worker_sees_the_feedback_and_it_counts_as_a_reveal(study):
    browser = Client(REMOTE_ADDR="198.51.100.7")
    assignment = landed_assignment(land(browser, study, worker="REAL1", session="S1"))
    submit_through_page(browser, assignment, wrong_quiz=1)
    confirm_platform_submission(assignment)
    page = browser.get(reverse("labeling:assignment_feedback", args=[assignment.pk])).content.decode()
    quiz = assignment.hit.items.get(quiz_question__isnull=False, seat=assignment.seat).quiz_question
    assert 'id="quiz-score"' in page and quiz.gold_label.name in page and EXPLANATION in page
    quiz.refresh_from_db()
    assert quiz.reveals == 1


def test_a_seat_taken_by_work_never_confirmed_is_freed_within_hours(study, settings):
    settings.PLATFORM_UNCONFIRMED_SEAT_HOURS = 2
    harvester = Client(REMOTE_ADDR="203.0.113.9")
    assignment = landed_assignment(unproven_land(harvester, study, worker="MADEUP2", session="JUNK2"))
    submit_through_page(harvester, assignment)
    three_hours_ago = timezone.now() - timedelta(hours=3)
    Assignment.objects.filter(pk=assignment.pk).update(submitted_at=three_hours_ago)
    publication = Publication.objects.create(campaign=study, platform=Worker.MTURK, external_id="")
    # a sync that ran before the window was over proves nothing yet
    Publication.objects.filter(pk=publication.pk).update(last_synced_at=three_hours_ago + timedelta(hours=1))
    assert free_unconfirmed_seats(study) == 0
    # a sync long after the submission did not find it on the platform: the seat is freed
    Publication.objects.filter(pk=publication.pk).update(last_synced_at=timezone.now())
    seats_before = study.hits.get(pk=assignment.hit_id).seats_free
    assert free_unconfirmed_seats(study) == 1
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.EXPIRED
    assert study.hits.get(pk=assignment.hit_id).seats_free == seats_before + 1


def quiz_questions_of(assignment: Assignment) -> set[int]:
    return set(
        assignment.hit.items.filter(seat_items_q(assignment.seat), quiz_question__isnull=False).values_list(
            "quiz_question_id", flat=True
        )
    )


def test_no_two_seats_of_a_hit_share_a_quiz_item(study, annotators):
    seats = [claim_next_hit(worker_for_user(user), study) for user in annotators]
    assert len({a.hit_id for a in seats}) == 1 and sorted(a.seat for a in seats) == [1, 2, 3]
    drawn = [quiz_questions_of(a) for a in seats]
    assert all(len(questions) == 1 for questions in drawn)  # the paper's screens: 2 dialogues + 1 quiz
    assert len(set.union(*drawn)) == 3  # three seats, three different quiz items
    shared = {item.pk for item in seats[0].hit.items.filter(seat=0)}
    assert all(len(screens_of(a.hit, a.seat)) == 3 for a in seats)
    assert all(shared <= {s.item.pk for s in screens_of(a.hit, a.seat).values()} for a in seats)
    # the pages serve each seat its own quiz dialogue at the same place
    browser = Client()
    browser.force_login(annotators[1])
    quiz = seats[1].hit.items.get(seat=seats[1].seat)
    other = seats[1].hit.items.get(seat=seats[0].seat)
    page = browser.get(reverse("labeling:assignment_item", args=[seats[1].pk, quiz.position])).content.decode()
    assert f"Dialog {quiz.position}/3" in page
    assert escape(quiz.quiz_question.text) in page and escape(other.quiz_question.text) not in page


def test_a_made_up_ids_feedback_gives_a_second_seat_of_the_hit_no_quiz_answer(study):
    first = Client(REMOTE_ADDR="203.0.113.9")
    harvested = landed_assignment(unproven_land(first, study, worker="MADEUP1", session="JUNK1"))
    submit_through_page(first, harvested, wrong_quiz=1)
    # even were its work confirmed (a real worker passing answers on), what its feedback shows...
    confirm_platform_submission(harvested)
    page = first.get(reverse("labeling:assignment_feedback", args=[harvested.pk])).content.decode()
    (shown,) = quiz_questions_of(harvested)
    assert EXPLANATION in page and 'id="quiz-score"' in page
    # ...is no quiz item of a second seat of the same HIT
    second = landed_assignment(
        unproven_land(Client(REMOTE_ADDR="203.0.113.9"), study, worker="MADEUP2", session="JUNK2")
    )
    assert second.hit_id == harvested.hit_id and second.seat != harvested.seat
    assert shown not in quiz_questions_of(second) and quiz_questions_of(second)


def test_a_seat_freed_by_expiry_gets_the_same_unrevealed_quiz_items(study, annotators):
    first = claim_next_hit(worker_for_user(annotators[0]), study)
    Assignment.objects.filter(pk=first.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    second = claim_next_hit(worker_for_user(annotators[1]), study)
    # the expired holder was never shown an answer: its slot is given again, not a shared one
    assert second.hit_id == first.hit_id and second.seat == first.seat


# --- labels outside the campaign's set ----------------------------------------------------------


def test_an_out_of_set_label_never_becomes_gold(annotators):
    intents = list(Label.objects.filter(kind=Label.INTENT))
    assert Label.objects.filter(name="Disappointed", kind=Label.EMOTION).exists()
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=0, workers_per_hit=3)
    campaign.fallback_choices = [label.name for label in intents[:3]]
    campaign.save()
    campaign.labels.set(intents)
    build_hits(campaign, make_dialogues(2), seed=1)
    for user in annotators[:2]:  # two workers type an emotion through "Other" on every screen
        assignment = claim_next_hit(worker_for_user(user), campaign)
        for item in assignment.hit.items.all():
            save_response(assignment, item, new_label_text="Disappointed", method=Response.OTHER_NEW)
        submit_assignment(assignment)
    assignment = claim_next_hit(worker_for_user(annotators[2]), campaign)
    answer_everything(assignment)
    submit_assignment(assignment)

    counts = aggregate_campaign(campaign)
    assert counts["majority"] == 0
    assert not AggregatedLabel.objects.filter(label_text="Disappointed").exists()
    assert not TurnLabel.objects.filter(source=TurnLabel.CROWD, label__name="Disappointed").exists()
    proposals = campaign_report(campaign)["other_answers"]["proposed_labels"]
    assert [row["text"] for row in proposals] == ["Disappointed"] and proposals[0]["count"] == 4


def test_it_refuses_a_typed_label_with_a_nul_byte(annotators, study):
    assignment = claim_next_hit(worker_for_user(annotators[0]), study)
    item = assignment.hit.items.first()
    with pytest.raises(SubmissionRefused, match="NUL"):
        save_response(assignment, item, new_label_text="Bored\x00", method=Response.OTHER_NEW)
    assert not Response.objects.exists()


# --- time on screen from the server's clock -----------------------------------------------------


def test_a_too_fast_worker_is_flagged_whatever_seconds_it_posts(client, annotators, settings):
    settings.FAST_WORKER_MEDIAN_SECONDS = 3.0
    settings.FAST_WORKER_MIN_ANSWERS = 5
    campaign = open_campaign(dialogues_per_hit=15, quiz_per_hit=5, workers_per_hit=1)
    build_hits(campaign, make_dialogues(15), seed=2)
    client.force_login(annotators[0])
    assignment = landed_assignment(client.post(reverse("labeling:claim")))
    for item in assignment.hit.items.order_by("position"):  # twenty screens as fast as it can
        url = reverse("labeling:answer_item", args=[assignment.pk, item.position])
        assert client.post(url, {"go": "stay", "answer": item.choices[0], "seconds": "15"}, **HTMX).status_code == 200
    assert client.post(reverse("labeling:assignment_submit", args=[assignment.pk])).status_code == 302
    assert max(Response.objects.filter(assignment=assignment).values_list("seconds_spent", flat=True)) < 3.0
    worker = next(row for row in campaign_report(campaign)["workers"] if row["worker"] == "annotator1")
    assert worker["too_fast"] is True


def test_an_honest_worker_keeps_the_seconds_it_posts(annotators, clock):
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=0, workers_per_hit=1)
    build_hits(campaign, make_dialogues(2), seed=2)
    assignment = claim_next_hit(worker_for_user(annotators[0]), campaign)
    first, second = assignment.hit.items.order_by("position")
    clock.advance(12)
    assert (
        save_response(assignment, first, label_name=first.choices[0], method="top3", seconds_spent=11).seconds_spent
        == 11
    )
    clock.advance(5)
    # the page claims 9 s, but only 5 s passed since the last answer the server received
    bounded = save_response(assignment, second, label_name=second.choices[0], method="top3", seconds_spent=9)
    assert bounded.seconds_spent == pytest.approx(5, abs=0.5)
