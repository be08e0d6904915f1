"""Writers that take rows one at a time: CSV, JSONL and a Hugging Face `datasets` folder.

Nothing here keeps the rows: each is encoded and written as it arrives, and only counters grow
(`ExportSummary`), so memory stays flat however many rows pass.
"""

import csv
import io
import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import yaml

from annotation.export.cells import escape_cell
from annotation.export.dialogues import (
    DIALOGUE,
    DIALOGUE_FIELDS,
    LAYOUTS,
    TURN,
    TurnsOf,
    dialogue_records,
    turn_fields,
)
from annotation.export.rows import COLUMNS, SPLITS

CSV, JSONL, HF = "csv", "jsonl", "hf"
FORMATS = (CSV, JSONL, HF)
CONTENT_TYPES = {CSV: "text/csv; charset=utf-8", JSONL: "application/x-ndjson; charset=utf-8"}


@dataclass
class ExportSummary:
    """What an export wrote, counted as the rows went by (feeds the dataset card)."""

    kind: str
    rows: int = 0
    dialogues: int = 0
    by_split: Counter = field(default_factory=Counter)
    by_label: Counter = field(default_factory=Counter)
    by_source: Counter = field(default_factory=Counter)
    model_versions: dict[int, str] = field(default_factory=dict)
    campaigns: Counter = field(default_factory=Counter)  # gold rows per crowd campaign (the card's figures)
    _last_dialogue: int | None = None

    def add(self, row: dict[str, Any]) -> None:
        self.rows += 1
        if row["dialogue_id"] != self._last_dialogue:
            # rows arrive sorted by dialogue, so a change of id is a new dialogue
            self.dialogues += 1
            self._last_dialogue = row["dialogue_id"]
        self.by_split[row["split"]] += 1
        self.by_label[row["label"]] += 1
        self.by_source[row["source"]] += 1
        if row.get("model_version") is not None:
            self.model_versions[row["model_version"]] = row.get("model_version_name") or ""
        if row.get("campaign") is not None:
            self.campaigns[row["campaign"]] += 1

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "rows": self.rows,
            "dialogues": self.dialogues,
            "by_split": dict(self.by_split),
            "by_label": dict(self.by_label),
            "by_source": dict(self.by_source),
            "model_versions": {str(k): v for k, v in self.model_versions.items()},
        }


def csv_cell(value: Any) -> Any:
    """One CSV cell: blank for None, JSON for nested values, formula prefixes escaped (cells.py)."""
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return escape_cell(value)


def csv_lines(kind: str, rows: Iterable[dict[str, Any]], layout: str = TURN) -> Iterator[str]:
    """The header, then one encoded CSV line per row (for streaming responses); turn layout only."""
    check_layout(CSV, layout)
    buffer = io.StringIO()
    # CRLF (RFC 4180) also makes the csv module quote a cell holding a lone \r, which "\n" would not
    writer = csv.writer(buffer, lineterminator="\r\n")
    columns = COLUMNS[kind]
    writer.writerow(columns)
    for row in rows:
        writer.writerow([csv_cell(row[column]) for column in columns])
        if buffer.tell() > 64_000:
            yield _drain(buffer)
    yield _drain(buffer)


def jsonl_lines(kind: str, rows: Iterable[dict[str, Any]], layout: str = TURN) -> Iterator[str]:
    """One JSON object per line: a row (turn layout) or a dialogue record (dialogue layout)."""
    columns = COLUMNS[kind] if layout == TURN else [*DIALOGUE_FIELDS, "turns"]
    buffer = io.StringIO()
    for row in rows:
        buffer.write(json.dumps({c: row[c] for c in columns}, ensure_ascii=False) + "\n")
        if buffer.tell() > 64_000:
            yield _drain(buffer)
    yield _drain(buffer)


def _drain(buffer: io.StringIO) -> str:
    text = buffer.getvalue()
    buffer.seek(0)
    buffer.truncate()
    return text


def write_text(chunks: Iterable[str], out: IO[str]) -> None:
    for chunk in chunks:
        out.write(chunk)


