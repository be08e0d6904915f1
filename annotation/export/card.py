"""The dataset card (README.md) of an export: counts, label set, provenance, model versions, license."""

from collections.abc import Mapping, Sequence
from typing import Any

from annotation.analysis.records import KIND_DESCRIPTIONS
from annotation.export.dialogues import DIALOGUE, TURN
from annotation.export.rows import SPLITS
from annotation.export.writers import ExportSummary

PROVENANCE = {
    "gold": (
        "Each turn's label is the majority of the crowd workers who labeled it. `votes` holds every "
        "answer with its count, `workers` how many answered, `agreement` the majority's share of the "
        "votes and `campaign` the labeling campaign."
    ),
    "extended": (
        "Labels added to turns that resemble gold ones. `source` is `sbert` for a label copied from a "
        "gold dialogue whose SBERT embedding is similar enough (provenance: the gold dialogue and the "
        "similarity), or `self` for a label a trained classifier gave with high confidence "
        "(provenance: the self-labeling round)."
    ),
    "silver": (
        "Top-1 labels of a dialogue classifier, with its confidence and its top-k candidates. They are "
        "not checked by people; filter on `confidence` for precision."
    ),
}
LAYOUT_DESCRIPTIONS = {
    TURN: "Layout: turn. One record per label: the labeled turn's text with its dialogue's identifiers.",
    DIALOGUE: (
        "Layout: dialogue. One record per dialogue with every turn in order: `text`, `turn` (position), "
        "`start` and `end` (seconds from the start of the film, null when unknown), `speaker_change` "
        "(true for every turn after the first: the turn segmenter's guess that another speaker "
        "talks) and, where the turn has a label of this kind, `label` and its other fields (null "
        "where it has none). In the Hugging Face folder the per-turn fields are parallel lists "
        "(`text[i]`, `label[i]`, ... for turn i) and `label` is a list of ClassLabel."
    ),
}
LICENSE_REMINDER = (
    "The turns are lines from movie subtitles. The subtitles and the films keep their own copyright "
    "and licenses (e.g. OpenSubtitles' terms of use): check that your use is allowed before you "
    "redistribute the text, and credit the subtitle sources. The labels are released by the project "
    "that made this export."
)


def dataset_card(
    summary: ExportSummary,
    *,
    label_names: Sequence[str],
    filters: Mapping[str, Any],
    model_versions: Mapping[int, str] | None = None,
    layout: str = TURN,
) -> str:
    kind = summary.kind
    versions = model_versions if model_versions is not None else summary.model_versions
    active = {name: value for name, value in filters.items() if value not in (None, "")}
    lines = [
        f"# Dialogue emotions and intents: {kind} labels",
        "",
        f"Turns of movie-subtitle dialogues with {KIND_DESCRIPTIONS[kind]}.",
        "",
        LAYOUT_DESCRIPTIONS[layout],
        "",
        "## Counts",
        "",
        "| split | turns |",
        "| --- | ---: |",
        *[f"| {split} | {summary.by_split[split]} |" for split in SPLITS if summary.by_split[split]],
        f"| **all** | {summary.rows} |",
        "",
        f"Dialogues: {summary.dialogues}. Turns per source: "
        + (", ".join(f"{source} {n}" for source, n in sorted(summary.by_source.items())) or "none")
        + ".",
        "",
        "Filters: " + (", ".join(f"{name}={value}" for name, value in active.items()) or "none") + ".",
        "",
        "## Label set",
        "",
        f"`label` is a ClassLabel over {len(label_names)} names (index: name, turns in this export):",
        "",
        *[f"- {i}: {name} ({summary.by_label[name]})" for i, name in enumerate(label_names)],
        "",
        "## Provenance",
        "",
        PROVENANCE[kind],
        "",
        "Rows with no stored split were assigned one by a hash of the dialogue id (80/10/10), so every "
        "turn of a dialogue lands in the same split.",
        "",
        "## Model versions",
        "",
        *([f"- {version_id}: {name}" for version_id, name in sorted(versions.items())] or ["None."]),
        "",
        "## License",
        "",
        LICENSE_REMINDER,
        "",
    ]
    return "\n".join(lines)
