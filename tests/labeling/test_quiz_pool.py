"""The secret quiz pool: real dialogues as quiz items, caps, retirement, no repeats, import_quiz,
and an attacker's walk through a HIT that tries to spot the quiz screens."""

import os
import re
import subprocess
import sys
from collections import Counter

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from django.urls import reverse

from annotation.models import Label, ModelVersion, Prediction
from labeling.actions.answer import save_response
from labeling.actions.claim import claim_next_hit
from labeling.actions.submit import submit_assignment
from labeling.crowd.bundling import choice_order
from labeling.models import AggregatedLabel, Assignment, Campaign, HITItem, QuizQuestion, Response, Worker
from labeling.services.campaigns import create_campaign
from labeling.work import quiz_pool
from labeling.work.hits import build_hits
from tests.conftest import REPO_ROOT
from tests.labeling.hit_factory import FALLBACK, answer_everything, make_dialogues, open_campaign
from tests.threads import run_together


@pytest.fixture(autouse=True)
def _pool_only(settings):
    settings.QUIZ_DEMO_BANK = False
    settings.QUIZ_MAX_EXPOSURES = 3
    settings.QUIZ_RETIRE_AFTER_REVEALS = 1
    settings.QUIZ_POOL_LOW = 5


def make_pool(count: int, prefix: str = "pq", label: str = "Sad") -> list[QuizQuestion]:
    gold = Label.objects.get(name=label)
    return [
        QuizQuestion.objects.create(
            dialogue=dialogue, text=dialogue.turns.last().text, gold_label=gold, source=QuizQuestion.IMPORTED
        )
        for dialogue in make_dialogues(count, prefix=prefix)
    ]


def pool_items():
    return QuizQuestion.objects.filter(dialogue__isnull=False).order_by("pk")


# --- the pure core ------------------------------------------------------------------------------


def test_choice_order_depends_on_the_key_not_on_rank_or_answer():
    choices = ["Sad", "Lonely", "Afraid"]
    orders = Counter(tuple(choice_order(choices, f"key{i}".encode())) for i in range(600))
    assert len(orders) == 6 and min(orders.values()) > 60  # all six orders, roughly evenly
    assert choice_order(choices, b"k") == choice_order(list(reversed(choices)), b"k")  # rank does not matter


def test_with_debug_on_the_one_turn_bank_stays_off_so_the_demo_draws_from_its_pool():
    environment = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "QUIZ_DEMO_BANK", "SECRET_KEY"}}
    code = "import config.settings as s; print(s.DEBUG, s.QUIZ_DEMO_BANK)"
    shown = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=environment | {"DEBUG": "1"}, capture_output=True, text=True
    )
    assert shown.stdout.split() == ["True", "False"], shown.stderr


# --- drawing, caps, retirement ------------------------------------------------------------------


def suggest(turn, names: list[str]) -> None:
    """The newest weak labeler's top 3 for `turn`, best first."""
    weak = ModelVersion.objects.filter(kind=ModelVersion.WEAK).first()
    weak = weak or ModelVersion.objects.create(name="weak", kind=ModelVersion.WEAK)
    top_k = [[name, p] for name, p in zip(names, (0.9, 0.05, 0.03), strict=True)]
    Prediction.objects.create(
        turn=turn, model_version=weak, label=Label.objects.get(name=names[0]), confidence=0.9, top_k=top_k
    )


@pytest.mark.django_db
def test_a_quiz_items_choices_are_built_exactly_as_a_work_items_without_forcing_the_answer():
    (question,) = make_pool(1)  # known answer: Sad
    (work,) = make_dialogues(1, prefix="w")
    for dialogue in (question.dialogue, work):
        suggest(dialogue.turns.last(), ["Lonely", "Afraid", "Joyful"])
    campaign = open_campaign(dialogues_per_hit=1, quiz_per_hit=1)
    (hit,) = build_hits(campaign, [work], seed=1)
    quiz = hit.items.get(quiz_question__isnull=False)
    plain = hit.items.get(quiz_question__isnull=True)
    assert quiz.dialogue_id == question.dialogue_id and quiz.target_turn == question.dialogue.turns.last()
    assert quiz.choices == plain.choices == ["Lonely", "Afraid", "Joyful"]  # Sad is not slipped in


