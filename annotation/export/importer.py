"""Importing gold labels from a CSV: dialogues and turns found by content, or created; one
TurnLabel(source crowd) per row. One transaction: a bad line leaves the database as it was.
Idempotent: importing the same file twice changes nothing the second time.
"""

from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction

from annotation.export.reader import ImportedDialogue, ImportFileError
from annotation.ingest.language import texts_language
from annotation.models import Dialogue, Label, Movie, Turn, TurnLabel
from annotation.record import audit
from annotation.taxonomy import normalise_label_name

IMPORT_ACTOR = "import-dataset"
IMPORTED = "imported from a labeled dataset file"


@dataclass
class ImportResult:
    dialogues_created: int = 0
    dialogues_found: int = 0
    turns_created: int = 0
    labels_created: int = 0
    labels_updated: int = 0
    labels_unchanged: int = 0


@transaction.atomic
def import_gold(dialogues: Iterable[ImportedDialogue], filename: str = "file") -> ImportResult:
    labels = {normalise_label_name(label.name): label for label in Label.objects.all()}
    movies: dict[tuple[str, int | None], Movie] = {}
    result = ImportResult()
    for imported in dialogues:
        dialogue = _dialogue(imported, movies, result)
        turns = _turns(dialogue, imported, filename, result)
        for row in imported.turns:
            label = labels.get(normalise_label_name(row.label))
            if label is None:
                raise ImportFileError(f"{filename} line {row.line}: label {row.label!r} is not in the taxonomy")
            _save_label(turns[row.position], label, row, result)
    return result


def _dialogue(imported: ImportedDialogue, movies: dict, result: ImportResult) -> Dialogue:
    dialogue = Dialogue.objects.filter(content_hash=imported.content_hash).first()
    if dialogue is not None:
        result.dialogues_found += 1
        return dialogue
    result.dialogues_created += 1
    # A new dialogue takes the split its file gives it (blank: Dialogue.save assigns one); a
    # dialogue already here keeps its own, so nothing moves between train and test.
    return Dialogue.objects.create(
        content_hash=imported.content_hash,
        external_id=imported.external_id,
        movie=_movie(imported, movies),
        turn_count=len(imported.turns),
        split=next((turn.split for turn in imported.turns if turn.split), ""),
        language=texts_language([turn.text for turn in imported.turns]),
    )


def _movie(imported: ImportedDialogue, movies: dict) -> Movie | None:
    if not imported.movie:
        return None
    key = (imported.movie, imported.year)
    if key not in movies:
        movies[key] = Movie.objects.filter(title=imported.movie, year=imported.year).order_by(
            "pk"
        ).first() or Movie.objects.create(title=imported.movie, year=imported.year)
    return movies[key]


def _turns(dialogue: Dialogue, imported: ImportedDialogue, filename: str, result: ImportResult) -> dict[int, Turn]:
    """The dialogue's turns by position; missing ones are created, a different text is an error."""
    turns = {turn.position: turn for turn in Turn.objects.filter(dialogue=dialogue)}
    missing = []
    for row in imported.turns:
        existing = turns.get(row.position)
        if existing is None:
            missing.append(
                Turn(dialogue=dialogue, position=row.position, text=row.text, token_count=len(row.text.split()))
            )
        elif existing.text.strip() != row.text.strip():
            raise ImportFileError(
                f"{filename} line {row.line}: turn {row.position} of dialogue {imported.key} reads "
                f"{existing.text[:60]!r} in the database, not {row.text[:60]!r}"
            )
    if missing:
        for turn in Turn.objects.bulk_create(missing):
            turns[turn.position] = turn
        result.turns_created += len(missing)
        if dialogue.turn_count < len(turns):
            Dialogue.objects.filter(pk=dialogue.pk).update(turn_count=len(turns))
    if any(turn.pk is None for turn in turns.values()):
        # backends that do not return ids from bulk_create: read them back
        turns = {turn.position: turn for turn in Turn.objects.filter(dialogue=dialogue)}
    return turns


def _save_label(turn: Turn, label: Label, row, result: ImportResult) -> None:
    existing = TurnLabel.objects.filter(turn=turn, source=TurnLabel.CROWD).first()
    # provenance keys the file does not carry (anything beyond votes/agreement/workers/campaign) stay
    provenance = {**(existing.provenance if existing else {}), **row.provenance}
    wanted = {"label": label, "confidence": row.confidence, "provenance": provenance}
    if existing is None:
        created = TurnLabel.objects.create(turn=turn, source=TurnLabel.CROWD, **wanted)
        audit.record(audit.GOLD_CHANGED, audit.system(IMPORT_ACTOR), created, None, {"label": label.name}, IMPORTED)
        result.labels_created += 1
        return
    current = {
        "label": existing.label,
        "confidence": existing.confidence,
        "provenance": existing.provenance,
    }
    if current == wanted:
        result.labels_unchanged += 1
        return
    if existing.label_id != label.pk:
        old, new = {"label": existing.label.name}, {"label": label.name}
        audit.record(audit.GOLD_CHANGED, audit.system(IMPORT_ACTOR), existing, old, new, IMPORTED)
    for name, value in wanted.items():
        setattr(existing, name, value)
    existing.save(update_fields=[*wanted])
    result.labels_updated += 1