class HuggingFaceFolder:
    """train.jsonl / validation.jsonl / test.jsonl, dataset_info.json and README.md in one folder.

    Turn layout: a row per label with the export columns. Dialogue layout: a record per dialogue
    whose per-turn fields are parallel lists (`text[i]`, `label[i]`, ... of turn i), the form
    `datasets` gives a sequence labeling corpus. Nested values are JSON text so every record has
    one schema; `label` is the ClassLabel index into `label_names` (None for a turn with no label)
    and `label_name` keeps the text. A label outside `label_names` is appended, so indices
    already written never change. The features are written into the README's front matter too,
    which is where `datasets.load_dataset(folder)` reads them (so `label` loads as a ClassLabel).
    """

    def __init__(self, folder: Path, kind: str, label_names: Sequence[str], layout: str = TURN):
        self.folder, self.kind, self.layout = Path(folder), kind, layout
        self.label_names = list(label_names)
        self._index = {name: i for i, name in enumerate(self.label_names)}
        self._files: dict[str, IO[str]] = {}
        self.examples: Counter = Counter()
        self.folder.mkdir(parents=True, exist_ok=True)

    def write(self, row: dict[str, Any]) -> None:
        """One row (turn layout) or one dialogue record (dialogue layout)."""
        split = row["split"]
        if split not in self._files:
            self._files[split] = open(self.folder / f"{split}.jsonl", "w", encoding="utf-8")  # noqa: SIM115
        encoded = self.hf_record(row) if self.layout == DIALOGUE else self.hf_row(row)
        self._files[split].write(json.dumps(encoded, ensure_ascii=False) + "\n")
        self.examples[split] += 1

    def _label_index(self, label: str | None) -> int | None:
        if label is None:
            return None
        if label not in self._index:
            self._index[label] = len(self.label_names)
            self.label_names.append(label)
        return self._index[label]

    def hf_row(self, row: dict[str, Any]) -> dict[str, Any]:
        encoded = {column: _hf_value(row[column]) for column in COLUMNS[self.kind]}
        for column, (key, value) in STRUCT_LISTS.items():
            if column in row:
                encoded[column] = [{key: name, value: amount} for name, amount in (row[column] or {}).items()]
        encoded["label"] = self._label_index(row["label"])
        encoded["label_name"] = row["label"]
        return encoded

    def hf_record(self, record: dict[str, Any]) -> dict[str, Any]:
        encoded = {name: record[name] for name in DIALOGUE_FIELDS}
        turns = record["turns"]
        for name in turn_fields(self.kind):
            encoded[name] = [_hf_value(turn[name]) for turn in turns]
        encoded["label"] = [self._label_index(turn["label"]) for turn in turns]
        encoded["label_name"] = [turn["label"] for turn in turns]
        return encoded

    def close(self) -> list[str]:
        for handle in self._files.values():
            handle.close()
        return [split for split in SPLITS if split in self._files]

    def features(self) -> dict[str, Any]:
        """The `datasets.Features.to_dict()` form of the records' schema."""
        class_label = {"names": list(self.label_names), "_type": "ClassLabel"}
        if self.layout == TURN:
            features = {column: _value_feature(column) for column in COLUMNS[self.kind]}
            features |= {column: _struct_list_feature(column) for column in STRUCT_LISTS if column in features}
            return features | {"label": class_label, "label_name": _value_feature("label_name")}
        features = {name: _value_feature(name) for name in DIALOGUE_FIELDS}
        for name in [*turn_fields(self.kind), "label_name"]:
            features[name] = {"feature": _value_feature(name), "_type": "Sequence"}
        features["label"] = {"feature": class_label, "_type": "Sequence"}
        return features


VALUE_TYPES = {
    "dialogue_id": "int64",
    "year": "int64",
    "turn": "int64",
    "start": "float64",
    "end": "float64",
    "speaker_change": "bool",
    "confidence": "float64",
    "agreement": "float64",
    "workers": "int64",
    "campaign": "int64",
    "answers": "int64",
    "model_version": "int64",
}


# In the turn layout's hf folder these mappings are lists of {name: amount} structs (proper `datasets`
# features, e.g. soft labels for training); CSV and JSONL keep them as JSON objects.
STRUCT_LISTS = {"votes": ("label", "count"), "posterior": ("label", "probability")}
STRUCT_TYPES = {"count": "int64", "probability": "float64", "label": "string"}


def _value_feature(column: str) -> dict[str, str]:
    return {"dtype": VALUE_TYPES.get(column, "string"), "_type": "Value"}


def _struct_list_feature(column: str) -> dict[str, Any]:
    fields = {name: {"dtype": STRUCT_TYPES[name], "_type": "Value"} for name in STRUCT_LISTS[column]}
    return {"feature": fields, "_type": "List"}