@pytest.mark.django_db
def test_without_suggestions_a_quiz_item_offers_the_fallback_three_like_a_work_item():
    (question,) = make_pool(1, label="Proud")  # not one of the fallback three
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=1)
    (hit,) = build_hits(campaign, make_dialogues(2, prefix="w"), seed=1)
    assert {tuple(item.choices) for item in hit.items.all()} == {tuple(FALLBACK)}


def intents_only_campaign(**fields):
    intents = Label.objects.filter(kind=Label.INTENT, is_active=True)
    names = list(intents.order_by("name").values_list("name", flat=True)[:3])
    return create_campaign("Intents", labels=intents, fallback_choices=names, **fields)


@pytest.mark.django_db
def test_an_intents_only_campaign_draws_only_intent_quiz_items():
    make_pool(6, prefix="emo", label="Sad")
    intent = Label.objects.filter(kind=Label.INTENT, is_active=True).order_by("name").last()
    make_pool(2, prefix="int", label=intent.name)
    campaign = intents_only_campaign(dialogues_per_hit=1, quiz_per_hit=1)
    build_hits(campaign, make_dialogues(2, prefix="w"), seed=4)
    drawn = HITItem.objects.filter(hit__campaign=campaign, quiz_question__isnull=False)
    assert drawn.count() == 2 and {item.quiz_question.gold_label for item in drawn} == {intent}
    assert all(set(item.choices) <= set(campaign.fallback_choices) for item in drawn)


@pytest.mark.django_db
def test_it_refuses_to_build_hits_when_too_few_quiz_items_fit_the_label_set():
    make_pool(5, label="Sad")  # plenty of items, none an intent
    campaign = intents_only_campaign(dialogues_per_hit=1, quiz_per_hit=1)
    with pytest.raises(quiz_pool.PoolTooSmall, match="pool has 0 usable ones with an answer in the campaign's label"):
        build_hits(campaign, make_dialogues(1, prefix="w"))
    assert not campaign.hits.exists() and set(pool_items().values_list("exposures", flat=True)) == {0}


@pytest.mark.django_db
def test_the_campaign_form_says_why_when_the_label_set_lacks_quiz_items_and_saves_nothing(client, researcher):
    make_pool(5, label="Sad")
    intents = Label.objects.filter(kind=Label.INTENT, is_active=True).order_by("name")
    make_dialogues(2, prefix="w")
    client.force_login(researcher)
    response = client.post(
        reverse("labeling:campaign_create"),
        {"name": "Intents", "labels": [label.pk for label in intents],
         "fallback_choices": ", ".join(label.name for label in intents[:3]), "dialogues_per_hit": 3,
         "quiz_per_hit": 1, "workers_per_hit": 3, "reward": "0.40", "bonus": "0.10", "quiz_pass_mark": 1,
         "time_limit_minutes": 30, "tie_break_workers": 2, "selection": "recent", "dialogue_count": 2},
    )  # fmt: skip
    assert response.status_code == 200
    assert "with an answer in the campaign&#x27;s label set" in response.content.decode()
    assert not Campaign.objects.filter(name="Intents").exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("how", "given"),
    [("list", "Proud"), ("typed", "  proud "), ("top3", None)],
)
def test_a_right_answer_given_through_other_scores_as_right(how, given):
    (question,) = make_pool(1, label="Proud")  # not among the fallback three the screen offers
    campaign = open_campaign(dialogues_per_hit=1, quiz_per_hit=1)
    build_hits(campaign, make_dialogues(1, prefix="w"), seed=2)
    assignment = claim_next_hit(Worker.objects.create(external_id="w1"), campaign)
    for item in assignment.hit.items.all():
        if not item.is_quiz:
            save_response(assignment, item, label_name=item.choices[0], method=Response.TOP3)
        elif how == "list":
            save_response(assignment, item, label_name=given, method=Response.OTHER_LIST)
        elif how == "typed":
            save_response(assignment, item, new_label_text=given, method=Response.OTHER_NEW)
        else:  # a wrong pick among the three
            save_response(assignment, item, label_name=item.choices[0], method=Response.TOP3)
    result = submit_assignment(assignment)
    assert (result.quiz_correct, result.quiz_total) == ((0, 1) if how == "top3" else (1, 1))
    quiz_answer = Response.objects.get(assignment=assignment, item__quiz_question=question)
    assert quiz_answer.method == (Response.TOP3 if how == "top3" else Response.OTHER_LIST)


