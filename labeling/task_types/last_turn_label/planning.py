"""A label campaign's screens: each dialogue's last turn with three choices frozen at build time,
bundled into HITs with quiz dialogues from the secret pool (labeling.work.quiz_pool).

The choices are the suggestion model's top 3 within the campaign's label set (the campaign
records which model version), else the campaign's fallback three; a quiz dialogue's are built
exactly the same way, its answer not forced among them. Every screen's order is drawn per
assignment (labeling.task_types.last_turn_label.screen.choices_shown). Each quiz place gets the
pool item that looks most like one of its own HIT's work screens (screen_profiles,
labeling.crowd.quiz_matching), so the quiz follows the work's turn counts, lengths and choices.
"""

from collections.abc import Iterable, Sequence

from django.conf import settings
from django.db.models import Count, OuterRef, Subquery, Sum
from django.db.models.functions import Length

from annotation.models import Dialogue, ModelVersion, Prediction, Turn
from annotation.taxonomy import normalise_label_name
from labeling.crowd import quiz_matching
from labeling.crowd.bundling import plan_bundles, quiz_sets_per_seat, top_choices
from labeling.crowd.quiz_matching import ScreenProfile
from labeling.models import HITItem, QuizQuestion
from labeling.task_types.base import ScreenPlan
from labeling.task_types.last_turn_label.label_set import label_set_names
from labeling.work import quiz_pool
from labeling.work.label_sets import campaign_labels
from labeling.work.policy import first_seat_groups


def plan_screens(campaign, dialogues: Iterable[Dialogue], rng, *, suggester: ModelVersion | None = None) -> ScreenPlan:
    """Bundle the dialogues, in the order given, into HITs of `campaign.dialogues_per_hit` dialogues
    plus `campaign.quiz_per_hit` quiz dialogues from the secret pool, shuffled (see
    labeling.crowd.bundling and labeling.work.quiz_pool). `suggester` overrides
    ModelVersion.objects.suggester() as the model whose top 3 the screens offer.

    Each HIT needs the campaign's redundancy policy's first seats (labeling.work.policy.first_seat_groups):
    `fixed` workers_per_hit; `until_agreement` two; `model_informed` one for dialogues whose model
    top probability reaches the threshold (bundled apart), two for the rest.
    """
    dialogues = list(dialogues)
    turns = last_turns([d.pk for d in dialogues])
    suggester = suggester or ModelVersion.objects.suggester()
    plan = ScreenPlan()
    for seats_wanted, group in first_seat_groups(campaign, dialogues, turns, suggester):
        screens, ranked = _plan_group(campaign, group, turns, seats_wanted, rng, suggester)
        plan.groups.append((seats_wanted, screens))
        if suggester is not None and ranked:
            plan.suggestion_model = suggester
    return plan


def _plan_group(campaign, dialogues, turns, workers: int, rng, suggester) -> tuple[list, dict]:
    """The HITs of dialogues that all get `workers` first seats (see labeling.work.policy), and the
    suggestions their choices came from."""
    slots = workers if settings.QUIZ_ITEMS_PER_SEAT else 1
    names, fallback = label_set_names(campaign), campaign.fallback_choices
    # each quiz place matched to a work screen of its own HIT (the same targets for every seat slot)
    targets = [
        quiz_matching.targets_for_hit(work, campaign.quiz_per_hit, rng) * slots
        for work in _work_profiles_by_hit(dialogues, turns, campaign.dialogues_per_hit, suggester, names, fallback)
    ]
    # per seat, an item is one seat's: it reserves one exposure, not one per worker of the HIT
    quiz_sets = quiz_pool.draw(
        len(targets),
        campaign.quiz_per_hit * slots,
        1 if slots > 1 else workers,
        rng=rng,
        exclude_dialogue_ids=[d.pk for d in dialogues],
        label_ids=campaign_labels(campaign).values_list("pk", flat=True),
        match_to=targets,
        profiles=lambda questions: _pool_profiles(questions, suggester, names, fallback),
    )
    quiz_by_id = {q.pk: q for quiz_set in quiz_sets for q in quiz_set}
    quiz_turns = last_turns([q.dialogue_id for q in quiz_by_id.values() if q.dialogue_id is not None])
    per_seat = [quiz_sets_per_seat(quiz_set, slots) for quiz_set in quiz_sets]
    bundles = plan_bundles(
        [d.pk for d in dialogues],
        [[q.pk for q in seats_of_hit[0]] for seats_of_hit in per_seat],
        dialogues_per_hit=campaign.dialogues_per_hit,
        rng=rng,
    )
    turn_ids = [turns[d.pk].pk for d in dialogues] + [turn.pk for turn in quiz_turns.values()]
    ranked = suggested_top_k(suggester, turn_ids, names)
    screens = [
        [_screen(planned, seats_of_hit, quiz_turns, turns, ranked, fallback) for planned in bundle]
        for bundle, seats_of_hit in zip(bundles, per_seat, strict=True)
    ]
    return screens, ranked


