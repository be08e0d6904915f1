"""Tie-breaking: items left without a majority get two more workers (off unless campaign.tie_breaking).

Once every assignment of a regular HIT is in, its dialogue items whose answers have no strict
majority are bundled into new HITs of kind "tiebreak" that need `campaign.tie_break_workers`
more workers, with quiz items as in any HIT when the quiz pool has enough. Aggregation pools all
answers per turn, so the tie-break decides by the majority of all of them (e.g. 3 of 5).

Safe to call any number of times, and concurrently: the campaign row is locked, and a turn that
already sits in a tie-break HIT is never bundled again.
"""

import random

from django.db import transaction
from django.db.models import Count, F

from annotation.models import ModelVersion
from labeling.crowd.bundling import bundle_count, plan_bundles
from labeling.models import HIT, Campaign, HITItem, counted_assignment_q
from labeling.task_types.last_turn_label.aggregation import campaign_votes
from labeling.task_types.last_turn_label.label_set import label_set_names
from labeling.task_types.last_turn_label.planning import last_turns, quiz_item, suggested_top_k
from labeling.work import quiz_pool
from labeling.work.hits import write_hits
from labeling.work.label_sets import campaign_labels


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
    votes = campaign_votes(campaign)
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
        return bundle_again(campaign, items, random.Random(seed))


def bundle_again(
    campaign: Campaign,
    items: list[HITItem],
    rng: random.Random,
    *,
    kind: str = HIT.TIE_BREAK,
    workers: int | None = None,
) -> list[HIT]:
    """New HITs of `kind` needing `workers` (default tie_break_workers) more workers for these
    items, each screen as its first HIT showed it, with quiz items as in any HIT (follow_up uses it
    for a redundancy policy's one more seat)."""
    workers = campaign.tie_break_workers if workers is None else workers
    by_dialogue = {item.dialogue_id: item for item in items}
    hit_count = bundle_count(len(by_dialogue), campaign.dialogues_per_hit)
    quiz_sets = _quiz_sets(campaign, hit_count, list(by_dialogue), rng, workers)
    quiz = {q.pk: q for quiz_set in quiz_sets for q in quiz_set}
    turns = last_turns([q.dialogue_id for q in quiz.values() if q.dialogue_id is not None])
    # quiz screens only: the tie-break's own dialogues keep the choices their first HIT offered
    suggester = campaign.suggestion_model or ModelVersion.objects.suggester()
    ranked = suggested_top_k(suggester, [turn.pk for turn in turns.values()], label_set_names(campaign))
    bundles = plan_bundles(
        list(by_dialogue),
        [[q.pk for q in quiz_set] for quiz_set in quiz_sets],
        dialogues_per_hit=campaign.dialogues_per_hit,
        rng=rng,
    )
    fallback = campaign.fallback_choices
    screens = [
        [_screen(planned, by_dialogue, quiz, turns, ranked, fallback) for planned in bundle] for bundle in bundles
    ]
    return write_hits(campaign, screens, kind=kind, required_workers=workers)


def _screen(planned, by_dialogue, quiz, turns, ranked, fallback) -> HITItem:
    if planned.quiz_id is not None:
        return quiz_item(quiz[planned.quiz_id], turns, ranked, fallback)
    return _copy(by_dialogue[planned.dialogue_id])


def _quiz_sets(campaign: Campaign, hit_count: int, dialogue_ids: list[int], rng: random.Random, workers: int):
    """Quiz items as in any HIT when the pool has enough, else none (a tie-break still runs)."""
    try:
        with transaction.atomic():  # a savepoint: a short pool reserves nothing
            return quiz_pool.draw(
                hit_count,
                campaign.quiz_per_hit,
                workers,
                rng=rng,
                exclude_dialogue_ids=dialogue_ids,
                label_ids=campaign_labels(campaign).values_list("pk", flat=True),
            )
    except quiz_pool.PoolTooSmall:
        return [[] for _ in range(hit_count)]


def _copy(original: HITItem) -> HITItem:
    # the same screen the first workers saw: same turn, same three suggestions
    return HITItem(
        dialogue_id=original.dialogue_id,
        target_turn_id=original.target_turn_id,
        choices=list(original.choices),
    )
