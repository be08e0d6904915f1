"""Issue 34's attacks on the qualification quiz, through the real landing URLs and pages: made-up
ids must not drain its pool or hold its seats for good, a passed id with made-up sessions must get
no extra paid HIT, and a borrowed id must not spend its owner's one attempt."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.papers import QUIZ_ITEMS_PER_HIT
from labeling.actions.submit import confirm_platform_submission
from labeling.models import HIT, Assignment, Publication, QualificationResult, QuizCheck, QuizQuestion, Worker
from labeling.services import qualification
from tests.labeling.clock import clock
from tests.labeling.platform_helpers import mturk_landing, prolific_landing, prolific_sessions
from tests.labeling.test_qualification import GOLD, WRONG, make_pool, quiz_campaign

__all__ = ["clock", "prolific_sessions"]
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("prolific_sessions")]
STUDY, QUIZ_STUDY = "60paidstudy00000000000000", "60quizstudy00000000000000"


@pytest.fixture(autouse=True)
def _pool_only(settings):
    settings.QUIZ_DEMO_BANK = False
    settings.QUIZ_MAX_EXPOSURES = 3
    settings.QUIZ_RETIRE_AFTER_REVEALS = 1


def landed(response) -> Assignment:
    assert response.status_code == 302, response.content.decode()[:400]
    return Assignment.objects.get(pk=int(re.search(r"/assignments/(\d+)/", response["Location"]).group(1)))


def mturk(campaign, browser: Client, worker: str, assignment: str):
    return browser.get(mturk_landing(campaign, worker=worker, assignment=assignment, hit_id="HANDMADE"))


def answer_screens(browser: Client, assignment: Assignment, screens: int, *, answer: str = GOLD) -> list:
    """Answer the first `screens` quiz screens with Next, then open each one's check page."""
    pages = []
    for position in range(1, screens + 1):
        browser.post(reverse("labeling:answer_item", args=[assignment.pk, position]), {"go": "next", "answer": answer})
        pages.append(browser.get(reverse("labeling:quiz_check", args=[assignment.pk, position])))
    return pages


def submit(browser: Client, assignment: Assignment) -> None:
    answer_screens(browser, assignment, QUIZ_ITEMS_PER_HIT, answer=WRONG)
    assert browser.post(reverse("labeling:assignment_submit", args=[assignment.pk])).status_code == 302


def test_twenty_made_up_ids_drain_no_pool_item_and_hold_no_quiz_seat_for_good(clock):
    make_pool(110)
    campaign = quiz_campaign(seats=20)  # a study made by hand on MTurk: the quiz HIT's seats are ours
    quiz_hit = qualification.qualification_hits(campaign).get()
    for n in range(20):
        browser = Client(REMOTE_ADDR=("203.0.113.7", "198.51.100.99")[n % 2])
        assignment = landed(mturk(campaign, browser, f"FAKE{n}", f"FAKEAS{n}"))
        assert assignment.hit_id == quiz_hit.pk
        (page,) = answer_screens(browser, assignment, 1)
        assert page.status_code in (302, 404) and GOLD not in page.content.decode()  # no known answer shown
    assert not QuizCheck.objects.exists()
    assert sum(QuizQuestion.objects.values_list("reveals", flat=True)) == 0
    # an honest participant cannot get a quiz seat while they hold them ... but only until the time limit
    clock.advance((campaign.time_limit_minutes + 1) * 60)
    honest = landed(mturk(campaign, Client(REMOTE_ADDR="192.0.2.1"), "HONEST", "REAL1"))
    assert honest.hit_id == quiz_hit.pk
    quiz_hit.refresh_from_db()
    assert quiz_hit.seats_free == 20 - 1
    # and the pool was not spent: another quiz HIT of as many seats can still be built
    assert qualification.build_qualification_hit(campaign, 1, seed=5).required_workers == 1


def test_a_proven_attempt_is_shown_each_answer_and_spends_its_items(prolific_sessions):
    make_pool(20)
    campaign = quiz_campaign(seats=2)
    Publication.objects.create(campaign=campaign, platform=Worker.PROLIFIC, external_id=STUDY)
    browser = Client(REMOTE_ADDR="192.0.2.1")
    quiz = landed(browser.get(prolific_landing(campaign, worker="P1", session="S1", study=STUDY)))
    pages = answer_screens(browser, quiz, 2)
    assert all(page.status_code == 200 for page in pages) and QuizCheck.objects.count() == 2
    assert sum(QuizQuestion.objects.values_list("reveals", flat=True)) == 2


