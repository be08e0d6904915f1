"""Store an EDOS crowd-results file as a closed campaign, in one transaction, with bulk inserts.

What becomes of the file:
- each row becomes one Dialogue (external_id = its DialogID, content_hash = `row_content_hash`:
  the text's hash namespaced by "edos-mturk" and the row's Index), so rows repeating another row's
  text (the same short exchange from different films) stay distinct items with their own three
  answers, and the stored majorities are the file's, row by row. A row imported before (same Index,
  same text, from another copy of the file) reuses the dialogue it created then.
- the file names no workers, so each answer column is one synthetic MTurk worker:
  `edos-worker-1`, `edos-worker-2`, `edos-worker-3` (platform mturk).
- aggregation then stores, per row, the strict majority of the three answers with typed labels
  normalised (so "neutral (Other)" counts as Neutral): `majority_normalized` of the figures, not
  the paper's `majority`, which keeps typed answers apart. Rows whose winner is a taxonomy label
  get a crowd TurnLabel.
- rows are bundled 15 to a HIT (no quiz items), each HIT with one approved assignment per worker
  who answered in it.
  An answer without the ` (Other)` suffix is stored as chosen from the top 3 (the file does not
  say whether it came from the three suggestions or the full list); a typed one as a new label.
- the campaign is closed, pays nothing (the workers were paid on MTurk) and remembers the file's
  sha256, so importing the same file twice is refused, and its provenance (imported, format
  edos-mturk, CC BY 4.0 and the paper's citation), which the study report and the dataset card
  state: the HITs and workers above are the importer's scaffolding, not HITs anyone did here.
"""

import hashlib
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from annotation.ingest.language import texts_language
from annotation.models import Dialogue, Label, Turn
from annotation.papers import DIALOGUES_PER_HIT
from annotation.splits import split_for
from labeling.models import Assignment, Campaign, HITItem, Response, Worker
from labeling.services.campaigns import create_campaign, set_campaign_status
from labeling.services.importers.edos_format import (
    FORMAT_NAME,
    OTHER_SUFFIX,
    SOURCE_CITATION,
    SOURCE_LICENSE,
    EdosFormatError,
    EdosRow,
    read_edos,
    row_content_hash,
    summarise,
)
from labeling.services.workers import imported_workers
from labeling.task_types.last_turn_label.aggregation import aggregate_campaign, known_labels
from labeling.work import seats
from labeling.work.hits import write_hits

ROWS_PER_HIT = DIALOGUES_PER_HIT  # the file lists the paper's HITs in order, one HIT's rows after another
SYNTHETIC_WORKERS = ("edos-worker-1", "edos-worker-2", "edos-worker-3")
_CHUNK = 900  # under SQLite's bound-parameter limit


def import_edos_mturk(path: Path, *, name: str = "") -> dict:
    """Import the file; returns its figures and what was stored. Raises EdosFormatError."""
    try:
        raw = path.read_bytes()
        content = raw.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise EdosFormatError(f"{path}: cannot read: {error}") from error
    digest = hashlib.sha256(raw).hexdigest()
    rows = read_edos(content, str(path))
    labels = Label.objects.by_names({answer.text for row in rows for answer in row.answers if not answer.typed})
    _check_answers_are_labels(rows, labels, str(path))
    figures = summarise(rows, known_labels())
    with transaction.atomic():
        previous = Campaign.objects.select_for_update().filter(source_sha256=digest).first()
        if previous is not None:
            raise EdosFormatError(f"{path}: already imported as campaign {previous.pk} ({previous.name})")
        campaign = _campaign(path, digest, name)
        turns, created = _dialogues_and_target_turns(rows)
        hits = _hits_items_answers(campaign, rows, turns, labels)
        set_campaign_status(campaign, Campaign.CLOSED)
        aggregated = aggregate_campaign(campaign)
    stored = {
        "campaign": campaign.pk,
        "dialogues_created": created,
        "dialogues_reused": len({t.dialogue_id for t in turns.values()}) - created,
        "hits": hits,
        "responses": len(rows) * len(SYNTHETIC_WORKERS),
        "aggregated": aggregated,  # its "majority" follows the normalised rule: majority_normalized
    }
    return {**figures, "stored": stored}


def _check_answers_are_labels(rows: list[EdosRow], labels: dict[str, Label], source: str) -> None:
    for row in rows:
        for answer in row.answers:
            if not answer.typed and answer.text not in labels:
                raise EdosFormatError(
                    f"{source}: line {row.line}: {answer.text!r} is not a label "
                    f"(a label typed through Other ends in ' (Other)')"
                )


