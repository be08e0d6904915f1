"""Export gold CSV, wipe, import, export again: the same labels come back."""

import csv

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Dialogue, Movie, Turn, TurnLabel
from tests.annotation.export_helpers import add_labels

IDS = ("dialogue_id",)  # database ids change after a wipe; everything else must come back


def rows_without_ids(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return [{k: v for k, v in row.items() if k not in IDS} for row in csv.DictReader(handle)]


def export_gold(path):
    call_command("export_dataset", "--kind", "gold", "--format", "csv", "--out", str(path))


@pytest.fixture
def gold_csv(tiny_corpus, tmp_path):
    add_labels(tiny_corpus, splits={0: "validation"})
    TurnLabel.objects.filter(turn__dialogue=tiny_corpus[2], turn__position=0).update(confidence=0.55)
    path = tmp_path / "gold.csv"
    export_gold(path)
    return path


def test_a_gold_export_imports_back_to_the_same_labels(gold_csv, tmp_path, capsys):
    before = rows_without_ids(gold_csv)
    Dialogue.objects.all().delete()
    Movie.objects.all().delete()
    assert not TurnLabel.objects.exists()

    call_command("import_dataset", str(gold_csv))
    assert "dialogues 3 created" in capsys.readouterr().out
    again = tmp_path / "again.csv"
    export_gold(again)
    assert rows_without_ids(again) == before
    assert len(before) == 8


def test_importing_twice_changes_nothing(gold_csv, capsys):
    counts = (Dialogue.objects.count(), Turn.objects.count(), TurnLabel.objects.filter(source="crowd").count())
    call_command("import_dataset", str(gold_csv))  # onto the very data it came from
    out = capsys.readouterr().out
    # every dialogue had its split stored before the export: the file changes nothing
    assert "dialogues 0 created, 3 found" in out and "labels 0 created, 0 updated, 8 unchanged" in out
    assert (Dialogue.objects.count(), Turn.objects.count(), TurnLabel.objects.filter(source="crowd").count()) == counts


def test_a_file_never_moves_a_stored_dialogue_between_splits_but_gives_new_ones_theirs(gold_csv, tmp_path):
    splits = dict(Dialogue.objects.values_list("content_hash", "split"))
    text = gold_csv.read_text(encoding="utf-8")
    moved = text.replace(",train,", ",test,").replace(",validation,", ",test,")
    assert moved != text
    path = tmp_path / "moved.csv"
    path.write_text(moved, encoding="utf-8")
    call_command("import_dataset", str(path))
    assert dict(Dialogue.objects.values_list("content_hash", "split")) == splits
    Dialogue.objects.all().delete()
    call_command("import_dataset", str(path))
    assert set(Dialogue.objects.values_list("split", flat=True)) == {"test"}


def test_a_bad_line_names_it_and_saves_nothing(gold_csv, tmp_path):
    Dialogue.objects.all().delete()
    text = gold_csv.read_text(encoding="utf-8").splitlines()
    header, rows = text[0], text[1:]
    assert ",Suggesting," in rows[6]
    broken = rows[:6] + [rows[6].replace(",Suggesting,", ",NoSuchLabel,")] + rows[7:]
    path = tmp_path / "broken.csv"
    path.write_text("\n".join([header, *broken]) + "\n", encoding="utf-8")
    with pytest.raises(CommandError, match=r"broken.csv line 8: label 'NoSuchLabel' is not in the taxonomy"):
        call_command("import_dataset", str(path))
    assert not Dialogue.objects.exists() and not TurnLabel.objects.exists()


def test_a_text_that_differs_from_the_stored_turn_is_refused(gold_csv, tmp_path):
    Turn.objects.filter(text="We won the cup!").update(text="We lost the cup.")
    with pytest.raises(CommandError, match="reads 'We lost the cup.' in the database"):
        call_command("import_dataset", str(gold_csv))


def test_a_missing_file_is_reported(tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        call_command("import_dataset", str(tmp_path / "nope.csv"))