@pytest.mark.django_db
def test_an_item_retires_after_its_exposures_and_the_pool_runs_dry_with_a_clear_error():
    make_pool(2)
    campaign = open_campaign(dialogues_per_hit=1, quiz_per_hit=1)
    build_hits(campaign, make_dialogues(2, prefix="w"), seed=1)  # two HITs of three seats: both items spent
    assert list(pool_items().values_list("exposures", flat=True)) == [3, 3]
    assert not QuizQuestion.objects.pool().exists()
    with pytest.raises(quiz_pool.PoolTooSmall, match="need 1 quiz dialogues but the pool has 0"):
        build_hits(campaign, make_dialogues(1, prefix="x"))
    assert campaign.hits.count() == 2  # nothing half-saved


@pytest.mark.django_db
def test_a_failed_build_gives_the_reserved_seats_back(settings):
    make_pool(1)
    campaign = open_campaign(dialogues_per_hit=1, quiz_per_hit=1, fallback_choices=[])
    with pytest.raises(ValueError, match="fallback_choices"):
        build_hits(campaign, make_dialogues(1, prefix="w"))
    assert pool_items().get().exposures == 0 and not campaign.hits.exists()


@pytest.mark.django_db
def test_a_wrong_answer_shown_in_feedback_retires_the_item(settings, annotators):
    settings.QUIZ_MAX_EXPOSURES = 6
    make_pool(2)
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=2)
    build_hits(campaign, make_dialogues(2, prefix="w"), seed=3)
    assignment = claim_next_hit(Worker.objects.create(external_id="w1"), campaign)
    answer_everything(assignment, wrong_quiz=1)
    result = submit_assignment(assignment)
    shown = QuizQuestion.objects.get(pk=result.wrong[0].question_id)
    assert shown.reveals == 1 and shown.retired_at is not None
    assert QuizQuestion.objects.pool().count() == 1  # the one answered right stays in the pool


@pytest.mark.django_db
def test_reveals_are_counted_and_an_item_retires_at_the_showing_that_reaches_the_limit(settings):
    settings.QUIZ_RETIRE_AFTER_REVEALS = 3
    make_pool(2)
    first, second = QuizQuestion.objects.pool().order_by("pk")
    stamps = []
    for _ in range(4):
        quiz_pool.record_reveals([first.pk])
        first.refresh_from_db()
        stamps.append((first.reveals, first.retired_at))
    assert [reveals for reveals, _ in stamps] == [1, 2, 3, 4]
    assert stamps[0][1] is None and stamps[1][1] is None
    assert stamps[2][1] is not None and stamps[3][1] == stamps[2][1]  # retired once, kept
    second.refresh_from_db()
    assert (second.reveals, second.retired_at) == (0, None)  # not shown: untouched


@pytest.mark.django_db
def test_no_worker_is_shown_the_same_quiz_item_twice(settings):
    settings.QUIZ_MAX_EXPOSURES = 6  # an item may sit in two HITs
    make_pool(1)
    campaign = open_campaign(dialogues_per_hit=1, quiz_per_hit=1)
    build_hits(campaign, make_dialogues(1, prefix="w"), seed=1)
    build_hits(campaign, make_dialogues(1, prefix="v"), seed=2)
    assert pool_items().get().exposures == 6
    worker = Worker.objects.create(external_id="w1")
    first = claim_next_hit(worker, campaign)
    answer_everything(first)
    submit_assignment(first)
    assert claim_next_hit(worker, campaign) is None  # the other HIT holds the same quiz dialogue
    assert claim_next_hit(Worker.objects.create(external_id="w2"), campaign) is not None