def _work_profiles_by_hit(dialogues, turns, per_hit: int, suggester, names, fallback) -> list[list[ScreenProfile]]:
    """Per HIT (the dialogues cut in order, as plan_bundles cuts them), what its work screens show."""
    ranked = suggested_top_k(suggester, [turns[d.pk].pk for d in dialogues], names)
    profiles = screen_profiles({d.pk: turns[d.pk] for d in dialogues}, ranked, fallback)
    return [[profiles[d.pk] for d in dialogues[start : start + per_hit]] for start in range(0, len(dialogues), per_hit)]


def _pool_profiles(questions: list[QuizQuestion], suggester, names, fallback) -> dict[int, ScreenProfile]:
    """What each pool item's screen would show, by item id (the matched draw's candidates)."""
    turns = last_turns([q.dialogue_id for q in questions])
    ranked = suggested_top_k(suggester, [turn.pk for turn in turns.values()], names)
    by_dialogue = screen_profiles(turns, ranked, fallback)
    return {q.pk: by_dialogue[q.dialogue_id] for q in questions}


def screen_profiles(turns: dict[int, Turn], ranked: dict[int, list[str]], fallback) -> dict[int, ScreenProfile]:
    """By dialogue id, what its label screen shows: turn count, lengths, the three choices (as
    quiz_item and choices_for build them; fewer where the campaign has no fallback to top up)."""
    sizes = (
        Turn.objects.filter(dialogue_id__in=list(turns))
        .values("dialogue_id")
        .annotate(count=Count("pk"), chars=Sum(Length("text")))
    )
    by_dialogue = {row["dialogue_id"]: (row["count"], row["chars"] or 0) for row in sizes}
    profiles = {}
    for dialogue_id, turn in turns.items():
        suggested = ranked.get(turn.pk, [])
        try:
            choices = top_choices(suggested, fallback)
        except ValueError:
            choices = list(suggested)
        count, chars = by_dialogue[dialogue_id]
        folded = tuple(normalise_label_name(name) for name in choices)
        profiles[dialogue_id] = ScreenProfile(count, chars, len(turn.text), folded)
    return profiles


def _screen(planned, seats_of_hit, quiz_turns, turns, ranked, fallback) -> HITItem | list[HITItem]:
    """A work screen (one item every seat sees), or a quiz screen: with QUIZ_ITEMS_PER_SEAT one
    item per seat slot at the same position, the planned (seat 1) item's place in each seat's set."""
    if planned.quiz_id is not None:
        index = [q.pk for q in seats_of_hit[0]].index(planned.quiz_id)
        if len(seats_of_hit) == 1:
            return quiz_item(seats_of_hit[0][index], quiz_turns, ranked, fallback)
        items = []
        for slot, seat_set in enumerate(seats_of_hit, start=1):
            item = quiz_item(seat_set[index], quiz_turns, ranked, fallback)
            item.seat = slot
            items.append(item)
        return items
    turn = turns[planned.dialogue_id]
    choices = choices_for(turn, ranked.get(turn.pk, []), fallback)
    return HITItem(dialogue_id=planned.dialogue_id, target_turn=turn, choices=choices)


