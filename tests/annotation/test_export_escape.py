"""CSV exports cannot run formulas in a spreadsheet, and the gold reader gives back the exact text."""

import csv
import io

import pytest
from django.core.management import call_command

from annotation.export.cells import FORMULA_PREFIXES, escape_cell, unescape_cell
from annotation.export.reader import ImportFileError, read_gold_csv
from annotation.models import Dialogue, Movie, Turn
from tests.annotation.export_helpers import add_labels

HOSTILE = ['=HYPERLINK("http://x")', "+44 20", "-Run!", "@SUM(A1)", "\tTabbed", "\rReturn", "'quoted", "''=twice"]


@pytest.mark.parametrize("prefix", FORMULA_PREFIXES)
def test_each_formula_prefix_gets_a_quote_in_front(prefix):
    assert escape_cell(prefix + "1+1") == "'" + prefix + "1+1"


def test_the_prefixes_are_exactly_the_six_spreadsheet_triggers():
    assert FORMULA_PREFIXES == ("=", "+", "-", "@", "\t", "\r")


@pytest.mark.parametrize("text", ["Hello", "a=b", "1-2", " =x", "", "\nline", "%20", "|pipe"])
def test_other_text_is_left_alone(text):
    assert escape_cell(text) == text and unescape_cell(text) == text


def test_numbers_are_not_escaped():
    assert escape_cell(-0.5) == -0.5 and escape_cell(-3) == -3


@pytest.mark.parametrize("text", [*HOSTILE, "'", "''", "'plain", "'-"])
def test_unescape_undoes_escape_exactly(text):
    assert unescape_cell(escape_cell(text)) == text
    assert not str(escape_cell(text)).startswith(FORMULA_PREFIXES)


def _gold_csv(texts):
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(["dialogue_hash", "turn", "text", "label", "movie"])
    for position, text in enumerate(texts):
        writer.writerow(["h1", position, escape_cell(text), "Sad", escape_cell("=Evil movie")])
    return buffer.getvalue()


def test_the_gold_reader_unescapes_every_cell():
    [dialogue] = read_gold_csv(io.StringIO(_gold_csv(HOSTILE)), "gold.csv")
    assert [turn.text for turn in dialogue.turns] == HOSTILE
    assert dialogue.movie == "=Evil movie"


def test_the_gold_reader_names_the_line_of_a_nul_byte_or_a_huge_field():
    text = _gold_csv(["fine", "bad\0byte"])
    with pytest.raises(ImportFileError, match=r"gold.csv line 3: contains a NUL byte"):
        list(read_gold_csv(io.StringIO(text), "gold.csv"))
    text = _gold_csv(["fine", "x" * 200_000])
    with pytest.raises(ImportFileError, match=r"gold.csv line 3: a field is longer than 131072 characters"):
        list(read_gold_csv(io.StringIO(text), "gold.csv"))


@pytest.fixture
def hostile_corpus(tiny_corpus):
    turns = list(Turn.objects.filter(dialogue__in=tiny_corpus[:3]).order_by("dialogue_id", "position"))
    for turn, text in zip(turns, HOSTILE, strict=False):
        Turn.objects.filter(pk=turn.pk).update(text=text)
    add_labels(tiny_corpus)
    return tiny_corpus


def _export(path, fmt="csv"):
    call_command("export_dataset", "--kind", "gold", "--format", fmt, "--out", str(path))


def test_an_exported_formula_cannot_run_and_imports_back_exactly(hostile_corpus, tmp_path):
    path = tmp_path / "gold.csv"
    _export(path)
    with open(path, newline="", encoding="utf-8") as handle:
        cells = [cell for row in csv.reader(handle) for cell in row]
    assert not [cell for cell in cells if cell.startswith(FORMULA_PREFIXES)]  # the attacker's walk fails
    assert '\'=HYPERLINK("http://x")' in cells and "'''=twice" in cells

    before = _rows_without_ids(path)
    Dialogue.objects.all().delete()
    Movie.objects.all().delete()
    call_command("import_dataset", str(path))
    assert set(HOSTILE) <= set(Turn.objects.values_list("text", flat=True))
    again = tmp_path / "again.csv"
    _export(again)
    assert _rows_without_ids(again) == before


def _rows_without_ids(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return [{k: v for k, v in row.items() if k != "dialogue_id"} for row in csv.DictReader(handle)]


def test_jsonl_is_left_untouched(hostile_corpus, tmp_path):
    path = tmp_path / "gold.jsonl"
    _export(path, "jsonl")
    text = path.read_text(encoding="utf-8")
    assert '"text": "=HYPERLINK' in text and "'=HYPERLINK" not in text


def test_the_streamed_api_export_is_escaped_too(hostile_corpus, researcher, client):
    client.force_login(researcher)
    response = client.get("/api/exports/stream/", {"kind": "gold", "file_format": "csv"})
    assert response.status_code == 200
    text = b"".join(response.streaming_content).decode()
    cells = [cell for row in csv.reader(io.StringIO(text, newline="")) for cell in row]
    assert '\'=HYPERLINK("http://x")' in cells
    assert not [cell for cell in cells if cell.startswith(FORMULA_PREFIXES)]
