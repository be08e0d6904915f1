"""The annotator's pages end to end through the test client, as htmx and as plain HTML."""

import re
from datetime import timedelta
from html.parser import HTMLParser

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from annotation.models import Label
from labeling.models import HIT, Assignment, Response
from labeling.services.workers import worker_for_user
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import (
    make_dialogues,
    open_campaign,
    screen_item,
)

# the HITs here take their quiz screens from the built-in one-turn quiz bank
pytestmark = pytest.mark.usefixtures("quiz_demo_bank")

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def campaign(db):
    campaign = open_campaign(dialogues_per_hit=4, quiz_per_hit=2)
    build_hits(campaign, make_dialogues(4), seed=11)
    return campaign


@pytest.fixture
def annotator(client, annotators):
    client.force_login(annotators[0])
    return client


def start_hit(client) -> Assignment:
    response = client.post(reverse("labeling:claim"))
    assert response.status_code == 302
    return Assignment.objects.get(pk=int(re.search(r"/assignments/(\d+)/", response["Location"]).group(1)))


def item_url(assignment, position, name="assignment_item"):
    return reverse(f"labeling:{name}", args=[assignment.pk, position])


def answer(client, assignment, position, go="stay", **data):
    return client.post(item_url(assignment, position, "answer_item"), {"go": go, **data}, **HTMX)


def test_home_lists_open_campaigns_with_a_start_button(annotator, campaign):
    page = annotator.get(reverse("labeling:worker_home")).content.decode()
    assert "Night shift" in page and "Start a HIT" in page
    assert reverse("labeling:instructions") in page


def test_a_platform_link_narrows_home_to_its_campaign(annotator, campaign):
    open_campaign(name="Day shift")
    page = annotator.get(reverse("labeling:worker_home"), {"campaign": campaign.pk, "hit": 1}).content.decode()
    assert "Night shift" in page and "Day shift" not in page
    assert "Day shift" in annotator.get(reverse("labeling:worker_home")).content.decode()


def test_the_tutorial_shows_all_41_labels_with_description_and_examples(annotator):
    page = annotator.get(reverse("labeling:instructions")).content.decode()
    labels = Label.objects.exclude(kind=Label.PROPOSED)
    assert labels.count() == 41
    for label in labels:
        assert label.name in page and escape(label.description) in page
        assert all(escape(example) in page for example in label.examples)


def test_starting_a_hit_opens_its_first_dialog(annotator, campaign):
    assignment = start_hit(annotator)
    response = annotator.get(reverse("labeling:assignment_detail", args=[assignment.pk]))
    assert response["Location"] == item_url(assignment, 1)
    page = annotator.get(item_url(assignment, 1)).content.decode()
    assert "Dialog 1/6" in page
    assert page.count('name="answer"') == 3 + 41 + 1  # three choices, the Other list, a new label
    assert "labeling/hit.js" in page


def test_a_dialog_shows_its_target_turn_highlighted_and_examples_under_each_choice(annotator, campaign):
    assignment = start_hit(annotator)
    item = assignment.hit.items.filter(quiz_question__isnull=True).first()
    page = annotator.get(item_url(assignment, item.position)).content.decode()
    targets = re.findall(r'<li class="turn target">(.*?)</li>', page)
    assert targets == [escape(item.target_turn.text)]
    for name in item.choices:
        label = Label.objects.get(name=name)
        assert escape(label.example_1) in page


def test_every_answer_is_saved_as_given_and_shown_again_on_reload(annotator, campaign, clock):
    assignment = start_hit(annotator)
    item = screen_item(assignment, 1)
    clock.advance(10)
    response = answer(annotator, assignment, 1, answer=item.choices[1], seconds="3.5")
    assert response.status_code == 200 and "Saved" in response.content.decode()
    saved = Response.objects.get(assignment=assignment, item=item)
    assert (saved.label.name, saved.method, saved.seconds_spent) == (item.choices[1], Response.TOP3, 3.5)
    page = annotator.get(item_url(assignment, 1)).content.decode()
    assert checked(page, item.choices[1])


