"""The pure side of export: rows, splits, CSV/JSONL text, the HF folder, the card, the CSV reader."""

import csv
import io
import json
from collections import Counter

import pytest

from annotation.export.card import LICENSE_REMINDER, dataset_card
from annotation.export.reader import ImportFileError, content_hash_of, read_gold_csv
from annotation.export.rows import COLUMNS, ExportRecord, build_row, row_matches
from annotation.export.writers import ExportSummary, csv_lines, jsonl_lines, write_rows
from annotation.splits import split_for


def record(dialogue_id=1, turn=0, label="Sad", split="", confidence=None, extra=None, source="crowd"):
    return ExportRecord(
        dialogue_id,
        f"hash-{dialogue_id}",
        "",
        "Harbour",
        2004,
        turn,
        'She said "no", then left.\nTwice.',
        label,
        source,
        confidence,
        split,
        None,
        None,
        extra,
    )


GOLD_PROVENANCE = {"campaign": 3, "votes": {"Sad": 2, "Lonely": 1}, "workers": 3, "agreement": 0.667}


def test_gold_rows_carry_votes_agreement_and_workers():
    row = build_row("gold", record(extra=GOLD_PROVENANCE, split="test"))
    assert row["votes"] == {"Sad": 2, "Lonely": 1}
    assert (row["agreement"], row["workers"], row["campaign"]) == (0.667, 3, 3)
    assert row["confidence"] is None  # kept as stored; the min-confidence filter falls back to agreement
    assert row_matches(row, min_confidence=0.6, split=None) and not row_matches(row, min_confidence=0.7, split=None)
    assert row["split"] == "test"
    assert list(row) == COLUMNS["gold"]


def test_the_one_split_function_is_80_10_10_and_depends_only_on_the_content():
    splits = Counter(split_for(f"hash-{n}") for n in range(5000))
    assert set(splits) == {"train", "validation", "test"}
    assert 0.75 < splits["train"] / 5000 < 0.85 and 0.07 < splits["test"] / 5000 < 0.13
    assert split_for("hash-42") == split_for("hash-42")


def test_a_row_carries_the_stored_split_as_it_is():
    assert build_row("gold", record(dialogue_id=42, split="validation"))["split"] == "validation"


def test_python_side_filters():
    row = build_row("silver", record(confidence=0.5, split="train"))
    assert row_matches(row, min_confidence=0.5, split="train")
    assert not row_matches(row, min_confidence=0.6, split=None)
    assert not row_matches(row, min_confidence=None, split="test")


def test_csv_quotes_text_and_encodes_nested_values_as_json():
    rows = [build_row("gold", record(extra=GOLD_PROVENANCE))]
    text = "".join(csv_lines("gold", rows))
    parsed = list(csv.DictReader(io.StringIO(text)))
    assert parsed[0]["text"] == 'She said "no", then left.\nTwice.'
    assert json.loads(parsed[0]["votes"]) == {"Sad": 2, "Lonely": 1}
    assert parsed[0]["external_id"] == "" and parsed[0]["year"] == "2004"


def test_jsonl_keeps_nested_values():
    rows = [build_row("silver", record(confidence=0.9, extra=[["Sad", 0.9]]))]
    parsed = [json.loads(line) for line in "".join(jsonl_lines("silver", rows)).splitlines()]
    assert parsed[0]["top_k"] == [["Sad", 0.9]] and parsed[0]["confidence"] == 0.9
    assert list(parsed[0]) == COLUMNS["silver"]


def test_the_hf_folder_has_a_file_per_split_and_a_class_label(tmp_path):
    rows = [
        build_row("gold", record(1, 0, "Sad", "train", extra=GOLD_PROVENANCE)),
        build_row("gold", record(1, 1, "Invented", "train", extra=GOLD_PROVENANCE)),
        build_row("gold", record(2, 0, "Joyful", "test", extra=GOLD_PROVENANCE)),
    ]
    summary = write_rows(
        "gold", "hf", rows, tmp_path / "hf", label_names=["Joyful", "Sad"], card=lambda s: "# t\n\nd\n\n"
    )
    assert sorted(p.name for p in (tmp_path / "hf").iterdir()) == [
        "README.md",
        "dataset_info.json",
        "test.jsonl",
        "train.jsonl",
    ]
    train = [json.loads(line) for line in (tmp_path / "hf" / "train.jsonl").read_text().splitlines()]
    assert [(r["label"], r["label_name"]) for r in train] == [(1, "Sad"), (2, "Invented")]
    assert train[0]["votes"] == [{"label": "Sad", "count": 2}, {"label": "Lonely", "count": 1}]
    assert train[0]["answers"] == 3  # older provenance without an answer count: the votes' sum
    info = json.loads((tmp_path / "hf" / "dataset_info.json").read_text())
    assert info["features"]["label"] == {"names": ["Joyful", "Sad", "Invented"], "_type": "ClassLabel"}
    assert info["splits"]["train"]["num_examples"] == 2 and "validation" not in info["splits"]
    assert (summary.rows, summary.dialogues) == (3, 2)
    readme = (tmp_path / "hf" / "README.md").read_text()
    assert "path: train.jsonl" in readme and "validation" not in readme


