"""The qualification step for a site worker, end to end through the annotator pages: a campaign that
requires it offers the quiz first, checks each answer as it is given (right or wrong, with the
known answer), and offers paid HITs only to a worker who reached the mark; quiz history over
every campaign on the dashboard."""

import re
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Label
from annotation.papers import QUIZ_BONUS_MARK, QUIZ_ITEMS_PER_HIT
from labeling.actions.claim import claim_next_hit
from labeling.actions.submit import submit_assignment
from labeling.crowd.qualification import passes, quiz_history, quiz_minutes
from labeling.models import HIT, Assignment, QualificationResult, QuizCheck, QuizQuestion, Response
from labeling.services import payments, qualification
from labeling.services.workers import worker_for_user
from labeling.work.hits import build_hits
from labeling.work.quiz_pool import PoolTooSmall
from tests.labeling import crowd_factories
from tests.labeling.hit_factory import answer_everything, make_dialogues, open_campaign

pytestmark = pytest.mark.django_db
GOLD, WRONG = "Sad", "Neutral"  # both among the fallback choices every screen offers


@pytest.fixture(autouse=True)
def _pool_only(settings):
    settings.QUIZ_DEMO_BANK = False
    settings.QUIZ_MAX_EXPOSURES = 3
    settings.QUIZ_RETIRE_AFTER_REVEALS = 1


def make_pool(count: int, prefix: str = "pool") -> list[QuizQuestion]:
    gold = Label.objects.get(name=GOLD)
    return [
        QuizQuestion.objects.create(
            dialogue=dialogue,
            text=dialogue.turns.last().text,
            gold_label=gold,
            explanation="The speaker mourns.",
            source=QuizQuestion.IMPORTED,
        )
        for dialogue in make_dialogues(count, prefix=prefix)
    ]


def quiz_campaign(seats: int = 2, **fields):
    """An open campaign that requires the quiz: one paid HIT (two dialogues, one quiz item) and a
    qualification HIT of `seats` seats (the paper's five quiz items each, three right to pass)."""
    values = {"dialogues_per_hit": 2, "quiz_per_hit": 1, "qualification_required": True}
    campaign = open_campaign(**(values | fields))
    build_hits(campaign, make_dialogues(2, prefix=f"work{campaign.pk}"), seed=1)
    if seats:
        qualification.build_qualification_hit(campaign, seats, seed=2)
    return campaign


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def claim(client, campaign) -> Assignment | None:
    response = client.post(reverse("labeling:claim"), {"campaign": campaign.pk})
    assert response.status_code == 302
    return Assignment.objects.filter(worker__user_id=client.session["_auth_user_id"]).order_by("-pk").first()


def take_quiz(client, assignment: Assignment, wrong: int) -> list[str]:
    """Answer the quiz screen by screen with Next (the first `wrong` wrongly); the check pages."""
    pages = []
    for position in range(1, QUIZ_ITEMS_PER_HIT + 1):
        url = reverse("labeling:answer_item", args=[assignment.pk, position])
        answered = client.post(url, {"go": "next", "answer": WRONG if position <= wrong else GOLD})
        check_url = reverse("labeling:quiz_check", args=[assignment.pk, position])
        assert answered.status_code == 302 and answered["Location"] == check_url
        pages.append(client.get(check_url).content.decode())
    return pages


def submit(client, assignment: Assignment) -> str:
    response = client.post(reverse("labeling:assignment_submit", args=[assignment.pk]))
    assert response.status_code == 302, response.content.decode()[:300]
    return client.get(response["Location"]).content.decode()


# --- the pure rules ----------------------------------------------------------------------------


def test_the_mark_is_reached_at_exactly_the_mark_and_capped_at_the_quiz_size():
    assert passes(QUIZ_BONUS_MARK, QUIZ_ITEMS_PER_HIT, QUIZ_BONUS_MARK)
    assert not passes(QUIZ_BONUS_MARK - 1, QUIZ_ITEMS_PER_HIT, QUIZ_BONUS_MARK)
    assert passes(2, 2, QUIZ_BONUS_MARK) and not passes(0, 0, 1)  # a two-item quiz: both right