def test_a_passed_id_with_made_up_sessions_gets_no_extra_paid_hit(prolific_sessions):
    make_pool(20)
    campaign = quiz_campaign(seats=2)
    Publication.objects.create(campaign=campaign, platform=Worker.PROLIFIC, external_id=STUDY)
    browser = Client(REMOTE_ADDR="192.0.2.1")
    quiz = landed(browser.get(prolific_landing(campaign, worker="PASS", session="Q1", study=STUDY)))
    answer_screens(browser, quiz, QUIZ_ITEMS_PER_HIT)
    assert browser.post(reverse("labeling:assignment_submit", args=[quiz.pk])).status_code == 302
    confirm_platform_submission(quiz)  # the platform confirmed the quiz: the pass counts
    paid = landed(Client().get(prolific_landing(campaign, worker="PASS", session="REAL2", study=STUDY)))
    assert paid.hit.kind == HIT.REGULAR
    for n in range(6):
        link = prolific_landing(campaign, worker="PASS", session=f"MADEUP{n}", study=STUDY, made_up=True)
        # not listed by Prolific: still checking within the session's first minutes, then refused
        assert Client(REMOTE_ADDR="203.0.113.7").get(link).status_code in (202, 429)
    assert Assignment.objects.filter(hit__kind=HIT.REGULAR).count() == 1


def test_a_passed_mturk_id_with_made_up_assignments_takes_phantom_places_only(prolific_sessions):
    make_pool(20)
    campaign = quiz_campaign(seats=2, workers_per_hit=1)
    Publication.objects.create(campaign=campaign, platform=Worker.MTURK, external_id="TYPE1")
    for hit in campaign.hits.all():
        HIT.objects.filter(pk=hit.pk).update(external_id=f"MT{hit.pk}")
    quiz_hit = qualification.qualification_hits(campaign).get()
    paid_hit = campaign.hits.get(kind=HIT.REGULAR)
    browser = Client(REMOTE_ADDR="192.0.2.1")
    link = mturk_landing(campaign, worker="PASS", assignment="QA1", hit_id=f"MT{quiz_hit.pk}")
    quiz = landed(browser.get(link))
    answer_screens(browser, quiz, QUIZ_ITEMS_PER_HIT)
    browser.post(reverse("labeling:assignment_submit", args=[quiz.pk]))
    confirm_platform_submission(quiz)
    for n in range(6):
        made_up = mturk_landing(campaign, worker="PASS", assignment=f"MADEUP{n}", hit_id=f"MT{paid_hit.pk}")
        response = Client(REMOTE_ADDR="203.0.113.7").get(made_up)
        assert response.status_code in (302, 409)
    paid_hit.refresh_from_db()
    assert paid_hit.seats_free == 1  # its one seat is still there for a real worker
    assert not Assignment.objects.filter(hit=paid_hit, phantom=False).exists()


def test_a_borrowed_id_cannot_spend_its_owners_one_attempt():
    make_pool(20)
    campaign = quiz_campaign(seats=3)
    attacker = Client(REMOTE_ADDR="203.0.113.7")
    taken = landed(mturk(campaign, attacker, "VICTIM", "MADEUPAS"))
    submit(attacker, taken)  # 0 of 5: a failing result on the attacker's own identity
    assert not QualificationResult.objects.get(worker=taken.worker).passed
    # the owner's genuine landing still gets the quiz, and their own result decides
    owner = Client(REMOTE_ADDR="192.0.2.1")
    quiz = landed(mturk(campaign, owner, "VICTIM", "REALAS"))
    assert quiz.hit.kind == HIT.QUALIFICATION and quiz.worker != taken.worker
    home = owner.get(reverse("labeling:worker_home")).content.decode()
    assert "You did not pass" not in home and 'data-state="failed"' not in home
    answer_screens(owner, quiz, QUIZ_ITEMS_PER_HIT)
    owner.post(reverse("labeling:assignment_submit", args=[quiz.pk]))
    confirm_platform_submission(quiz)
    paid = landed(mturk(campaign, Client(REMOTE_ADDR="192.0.2.1"), "VICTIM", "REALAS2"))
    assert paid.hit.kind == HIT.REGULAR


def test_a_proven_attempt_is_the_persons_one(prolific_sessions):
    make_pool(20)
    campaign = quiz_campaign(seats=3)
    Publication.objects.create(campaign=campaign, platform=Worker.PROLIFIC, external_id=STUDY)
    browser = Client(REMOTE_ADDR="192.0.2.1")
    quiz = landed(browser.get(prolific_landing(campaign, worker="P1", session="S1", study=STUDY)))
    submit(browser, quiz)
    again = Client(REMOTE_ADDR="192.0.2.1").get(prolific_landing(campaign, worker="P1", session="S2", study=STUDY))
    assert again.status_code == 409  # no second attempt, no paid HIT: the person failed
    assert Assignment.objects.count() == 1