def _campaign(path: Path, digest: str, name: str) -> Campaign:
    return create_campaign(
        name or f"EDOS MTurk import: {path.name}",
        description=f"Imported from {path.name} (sha256 {digest}) with import_crowd_results --format edos-mturk.",
        dialogues_per_hit=ROWS_PER_HIT,
        quiz_per_hit=0,
        workers_per_hit=len(SYNTHETIC_WORKERS),
        reward=0,
        bonus=0,
        source_sha256=digest,
        provenance=Campaign.IMPORTED,
        source_format=FORMAT_NAME,
        source_license=SOURCE_LICENSE,
        source_citation=SOURCE_CITATION,
    )


def _dialogues_and_target_turns(rows: list[EdosRow]) -> tuple[dict[str, Turn], int]:
    """The labeled (last) turn per row's content hash, creating the dialogues not yet in the corpus."""
    row_by_hash = {row_content_hash(row): row for row in rows}  # one per row: read_edos refuses a repeated Index
    hashes = list(row_by_hash)
    existing = set()
    for start in range(0, len(hashes), _CHUNK):
        chunk = hashes[start : start + _CHUNK]
        existing |= set(Dialogue.objects.filter(content_hash__in=chunk).values_list("content_hash", flat=True))
    new = [
        Dialogue(
            content_hash=h,
            external_id=row.dialog_id,
            turn_count=len(row.turns),
            split=split_for(h),
            language=texts_language(list(row.turns)),
        )
        for h, row in row_by_hash.items()
        if h not in existing
    ]
    Dialogue.objects.bulk_create(new, batch_size=_CHUNK)
    Turn.objects.bulk_create(
        [
            Turn(dialogue=dialogue, position=position, text=text, token_count=len(text.split()))
            for dialogue in new
            for position, text in enumerate(row_by_hash[dialogue.content_hash].turns)
        ],
        batch_size=_CHUNK,
    )
    return _last_turns(hashes), len(new)


def _last_turns(hashes: list[str]) -> dict[str, Turn]:
    last: dict[str, Turn] = {}
    for start in range(0, len(hashes), _CHUNK):
        chunk = hashes[start : start + _CHUNK]
        for turn in (
            Turn.objects.filter(dialogue__content_hash__in=chunk)
            .select_related("dialogue")
            .order_by("dialogue_id", "position")
        ):
            last[turn.dialogue.content_hash] = turn  # ordered by position: the last one stays
    return last


def _hits_items_answers(campaign: Campaign, rows: list[EdosRow], turns: dict[str, Turn], labels) -> int:
    chunks = [rows[start : start + ROWS_PER_HIT] for start in range(0, len(rows), ROWS_PER_HIT)]
    screens = [[_item(turns[row_content_hash(row)]) for row in chunk] for chunk in chunks]
    hits = write_hits(campaign, screens, required_workers=len(SYNTHETIC_WORKERS))
    workers = imported_workers(Worker.MTURK, SYNTHETIC_WORKERS)
    now = timezone.now()
    assignments, answers = {}, []
    for hit, chunk, items in zip(hits, chunks, screens, strict=True):
        for row, item in zip(chunk, items, strict=True):
            for worker, answer in zip(workers, row.answers, strict=True):
                if (hit.pk, worker.pk) not in assignments:
                    assignments[(hit.pk, worker.pk)] = Assignment(
                        hit_id=hit.pk,
                        worker_id=worker.pk,
                        status=Assignment.APPROVED,
                        expires_at=now,
                        submitted_at=now,
                        platform_confirmed_at=now,  # the platform's own results file
                    )
                answers.append((item, assignments[(hit.pk, worker.pk)], answer))
    Assignment.objects.bulk_create(assignments.values(), batch_size=_CHUNK)
    seats.recount(campaign.hits.all())  # the file's work holds its seats
    Response.objects.bulk_create([_response(*a, labels) for a in answers], batch_size=_CHUNK)
    return len(hits)


def _item(turn: Turn) -> HITItem:
    return HITItem(dialogue_id=turn.dialogue_id, target_turn_id=turn.pk)


def _response(item: HITItem, assignment: Assignment, answer, labels) -> Response:
    ids = {"assignment_id": assignment.pk, "item_id": item.pk}
    if answer.typed:
        # as typed (only the suffix cut): two spellings the paper counted apart stay apart
        return Response(**ids, new_label_text=answer.raw.removesuffix(OTHER_SUFFIX), method=Response.OTHER_NEW)
    return Response(**ids, label_id=labels[answer.text].pk, method=Response.TOP3)