def test_the_quiz_takes_the_paid_hits_minutes_per_screen():
    assert quiz_minutes(20, 20, QUIZ_ITEMS_PER_HIT) == 5
    assert quiz_minutes(20, 30, 1) == 1  # rounded up, at least one


def test_a_history_counts_every_answer_and_each_campaign_apart():
    history = quiz_history([("a", True), ("a", False), ("b", True)])
    assert (history.overall.right, history.overall.total, history.campaigns) == (2, 3, 2)
    assert history.by_campaign["a"].accuracy == 0.5


# --- the site worker, end to end ---------------------------------------------------------------


def test_a_worker_takes_the_quiz_with_feedback_after_each_screen_passes_and_is_offered_a_paid_hit(annotators):
    make_pool(20)
    campaign = quiz_campaign()
    client = signed_in(annotators[0])
    home = client.get(reverse("labeling:worker_home")).content.decode()
    assert 'data-state="required"' in home and "short qualification quiz" in home

    quiz = claim(client, campaign)
    assert quiz.hit.kind == HIT.QUALIFICATION
    pages = take_quiz(client, quiz, wrong=1)
    assert 'data-correct="0"' in pages[0] and f'class="ok gold">{GOLD}</strong>' in pages[0]
    assert "The speaker mourns." in pages[0]
    assert all('data-correct="1"' in page for page in pages[1:])

    # a checked answer is frozen: changing it to the known answer is refused, nothing stored
    item = quiz.hit.items.get(position=1, seat=quiz.seat)
    client.post(reverse("labeling:answer_item", args=[quiz.pk, 1]), {"go": "stay", "answer": GOLD})
    assert Response.objects.get(assignment=quiz, item=item).label.name == WRONG

    feedback = submit(client, quiz)
    assert 'id="qualification-result"' in feedback and "You passed" in feedback
    result = QualificationResult.objects.get(worker__user=annotators[0], campaign=campaign)
    assert (result.correct, result.total, result.passed) == (QUIZ_ITEMS_PER_HIT - 1, QUIZ_ITEMS_PER_HIT, True)
    assert QuizCheck.objects.filter(assignment=quiz).count() == QUIZ_ITEMS_PER_HIT

    paid = claim(client, campaign)
    assert paid.hit.kind == HIT.REGULAR
    assert 'data-state="passed"' in client.get(reverse("labeling:worker_home")).content.decode()


def test_each_answer_shown_counts_one_reveal_and_no_quiz_item_is_scored_for_anyone_else(annotators):
    make_pool(20)
    campaign = quiz_campaign()
    client = signed_in(annotators[0])
    quiz = claim(client, campaign)
    take_quiz(client, quiz, wrong=2)
    submit(client, quiz)  # its feedback page shows the wrong ones again: no second reveal
    questions = QuizQuestion.objects.filter(hititem__hit=quiz.hit, hititem__seat=quiz.seat)
    assert sorted(questions.values_list("reveals", flat=True)) == [1] * QUIZ_ITEMS_PER_HIT
    # spent: drawn never shown, every exposure reserved, so retired at once and in no other HIT
    assert set(questions.values_list("exposures", flat=True)) == {3}
    assert not questions.filter(retired_at__isnull=True).exists()
    assert not QuizQuestion.objects.filter(hititem__hit__kind=HIT.REGULAR, pk__in=questions).exists()


def test_a_worker_below_the_mark_is_offered_nothing_and_the_home_page_says_why(annotators):
    make_pool(20)
    campaign = quiz_campaign()
    client = signed_in(annotators[1])
    quiz = claim(client, campaign)
    take_quiz(client, quiz, wrong=QUIZ_ITEMS_PER_HIT - QUIZ_BONUS_MARK + 1)
    feedback = submit(client, quiz)
    assert "did not reach the qualification mark" in feedback
    assert claim(client, campaign) == quiz  # no new assignment
    assert not qualification.may_take_paid_work(quiz.worker, campaign)
    home = client.get(reverse("labeling:worker_home")).content.decode()
    assert 'data-state="failed"' in home and "paid HITs are not offered to you" in home
    assert f"{QUIZ_BONUS_MARK - 1} of {QUIZ_ITEMS_PER_HIT} right" in home


