"""Issue 34's attack "two made-up seats of one HIT compared": a worker holding two seats of one HIT
diffs what the pages show, screen by screen. Were quiz screens per seat and work shared, the
positions that differ would be the quiz. With the shipped setting (quiz items shared by a HIT's
seats) every screen is the same for both seats; with QUIZ_ITEMS_PER_SEAT=1 the diff finds every
quiz position, so this test can fail."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Label
from labeling.models import Assignment, QuizQuestion
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import make_dialogues, open_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def one_hit(settings):
    """An open campaign of one HIT (four dialogues, two quiz screens, three seats) and a pool of
    real dialogues; built by each test after it chose its setting."""
    settings.QUIZ_DEMO_BANK = False
    sad = Label.objects.get(name="Sad")
    for dialogue in make_dialogues(9, prefix="pool"):
        QuizQuestion.objects.create(
            dialogue=dialogue, text=dialogue.turns.last().text, gold_label=sad, source=QuizQuestion.IMPORTED
        )

    def build():
        campaign = open_campaign(dialogues_per_hit=4, quiz_per_hit=2, workers_per_hit=3)
        build_hits(campaign, make_dialogues(4), seed=3)
        return campaign

    return build


def seat_through_pages(user, campaign) -> tuple[Client, Assignment]:
    """Sign in and press "take a HIT", as a worker holding a made-up seat would."""
    browser = Client()
    browser.force_login(user)
    response = browser.post(reverse("labeling:claim"), {"campaign": campaign.pk})
    assert response.status_code == 302
    return browser, Assignment.objects.get(worker__user=user)


def what_the_page_shows(browser: Client, assignment: Assignment, position: int) -> tuple:
    """The screen as a worker compares it: the dialogue, the choices as a set (their order is
    drawn per seat, for work and quiz alike) and the rest of the markup with the seat's own
    address, token and deadline masked."""
    page = browser.get(reverse("labeling:assignment_item", args=[assignment.pk, position]))
    assert page.status_code == 200
    section = re.search(r'<section id="hit-item".*?</section>', page.content.decode(), re.S).group(0)
    choices = tuple(sorted(re.findall(r'name="answer" value="([^"]+)" data-key', section)))
    masked = re.sub(rf"/assignments/{assignment.pk}/", "/assignments/N/", section)
    masked = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", masked)
    masked = re.sub(r"\d\d:\d\d UTC", "", masked)
    masked = re.sub(
        r'<label[^>]*>\s*<input type="radio" name="answer" value="[^"]+" data-key.*?</label>', "", masked, flags=re.S
    )
    return choices, masked


def compare_two_seats(campaign, users) -> tuple[dict[int, bool], set[int]]:
    """Two identities on the same HIT: per position, whether the pages differ; and the quiz positions."""
    (browser_a, seat_a), (browser_b, seat_b) = (seat_through_pages(user, campaign) for user in users)
    assert seat_a.hit_id == seat_b.hit_id
    positions = sorted(set(seat_a.hit.items.values_list("position", flat=True)))
    differs = {
        p: what_the_page_shows(browser_a, seat_a, p) != what_the_page_shows(browser_b, seat_b, p) for p in positions
    }
    quiz = set(seat_a.hit.items.filter(quiz_question__isnull=False).values_list("position", flat=True))
    return differs, quiz


def test_two_seats_of_one_hit_are_shown_the_same_screens_with_the_shipped_setting(one_hit, annotators):
    differs, quiz = compare_two_seats(one_hit(), annotators[:2])
    assert len(differs) == 6 and len(quiz) == 2
    assert not any(differs.values())  # the diff points at nothing: no better than chance


def test_with_quiz_items_per_seat_the_diff_finds_every_quiz_screen(one_hit, annotators, settings):
    settings.QUIZ_ITEMS_PER_SEAT = True
    differs, quiz = compare_two_seats(one_hit(), annotators[:2])
    assert {position for position, differ in differs.items() if differ} == quiz and len(quiz) == 2