def test_the_dataset_card_states_counts_labels_provenance_models_and_license():
    summary = ExportSummary("silver")
    for row in [
        {
            "dialogue_id": 1,
            "split": "train",
            "label": "Sad",
            "source": "model",
            "model_version": 4,
            "model_version_name": "eb",
        },
        {
            "dialogue_id": 2,
            "split": "test",
            "label": "Sad",
            "source": "model",
            "model_version": 4,
            "model_version_name": "eb",
        },
    ]:
        summary.add(row)
    card = dataset_card(summary, label_names=["Joyful", "Sad"], filters={"label": None, "min_confidence": 0.9})
    assert "| train | 1 |" in card and "| **all** | 2 |" in card and "Dialogues: 2" in card
    assert "- 1: Sad (2)" in card and "- 0: Joyful (0)" in card
    assert "min_confidence=0.9" in card and "label=" not in card
    assert "- 4: eb" in card and LICENSE_REMINDER in card


GOLD_CSV = """dialogue_id,dialogue_hash,turn,text,label,confidence,split,votes,agreement,workers,campaign
1,h1,0,Hello there.,Neutral,0.6,train,"{""Neutral"": 2}",0.6,3,9
1,h1,1,"Oh, hi.",Surprised,,train,,,,
2,,1,Second,Sad,,,,,,
2,,0,First,Sad,,,,,,
"""


def test_the_reader_keeps_the_gold_uncertainty():
    text = (
        "dialogue_id,turn,text,label,votes,answers,posterior,policy\n"
        '1,0,Hi,Sad,"{""Sad"": 2}",2,"{""Sad"": 0.9, ""Lonely"": 0.1}",until_agreement\n'
    )
    (dialogue,) = read_gold_csv(io.StringIO(text), "gold.csv")
    assert dialogue.turns[0].provenance == {
        "votes": {"Sad": 2},
        "answers": 2,
        "posterior": {"Sad": 0.9, "Lonely": 0.1},
        "policy": "until_agreement",
    }


def test_the_reader_groups_rows_into_dialogues():
    first, second = read_gold_csv(io.StringIO(GOLD_CSV), "gold.csv")
    assert first.content_hash == "h1" and [t.text for t in first.turns] == ["Hello there.", "Oh, hi."]
    assert first.turns[0].provenance == {"votes": {"Neutral": 2}, "agreement": 0.6, "workers": 3, "campaign": 9}
    assert first.turns[0].confidence == 0.6 and first.turns[1].confidence is None
    assert [t.position for t in second.turns] == [0, 1]  # sorted by position
    assert second.content_hash == content_hash_of(["First", "Second"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("dialogue_id,text,label\n", "gold.csv line 1: missing column(s) turn"),
        ("dialogue_id,turn,text,label\n1,x,Hi,Sad\n", "gold.csv line 2: turn 'x' is not a whole number"),
        (
            "dialogue_id,turn,text,label\n1,0,Hi,Sad\n1,0,Ho,Sad\n",
            "gold.csv line 3: turn 0 of dialogue 1 already appeared on line 2",
        ),
        (
            "dialogue_id,turn,text,label\n1,0,Hi,Sad\n2,0,Ho,Sad\n1,1,Hu,Sad\n",
            "gold.csv line 4: dialogue 1 already appeared on line 2",
        ),
        ("dialogue_id,turn,text,label,votes\n1,0,Hi,Sad,{oops\n", "gold.csv line 2: votes is not JSON"),
        ("dialogue_id,turn,text,label,posterior\n1,0,Hi,Sad,{oops\n", "gold.csv line 2: posterior is not JSON"),
        (
            'dialogue_id,turn,text,label,posterior\n1,0,Hi,Sad,"{""Sad"": 1.5}"\n',
            "gold.csv line 2: posterior must be a JSON object of label: probability between 0 and 1",
        ),
        ("dialogue_id,turn,text,label,answers\n1,0,Hi,Sad,two\n", "gold.csv line 2: answers 'two' is not a whole"),
        ("dialogue_id,turn,text,label,split\n1,0,Hi,Sad,dev\n", "gold.csv line 2: split 'dev' is not one of"),
        ("dialogue_id,turn,text,label,source\n1,0,Hi,Sad,sbert\n", "gold.csv line 2: source 'sbert' is not crowd"),
        ('dialogue_id,turn,text,label\n1,0,"two\nlines",Sad\n1,1,,Sad\n', "gold.csv line 4: the text is empty"),
    ],
)
def test_a_bad_import_file_names_the_line(text, message):
    with pytest.raises(ImportFileError) as error:
        list(read_gold_csv(io.StringIO(text), "gold.csv"))
    assert message in str(error.value)


def test_a_dialogue_without_a_hash_gets_the_ingestion_hash_of_its_texts():
    import hashlib

    expected = hashlib.sha256(b"first line\nsecond line").hexdigest()
    assert content_hash_of(["First  line", "SECOND line "]) == expected