def test_next_needs_an_answer_and_then_moves_on(annotator, campaign):
    assignment = start_hit(annotator)
    refused = answer(annotator, assignment, 1, go="next")
    assert "Choose a label" in refused.content.decode() and "Dialog 1/6" in refused.content.decode()
    first = screen_item(assignment, 1)
    moved = answer(annotator, assignment, 1, go="next", answer=first.choices[0])
    assert "Dialog 2/6" in moved.content.decode()
    assert moved["HX-Push-Url"] == item_url(assignment, 2)
    assert "<html" not in moved.content.decode()  # a partial for htmx


def test_back_keeps_the_answers_given(annotator, campaign):
    assignment = start_hit(annotator)
    first = screen_item(assignment, 1)
    answer(annotator, assignment, 1, go="next", answer="Nostalgic")
    back = answer(annotator, assignment, 2, go="back").content.decode()
    assert "Dialog 1/6" in back
    assert re.search(r'value="Nostalgic"\s*checked', back)
    assert '<details class="other" id="other-panel" open>' in back
    assert Response.objects.get(assignment=assignment, item=first).method == Response.OTHER_LIST


def test_other_accepts_a_new_label_typed_by_the_worker(annotator, campaign):
    assignment = start_hit(annotator)
    answer(annotator, assignment, 1, answer="__new__", new_label="Quietly smug")
    saved = Response.objects.get(assignment=assignment)
    assert (saved.label, saved.new_label_text, saved.method) == (None, "Quietly smug", Response.OTHER_NEW)
    page = annotator.get(item_url(assignment, 1)).content.decode()
    assert 'value="Quietly smug"' in page


def test_without_htmx_the_same_endpoints_redirect(annotator, campaign):
    assignment = start_hit(annotator)
    first = screen_item(assignment, 1)
    response = annotator.post(item_url(assignment, 1, "answer_item"), {"go": "next", "answer": first.choices[0]})
    assert response.status_code == 302 and response["Location"] == item_url(assignment, 2)


def complete_and_submit(client, assignment, *, wrong_quiz: int):
    items = list(assignment.hit.items.select_related("quiz_question__gold_label"))
    for item in items:
        name = item.choices[0]
        if item.is_quiz:
            gold = item.quiz_question.gold_label.name
            name = next(c for c in item.choices if c != gold) if wrong_quiz else gold
            wrong_quiz = max(wrong_quiz - 1, 0)
        last = answer(client, assignment, item.position, go="next", answer=name)
    assert "Review and submit" in last.content.decode()
    assert last["HX-Push-Url"] == reverse("labeling:assignment_review", args=[assignment.pk])
    return client.post(reverse("labeling:assignment_submit", args=[assignment.pk]))


def test_submission_shows_the_quiz_answers_given_wrong_then_a_completion_code(annotator, campaign):
    assignment = start_hit(annotator)
    response = complete_and_submit(annotator, assignment, wrong_quiz=1)
    assert response["Location"] == reverse("labeling:assignment_feedback", args=[assignment.pk])
    feedback = annotator.get(response["Location"]).content.decode()
    wrong_item = next(i for i in assignment.hit.items.select_related("quiz_question__gold_label") if i.is_quiz)
    assert "1 of 2" in feedback
    assert wrong_item.quiz_question.gold_label.name in feedback
    assert escape(wrong_item.quiz_question.explanation) in feedback
    done = annotator.get(reverse("labeling:assignment_done", args=[assignment.pk])).content.decode()
    assignment.refresh_from_db()
    assert assignment.status == Assignment.SUBMITTED
    assert assignment.completion_code in done


def test_a_refused_submission_says_why(annotator, campaign):
    assignment = start_hit(annotator)
    response = annotator.post(reverse("labeling:assignment_submit", args=[assignment.pk]), follow=True)
    assert "Answer every item before submitting" in response.content.decode()
    assert Assignment.objects.get(pk=assignment.pk).status == Assignment.ACCEPTED


# --- quiz screens give nothing away -------------------------------------------------------------


class Skeleton(HTMLParser):
    """The page's shape: tags with their attribute names and classes, no text, no values."""

    def __init__(self):
        super().__init__()
        self.shape: list[tuple] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("class") == "turn":  # context turns: a quiz is shown as a one-turn dialogue
            return
        kept = {k: v for k, v in attrs.items() if k in {"class", "id", "type", "name", "data-key", "data-nav"}}
        # Back is disabled on the first screen and saved answers are checked, whatever the kind.
        names = tuple(sorted(set(attrs) - {"disabled", "checked"}))
        self.shape.append((tag, tuple(sorted(kept.items())), names))