@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL row locks (set DATABASE_URL)")
@pytest.mark.django_db(transaction=True)
def test_builds_racing_for_the_pool_never_pass_an_items_cap():
    make_pool(10)
    campaigns = [open_campaign(name=f"c{i}", dialogues_per_hit=1, quiz_per_hit=2) for i in range(4)]
    dialogues = [make_dialogues(1, prefix=f"w{i}") for i in range(4)]

    def build(index: int):
        return build_hits(campaigns[index], dialogues[index], seed=index)

    results = run_together(4, build)
    built = [r for r in results if isinstance(r, list)]
    assert len(built) == 4, results  # 10 items for 8 quiz seats: every build gets its own
    used = Counter(HITItem.objects.filter(quiz_question__isnull=False).values_list("quiz_question_id", flat=True))
    assert max(used.values()) == 1
    assert max(pool_items().values_list("exposures", flat=True)) == 3


# --- import_quiz --------------------------------------------------------------------------------


@pytest.mark.django_db
def test_import_quiz_takes_whole_dialogues_and_is_idempotent(tmp_path):
    first, second = make_dialogues(2, prefix="imp")
    path = tmp_path / "pool.csv"
    path.write_text(f"dialogue,label,explanation\n{first.pk},proud,Own achievement.\n{second.pk},Sad,\n")
    call_command("import_quiz", str(path))
    call_command("import_quiz", str(path))
    pool = QuizQuestion.objects.pool()
    assert pool.count() == 2
    item = pool.get(dialogue=first)
    assert (item.gold_label.name, item.explanation, item.text) == ("Proud", "Own achievement.", first.turns.last().text)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("{a},Sad\n{b},NotALabel\n", "line 3: unknown label 'NotALabel'"),
        ("{a},Sad\nabc,Sad\n", "line 3: dialogue must be a dialogue id"),
        ("{a},Sad\n{a},Joyful\n", "line 3: dialogue {a} already on line 2"),
        ("{a},Sad\n999999,Sad\n", "line 3: no dialogue with id 999999"),
        ("{a},Sad\n{b},Sad\x00\n", "line 3: contains a NUL byte"),
        ("{a},Sad\n{b},Sad," + "x" * 200_000 + "\n", "line 3: a field is longer than"),
        ("{a},Sad\n" + "9" * 4000 + ",Sad\n", "line 3: dialogue must be a dialogue id"),
        ("{a},Sad\n\u00b2,Sad\n", "line 3: dialogue must be a dialogue id"),
    ],
)
def test_import_quiz_names_the_bad_line_and_saves_nothing(tmp_path, rows, message):
    (dialogue,) = make_dialogues(1, prefix="imp")
    path = tmp_path / "bad.csv"
    path.write_text("dialogue,label\n" + rows.format(a=dialogue.pk, b=dialogue.pk + 1))
    with pytest.raises(CommandError, match=re.escape(f"{path}: " + message.format(a=dialogue.pk))):
        call_command("import_quiz", str(path))
    assert not QuizQuestion.objects.filter(dialogue__isnull=False).exists()


@pytest.mark.django_db
def test_import_quiz_takes_a_campaigns_unanimous_gold():
    campaign = open_campaign()
    unanimous, split = make_dialogues(2, prefix="gold")
    sad = Label.objects.get(name="Sad")
    for dialogue, agreement in ((unanimous, 1.0), (split, 2 / 3)):
        AggregatedLabel.objects.create(
            campaign=campaign,
            dialogue=dialogue,
            turn=dialogue.turns.last(),
            label=sad,
            status=AggregatedLabel.MAJORITY,
            answer_count=3,
            agreement=agreement,
        )
    call_command("import_quiz", "--unanimous-from", str(campaign.pk))
    assert list(QuizQuestion.objects.pool().values_list("dialogue", flat=True)) == [unanimous.pk]


# --- the dashboard ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_dashboard_shows_the_pool_left_and_warns_when_low(client, researcher):
    make_pool(3)
    campaign = open_campaign()
    client.force_login(researcher)
    page = client.get(reverse("labeling:campaign_detail", args=[campaign.pk])).content.decode()
    assert 'id="quiz-pool"' in page and "3 quiz dialogues" in page and "running low" in page


# --- an attacker's walk -------------------------------------------------------------------------


