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

from annotation.export.cells import escape_cell
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


def csv_lines(kind: str, rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    """The header, then one encoded CSV line per row (for streaming responses)."""
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


def jsonl_lines(kind: str, rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    columns = COLUMNS[kind]
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

    Rows keep the export columns, with nested values as JSON text so every row has one schema;
    `label` becomes the ClassLabel index into `label_names` and `label_name` keeps the text.
    A label outside `label_names` is appended, so indices already written never change.
    """

    def __init__(self, folder: Path, kind: str, label_names: Sequence[str]):
        self.folder, self.kind = Path(folder), kind
        self.label_names = list(label_names)
        self._index = {name: i for i, name in enumerate(self.label_names)}
        self._files: dict[str, IO[str]] = {}
        self.folder.mkdir(parents=True, exist_ok=True)

    def write(self, row: dict[str, Any]) -> None:
        split = row["split"]
        if split not in self._files:
            self._files[split] = open(self.folder / f"{split}.jsonl", "w", encoding="utf-8")  # noqa: SIM115
        self._files[split].write(json.dumps(self.hf_row(row), ensure_ascii=False) + "\n")

    def hf_row(self, row: dict[str, Any]) -> dict[str, Any]:
        label = row["label"]
        if label not in self._index:
            self._index[label] = len(self.label_names)
            self.label_names.append(label)
        encoded = {column: _hf_value(row[column]) for column in COLUMNS[self.kind]}
        encoded["label"] = self._index[label]
        encoded["label_name"] = label
        return encoded

    def close(self) -> list[str]:
        for handle in self._files.values():
            handle.close()
        return [split for split in SPLITS if split in self._files]

    def features(self) -> dict[str, Any]:
        """The `datasets.Features.to_dict()` form of the rows' schema."""
        string, int64, float64 = ({"dtype": t, "_type": "Value"} for t in ("string", "int64", "float64"))
        types = {
            "dialogue_id": int64,
            "year": int64,
            "turn": int64,
            "confidence": float64,
            "agreement": float64,
            "workers": int64,
            "campaign": int64,
            "model_version": int64,
        }
        features = {column: types.get(column, string) for column in COLUMNS[self.kind]}
        features["label"] = {"names": list(self.label_names), "_type": "ClassLabel"}
        features["label_name"] = string
        return features


def _hf_value(value: Any) -> Any:
    return json.dumps(value, ensure_ascii=False, sort_keys=True) if isinstance(value, dict | list) else value


def dataset_info(folder: HuggingFaceFolder, summary: ExportSummary, description: str) -> dict[str, Any]:
    return {
        "dataset_name": "dialogue_emotions",
        "config_name": summary.kind,
        "description": description,
        "citation": "",
        "homepage": "",
        "license": "",
        "features": folder.features(),
        "splits": {
            split: {"name": split, "num_bytes": 0, "num_examples": summary.by_split[split], "dataset_name": None}
            for split in SPLITS
            if summary.by_split[split]
        },
    }


def hf_yaml_header(splits: Sequence[str]) -> str:
    """README front matter that lets `datasets.load_dataset(folder)` find the split files."""
    lines = ["---", "configs:", "- config_name: default", "  data_files:"]
    for split in splits:
        lines += [f"  - split: {split}", f"    path: {split}.jsonl"]
    return "\n".join([*lines, "---", ""])


def write_rows(
    kind: str,
    fmt: str,
    rows: Iterable[dict[str, Any]],
    out: Path,
    *,
    label_names: Sequence[str] = (),
    card: Callable[[ExportSummary], str] | None = None,
    on_row: Callable[[ExportSummary], None] | None = None,
) -> ExportSummary:
    """Write `rows` to `out` (a file for csv/jsonl, a folder for hf); returns what was written."""
    summary = ExportSummary(kind)

    def counted(source: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for row in source:
            summary.add(row)
            if on_row:
                on_row(summary)
            yield row

    out = Path(out)
    if fmt in (CSV, JSONL):
        out.parent.mkdir(parents=True, exist_ok=True)
        lines = csv_lines if fmt == CSV else jsonl_lines
        with open(out, "w", encoding="utf-8", newline="") as handle:
            write_text(lines(kind, counted(rows)), handle)
        return summary
    if fmt != HF:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    folder = HuggingFaceFolder(out, kind, label_names)
    try:
        for row in counted(rows):
            folder.write(row)
    finally:
        splits = folder.close()
    text = card(summary) if card else ""
    (out / "README.md").write_text(hf_yaml_header(splits) + text, encoding="utf-8")
    info = dataset_info(folder, summary, description=text.split("\n\n", 2)[1] if text.count("\n\n") >= 2 else "")
    (out / "dataset_info.json").write_text(json.dumps(info, indent=2, ensure_ascii=False), encoding="utf-8")
    return summary