def checked(page: str, name: str) -> bool:
    """Whether the choice called `name` is checked (its key depends on the assignment's order)."""
    return re.search(rf'value="{re.escape(name)}" data-key="[123]" checked', page) is not None


def skeleton(html: str) -> list[tuple]:
    body = html[html.index('<section id="hit-item"') :]
    parser = Skeleton()
    parser.feed(re.sub(r"<li class=\"turn\">.*?</li>", "", body, flags=re.S))
    return parser.shape


def test_quiz_screens_are_shaped_exactly_like_dialogue_screens_and_carry_no_gold(annotator, campaign):
    assignment = start_hit(annotator)
    shapes = {}
    for item in assignment.hit.items.select_related("quiz_question__gold_label"):
        page = annotator.get(item_url(assignment, item.position)).content.decode()
        shapes.setdefault(item.is_quiz, set()).add(tuple(skeleton(page)))
        lowered = page.lower()
        assert "quiz" not in lowered and "gold" not in lowered and "explanation" not in lowered
        if item.is_quiz:
            assert escape(item.quiz_question.explanation) not in page
            assert re.findall(r'<li class="turn target">(.*?)</li>', page) == [escape(item.quiz_question.text)]
    assert len(shapes[True]) == len(shapes[False]) == 1
    assert shapes[True] == shapes[False]


def test_the_review_page_before_submission_names_no_gold_label(annotator, campaign):
    assignment = start_hit(annotator)
    page = annotator.get(reverse("labeling:assignment_review", args=[assignment.pk])).content.decode().lower()
    assert "quiz" not in page and "gold" not in page


# --- cheap pages --------------------------------------------------------------------------------


def test_the_next_request_runs_a_bounded_number_of_queries(annotator, campaign, django_assert_max_num_queries):
    assignment = start_hit(annotator)
    first = screen_item(assignment, 1)
    with django_assert_max_num_queries(14):
        answer(annotator, assignment, 1, go="next", answer=first.choices[0])


def test_home_is_not_n_plus_one_over_the_history(annotator, annotators, campaign, django_assert_max_num_queries):
    worker = worker_for_user(annotators[0])
    for hit in campaign.hits.all():
        Assignment.objects.create(hit=hit, worker=worker, status=Assignment.EXPIRED, expires_at="2020-01-01T00:00Z")
    with django_assert_max_num_queries(14):
        page = annotator.get(reverse("labeling:worker_home")).content.decode()
    assert page.count("Expired") == campaign.hits.count()


def test_next_leaves_an_answer_the_autosave_already_stored_alone(annotator, campaign, clock):
    assignment = start_hit(annotator)
    item = screen_item(assignment, 1)
    clock.advance(10)
    answer(annotator, assignment, 1, answer=item.choices[0], seconds="2")
    answer(annotator, assignment, 1, go="next", answer=item.choices[0], seconds="5")
    assert Response.objects.get(assignment=assignment).seconds_spent == 2  # no second write
    clock.advance(10)
    answer(annotator, assignment, 1, go="next", answer=item.choices[1], seconds="1")
    saved = Response.objects.get(assignment=assignment)
    assert (saved.label.name, saved.seconds_spent) == (item.choices[1], 3)


def test_back_on_the_first_screen_shows_the_answer_just_changed(annotator, campaign):
    assignment = start_hit(annotator)
    first = screen_item(assignment, 1)
    answer(annotator, assignment, 1, answer=first.choices[0])
    page = answer(annotator, assignment, 1, go="back", answer=first.choices[1]).content.decode()
    assert "Dialog 1/6" in page
    assert checked(page, first.choices[1])
    assert not checked(page, first.choices[0])


def test_next_shows_the_answer_already_stored_on_the_next_screen(annotator, campaign):
    assignment = start_hit(annotator)
    first, second = screen_item(assignment, 1), screen_item(assignment, 2)
    answer(annotator, assignment, 1, go="next", answer=first.choices[0])
    answer(annotator, assignment, 2, answer=second.choices[2])
    answer(annotator, assignment, 2, go="back", answer=second.choices[2])
    page = answer(annotator, assignment, 1, go="next", answer=first.choices[0]).content.decode()
    assert "Dialog 2/6" in page
    assert checked(page, second.choices[2])


