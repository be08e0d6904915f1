"""Every kind in every format, read back and compared with the database; the filters."""

import csv
import json

import pytest
from django.core.management import CommandError, call_command

from annotation.export.query import ExportError, ExportFilters, export_rows, export_to_path
from annotation.export.rows import assigned_split
from annotation.models import Prediction, TurnLabel
from tests.annotation.export_helpers import EXTENDED, GOLD, SILVER, add_labels


@pytest.fixture
def labeled(tiny_corpus):
    model = add_labels(tiny_corpus, splits={0: "test"})
    return tiny_corpus, model


def read_back(path, fmt):
    if fmt == "csv":
        with open(path, newline="", encoding="utf-8") as handle:
            return list(csv.DictReader(handle))
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_gold_export_reads_back_with_votes(labeled, tmp_path, fmt):
    dialogues, _ = labeled
    out = tmp_path / f"gold.{fmt}"
    summary = export_to_path("gold", fmt, out, ExportFilters())
    rows = read_back(out, fmt)
    assert summary.rows == len(rows) == sum(len(labels) for labels in GOLD.values())
    assert [(r["text"], r["label"]) for r in rows] == [
        (turn.text, name)
        for index, names in GOLD.items()
        for turn, name in zip(dialogues[index].turns.order_by("position"), names, strict=True)
    ]
    first = rows[0]
    votes = json.loads(first["votes"]) if fmt == "csv" else first["votes"]
    assert votes == {"Anxious": 2, "Neutral": 1}
    assert float(first["agreement"]) == pytest.approx(2 / 3) and int(first["workers"]) == 3
    assert first["split"] == "test"  # stored split kept
    assert rows[3]["split"] == assigned_split(dialogues[1].pk)  # blank split assigned by hash
    assert first["dialogue_hash"] == dialogues[0].content_hash and first["movie"] == "Night Train"


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_extended_export_has_sources_and_provenance(labeled, tmp_path, fmt):
    _, model = labeled
    out = tmp_path / f"extended.{fmt}"
    export_to_path("extended", fmt, out, ExportFilters())
    rows = read_back(out, fmt)
    expected = sorted((source, name) for labels in EXTENDED.values() for source, name, _ in labels)
    assert sorted((r["source"], r["label"]) for r in rows) == expected
    self_row = next(r for r in rows if r["source"] == "self")
    provenance = json.loads(self_row["provenance"]) if fmt == "csv" else self_row["provenance"]
    assert provenance == {"round": 1} and str(self_row["model_version"]) == str(model.pk)
    sbert = next(r for r in rows if r["source"] == "sbert")
    provenance = json.loads(sbert["provenance"]) if fmt == "csv" else sbert["provenance"]
    assert provenance["similarity"] == pytest.approx(float(sbert["confidence"]))


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_silver_export_has_confidence_and_model_version(labeled, tmp_path, fmt):
    _, model = labeled
    out = tmp_path / f"silver.{fmt}"
    export_to_path("silver", fmt, out, ExportFilters())
    rows = read_back(out, fmt)
    assert len(rows) == Prediction.objects.count() == sum(len(v) for v in SILVER.values())
    assert [(r["label"], float(r["confidence"])) for r in rows] == [p for v in SILVER.values() for p in v]
    assert {str(r["model_version"]) for r in rows} == {str(model.pk)}
    assert {r["model_version_name"] for r in rows} == {"eb-plus-1"}
    top_k = json.loads(rows[0]["top_k"]) if fmt == "csv" else rows[0]["top_k"]
    assert top_k[0] == ["Anxious", 0.8]


def test_filters_label_confidence_source_and_split(labeled):
    dialogues, _ = labeled
    assert [r["label"] for r in export_rows("silver", ExportFilters(label="sad", model_version=labeled[1].pk))] == [
        "Sad"
    ]
    high = export_rows("silver", ExportFilters(min_confidence=0.9, model_version=labeled[1].pk))
    assert sorted(r["confidence"] for r in high) == [0.9, 0.95, 0.99]
    assert {r["source"] for r in export_rows("extended", ExportFilters(source="self"))} == {"self"}
    # gold min confidence falls back to the crowd agreement (2/3)
    assert len(list(export_rows("gold", ExportFilters(min_confidence=0.6)))) == 8
    assert list(export_rows("gold", ExportFilters(min_confidence=0.7))) == []
    tests = list(export_rows("gold", ExportFilters(split="test")))
    assert {r["dialogue_id"] for r in tests} >= {dialogues[0].pk}
    assert all(r["split"] == "test" for r in tests)


def test_silver_defaults_to_the_newest_dialogue_model(labeled, tmp_path):
    _, model = labeled
    summary = export_to_path("silver", "csv", tmp_path / "s.csv", ExportFilters())
    assert summary.model_versions == {model.pk: "eb-plus-1"}


def test_bad_requests_are_refused_with_a_reason(labeled, tmp_path):
    with pytest.raises(ExportError, match="source 'sbert' is not part of gold"):
        export_to_path("gold", "csv", tmp_path / "x.csv", ExportFilters(source="sbert"))
    with pytest.raises(ExportError, match="model version 999 does not exist"):
        export_to_path("silver", "csv", tmp_path / "x.csv", ExportFilters(model_version=999))


def test_silver_without_any_model_is_refused(tiny_corpus, tmp_path):
    with pytest.raises(ExportError, match="no dialogue classifier version"):
        export_to_path("silver", "csv", tmp_path / "x.csv", ExportFilters())


def test_the_command_writes_each_format(labeled, tmp_path, capsys):
    call_command(
        "export_dataset", "--kind", "gold", "--format", "csv", "--out", str(tmp_path / "g.csv"), "--split", "test"
    )
    # dialogue 0 is stored as test; a blank split follows a hash of the id, which depends on the
    # ids earlier tests used (PostgreSQL sequences are not reset)
    dialogues, _ = labeled
    in_test = [d for d in dialogues[1:3] if assigned_split(d.pk) == "test"]
    rows = 3 + sum(d.turns.count() for d in in_test)
    assert f"Wrote {rows} rows of {1 + len(in_test)} dialogues" in capsys.readouterr().out
    call_command(
        "export_dataset", "--kind", "silver", "--format", "hf", "--out", str(tmp_path / "hf"), "--label", "Sad"
    )
    assert (tmp_path / "hf" / "dataset_info.json").exists()
    with pytest.raises(CommandError, match="not part of extended"):
        call_command(
            "export_dataset",
            "--kind",
            "extended",
            "--format",
            "jsonl",
            "--out",
            str(tmp_path / "e"),
            "--source",
            "crowd",
        )


def test_the_stream_query_does_not_multiply_queries(labeled, django_assert_max_num_queries):
    with django_assert_max_num_queries(3):
        rows = list(export_rows("gold", ExportFilters()))
    assert len(rows) == TurnLabel.objects.filter(source="crowd").count()