def yaml_features(features: dict[str, Any]) -> list[dict[str, Any]]:
    """`features` (the to_dict form) as the README front matter's `dataset_info.features` list."""

    def entry(feature: dict[str, Any]) -> dict[str, Any]:
        if feature["_type"] == "ClassLabel":
            return {"dtype": {"class_label": {"names": {str(i): n for i, n in enumerate(feature["names"])}}}}
        if feature["_type"] == "List" and "_type" not in feature["feature"]:  # a list of structs
            return {"list": [{"name": name, **entry(inner)} for name, inner in feature["feature"].items()]}
        if feature["_type"] == "Sequence":
            inner = entry(feature["feature"])
            return {"sequence": inner.get("dtype")}
        return {"dtype": feature["dtype"]}

    return [{"name": name, **entry(feature)} for name, feature in features.items()]


def _hf_value(value: Any) -> Any:
    return json.dumps(value, ensure_ascii=False, sort_keys=True) if isinstance(value, dict | list) else value


def dataset_info(folder: HuggingFaceFolder, summary: ExportSummary, description: str) -> dict[str, Any]:
    return {
        "dataset_name": "dialogue_emotions",
        "config_name": summary.kind if folder.layout == TURN else f"{summary.kind}-{folder.layout}",
        "description": description,
        "citation": "",
        "homepage": "",
        "license": "",
        "features": folder.features(),
        "splits": {
            split: {"name": split, "num_bytes": 0, "num_examples": folder.examples[split], "dataset_name": None}
            for split in SPLITS
            if folder.examples[split]
        },
    }


def hf_yaml_header(
    splits: Sequence[str], features: dict[str, Any] | None = None, metadata: dict[str, Any] | None = None
) -> str:
    """README front matter that lets `datasets.load_dataset(folder)` find the split files and
    read them with our features (without them it infers `label` as a plain integer); `metadata`:
    the dataset card's keys the Hub reads (licence, language, task, size; card.card_metadata)."""
    front: dict[str, Any] = dict(metadata or {})
    front["configs"] = [{"config_name": "default", "data_files": [{"split": s, "path": f"{s}.jsonl"} for s in splits]}]
    if features:
        front["dataset_info"] = {"features": yaml_features(features)}
    text = yaml.safe_dump(front, sort_keys=False, allow_unicode=True)
    return f"---\n{text}---\n"


def write_rows(
    kind: str,
    fmt: str,
    rows: Iterable[dict[str, Any]],
    out: Path,
    *,
    label_names: Sequence[str] = (),
    card: Callable[[ExportSummary], str] | None = None,
    metadata: Callable[[ExportSummary], dict[str, Any]] | None = None,
    on_row: Callable[[ExportSummary], None] | None = None,
    layout: str = TURN,
    turns_of: TurnsOf | None = None,
) -> ExportSummary:
    """Write `rows` to `out` (a file for csv/jsonl, a folder for hf); returns what was written.
    The dialogue layout groups the rows per dialogue with every turn from `turns_of`."""
    summary = ExportSummary(kind)
    check_layout(fmt, layout)

    def counted(source: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for row in source:
            summary.add(row)
            if on_row:
                on_row(summary)
            yield row

    def records() -> Iterable[dict[str, Any]]:
        if layout == TURN:
            return counted(rows)
        if turns_of is None:
            raise ValueError("the dialogue layout needs turns_of")
        return dialogue_records(kind, counted(rows), turns_of)

    out = Path(out)
    if fmt in (CSV, JSONL):
        out.parent.mkdir(parents=True, exist_ok=True)
        lines = csv_lines if fmt == CSV else jsonl_lines
        with open(out, "w", encoding="utf-8", newline="") as handle:
            write_text(lines(kind, records(), layout=layout), handle)
        return summary
    if fmt != HF:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    folder = HuggingFaceFolder(out, kind, label_names, layout)
    try:
        for record in records():
            folder.write(record)
    finally:
        splits = folder.close()
    text = card(summary) if card else ""
    front = metadata(summary) if metadata else {}
    (out / "README.md").write_text(hf_yaml_header(splits, folder.features(), front) + text, encoding="utf-8")
    info = dataset_info(folder, summary, description=text.split("\n\n", 2)[1] if text.count("\n\n") >= 2 else "")
    info["license"] = front.get("license", "")
    (out / "dataset_info.json").write_text(json.dumps(info, indent=2, ensure_ascii=False), encoding="utf-8")
    return summary


def check_layout(fmt: str, layout: str) -> None:
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, not {layout!r}")
    if layout == DIALOGUE and fmt == CSV:
        raise ValueError("the dialogue layout is written as jsonl or hf: a CSV row holds one turn")
