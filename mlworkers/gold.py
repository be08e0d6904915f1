"""Step 3, the crowd gold as the model steps read it (Django side): job `gold_split`.

    gold_split         writes the stored split of any dialogue that lacks one (the one writer,
                       `Dialogue.objects.assign_splits`) and reports how the crowd gold falls
    gold_labels        reads TurnLabel(crowd) of dialogues in the given splits
    crowd_votes        reads the workers' answers (AggregatedLabel.votes) of those dialogues
    no_majority_items  training-split turns the crowd answered without a majority
    dialogue_items     turns as the learners read them: the dialogue up to the target turn

Writes nothing else. A step that needs gold and finds none raises `NoGoldLabels`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from django.db.models import Count

from annotation.models import Dialogue, Turn, TurnLabel
from annotation.taxonomy import LABEL_NAMES
from jobs.models import JobRun
from jobs.runtime import JobCannotRun
from mlworkers.ml.rounds import self_labeling as rounds_core


class NoGoldLabels(JobCannotRun):
    """Raised by the steps that need crowd gold labels when there are none yet."""


def gold_split(job: JobRun | None = None) -> dict[str, Any]:
    """Make sure every dialogue has its stored split (`Dialogue.objects.assign_splits`, the one
    writer; ingest sets it already) and report how the crowd gold falls. A split never changes
    once stored, so the test split is fixed before any expansion and stays fixed."""
    assigned = Dialogue.objects.assign_splits()
    gold = (
        TurnLabel.objects.filter(source=TurnLabel.CROWD)
        .values("turn__dialogue__split")
        .annotate(n=Count("turn__dialogue", distinct=True))
    )
    return {
        "assigned": {name: n for name, n in assigned.items() if n},
        "gold_dialogues": {row["turn__dialogue__split"]: row["n"] for row in gold},
    }


def gold_labels(split: Sequence[str]) -> dict[int, str]:
    rows = TurnLabel.objects.filter(source=TurnLabel.CROWD, turn__dialogue__split__in=list(split)).values_list(
        "turn_id", "label__name"
    )
    return dict(rows)


def crowd_votes(splits: Sequence[str]) -> dict[int, tuple[str, ...]]:
    """The workers' answers among the 41 labels for every aggregated turn of a dialogue in `splits`
    (turn id -> one name per answer, most voted first, ties by name), from the campaigns' aggregation; answers
    typed through "Other" that are no label are left out. A turn aggregated in several campaigns
    keeps the newest aggregation's answers."""
    from labeling.models import AggregatedLabel

    known = set(LABEL_NAMES)
    rows = (
        AggregatedLabel.objects.filter(turn__dialogue__split__in=list(splits))
        .order_by("turn_id", "-updated_at", "-pk")
        .values_list("turn_id", "votes")
    )
    votes: dict[int, tuple[str, ...]] = {}
    for turn_id, counts in rows.iterator(chunk_size=5000):
        if turn_id in votes:
            continue  # an older aggregation of the same turn
        # most voted first, ties by name (a jsonb object keeps no order)
        ranked = sorted((counts or {}).items(), key=lambda pair: (-int(pair[1]), pair[0]))
        names = tuple(name for name, count in ranked if name in known for _ in range(int(count)))
        if names:
            votes[turn_id] = names
    return votes


def no_majority_items(votes: dict[int, tuple[str, ...]]) -> list[rounds_core.Item]:
    """Training-split turns the crowd answered without a 2-of-3 majority (no crowd label): items
    without a label, for training on their votes alone."""
    gold = set(gold_labels([TurnLabel.TRAIN]))
    in_train = set(
        Turn.objects.filter(pk__in=list(votes), dialogue__split=TurnLabel.TRAIN).values_list("pk", flat=True)
    )
    return dialogue_items(sorted(key for key in votes if key in in_train and key not in gold))


def dialogue_items(turn_ids: Sequence[int], labels: dict[int, str] | None = None) -> list[rounds_core.Item]:
    """Items for target turns: the dialogue's turns up to the target, chronological."""
    targets = dict(Turn.objects.filter(pk__in=list(turn_ids)).values_list("pk", "position"))
    dialogue_of = dict(Turn.objects.filter(pk__in=list(turn_ids)).values_list("pk", "dialogue_id"))
    texts = defaultdict(list)
    rows = Turn.objects.filter(dialogue_id__in=set(dialogue_of.values())).order_by("dialogue_id", "position")
    for dialogue_id, position, text in rows.values_list("dialogue_id", "position", "text").iterator(chunk_size=5000):
        texts[dialogue_id].append((position, text))
    items = []
    for pk in turn_ids:
        history = tuple(text for position, text in texts[dialogue_of[pk]] if position <= targets[pk])
        items.append(rounds_core.Item(pk, history, (labels or {}).get(pk)))
    return items