def test_a_warm_next_reads_only_the_user_and_the_assignment_with_two_answers(
    annotator, campaign, django_assert_num_queries, settings
):
    """The HIT's screens come from the per-process cache once read: a Next whose answer the
    autosave already stored is the session, the user, the assignment and both screens' answers
    (with the annotator fast path, the session with its user in one statement and the last two in
    another). (The session is read from the database unless REDIS_URL puts a shared cache in
    front of it: a per-process cache would keep a logged-out session alive.)"""
    assignment = start_hit(annotator)
    first = screen_item(assignment, 1)
    annotator.get(item_url(assignment, 1))  # warms the campaign's label list (once a minute per process)
    answer(annotator, assignment, 1, answer=first.choices[0])  # the autosave; also warms the cache
    with django_assert_num_queries(2 if settings.ANNOTATOR_FAST_PATH else 4):
        page = answer(annotator, assignment, 1, go="next", answer=first.choices[0]).content.decode()
    assert "Dialog 2/6" in page


def test_the_screen_cache_still_hides_another_workers_assignment(annotator, annotators, campaign):
    assignment = start_hit(annotator)
    assert annotator.get(item_url(assignment, 1)).status_code == 200  # screens now cached
    other = Client()
    other.force_login(annotators[1])
    assert other.get(item_url(assignment, 1)).status_code == 404
    first = screen_item(assignment, 1)
    refused = other.post(item_url(assignment, 1, "answer_item"), {"go": "stay", "answer": first.choices[0]}, **HTMX)
    assert refused.status_code == 404
    assert not Response.objects.exists()


def test_the_autosave_reads_the_assignment_once_and_locks_it(annotator, campaign):
    assignment = start_hit(annotator)
    first = screen_item(assignment, 1)
    annotator.get(item_url(assignment, 1))  # warms the screen cache
    with CaptureQueriesContext(connection) as queries:
        saved = answer(annotator, assignment, 1, answer=first.choices[1])
    assert "Saved" in saved.content.decode()
    reads = [q["sql"] for q in queries.captured_queries if 'FROM "labeling_assignment"' in q["sql"]]
    assert len(reads) == 1
    if connection.vendor == "postgresql":
        assert "FOR UPDATE" in reads[0]
    assert Response.objects.get(assignment=assignment).label.name == first.choices[1]


