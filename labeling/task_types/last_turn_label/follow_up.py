"""Follow-up seats: one more answer at a time for the items a campaign's redundancy policy has not
settled yet (labeling.crowd.redundancy.settle), until settled or the cap.

An item is looked at only once every HIT holding it is complete (its counted answers fill its
seats), so it never sits in two open follow-up HITs; its follow-up HIT needs one worker and shows
the screen its first HIT showed, with quiz items as in any HIT (tiebreak.bundle_again).
A worker who answered the item before never gets it again: a claim skips any HIT with a turn the
worker holds elsewhere (labeling.actions.claim.open_hits_for).

Safe to call any number of times, and concurrently: the campaign row is locked, and an item
with an incomplete HIT is skipped. Under `fixed` this is the tie-break (campaign.tie_breaking).

A HIT published on a crowd platform gets its one more worker as one more place there instead
(`hits_short_of_majority`, which the platform sync asks through the task type).
"""

import random
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count, F, Q

from labeling.crowd.dawid_skene import dawid_skene
from labeling.crowd.redundancy import FIXED, RedundancyPolicy, settle
from labeling.models import HIT, Campaign, HITItem, counted_assignment_q
from labeling.task_types.last_turn_label.aggregation import campaign_votes
from labeling.task_types.last_turn_label.tiebreak import bundle_again, create_tiebreak_hits
from labeling.work.policy import model_tops, policy_of


@dataclass(frozen=True)
class TurnSeats:
    seats: int  # seats bought for the turn so far, over every HIT holding it
    open: bool  # some HIT holding it still waits for answers


def create_follow_up_hits(campaign: Campaign, *, seed: int | None = None) -> list[HIT]:
    """The campaign's next seats: follow-up HITs under a policy, the tie-break under `fixed`."""
    if campaign.redundancy_policy == FIXED:
        return create_tiebreak_hits(campaign, seed=seed)
    with transaction.atomic():
        locked = Campaign.objects.select_for_update().get(pk=campaign.pk)
        items = items_needing_a_seat(locked)
        if not items:
            return []
        return bundle_again(locked, items, random.Random(seed), kind=HIT.FOLLOW_UP, workers=1)


def follow_up_for_turns(campaign: Campaign, turn_ids: list[int], *, seed: int | None = None) -> list[HIT]:
    """One more seat for these turns (a reviewer sent them back for more answers), whatever the
    policy: a follow-up HIT showing each turn's first screen, taken by a worker who has not
    answered it. A turn whose HIT still waits for answers gets nothing more (it will get them)."""
    with transaction.atomic():
        locked = Campaign.objects.select_for_update().get(pk=campaign.pk)
        waiting = {turn for turn, held in turn_seats(locked).items() if held.open}
        firsts = HITItem.objects.filter(hit__campaign=locked, quiz_question__isnull=True, target_turn_id__in=turn_ids)
        chosen: dict[int, HITItem] = {}
        for item in firsts.exclude(target_turn_id__in=waiting).order_by("hit__position", "position"):
            chosen.setdefault(item.target_turn_id, item)
        if not chosen:
            return []
        return bundle_again(locked, list(chosen.values()), random.Random(seed), kind=HIT.FOLLOW_UP, workers=1)


def extra_seat_counts(hits: list[HIT]) -> dict[str, int]:
    """What the aggregation job and command report of the HITs just opened."""
    return {
        "tiebreak_hits": sum(1 for hit in hits if hit.kind == HIT.TIE_BREAK),
        "follow_up_hits": sum(1 for hit in hits if hit.kind == HIT.FOLLOW_UP),
    }


def items_needing_a_seat(campaign: Campaign) -> list[HITItem]:
    """One item (its first screen) per turn that the policy leaves open, below the cap, with no
    HIT still waiting for answers."""
    votes = campaign_votes(campaign)
    seats = {turn: held.seats for turn, held in turn_seats(campaign).items() if not held.open}
    wanted = unsettled_turns(campaign, seats, votes)
    firsts = HITItem.objects.filter(hit__campaign=campaign, quiz_question__isnull=True, target_turn_id__in=wanted)
    chosen: dict[int, HITItem] = {}
    for item in firsts.order_by("hit__position", "position"):
        chosen.setdefault(item.target_turn_id, item)
    # items the same workers answered go together: a HIT is closed to everyone who met any of its
    # items, so a mix of many earlier workers would leave too few who may take it
    return sorted(chosen.values(), key=lambda item: _answered_by(votes.get(item.target_turn_id)))


def _answered_by(votes) -> tuple[int, ...]:
    return tuple(sorted(worker for worker, _ in votes.answers)) if votes else ()


