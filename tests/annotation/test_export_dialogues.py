"""The dialogue layout: a record per dialogue with every turn in order, labels only where they
exist; in the Hugging Face folder `label` loads as a ClassLabel over the taxonomy in both layouts."""

import json
import zipfile
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.export.dialogues import CorpusTurn, dialogue_record, dialogue_records
from annotation.export.query import ExportError, ExportFilters, export_to_path, stream_export
from annotation.models import Dialogue, Label, TurnLabel
from annotation.taxonomy import LABEL_NAMES
from jobs.models import JobRun
from tests.annotation.export_helpers import add_labels


def gold_on_last_turns(dialogues, labels: dict[int, str]) -> None:
    """Crowd gold on the last turn only, as a campaign gives it."""
    for index, name in labels.items():
        turn = dialogues[index].turns.order_by("-position").first()
        TurnLabel.objects.create(
            turn=turn, label=Label.objects.get(name=name), source=TurnLabel.CROWD,
            provenance={"campaign": 3, "votes": {name: 3}, "workers": 3, "agreement": 1.0},
        )  # fmt: skip


def read_jsonl(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_dialogue_record_holds_every_turn_in_order_and_labels_only_where_they_exist(tiny_corpus, tmp_path):
    gold_on_last_turns(tiny_corpus, {0: "Annoyed", 3: "Nostalgic"})
    out = tmp_path / "gold.jsonl"
    summary = export_to_path("gold", "jsonl", out, ExportFilters(), layout="dialogue")
    records = read_jsonl(out)
    assert [r["dialogue_id"] for r in records] == [tiny_corpus[0].pk, tiny_corpus[3].pk]  # none without gold
    assert (summary.rows, summary.dialogues) == (2, 2)
    first = records[0]
    corpus = list(tiny_corpus[0].turns.order_by("position"))
    assert [t["text"] for t in first["turns"]] == [t.text for t in corpus]
    assert [t["turn"] for t in first["turns"]] == [0, 1, 2]
    assert [(t["start"], t["end"]) for t in first["turns"]] == [(0.0, 1.5), (2.0, 3.5), (4.0, 5.5)]
    assert [t["speaker_change"] for t in first["turns"]] == [False, True, True]
    assert [t["label"] for t in first["turns"]] == [None, None, "Annoyed"]
    assert first["turns"][2]["votes"] == {"Annoyed": 3} and first["turns"][0]["votes"] is None
    assert first["movie"] == "Night Train" and first["split"] == Dialogue.objects.get(pk=tiny_corpus[0].pk).split


def test_the_turn_layout_stays_the_default(tiny_corpus, tmp_path):
    gold_on_last_turns(tiny_corpus, {0: "Annoyed"})
    out = tmp_path / "gold.jsonl"
    export_to_path("gold", "jsonl", out, ExportFilters())
    (row,) = read_jsonl(out)
    assert (row["turn"], row["label"], "turns" in row) == (2, "Annoyed", False)


def test_filters_pick_the_labels_and_every_turn_still_comes(tiny_corpus, tmp_path):
    add_labels(tiny_corpus)  # extended: sbert on both turns of dialogue 3, self on the first of dialogue 1
    out = tmp_path / "extended.jsonl"
    export_to_path("extended", "jsonl", out, ExportFilters(source="self"), layout="dialogue")
    (record,) = read_jsonl(out)
    assert record["dialogue_id"] == tiny_corpus[1].pk
    assert [(t["label"], t["source"]) for t in record["turns"]] == [("Joyful", "self"), (None, None)]
    assert record["turns"][0]["provenance"] == {"round": 1} and record["turns"][0]["model_version_name"] == "eb-plus-1"


def test_records_are_built_in_batches_of_dialogues_from_rows_sorted_by_dialogue():
    rows = [
        {"dialogue_id": d, "dialogue_hash": f"h{d}", "external_id": "", "movie": "", "year": None, "split": "train",
         "turn": position, "text": "x", "label": "Sad", "source": "crowd", "confidence": None, "votes": {},
         "agreement": None, "workers": None, "campaign": None, "answers": None, "posterior": {}, "policy": ""}
        for d, position in [(1, 1), (2, 0), (3, 0), (3, 1), (4, 2)]
    ]  # fmt: skip
    asked = []

    def turns_of(ids):
        asked.append(list(ids))
        return {d: [CorpusTurn(p, f"t{d}.{p}", None, None) for p in range(3)] for d in ids}

    records = list(dialogue_records("gold", rows, turns_of, batch=2))
    assert asked == [[1, 2], [3, 4]]  # the corpus is read a batch of dialogues at a time
    assert [[t["label"] for t in r["turns"]] for r in records] == [
        [None, "Sad", None],
        ["Sad", None, None],
        ["Sad", "Sad", None],
        [None, None, "Sad"],
    ]
    # turns come in position order whatever order the corpus hands them over
    shuffled = [CorpusTurn(2, "c", None, None), CorpusTurn(0, "a", 1.0, 2.0), CorpusTurn(1, "b", None, None)]
    record = dialogue_record("gold", rows[:1], shuffled)
    assert [t["text"] for t in record["turns"]] == ["a", "b", "c"]


@pytest.mark.parametrize("layout", ["turn", "dialogue"])
def test_the_hf_label_loads_as_a_class_label_over_the_taxonomy(tiny_corpus, tmp_path, hf_cache, layout):
    datasets = pytest.importorskip("datasets")
    gold_on_last_turns(tiny_corpus, {0: "Annoyed", 1: "Proud", 2: "Agreeing", 3: "Nostalgic"})
    Dialogue.objects.filter(pk__in=[d.pk for d in tiny_corpus]).update(split="train")
    folder = tmp_path / f"gold-{layout}"
    export_to_path("gold", "hf", folder, ExportFilters(), layout=layout)

    loaded = datasets.load_dataset(str(folder), cache_dir=str(hf_cache))["train"]
    feature = loaded.features["label"]
    class_label = feature if layout == "turn" else feature.feature
    assert isinstance(class_label, datasets.ClassLabel)
    assert class_label.names == list(LABEL_NAMES) and class_label.num_classes == 41
    if layout == "turn":
        assert loaded.num_rows == 4
        assert [class_label.int2str(row["label"]) for row in loaded] == [row["label_name"] for row in loaded]
    else:
        assert loaded.num_rows == 4  # one record per dialogue
        first = loaded[0]
        assert first["text"] == [t.text for t in tiny_corpus[0].turns.order_by("position")]
        assert first["label"] == [None, None, class_label.str2int("Annoyed")]
        assert first["label_name"] == [None, None, "Annoyed"]
        assert first["speaker_change"] == [False, True, True] and first["start"] == [0.0, 2.0, 4.0]
        assert isinstance(loaded.features["speaker_change"].feature, datasets.Value)
    info = json.loads((folder / "dataset_info.json").read_text())
    assert info["splits"]["train"]["num_examples"] == 4


def test_csv_has_no_dialogue_layout(tiny_corpus, tmp_path):
    with pytest.raises(ExportError, match="dialogue layout is written as jsonl or hf"):
        export_to_path("gold", "csv", tmp_path / "x.csv", ExportFilters(), layout="dialogue")
    with pytest.raises(CommandError, match="dialogue layout"):
        call_command("export_dataset", kind="gold", fmt="csv", out=str(tmp_path / "x.csv"), layout="dialogue")
    assert not (tmp_path / "x.csv").exists()


def test_the_command_takes_the_layout_flag(tiny_corpus, tmp_path):
    gold_on_last_turns(tiny_corpus, {2: "Agreeing"})
    out = tmp_path / "gold.jsonl"
    call_command("export_dataset", "--kind", "gold", "--format", "jsonl", "--out", str(out), "--layout", "dialogue",
                 stdout=StringIO())  # fmt: skip
    (record,) = read_jsonl(out)
    assert len(record["turns"]) == 3 and record["turns"][-1]["label"] == "Agreeing"


def test_the_page_form_queues_a_dialogue_export_job(tiny_corpus, client, researcher, settings, tmp_path,
                                                     django_capture_on_commit_callbacks):  # fmt: skip
    settings.MEDIA_ROOT = tmp_path / "media"
    gold_on_last_turns(tiny_corpus, {0: "Annoyed"})
    client.force_login(researcher)
    url = reverse("annotation:analysis_exports")
    refused = client.post(url, {"kind": "gold", "format": "csv", "layout": "dialogue"})
    assert refused.status_code == 400 and b"dialogue layout is written as jsonl or hf" in refused.content
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, {"kind": "gold", "format": "hf", "layout": "dialogue"})
    assert response.status_code == 302
    job = JobRun.objects.get(kind="export_dataset")
    assert job.status == JobRun.SUCCEEDED, job.error
    assert job.parameters["layout"] == "dialogue" and job.result["file"].endswith("-gold-dialogue.zip")
    archive = zipfile.ZipFile(settings.MEDIA_ROOT / "exports" / job.result["file"])
    (split_file,) = [n for n in archive.namelist() if n.endswith(".jsonl")]
    record = json.loads(archive.read(split_file).decode().splitlines()[0])
    assert len(record["text"]) == 3 and record["label_name"] == [None, None, "Annoyed"]


