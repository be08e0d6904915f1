import random
from collections import Counter

import pytest

from annotation.models import Label, ModelVersion, Prediction
from labeling.crowd.bundling import PlannedItem, bundle_count, plan_bundles, top_choices
from labeling.models import HIT, HITItem, QuizQuestion
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import FALLBACK, make_dialogues, open_campaign

# the HITs here take their quiz screens from the built-in one-turn quiz bank
pytestmark = pytest.mark.usefixtures("quiz_demo_bank")

# --- the pure core ------------------------------------------------------------------------------


def quiz_sets(count: int, per_hit: int = 5, first: int = 1000) -> list[list[int]]:
    return [list(range(first + i * per_hit, first + (i + 1) * per_hit)) for i in range(count)]


def test_plan_bundles_cuts_ranked_dialogues_in_order_and_adds_one_quiz_set_to_every_hit():
    sets = quiz_sets(3)
    bundles = plan_bundles(list(range(1, 33)), sets, dialogues_per_hit=15, rng=random.Random(1))
    assert [len(b) for b in bundles] == [20, 20, 7]
    dialogue_order = [item.dialogue_id for bundle in bundles for item in bundle if item.dialogue_id]
    assert sorted(dialogue_order[:15]) == list(range(1, 16))
    for bundle, quiz_set in zip(bundles, sets, strict=True):
        assert sorted(item.quiz_id for item in bundle if item.quiz_id) == quiz_set


def test_plan_bundles_puts_quiz_questions_in_varying_positions():
    bundles = plan_bundles(list(range(150)), quiz_sets(10), dialogues_per_hit=15, rng=random.Random(7))
    quiz_positions = Counter(i for bundle in bundles for i, item in enumerate(bundle) if item.quiz_id)
    assert len(quiz_positions) > 10  # not always the same five places


def test_plan_bundles_refuses_a_quiz_set_count_that_does_not_match_the_hits():
    assert bundle_count(16, 15) == 2 and bundle_count(15, 15) == 1 and bundle_count(0, 15) == 0
    with pytest.raises(ValueError, match="1 quiz sets for 2 HITs"):
        plan_bundles(list(range(16)), quiz_sets(1), dialogues_per_hit=15, rng=random.Random(0))


def test_plan_bundles_is_reproducible_with_a_seed():
    def plan(seed):
        return plan_bundles(list(range(30)), quiz_sets(2), dialogues_per_hit=15, rng=random.Random(seed))

    assert plan(3) == plan(3)
    assert plan(3) != plan(4)
    assert PlannedItem(dialogue_id=1) in plan(3)[0] + plan(3)[1]


def test_top_choices_tops_up_from_the_fallback_without_repeats():
    assert top_choices(["Sad", "Lonely", "Afraid", "Angry"], FALLBACK) == ["Sad", "Lonely", "Afraid"]
    assert top_choices(["sad"], FALLBACK) == ["sad", "Neutral", "Joyful"]
    assert top_choices([], FALLBACK) == FALLBACK
    with pytest.raises(ValueError, match="three are needed"):
        top_choices(["Sad"], [])


# --- build_hits ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_build_hits_bundles_fifteen_dialogues_and_five_quiz_questions_per_hit():
    campaign = open_campaign(workers_per_hit=3)
    dialogues = make_dialogues(20)
    hits = build_hits(campaign, dialogues, seed=1)
    assert [h.items.count() for h in hits] == [20, 10]
    assert all(h.required_workers == 3 for h in hits)
    assert [h.position for h in hits] == [1, 2]
    first = hits[0].items.all()
    assert sum(1 for item in first if item.is_quiz) == 5
    assert sorted(i.position for i in first) == list(range(1, 21))
    assert {i.dialogue_id for i in first if not i.is_quiz} == {d.pk for d in dialogues[:15]}


@pytest.mark.django_db
def test_build_hits_targets_the_last_turn_and_uses_the_fallback_without_predictions():
    campaign = open_campaign()
    dialogue = make_dialogues(1)[0]
    build_hits(campaign, [dialogue], seed=0)
    item = HITItem.objects.get(dialogue=dialogue)
    assert item.target_turn == dialogue.turns.order_by("-position").first()
    assert item.choices == FALLBACK


@pytest.mark.django_db
def test_build_hits_freezes_the_newest_weak_labelers_top_three():
    campaign = open_campaign()
    dialogue = make_dialogues(1)[0]
    last = dialogue.turns.order_by("-position").first()
    sad = Label.objects.get(name="Sad")
    old = ModelVersion.objects.create(kind=ModelVersion.WEAK, name="old", base_model="x")
    new = ModelVersion.objects.create(kind=ModelVersion.WEAK, name="new", base_model="x")
    Prediction.objects.create(
        turn=last, model_version=old, label=sad, confidence=0.9, top_k=[["Angry", 0.9], ["Sad", 0.05], ["Lonely", 0.05]]
    )
    Prediction.objects.create(
        turn=last,
        model_version=new,
        label=sad,
        confidence=0.8,
        top_k=[["Sad", 0.8], ["Lonely", 0.1], ["Devastated", 0.05], ["Angry", 0.05]],
    )
    build_hits(campaign, [dialogue], seed=0)
    item = HITItem.objects.get(dialogue=dialogue)
    assert item.choices == ["Sad", "Lonely", "Devastated"]
    Prediction.objects.filter(model_version=new).update(top_k=[["Joyful", 1.0]])
    item.refresh_from_db()
    assert item.choices == ["Sad", "Lonely", "Devastated"]  # frozen at build time


@pytest.mark.django_db
def test_build_hits_quiz_items_carry_their_questions_three_choices():
    campaign = open_campaign()
    build_hits(campaign, make_dialogues(3), seed=5)
    for item in HITItem.objects.filter(quiz_question__isnull=False).select_related("quiz_question__gold_label"):
        assert sorted(item.choices) == sorted(item.quiz_question.choices)
        assert item.quiz_question.gold_label.name in item.choices
        assert item.dialogue_id is None and item.target_turn_id is None


@pytest.mark.django_db
def test_build_hits_numbers_new_hits_after_existing_ones():
    campaign = open_campaign(dialogues_per_hit=2)
    build_hits(campaign, make_dialogues(3, prefix="a"), seed=1)
    more = build_hits(campaign, make_dialogues(2, prefix="b"), seed=1)
    assert [h.position for h in more] == [3]
    assert HIT.objects.filter(campaign=campaign).count() == 3


@pytest.mark.django_db
def test_build_hits_saves_nothing_when_a_dialogue_cannot_be_offered_three_labels():
    campaign = open_campaign(fallback_choices=[])
    with pytest.raises(ValueError, match="fallback_choices"):
        build_hits(campaign, make_dialogues(2), seed=1)
    assert not HIT.objects.exists()


@pytest.mark.django_db
def test_build_hits_refuses_when_the_quiz_bank_is_too_small():
    QuizQuestion.objects.exclude(pk__in=QuizQuestion.objects.values_list("pk", flat=True)[:2]).update(is_active=False)
    with pytest.raises(ValueError, match="quiz dialogues but the pool has 0"):
        build_hits(open_campaign(), make_dialogues(2), seed=1)
    assert not HIT.objects.exists()
