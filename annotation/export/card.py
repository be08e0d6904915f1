"""The dataset card (README.md) of an export: what the data is and how it was made, counts, the
crowd's agreement, the label set, provenance, model versions, the audit log, licence and citation;
with the YAML metadata the Hugging Face Hub reads (`card_metadata`, written into the front matter).

The agreement figures come from the app that ran the crowd: `annotation` imports no other app, so
`labeling` registers a figure source at start-up (`register_figures`, labeling.apps); without one
the card says none were computed.
"""

from collections.abc import Callable, Mapping, Sequence
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
HOW_IT_WAS_MADE = (
    "Dialogues were cut from movie subtitles (a silence over 5 seconds starts a new dialogue) and "
    "cleaned. A weak sentence classifier suggested labels for each dialogue's last turn; the most "
    "confident and readable candidates went to crowd workers, who picked the label of the last turn "
    'from the classifier\'s top three or typed another through "Other", three workers per dialogue, '
    "with hidden quiz questions of known answer in every task. The gold label is the 2-of-3 majority "
    "(more answers were bought for undecided items where the campaign's redundancy policy says so); "
    "items without a majority, or whose Dawid-Skene posterior stayed low, were settled by a reviewer, "
    "whose decision and reason the audit log keeps. This follows the EDOS and OSED papers' pipeline."
)
AUDIT_LOG_NOTE = (
    "`audit_log.ndjson` (JSON Lines, named apart from the split files) holds one JSON object per decision about these labels: every change of a gold "
    "label (by the aggregation job or an import), every adjudication (the reviewer, the old and new "
    "label and the reason) and every accepted or refused label proposal, with when and by whom. "
    "Worker ids, blocks and payments are not published."
)
CITATION = """```bibtex
@inproceedings{welivita-etal-2021-large,
    title = "A Large-Scale Dataset for Empathetic Response Generation",
    author = "Welivita, Anuradha and Xie, Yubo and Pu, Pearl",
    booktitle = "Proceedings of the 2021 Conference on Empirical Methods in Natural Language Processing",
    year = "2021",
    publisher = "Association for Computational Linguistics",
}

@misc{welivita-etal-2020-fine,
    title = "Fine-grained Emotion and Intent Learning in Movie Dialogues",
    author = "Welivita, Anuradha and Xie, Yubo and Pu, Pearl",
    year = "2020",
    eprint = "2012.13624",
    archivePrefix = "arXiv",
}
```"""
LICENSE_REMINDER = (
    "The turns are lines from movie subtitles. The subtitles and the films keep their own copyright "
    "and licenses (e.g. OpenSubtitles' terms of use): check that your use is allowed before you "
    "redistribute the text, and credit the subtitle sources. The labels are released by the project "
    "that made this export."
)


# campaign ids -> one dict per campaign: name, items, majority, majority_share, fleiss_kappa,
# gwet_ac1, workers, answers, adjudicated (labeling.reports.dataset_figures.card_figures)
FigureSource = Callable[[Sequence[int]], list[dict[str, Any]]]
_figure_sources: list[FigureSource] = []


def register_figures(source: FigureSource) -> None:
    """Name the function that computes the card's agreement figures (one; a second replaces it)."""
    _figure_sources[:] = [source]


def agreement_figures(campaign_ids: Sequence[int]) -> list[dict[str, Any]]:
    if not _figure_sources or not campaign_ids:
        return []
    return _figure_sources[0](sorted(campaign_ids))


def dataset_card(
    summary: ExportSummary,
    *,
    label_names: Sequence[str],
    filters: Mapping[str, Any],
    model_versions: Mapping[int, str] | None = None,
    layout: str = TURN,
    figures: Sequence[Mapping[str, Any]] = (),
    license_id: str = "other",
    audit_log: bool = False,
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
        "## How it was made",
        "",
        *how_it_was_made(figures),
        "",
        "## Agreement",
        "",
        *_agreement_lines(figures),
        "",
        *(["## Audit log", "", AUDIT_LOG_NOTE, ""] if audit_log else []),
        "## License",
        "",
        f"Licence: `{dataset_license(license_id, figures)}`. " + LICENSE_REMINDER,
        *_source_licences(figures),
        "",
        "## Citation",
        "",
        "If you use this data, cite the papers whose pipeline made it:",
        "",
        CITATION,
        *_source_citations(figures),
        "",
    ]
    return "\n".join(lines)


def dataset_license(configured: str, figures: Sequence[Mapping[str, Any]]) -> str:
    """The licence the card and its metadata state: the configured one, or, while that is the
    unset default `other`, the one licence every campaign's imported source gives (EDOS: cc-by-4.0)."""
    sources = {row.get("license") or "" for row in figures}
    if configured == "other" and figures and all(row.get("imported") for row in figures) and len(sources) == 1:
        return sources.pop() or configured
    return configured


def how_it_was_made(figures: Sequence[Mapping[str, Any]]) -> list[str]:
    """What happened to each campaign's labels and nothing else: the pipeline for campaigns run here
    (the quiz and reviewers only where there were any), the source for imported ones."""
    if not figures:
        return [HOW_IT_WAS_MADE]
    here = [row for row in figures if not row.get("imported")]
    paragraphs = [_run_here(here)] if here else []
    paragraphs += [_imported(row) for row in figures if row.get("imported")]
    return [line for paragraph in paragraphs for line in (paragraph, "")][:-1]