def page_features(html: str) -> tuple:
    """What a script reading the page would use: turn count, the tag structure, the choice order
    against the alphabet, attributes other than text."""
    body = html[html.index('<section id="hit-item"') :]
    turns = body.count('<li class="turn')
    tags = tuple(re.findall(r"<([a-z]+)", re.sub(r'<li class="turn.*?</li>', "", body, flags=re.S)))
    choices = re.findall(r'name="answer" value="([^"]+)" data-key', body)
    return turns, tags, choices == sorted(choices)


@pytest.mark.django_db
def test_an_attacker_reading_the_pages_cannot_single_out_the_quiz_screens(annotators):
    make_pool(12)
    campaign = open_campaign(dialogues_per_hit=6, quiz_per_hit=2)
    build_hits(campaign, make_dialogues(18, prefix="w"), seed=5)
    features = {True: [], False: []}
    gold_slots = []
    for user in annotators:
        client = Client()
        client.force_login(user)
        client.post(reverse("labeling:claim"))
        assignment = Assignment.objects.get(worker__user=user)
        for item in assignment.hit.items.select_related("quiz_question__gold_label"):
            url = reverse("labeling:assignment_item", args=[assignment.pk, item.position])
            html = client.get(url).content.decode()
            assert "quiz" not in html.lower() and "gold" not in html.lower()
            features[item.is_quiz].append(page_features(html))
            if item.is_quiz:
                shown = re.findall(r'name="answer" value="([^"]+)" data-key', html)
                assert sorted(shown) == sorted(item.choices)
                gold_slots.append(shown.index(item.quiz_question.gold_label.name))
    quiz, work = features[True], features[False]
    # no feature value seen on quiz screens is absent from work screens: nothing to filter on
    assert {f[0] for f in quiz} <= {f[0] for f in work}  # turn counts (2 and 3 turns alike)
    assert {f[1] for f in quiz} <= {f[1] for f in work}  # identical page structure
    # the stored quiz choices put the answer first; the pages must not (6 quiz screens all showing
    # it first by chance: 1 in 729)
    assert any(slot != 0 for slot in gold_slots), gold_slots
    one_turn_rule = [f for f in quiz + work if f[0] == 1]
    assert not one_turn_rule  # the old tell (a one-turn "dialogue") is gone


@pytest.mark.django_db
def test_per_seat_quiz_items_spread_over_hits_within_the_cap_never_twice_in_one_hit(settings):
    # per seat, a HIT of 3 seats x 1 quiz screen needs 3 items; 6 HITs need 18 uses, and a pool of 6
    # serves them: each item sits in 3 different HITs (one exposure each), never in two seats of one
    settings.QUIZ_ITEMS_PER_SEAT = True
    make_pool(6)
    campaign = open_campaign(dialogues_per_hit=1, quiz_per_hit=1)
    hits = build_hits(campaign, make_dialogues(6, prefix="w"), seed=5)
    assert len(hits) == 6
    for hit in hits:
        quiz = list(hit.items.filter(quiz_question__isnull=False).values_list("seat", "quiz_question_id"))
        assert sorted(seat for seat, _ in quiz) == [1, 2, 3]
        assert len({question for _, question in quiz}) == 3  # no two seats of a HIT share an item
    assert list(pool_items().values_list("exposures", flat=True)) == [3] * 6
    assert not QuizQuestion.objects.pool().exists()  # every item reached its cap and retired
    with pytest.raises(quiz_pool.PoolTooSmall):
        build_hits(campaign, make_dialogues(1, prefix="x"))
    assert campaign.hits.count() == 6  # nothing half-saved


@pytest.mark.django_db
def test_a_per_seat_draw_never_puts_one_item_in_two_seats_of_a_hit_even_with_a_roomy_cap(settings):
    settings.QUIZ_ITEMS_PER_SEAT = True
    settings.QUIZ_MAX_EXPOSURES = 9
    make_pool(4)
    campaign = open_campaign(dialogues_per_hit=1, quiz_per_hit=1)
    build_hits(campaign, make_dialogues(2, prefix="w"), seed=2)  # 6 uses from 4 items, caps of 9
    for hit in campaign.hits.all():
        questions = list(hit.items.filter(quiz_question__isnull=False).values_list("quiz_question_id", flat=True))
        assert len(questions) == 3 and len(set(questions)) == 3
    assert sum(pool_items().values_list("exposures", flat=True)) == 6