def unsettled_turns(campaign: Campaign, seats: dict[int, int], votes=None) -> set[int]:
    """The turns of `seats` (turn -> seats bought) that the policy leaves open below its cap."""
    policy = policy_of(campaign)
    votes = campaign_votes(campaign) if votes is None else votes
    tops = model_tops(campaign, list(seats))
    posteriors = posterior_maxima(votes) if policy.posterior_below is not None else {}
    return {
        turn
        for turn, bought in seats.items()
        if _wants_a_seat(
            policy, TurnSeats(bought, False), votes.get(turn), tops.get(turn, (None, None)), posteriors.get(turn)
        )
    }


def posterior_maxima(votes: dict) -> dict[int, float]:
    """Per turn, the largest probability of its Dawid-Skene posterior over the campaign's votes so
    far (every turn's answers together: each worker's confusion is learnt from all of them)."""
    opinion = dawid_skene((turn, worker, answer) for turn, held in votes.items() for worker, answer in held.answers)
    return {turn: max(dist.values()) for turn, dist in opinion.posterior.items() if dist}


def _wants_a_seat(policy: RedundancyPolicy, held: TurnSeats, votes, top: tuple, posterior_max=None) -> bool:
    answers = [answer for _, answer in votes.answers] if votes else []
    if held.seats >= policy.cap:
        return False  # out-of-set answers never vote, so the cap counts seats, not votes
    return not settle(policy, answers, top[0], top[1], posterior_max).done


def on_a_platform(hit: HIT) -> bool:
    """Published on MTurk or Prolific (the local platform's ids start with "local:")."""
    return bool(hit.external_id) and not hit.external_id.startswith(HIT.LOCAL_PREFIX)


def turn_seats(campaign: Campaign) -> dict[int, TurnSeats]:
    """Per work turn of the campaign: the seats its HITs hold, and whether one is incomplete (or
    published on a crowd platform)."""
    hits = HIT.objects.filter(campaign=campaign).annotate(
        done=Count("assignments", filter=counted_assignment_q("assignments__"), distinct=True)
    )
    # a HIT published on a platform gets its extra places from sync (hits_short_of_majority), so its
    # items count as open here: never a local follow-up beside a platform place
    by_hit = {hit.pk: (hit.required_workers, hit.done < hit.required_workers or on_a_platform(hit)) for hit in hits}
    rows = HITItem.objects.filter(Q(hit__campaign=campaign), quiz_question__isnull=True, target_turn__isnull=False)
    seats: dict[int, TurnSeats] = {}
    for turn, hit in rows.values_list("target_turn_id", "hit_id").distinct():
        required, incomplete = by_hit[hit]
        before = seats.get(turn, TurnSeats(0, False))
        seats[turn] = TurnSeats(before.seats + required, before.open or incomplete)
    return seats


# --- published HITs: one more place on the platform instead of a follow-up HIT ---------------------


def hits_short_of_majority(campaign: Campaign) -> list[HIT]:
    """Published regular HITs whose every seat holds counted work, with a dialogue item whose
    turn has no majority yet (2 of 3 ...), and room for one more worker. Under `fixed` only with
    tie-breaking on: `fixed` buys exactly the first seats otherwise, as the cost preview counts.
    Under another redundancy policy: an item the policy leaves open, below its cap."""
    if campaign.redundancy_policy != FIXED:
        return _hits_short_under_policy(campaign)
    if not campaign.tie_breaking:
        return []
    votes = campaign_votes(campaign)  # a label outside the campaign's set votes for nothing
    short = []
    for hit in _complete_published(campaign, campaign.workers_per_hit + campaign.tie_break_workers):
        if any(turn in votes and not votes[turn].majority().is_majority for turn in _work_turns(hit)):
            short.append(hit)
    return short


def _hits_short_under_policy(campaign: Campaign) -> list[HIT]:
    # the local platform's HITs get follow-up HITs instead
    complete = [hit for hit in _complete_published(campaign, campaign.redundancy_cap) if on_a_platform(hit)]
    turns_of = {hit.pk: _work_turns(hit) for hit in complete}
    seats = {turn: hit.required_workers for hit in complete for turn in turns_of[hit.pk]}
    unsettled = unsettled_turns(campaign, seats)
    return [hit for hit in complete if unsettled.intersection(turns_of[hit.pk])]


def _work_turns(hit: HIT) -> list[int]:
    items = hit.items.filter(quiz_question__isnull=True, target_turn__isnull=False)
    return list(items.values_list("target_turn_id", flat=True))


def _complete_published(campaign: Campaign, cap: int):
    return (
        HIT.objects.filter(campaign=campaign, kind=HIT.REGULAR, required_workers__lt=cap)
        .exclude(external_id="")
        .annotate(done=Count("assignments", filter=counted_assignment_q("assignments__")))
        .filter(done__gte=F("required_workers"))
        .order_by("position")
    )
