"""Quiz items drawn to look like the HIT's own work (labeling.crowd.quiz_matching, pure) and the
matched draw through build_hits (labeling.work.quiz_pool.draw with match_to)."""

import random
from collections import Counter

import pytest

from labeling.crowd.quiz_matching import ScreenProfile, distance, match, targets_for_hit


def profile(turns=3, chars=90, target=30, choices=("sad", "joyful", "neutral")) -> ScreenProfile:
    return ScreenProfile(turns, chars, target, tuple(choices))


def test_distance_is_zero_for_alike_screens_and_grows_with_each_difference():
    base = profile()
    assert distance(base, profile()) == 0
    assert distance(base, profile(turns=4)) > 0
    assert distance(base, profile(chars=300)) > distance(base, profile(chars=120)) > 0
    assert distance(base, profile(choices=("angry", "joyful", "neutral"))) > distance(
        base, profile(choices=("sad", "joyful", "afraid"))
    )


def test_each_place_gets_the_candidate_nearest_its_target():
    targets = [[profile(turns=2, chars=40), profile(turns=6, chars=400, choices=("angry", "sad", "neutral"))]]
    candidates = {
        1: profile(turns=6, chars=390, choices=("angry", "sad", "neutral")),
        2: profile(turns=2, chars=44),
        3: profile(turns=4, chars=200),
    }
    assert match(targets, candidates, {1: 1, 2: 1, 3: 1}, random.Random(1)) == [[2, 1]]


def test_no_item_twice_in_a_hit_and_no_item_past_its_uses():
    targets = [[profile(), profile()] for _ in range(3)]
    candidates = {i: profile(chars=90 + i) for i in range(1, 4)}
    chosen = match(targets, candidates, {1: 2, 2: 2, 3: 2}, random.Random(3))
    assert all(len(set(places)) == 2 for places in chosen)
    assert max(Counter(i for places in chosen for i in places).values()) <= 2


def test_a_pool_with_too_few_uses_gives_none():
    targets = [[profile(), profile()]]
    assert match(targets, {1: profile(), 2: profile()}, {1: 1, 2: 0}, random.Random(0)) is None
    # enough uses in all, but one item cannot fill two places of one HIT
    assert match(targets, {1: profile()}, {1: 2}, random.Random(0)) is None


def test_a_target_with_no_twin_falls_back_to_the_nearest_anywhere():
    targets = [[profile(turns=9, chars=900, choices=("proud", "sad", "neutral"))]]
    candidates = {1: profile(turns=2, chars=40), 2: profile(turns=5, chars=600)}
    assert match(targets, candidates, {1: 1, 2: 1}, random.Random(0)) == [[2]]


def test_targets_follow_the_hits_own_work_screens():
    work = [profile(turns=n) for n in range(2, 17)]
    chosen = targets_for_hit(work, 5, random.Random(0))
    assert len(chosen) == 5 and len(set(chosen)) == 5 and set(chosen) <= set(work)
    assert len(targets_for_hit(work[:2], 5, random.Random(0))) == 5  # a short HIT repeats its screens
    assert targets_for_hit(work, 0, random.Random(0)) == []
    with pytest.raises(ValueError, match="work screen"):
        targets_for_hit([], 1, random.Random(0))


def test_matching_a_different_source_pool_brings_the_quiz_to_the_works_mix():
    """Work of 2-3 turns, a pool mostly of long dialogues with a share like the work: the matched
    draw takes the look-alikes, a random draw would not."""
    rng = random.Random(5)
    work = [[profile(turns=rng.choice((2, 3)), chars=rng.randint(40, 90)) for _ in range(15)] for _ in range(20)]
    pool = {i: profile(turns=rng.choice((5, 6, 7)), chars=rng.randint(200, 400)) for i in range(300)}
    pool |= {1000 + i: profile(turns=rng.choice((2, 3)), chars=rng.randint(40, 90)) for i in range(150)}
    targets = [targets_for_hit(hit, 5, rng) for hit in work]
    chosen = match(targets, pool, dict.fromkeys(pool, 1), rng)
    turns = [pool[i].turns for places in chosen for i in places]
    assert sum(turns) / len(turns) < 3.1  # the pool's mean is about 5


# --- through build_hits -----------------------------------------------------------------------


@pytest.mark.django_db
def test_build_hits_draws_the_pool_items_that_look_like_the_hits_work(settings):
    from labeling.models import HITItem
    from labeling.work.hits import build_hits
    from tests.labeling.hit_factory import make_dialogues, open_campaign
    from tests.labeling.test_quiz_pool import make_pool, suggest

    settings.QUIZ_DEMO_BANK = False
    work = make_dialogues(4, prefix="w")
    unlike = make_pool(6, prefix="unlike")
    alike = make_pool(6, prefix="alike")
    for dialogue in work + [q.dialogue for q in alike]:
        suggest(dialogue.turns.last(), ["Lonely", "Afraid", "Joyful"])
    for question in unlike:
        suggest(question.dialogue.turns.last(), ["Proud", "Angry", "Grateful"])
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=2)
    build_hits(campaign, work, seed=3)
    drawn = HITItem.objects.filter(hit__campaign=campaign, quiz_question__isnull=False)
    assert drawn.count() == 4
    assert {item.quiz_question_id for item in drawn} <= {q.pk for q in alike}
    assert {tuple(item.choices) for item in drawn} == {("Lonely", "Afraid", "Joyful")}
