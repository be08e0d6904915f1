"""Tie-breaking: items left without a majority get two more workers (off unless campaign.tie_breaking).

Once every assignment of a regular HIT is in, its dialogue items whose answers have no strict
majority are bundled into new HITs of kind "tiebreak" that need `campaign.tie_break_workers`
more workers, with quiz items as in any HIT when the quiz bank has enough. Aggregation pools all
answers per turn, so the tie-break decides by the majority of all of them (e.g. 3 of 5).

Safe to call any number of times, and concurrently: the campaign row is locked, and a turn that
already sits in a tie-break HIT is never bundled again.
"""

import random

from django.db import transaction
from django.db.models import Count, F

from labeling.aggregate import known_labels, load_answers, votes_by_turn
from labeling.bundling import plan_bundles
from labeling.hits import write_hits
from labeling.models import HIT, Campaign, HITItem, QuizQuestion, counted_assignment_q


def items_needing_a_tie_break(campaign: Campaign) -> list[HITItem]:
    """Dialogue items of complete regular HITs whose turn has no majority and no tie-break HIT yet."""
    complete_hits = (
        HIT.objects.filter(campaign=campaign, kind=HIT.REGULAR)
        .annotate(done=Count("assignments", filter=counted_assignment_q("assignments__")))
        .filter(done__gte=F("required_workers"))
    )
    already = HITItem.objects.filter(hit__campaign=campaign, hit__kind=HIT.TIE_BREAK).values("target_turn_id")
    candidates = HITItem.objects.filter(hit__in=complete_hits, quiz_question__isnull=True).exclude(
        target_turn_id__in=already
    )
    votes = votes_by_turn(load_answers(campaign), known_labels())
    unresolved, seen = [], set()
    for item in candidates.order_by("hit__position", "position"):
        turn_votes = votes.get(item.target_turn_id)
        if turn_votes and not turn_votes.majority().is_majority and item.target_turn_id not in seen:
            seen.add(item.target_turn_id)
            unresolved.append(item)
    return unresolved


def create_tiebreak_hits(campaign: Campaign, *, seed: int | None = None) -> list[HIT]:
    """Bundle the unresolved items into tie-break HITs; returns the new HITs (none when off)."""
    if not campaign.tie_breaking:
        return []
    with transaction.atomic():
        Campaign.objects.select_for_update().get(pk=campaign.pk)
        items = items_needing_a_tie_break(campaign)
        if not items:
            return []
        return _bundle(campaign, items, random.Random(seed))


def _bundle(campaign: Campaign, items: list[HITItem], rng: random.Random) -> list[HIT]:
    quiz = {q.pk: q for q in QuizQuestion.objects.filter(is_active=True)}
    quiz_per_hit = campaign.quiz_per_hit if len(quiz) >= campaign.quiz_per_hit else 0
    by_dialogue = {item.dialogue_id: item for item in items}
    bundles = plan_bundles(
        list(by_dialogue),
        sorted(quiz),
        dialogues_per_hit=campaign.dialogues_per_hit,
        quiz_per_hit=quiz_per_hit,
        rng=rng,
    )
    screens = [[_copy(planned, by_dialogue, quiz, rng) for planned in bundle] for bundle in bundles]
    return write_hits(campaign, screens, kind=HIT.TIE_BREAK, required_workers=campaign.tie_break_workers)


def _copy(planned, by_dialogue, quiz, rng) -> HITItem:
    if planned.quiz_id is not None:
        question = quiz[planned.quiz_id]
        choices = rng.sample(list(question.choices), len(question.choices))
        return HITItem(quiz_question=question, choices=choices)
    # the same screen the first workers saw: same turn, same three suggestions
    original = by_dialogue[planned.dialogue_id]
    return HITItem(
        dialogue_id=original.dialogue_id,
        target_turn_id=original.target_turn_id,
        choices=list(original.choices),
    )
