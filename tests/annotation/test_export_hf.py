"""The Hugging Face folder loads with the `datasets` library, with a ClassLabel of our label names."""

import pytest

from annotation.export.query import ExportFilters, export_to_path
from annotation.models import Dialogue, Label
from tests.annotation.export_helpers import add_labels

datasets = pytest.importorskip("datasets", reason="the datasets package (dev dependency) is not installed")


def test_the_gold_folder_loads_with_load_dataset(tiny_corpus, tmp_path, hf_cache):
    add_labels(tiny_corpus, splits={0: "test", 1: "train", 2: "validation"})
    folder = tmp_path / "gold-hf"
    export_to_path("gold", "hf", folder, ExportFilters())
    info = datasets.DatasetInfo.from_directory(str(folder))
    features = info.features
    names = list(Label.objects.order_by("position", "name").values_list("name", flat=True))
    assert features["label"].names == names

    loaded = datasets.load_dataset(
        "json",
        data_files={split: str(folder / f"{split}.jsonl") for split in ("train", "validation", "test")},
        features=features,
        cache_dir=str(hf_cache),
    )
    assert {split: loaded[split].num_rows for split in loaded} == {"train": 2, "validation": 3, "test": 3}
    first = loaded["test"][0]
    assert features["label"].int2str(first["label"]) == "Anxious" == first["label_name"]
    # the gold's uncertainty as proper features: lists of structs, the answer count and the policy
    assert first["votes"] == [{"label": "Anxious", "count": 2}, {"label": "Neutral", "count": 1}]
    assert first["posterior"] == [
        {"label": "Anxious", "probability": 0.875},
        {"label": "Neutral", "probability": 0.125},
    ]
    assert (first["answers"], first["policy"]) == (3, "until_agreement")
    assert isinstance(features["posterior"], datasets.List)
    assert features["posterior"].feature["probability"] == datasets.Value("float64")
    assert info.splits["validation"].num_examples == 3

    # the README's front matter names the split files and the features: `label` loads as a ClassLabel
    by_folder = datasets.load_dataset(str(folder), cache_dir=str(hf_cache))
    assert by_folder["train"].num_rows == 2
    assert isinstance(by_folder["train"].features["label"], datasets.ClassLabel)
    assert by_folder["train"].features["label"].names == names
    assert by_folder["test"][0]["posterior"][0] == {"label": "Anxious", "probability": 0.875}


def test_silver_splits_follow_the_stored_dialogue_split(tiny_corpus, tmp_path):
    add_labels(tiny_corpus, splits={3: "test"})
    folder = tmp_path / "silver-hf"
    summary = export_to_path("silver", "hf", folder, ExportFilters())
    expected = {}
    for dialogue in tiny_corpus:
        split = Dialogue.objects.get(pk=dialogue.pk).split
        expected[split] = expected.get(split, 0) + dialogue.turns.count()
    assert dict(summary.by_split) == expected
    for split, count in expected.items():
        assert len((folder / f"{split}.jsonl").read_text().splitlines()) == count
    card = (folder / "README.md").read_text()
    assert "eb-plus-1" in card and "subtitles" in card and "ClassLabel" in card
