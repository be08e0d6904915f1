"""Step 4, SBERT expansion (Django side): job `sbert_expand`, over the turn embeddings every later
step reads (`mlworkers.expansion.vectors`: `turn_embedding_store`, `DialogueVectors`).

    unlabeled_targets     reads the training-split dialogues with no TurnLabel at all
    save_new_labels       writes TurnLabel rows (source sbert or self) in one transaction
    sbert_expand          reads the train and validation gold (`gold`), writes TurnLabel(sbert) on the
                          last turn of every unlabeled dialogue similar enough to a gold dialogue

The search lives in `mlworkers.ml.rounds.self_labeling` and `mlworkers.ml.expansion.similarity`;
the threshold left empty is the encoder's calibration's (`mlworkers.expansion.calibration`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.db.models import Exists, OuterRef, Subquery

from annotation.models import Label, Turn, TurnLabel
from jobs.models import JobRun
from jobs.runtime import report_progress
from mlworkers.expansion.calibration import expansion_threshold
from mlworkers.expansion.vectors import DialogueVectors, turn_embedding_store
from mlworkers.gold import NoGoldLabels, gold_labels, gold_split
from mlworkers.ml.rounds import self_labeling as rounds_core

SEARCH_CHUNK = 4096  # unlabeled dialogues embedded and searched at a time


def unlabeled_targets() -> list[int]:
    """The last turn of every training-split dialogue none of whose turns has any TurnLabel: SBERT
    and self labels are training data, so a validation or test dialogue never gets one."""
    last_position = Turn.objects.filter(dialogue=OuterRef("dialogue")).order_by("-position").values("position")[:1]
    labeled = TurnLabel.objects.filter(turn__dialogue=OuterRef("dialogue"))
    return list(
        Turn.objects.filter(position=Subquery(last_position), dialogue__split=TurnLabel.TRAIN)
        .exclude(Exists(labeled))
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def save_new_labels(new_labels: Sequence[rounds_core.NewLabel]) -> int:
    """TurnLabel rows for SBERT and self labels, all in one transaction (nothing half-saved)."""
    labels = Label.objects.by_names({n.label for n in new_labels})
    dialogue_of = dict(
        Turn.objects.filter(pk__in={n.source_key for n in new_labels if n.source_key}).values_list("pk", "dialogue_id")
    )
    rows = []
    for new in new_labels:
        provenance: dict[str, Any] = {"round": new.round}
        if new.source == rounds_core.SBERT:
            provenance.update(
                source_dialogue=dialogue_of.get(new.source_key),
                source_turn=new.source_key,
                similarity=round(float(new.similarity), 6),
            )
        rows.append(
            TurnLabel(
                turn_id=new.key,
                label=labels[new.label],
                source=new.source,
                confidence=new.confidence,
                provenance=provenance,
            )
        )
    with transaction.atomic():
        created = TurnLabel.objects.bulk_create(rows, ignore_conflicts=True)
    return len(created)


def sbert_expand(
    job: JobRun, threshold: float | None = None, round_number: int = 1, method: str = "faiss"
) -> dict[str, Any]:
    """Every unlabeled dialogue at or above `threshold` (empty: calibrated to the encoder, else the paper's)
    of a gold training dialogue takes its label on its last turn (most similar wins; never test gold)."""
    from mlworkers.ml.expansion.similarity import SEARCHERS

    chosen = expansion_threshold(threshold)
    gold_split(job)
    gold = gold_labels([TurnLabel.TRAIN, TurnLabel.VALIDATION])
    if not gold:
        raise NoGoldLabels("no crowd gold labels yet: aggregate a campaign first")
    store = turn_embedding_store(progress=lambda d, t: report_progress(job, d, t, f"embedding turns {d}/{t}"))
    targets = unlabeled_targets()
    expand = rounds_core.vector_expander(DialogueVectors(store), search=SEARCHERS[method])
    sources = [rounds_core.Item(k, (), v) for k, v in gold.items()]
    report_progress(job, 0, 1, f"searching {len(targets)} unlabeled dialogues against {len(sources)} gold")
    matches = []
    for start in range(0, len(targets), SEARCH_CHUNK):  # one chunk's dialogue vectors at a time
        candidates = [rounds_core.Item(k, ()) for k in targets[start : start + SEARCH_CHUNK]]
        matches += expand(sources, candidates, chosen.value)
    new = [
        rounds_core.NewLabel(key, gold[source], rounds_core.SBERT, int(round_number), similarity, source, similarity)
        for key, source, similarity in matches
    ]
    created = save_new_labels(new) if new else 0
    found = f"{created} dialogues labeled by similarity" if created else "no unlabeled dialogue matched: nothing saved"
    report_progress(job, 1, 1, f"{found} ({chosen.note()})")
    return {"labeled": created, "gold_sources": len(sources), "unlabeled": len(targets), **chosen.as_result()}