def _run_here(rows: Sequence[Mapping[str, Any]]) -> str:
    quiz = sum(row.get("quiz_answers", 0) for row in rows)
    settled = sum(row.get("adjudicated", 0) for row in rows)
    return (
        f"Crowd campaigns run here ({', '.join(str(row['name']) for row in rows)}): dialogues were cut from movie "
        "subtitles (a silence over 5 seconds starts a new dialogue) and cleaned; a classifier suggested labels "
        "for each dialogue's last turn, and crowd workers picked the label of the last turn from its top three "
        'or typed another through "Other", in HITs on this site or a crowd platform'
        + (f", with hidden quiz questions of known answer ({quiz} quiz answers)" if quiz else ", with no quiz")
        + ". The gold label is the 2-of-3 majority (a strict majority of the answers, typed labels matched to the "
        "label set; more answers were bought for undecided items where the campaign's redundancy policy says so); "
        + (
            f"{settled} items without one, or with a low Dawid-Skene posterior, were settled by a reviewer, "
            "whose decision and reason the audit log keeps."
            if settled
            else "no item was settled by a reviewer."
        )
    )


def _imported(row: Mapping[str, Any]) -> str:
    licence = row.get("license_name") or "not stated"
    settled = row.get("adjudicated", 0)
    return (
        f"{row['name']}: imported from a crowd-results file (format `{row.get('source_format')}`, licence {licence}), "
        f"not collected here. Each of its {row['items']} dialogues' last turn carries the answers of the file's "
        f"{row['workers']} answer columns ({row['answers']} answers); the file names no workers, so a column is not "
        "one person. No HITs, quiz, payments or suggestions ran here. The gold label is the strict majority of those "
        "answers with typed labels matched to the label set"
        + (
            f"; {settled} items were settled by a reviewer here after the import."
            if settled
            else "; no reviewer adjudication."
        )
    )


def _source_licences(figures: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = [
        f"The labels of {row['name']} are imported data under {row.get('license_name') or 'a licence not stated'}: "
        "keep its terms and credit its source (below)."
        for row in figures
        if row.get("imported")
    ]
    return ["", *lines] if lines else []


def _source_citations(figures: Sequence[Mapping[str, Any]]) -> list[str]:
    """The imported sources' own BibTeX, where the pipeline's citation above does not hold it already."""
    extra = []
    for row in figures:
        citation = row.get("citation") or ""
        if row.get("imported") and citation and citation.split(",")[0] not in CITATION and citation not in extra:
            extra.append(citation)
    if not extra:
        return []
    return ["", "and the sources of the imported crowd results:", "", "```bibtex", *extra, "```"]


def _agreement_lines(figures: Sequence[Mapping[str, Any]]) -> list[str]:
    if not figures:
        return ["No crowd agreement was computed for this export (no crowd campaign's labels in it)."]
    lines = [
        "Per crowd campaign whose labels are in this export, as its study report computes them: items answered, "
        'items with a strict majority of the answers as given (a label typed through "Other" is its own '
        "category, the EDOS paper's rule), Fleiss' kappa and Gwet's AC1 over every answer, workers (for an "
        "import, the source's answer columns), answers, and items a reviewer settled.",
        "",
        "| campaign | items | majority | share | Fleiss' kappa | Gwet's AC1 | workers | answers | adjudicated |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in figures:
        cells = [
            row["name"],
            row["items"],
            row["majority"],
            _number(row["majority_share"]),
            _number(row["fleiss_kappa"]),
            _number(row["gwet_ac1"]),
            f"{row['workers']} answer columns" if row.get("imported") else row["workers"],
            row["answers"],
            row["adjudicated"],
        ]
        lines.append("| " + " | ".join(str(cell) for cell in cells) + " |")
    return lines + [line for row in figures if "categories" in row for line in ("", _agreement_note(row))]


def _agreement_note(row: Mapping[str, Any]) -> str:
    """The Ns and choices behind one campaign's figures."""
    return (
        f"{row['name']}: N = {row['answers']} answers on {row['items']} items; agreement over the "
        f"{row['agreement_items']} items with two answers or more; AC1's chance term counts {row['categories']} "
        f"categories (every answer given, each typed label its own); {row['majority_gold']} items have a majority "
        "once typed labels are matched to the label set (the gold labels' rule)."
    )


def _number(value: float | None) -> str:
    # rounded to 4 places first, as the study report stores its figures, so both print the same digits
    return "n/a" if value is None else f"{round(value, 4):.3f}"


def card_metadata(summary: ExportSummary, *, license_id: str, language: str = "en") -> dict[str, Any]:
    """The YAML front matter keys the Hub reads for a dataset (https://huggingface.co/docs/hub/datasets-cards)."""
    return {
        "pretty_name": f"Dialogue emotions and intents ({summary.kind} labels)",
        "license": license_id,
        "language": [language],
        "task_categories": ["text-classification"],
        "task_ids": ["multi-class-classification"],
        "annotations_creators": ["crowdsourced"] if summary.kind != "silver" else ["machine-generated"],
        "source_datasets": ["original"],
        "size_categories": [_size_category(summary.rows)],
        "tags": ["emotion", "empathetic-dialogue", "movie-subtitles", "dialogue"],
    }


def _size_category(rows: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if rows < limit:
            return name
    return "1M<n<10M"
