"""The paper tables (tables.py) and the report's provenance as Markdown, and each table as CSV."""

import csv
import io

from labeling.reports.study.figures import StudyReport

# the CSV downloads: name -> the PaperTables field and its columns, in order
CSV_TABLES = {
    "rater-kappa": ("worker_kappa", ["rater", "items", "agreement", "kappa"]),
    "pairwise-kappa": ("pairwise_kappa", ["first", "second", "items", "agreement", "kappa"]),
    "label-distribution": (
        "label_distribution",
        ["label", "answers", "answer_share", "majority_items", "majority_share"],
    ),
    "confusion": ("confusion", ["rater", "majority", "answer", "count"]),
    "per-label": ("specific_agreement", ["label", "items", "value"]),
}
MARKDOWN_PAIRS = 40
MARKDOWN_DISAGREEMENTS = 30


def _num(value, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def table_csv(report: StudyReport, name: str) -> str:
    """One table as CSV (every row; the Markdown and LaTeX keep the longest tables short)."""
    field, columns = CSV_TABLES[name]
    rows = getattr(report.tables, field) if report.tables else []
    if name == "per-label":
        rows = _per_label_rows(report)
        columns = [
            "label",
            "items",
            "specific_agreement",
            "category_kappa",
            "category_kappa_low",
            "category_kappa_high",
        ]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _per_label_rows(report: StudyReport) -> list[dict]:
    specific = {row["label"]: row for row in (report.tables.specific_agreement if report.tables else [])}
    rows = []
    for label, figures in report.agreement.per_label.items():
        kappa = figures["fleiss_kappa"].as_dict()
        found = specific.get(label, {"items": 0, "value": None})
        rows.append(
            {
                "label": label,
                "items": found["items"],
                "specific_agreement": found["value"],
                "category_kappa": kappa["value"],
                "category_kappa_low": kappa["low"],
                "category_kappa_high": kappa["high"],
            }
        )
    return rows


def provenance_markdown(report: StudyReport) -> list[str]:
    data = report.as_dict()
    provenance = data.get("provenance")
    if not provenance:
        return []
    if not provenance["imported"]:
        return [
            "",
            "## Provenance",
            "",
            f"Run here: {provenance['hits']:,} HITs worked, {provenance['quiz_answers']:,} quiz answers, "
            f"{provenance['adjudicated']:,} items settled by a reviewer.",
        ]
    licence = provenance["license_name"] or "not stated by the importer"
    lines = [
        "",
        "## Provenance",
        "",
        f"Imported from a crowd-results file (format `{provenance['source_format']}`), licence {licence}. "
        "No HITs, quiz, payments or timing were recorded here; the importer's HITs and workers are stand-ins "
        f"that hold the answers, and its {data['crowd']['workers']} workers are the file's answer columns, not "
        f"people. Items settled by a reviewer here after the import: {provenance['adjudicated']:,}.",
    ]
    if provenance["citation"]:
        lines += ["", "Cite the source:", "", "```bibtex", provenance["citation"], "```"]
    return lines


def tables_markdown(report: StudyReport) -> list[str]:
    data = report.as_dict()
    tables = data.get("tables")
    if not tables:
        return []
    noun = data["provenance"]["rater_noun"]
    lines = ["", f"## Each {noun} against the majority (Cohen's kappa)", ""]
    lines += [f"| {noun} | N | agreement | Cohen's kappa |", "| --- | ---: | ---: | ---: |"]
    lines += [
        f"| {r['rater']} | {r['items']:,} | {_num(r['agreement'])} | {_num(r['kappa'])} |"
        for r in tables["worker_kappa"]
    ]
    pairs = sorted(tables["pairwise_kappa"], key=lambda r: -r["items"])
    lines += ["", f"## Pairs of {noun}s (Cohen's kappa over the items both answered)", ""]
    lines += ["| first | second | N | agreement | Cohen's kappa |", "| --- | --- | ---: | ---: | ---: |"]
    lines += [
        f"| {r['first']} | {r['second']} | {r['items']:,} | {_num(r['agreement'])} | {_num(r['kappa'])} |"
        for r in pairs[:MARKDOWN_PAIRS]
    ]
    if len(pairs) > MARKDOWN_PAIRS:
        lines.append(f"\n{len(pairs) - MARKDOWN_PAIRS} more pairs in the CSV.")
    lines += ["", "## Label distribution (answers as given; majority dialogues)", ""]
    lines += ["| label | answers | majority dialogues | share of majorities |", "| --- | ---: | ---: | ---: |"]
    lines += [
        f"| {r['label']} | {r['answers']:,} | {r['majority_items']:,} | {_num(r['majority_share'])} |"
        for r in tables["label_distribution"]
    ]
    disagreements = sorted((c for c in tables["confusion"] if c["majority"] != c["answer"]), key=lambda c: -c["count"])
    lines += [
        "",
        f"## Most frequent disagreements with the majority (confusion per {noun}; the CSV has every cell)",
        "",
    ]
    lines += [f"| {noun} | majority | answer | count |", "| --- | --- | --- | ---: |"]
    lines += [
        f"| {c['rater']} | {c['majority']} | {c['answer']} | {c['count']:,} |"
        for c in disagreements[:MARKDOWN_DISAGREEMENTS]
    ]
    return lines


def rater_roles_markdown(raters: list[dict]) -> list[str]:
    """Each model rater's figures by the role of the items in its training, humans on the same items."""
    if not raters:
        return []
    names = {
        "held-out": "held-out (test split)",
        "unknown": "training data unknown",
        "validation": "validation (chosen and calibrated on)",
        "training": "training (train split; not a measure)",
    }
    lines = ["", "### Models by the items they saw in training", ""]
    lines += ["| Rater | Items | N | Accuracy | Cohen's kappa | AC1 | Humans' accuracy on the same items |"]
    lines += ["| --- | --- |" + " ---: |" * 5]
    for rater in raters:
        lines.append(f"| {rater['rater']} | {rater['exposure_text']} | | | | | |")
        for role, figures in rater["by_role"].items():
            lines.append(
                f"| {rater['rater']} | {names[role]} | {figures['items']} | {_num(figures['accuracy'])} | "
                f"{_num(figures['kappa'])} | {_num(figures['ac1'])} | {_num(figures['humans']['accuracy'])} |"
            )
    return lines