def test_the_api_streams_and_queues_the_dialogue_layout(tiny_corpus, client, researcher, settings, tmp_path,
                                                        django_capture_on_commit_callbacks):  # fmt: skip
    settings.MEDIA_ROOT = tmp_path / "media"
    gold_on_last_turns(tiny_corpus, {0: "Annoyed"})
    client.force_login(researcher)
    streamed = client.get("/api/exports/stream/", {"kind": "gold", "file_format": "jsonl", "layout": "dialogue"})
    assert streamed.status_code == 200
    (record,) = [json.loads(line) for line in b"".join(streamed.streaming_content).decode().splitlines()]
    assert [t["label"] for t in record["turns"]] == [None, None, "Annoyed"]
    bad = client.get("/api/exports/stream/", {"kind": "gold", "file_format": "csv", "layout": "dialogue"})
    assert bad.status_code == 400 and "dialogue layout" in bad.json()["detail"]
    wrong = client.get("/api/exports/stream/", {"kind": "gold", "file_format": "jsonl", "layout": "sideways"})
    assert wrong.status_code == 400 and "layout" in wrong.json()
    with django_capture_on_commit_callbacks(execute=True):
        queued = client.post("/api/exports/", {"kind": "gold", "file_format": "jsonl", "layout": "dialogue"},
                             content_type="application/json")  # fmt: skip
    assert queued.status_code == 202
    job = JobRun.objects.get(pk=queued.json()["id"])
    assert job.status == JobRun.SUCCEEDED and job.parameters["layout"] == "dialogue"


def test_stream_export_of_the_dialogue_layout_is_jsonl(tiny_corpus):
    gold_on_last_turns(tiny_corpus, {3: "Nostalgic"})
    text = "".join(stream_export("gold", "jsonl", ExportFilters(), "dialogue"))
    (record,) = [json.loads(line) for line in text.splitlines()]
    assert [t["label"] for t in record["turns"]] == [None, "Nostalgic"]