def test_without_a_pass_no_paid_hit_is_claimed_and_the_quiz_is_one_attempt(annotators, clock):
    make_pool(20)
    campaign = quiz_campaign(seats=2)
    worker = worker_for_user(annotators[0])
    first = claim_next_hit(worker, campaign)
    assert first.hit.kind == HIT.QUALIFICATION
    clock.advance((campaign.time_limit_minutes + 1) * 60)  # let it expire unanswered
    assert claim_next_hit(worker, campaign) is None  # neither the quiz again nor a paid HIT
    assert claim_next_hit(worker_for_user(annotators[1]), campaign).hit_id == first.hit_id
    home = signed_in(annotators[0]).get(reverse("labeling:worker_home")).content.decode()
    assert 'data-state="expired"' in home


def test_a_seat_whose_answers_were_shown_is_never_handed_to_another_worker(annotators, clock):
    make_pool(20)
    campaign = quiz_campaign(seats=1)
    client = signed_in(annotators[0])
    quiz = claim(client, campaign)
    client.post(reverse("labeling:answer_item", args=[quiz.pk, 1]), {"go": "next", "answer": GOLD})
    clock.advance((campaign.time_limit_minutes + 1) * 60)  # abandoned after one checked screen
    assert claim_next_hit(worker_for_user(annotators[1]), campaign) is None
    quiz.hit.refresh_from_db()
    assert quiz.hit.seats_free == 0  # the claim's recount found the spent seat held


def test_a_campaign_without_the_step_never_offers_its_quiz_hit(annotators):
    make_pool(20)
    campaign = quiz_campaign(seats=1)
    campaign.qualification_required = False
    campaign.save(update_fields=["qualification_required"])
    assignment = claim_next_hit(worker_for_user(annotators[0]), campaign)
    assert assignment.hit.kind == HIT.REGULAR
    assert claim_next_hit(worker_for_user(annotators[1]), campaign).hit.kind == HIT.REGULAR


def test_a_quiz_that_would_reuse_shown_items_is_refused_with_the_figures():
    make_pool(4)
    campaign = open_campaign(qualification_required=True)
    with pytest.raises(PoolTooSmall, match="never shown before"):
        qualification.build_qualification_hit(campaign, 1)
    assert not HIT.objects.filter(campaign=campaign).exists()
    assert not QuizQuestion.objects.filter(exposures__gt=0).exists()  # nothing reserved


def test_the_quiz_pays_its_own_reward_and_no_bonus(annotators):
    make_pool(20)
    campaign = quiz_campaign(qualification_reward=Decimal("0.70"))
    quiz = claim_next_hit(worker_for_user(annotators[0]), campaign)
    answer_everything(quiz)
    submit_assignment(quiz)
    payments.approve_assignment(quiz)
    payments.record_payments(campaign)
    assert list(quiz.payments.values_list("kind", "amount")) == [("reward", Decimal("0.70"))]


# --- history across campaigns, on the dashboard -------------------------------------------------


def test_quiz_history_across_two_campaigns_shows_on_the_dashboard(annotators, researcher):
    make_pool(30)
    first = quiz_campaign(seats=1, name="First")
    second = open_campaign(name="Second", dialogues_per_hit=2, quiz_per_hit=1)
    build_hits(second, make_dialogues(2, prefix="second"), seed=4)
    client = signed_in(annotators[0])
    quiz = claim(client, first)
    take_quiz(client, quiz, wrong=1)  # 4 of 5 right
    submit(client, quiz)
    paid = claim_next_hit(quiz.worker, second)
    answer_everything(paid)  # its one quiz item right
    submit_assignment(paid)

    rows = {row["worker"]: row for row in qualification.dashboard_rows(second)}
    row = rows["annotator1"]
    assert (row["right"], row["total"], row["campaigns"]) == (5, 6, 2)  # 4/5 + 1/1, by hand
    assert row["accuracy"] == pytest.approx(5 / 6)
    staff = signed_in(researcher)
    html = staff.get(reverse("labeling:campaign_detail", args=[second.pk])).content.decode()
    assert 'id="quiz-history"' in html and "5 / 6" in html and "0.833" in html
    html = staff.get(reverse("labeling:campaign_detail", args=[first.pk])).content.decode()
    assert "passed</span> 4/5" in html and "5 / 6" in html  # here too: every campaign counts