def test_an_autosave_on_an_expired_hit_is_refused_and_stores_nothing(annotator, campaign):
    assignment = start_hit(annotator)
    first = screen_item(assignment, 1)
    Assignment.objects.filter(pk=assignment.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    refused = answer(annotator, assignment, 1, answer=first.choices[0]).content.decode()
    assert "time limit" in refused
    assert not Response.objects.exists()


@pytest.mark.parametrize(("posted", "stored"), [("nan", 0.0), ("inf", 0.0), ("-4", 0.0), ("1e9", 600.0), ("x", 0.0)])
def test_posted_seconds_are_clamped_by_the_server(annotator, campaign, posted, stored, settings, clock):
    settings.SCREEN_SECONDS_CAP = 600.0
    assignment = start_hit(annotator)
    item = screen_item(assignment, 1)
    clock.advance(1200)  # the server's clock allows more than the cap
    assert answer(annotator, assignment, 1, answer=item.choices[0], seconds=posted).status_code == 200
    assert Response.objects.get(assignment=assignment, item=item).seconds_spent == stored


# --- Start a HIT with htmx: the claim answers with the first screen ------------------------------


def _claim_with_htmx(client):
    return client.post(reverse("labeling:claim"), **HTMX)


def test_a_claim_with_htmx_answers_with_the_first_screens_whole_page_and_pushes_its_url(annotator, campaign):
    response = _claim_with_htmx(annotator)
    assert response.status_code == 200
    assignment = Assignment.objects.get()
    assert response["HX-Push-Url"] == item_url(assignment, 1)
    page = response.content.decode()
    # the whole page (htmx swaps the body in and takes the title), with the screen's own script
    assert page.lstrip().lower().startswith("<!doctype html>")
    assert "<title>Dialog 1/6</title>" in page and 'id="hit-item"' in page and "labeling/hit.js" in page
    # the same screen a GET of the pushed URL shows (the CSRF token aside)
    shown = annotator.get(item_url(assignment, 1)).content.decode()
    token = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"|"X-CSRFToken": "[^"]+"')
    assert token.sub("", page) == token.sub("", shown)


def test_a_claim_with_htmx_resumes_a_live_hit_at_its_first_open_screen(annotator, campaign):
    assignment = start_hit(annotator)
    for position in (1, 2):
        label = re.search(
            r'name="answer" value="([^"]+)"', annotator.get(item_url(assignment, position)).content.decode()
        )
        answer(annotator, assignment, position, go="next", answer=label.group(1))
    response = _claim_with_htmx(annotator)
    assert response.status_code == 200
    assert response["HX-Push-Url"] == item_url(assignment, 3)
    assert "<title>Dialog 3/6</title>" in response.content.decode()


def test_a_claim_with_htmx_of_a_fully_answered_hit_sends_the_browser_to_the_review(annotator, campaign):
    assignment = start_hit(annotator)
    for position in range(1, 7):
        label = re.search(
            r'name="answer" value="([^"]+)"', annotator.get(item_url(assignment, position)).content.decode()
        )
        answer(annotator, assignment, position, go="next", answer=label.group(1))
    response = _claim_with_htmx(annotator)
    assert response.status_code == 204
    assert response["HX-Redirect"] == reverse("labeling:assignment_review", args=[assignment.pk])


def test_a_claim_with_htmx_and_nothing_left_goes_home_with_the_message(annotator, db):
    response = _claim_with_htmx(annotator)
    assert response.status_code == 302 and response["Location"] == reverse("labeling:worker_home")
    assert "No HIT is available" in annotator.get(response["Location"]).content.decode()


def test_the_home_pages_live_hit_follows_live_assignments_rule(annotator, annotators, campaign, clock):
    """The home page takes the live HIT from the history it shows (one read less): the same
    answer as live_assignment through a live HIT, its expiry, and a history longer than shown."""
    from labeling.actions.claim import live_assignment
    from labeling.fast_path import reads as hot_reads

    worker = worker_for_user(annotators[0])

    def shown_live():
        page = annotator.get(reverse("labeling:worker_home")).content.decode()
        found = re.search(r'id="resume-hit" href="/labeling/assignments/(\d+)/"', page)
        return int(found.group(1)) if found else None

    assert shown_live() is None
    assignment = start_hit(annotator)
    assert shown_live() == assignment.pk == live_assignment(worker).pk
    clock.advance((campaign.time_limit_minutes + 1) * 60)
    assert shown_live() is None and live_assignment(worker) is None
    # a history longer than the page shows: the live HIT is read, not looked for in it
    hits = HIT.objects.bulk_create(HIT(campaign=campaign, position=100 + n) for n in range(hot_reads.HISTORY_SHOWN))
    Assignment.objects.bulk_create(
        Assignment(hit=hit, worker=worker, status=Assignment.EXPIRED, expires_at=timezone.now()) for hit in hits
    )
    Assignment.objects.filter(pk=assignment.pk).update(
        status=Assignment.ACCEPTED,
        accepted_at=timezone.now() - timedelta(days=1),
        expires_at=timezone.now() + timedelta(minutes=5),
    )
    assert shown_live() == assignment.pk == live_assignment(worker).pk


def test_a_typed_label_comes_back_escaped_in_the_screen_the_type_builds(annotator, campaign):
    """last_turn_label builds its screen's parts in Python (no template autoescape there): the
    worker's own text goes back into the input's value escaped, in the swap and the whole page."""
    assignment = start_hit(annotator)
    typed = '"><script>alert(1)</script>'
    answer(annotator, assignment, 1, answer="__new__", new_label=typed)
    answer(annotator, assignment, 1, go="next", answer="__new__", new_label=typed)
    swapped = answer(annotator, assignment, 2, go="back").content.decode()
    whole = annotator.get(item_url(assignment, 1)).content.decode()
    for page in (swapped, whole):
        assert "<script>alert(1)" not in page
        assert f'value="{escape(" ".join(typed.split()))}"' in page
        assert re.search(r'value="__new__"\s*checked', page)
        assert '<details class="other" id="other-panel" open>' in page