def last_turns(dialogue_ids: list[int]) -> dict[int, Turn]:
    """Each dialogue's last turn (the one its screen asks about), by dialogue id."""
    last_position = Turn.objects.filter(dialogue=OuterRef("dialogue")).order_by("-position").values("position")[:1]
    turns = Turn.objects.filter(dialogue_id__in=dialogue_ids, position=Subquery(last_position))
    by_dialogue = {turn.dialogue_id: turn for turn in turns}
    missing = [d for d in dialogue_ids if d not in by_dialogue]
    if missing:
        raise ValueError(f"dialogues without any turn cannot be labeled: ids {missing[:10]}")
    return by_dialogue


def suggested_top_k(version: ModelVersion | None, turn_ids: list[int], label_set: set[str]) -> dict[int, list[str]]:
    """Label names best first, per turn, from the suggestion model (ModelVersion.objects.suggester:
    learned from gold once there is gold, else the newest weak labeler; empty when there is none),
    keeping only the names in `label_set` (folded by normalise_label_name)."""
    if version is None:
        return {}
    found = Prediction.objects.filter(model_version=version, turn_id__in=turn_ids).values_list("turn_id", "top_k")
    return {
        turn_id: [entry[0] for entry in top_k if normalise_label_name(entry[0]) in label_set]
        for turn_id, top_k in found
    }


def choices_for(turn: Turn, ranked: list[str], fallback: list[str]) -> list[str]:
    try:
        return top_choices(ranked, fallback)
    except ValueError as error:
        raise ValueError(f"dialogue {turn.dialogue_id}: {error}; give the campaign three fallback_choices") from error


def quiz_item(
    question: QuizQuestion,
    turns: dict[int, Turn],
    ranked: dict[int, list[str]],
    fallback: Sequence[str],
) -> HITItem:
    """The HIT screen of a quiz item (unsaved; `labeling.work.hits.write_hits` places it): its dialogue,
    last turn and three choices exactly as a work item's (bundling.top_choices over the
    suggestions within the label set, `ranked`, else `fallback`). The known answer is not added:
    a choice set that always held it would tell the quiz apart (the one missing from the "Other"
    list, or the one differing from the fallback three); where it is missing, the right answer
    is given through "Other", as on a work screen."""
    if question.dialogue_id is None:  # test bank: a one-turn text with fixed choices
        return HITItem(quiz_question=question, choices=list(question.choices))
    turn = turns[question.dialogue_id]
    try:
        choices = top_choices(ranked.get(turn.pk, []), fallback)
    except ValueError as error:
        raise ValueError(
            f"quiz dialogue {question.dialogue_id}: {error}; give the campaign three fallback_choices"
        ) from error
    return HITItem(
        dialogue_id=question.dialogue_id,
        target_turn=turn,
        quiz_question=question,
        choices=choices,
    )


def qualification_screens(campaign, per_seat: list[list[QuizQuestion]], suggester) -> list[list[HITItem]]:
    """A qualification HIT's screens: per position, one quiz item a seat (its own question), built
    as a work screen's (quiz_item), so nothing tells the quiz apart."""
    questions = [question for seat_set in per_seat for question in seat_set]
    turns = last_turns([q.dialogue_id for q in questions if q.dialogue_id is not None])
    ranked = suggested_top_k(suggester, [turn.pk for turn in turns.values()], label_set_names(campaign))
    screens = []
    for index in range(len(per_seat[0]) if per_seat else 0):
        items = []
        for seat, seat_set in enumerate(per_seat, 1):
            item = quiz_item(seat_set[index], turns, ranked, campaign.fallback_choices)
            item.seat = seat
            items.append(item)
        screens.append(items)
    return screens