def test_the_dashboard_shows_the_first_workers_and_the_quiz_history_page_every_one(researcher, monkeypatch):
    """A campaign of 1M answers has 5,000 workers: the dashboard shows the first few (by worker id),
    the quiz history page every one, a page at a time, with the same rows."""
    monkeypatch.setattr(qualification, "DASHBOARD_QUIZ_ROWS", 2)
    monkeypatch.setattr(qualification, "QUIZ_HISTORY_PAGE", 2)
    campaign = open_campaign(name="Many workers")
    people = crowd_factories.make_workers(5)
    dialogues = crowd_factories.make_dialogues(1, prefix="many")
    crowd_factories.make_answered_hit(campaign, people, {dialogues[0]: ["Sad"] * 5})
    everyone = qualification.dashboard_rows(campaign)
    assert [row["worker"] for row in everyone] == sorted(worker.external_id for worker in people)
    staff = signed_in(researcher)
    html = staff.get(reverse("labeling:campaign_detail", args=[campaign.pk])).content.decode()
    assert re.findall(r'id="quiz-history-(\d+)"', html) == [str(row["id"]) for row in everyone[:2]]
    url = reverse("labeling:campaign_quiz_history", args=[campaign.pk])
    assert "The first 2 of 5 workers" in html and url in html
    shown = []
    for page in (1, 2, 3):
        shown += re.findall(r'id="quiz-history-(\d+)"', staff.get(f"{url}?page={page}").content.decode())
    assert shown == [str(row["id"]) for row in everyone]
    assert staff.get(f"{url}?page=4").status_code == 404
    assert staff.get(f"{url}?page=0").status_code == 400 and staff.get(f"{url}?page=x").status_code == 400


def test_the_researcher_opens_quiz_seats_from_the_campaign_page(researcher, annotators):
    make_pool(20)
    campaign = quiz_campaign(seats=0)
    staff = signed_in(researcher)
    url = reverse("labeling:campaign_qualification_seats", args=[campaign.pk])
    assert staff.post(url, {"seats": "abc"}).status_code == 302
    assert not qualification.qualification_hits(campaign).exists()
    staff.post(url, {"seats": "3"})
    hit = qualification.qualification_hits(campaign).get()
    assert hit.required_workers == 3
    assert hit.items.filter(seat__in=[1, 2, 3]).count() == 3 * QUIZ_ITEMS_PER_HIT
    assert signed_in(annotators[0]).post(url, {"seats": "3"}).status_code == 403


def test_with_htmx_the_check_replaces_the_screen_in_place(annotators):
    make_pool(20)
    campaign = quiz_campaign(seats=1)
    client = signed_in(annotators[0])
    quiz = claim(client, campaign)
    url = reverse("labeling:answer_item", args=[quiz.pk, 1])
    response = client.post(url, {"go": "next", "answer": GOLD}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200 and 'id="check-verdict" data-correct="1"' in html
    assert response["HX-Push-Url"] == reverse("labeling:quiz_check", args=[quiz.pk, 1])
    assert reverse("labeling:assignment_item", args=[quiz.pk, 2]) in html  # Next leads on
    # another worker cannot read the check page
    assert signed_in(annotators[1]).get(response["HX-Push-Url"]).status_code == 404


def test_the_api_takes_the_qualification_settings_and_refuses_a_mark_above_the_items(researcher):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(researcher)
    body = {"name": "q", "qualification_required": True, "qualification_items": 2, "qualification_mark": 3}
    refused = client.post("/api/campaigns/", body, format="json")
    assert refused.status_code == 400 and "qualification_mark" in refused.data
    created = client.post("/api/campaigns/", {"name": "q", "qualification_required": True}, format="json")
    assert created.status_code == 201
    assert (created.data["qualification_items"], created.data["qualification_mark"]) == (
        QUIZ_ITEMS_PER_HIT,
        QUIZ_BONUS_MARK,
    )
