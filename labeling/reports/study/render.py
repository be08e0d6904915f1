"""The study report as Markdown, LaTeX (the tables and the methods paragraph, ready to paste; or a
standalone document with the citations) and JSON; the paper tables as CSV (tables_render.py)."""

import json

from labeling.reports.study.figures import StudyReport
from labeling.reports.study.flow import study_flow_latex, study_flow_markdown
from labeling.reports.study.latex import methods_section, per_label_table, rater_tables, standalone_latex, tabular
from labeling.reports.study.methods import limitations_paragraph, methods_paragraph
from labeling.reports.study.tables_render import provenance_markdown, rater_roles_markdown, tables_markdown

FIGURE_NAMES = {"fleiss_kappa": "Fleiss' kappa", "krippendorff_alpha": "Krippendorff's alpha", "gwet_ac1": "Gwet's AC1"}


def _num(value, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _count(value: int) -> str:
    return f"{value:,}"


def _share(value) -> str:
    return "n/a" if value is None else f"{value * 100:.1f} %"


def _interval(estimate: dict) -> str:
    if estimate["low"] is None:
        return _num(estimate["value"])
    return f"{_num(estimate['value'])} [{_num(estimate['low'])}, {_num(estimate['high'])}]"


def to_json(report: StudyReport) -> str:
    return json.dumps(report.as_dict(), indent=2, sort_keys=True)


def _table4_rows(report: StudyReport) -> list[tuple[str, str]]:
    data = report.as_dict()
    t4, overall = data["table4"], data["agreement"]["overall"]
    bonus = (
        "n/a (no quiz)"
        if t4["quiz_bonus_share"] is None
        else f"{_share(t4['quiz_bonus_share'])} of {t4['quiz_workers']}"
    )
    return [
        ("Dialogues", _count(t4["dialogues"])),
        ("Labeled by majority", f"{_count(t4['majority'])} ({_share(t4['majority_share'])})"),
        ("Fleiss' kappa", _interval(overall["fleiss_kappa"])),
        ("Krippendorff's alpha", _interval(overall["krippendorff_alpha"])),
        ("Gwet's AC1", _interval(overall["gwet_ac1"])),
        (f"Workers at or above the bonus mark ({t4['quiz_bonus_mark']})", bonus),
        ("Dialogues where workers typed a label", _count(t4["typed_dialogues"])),
        ("Answers on dialogues (N)", _count(t4["answers"])),
        ("Dialogues with two answers or more (N of agreement)", _count(t4["agreement_items"])),
        ("Categories counted by AC1 (typed labels each their own)", _count(t4["categories"])),
    ]


def to_markdown(report: StudyReport) -> str:
    data = report.as_dict()
    lines = [f"# Study report: {data['campaign']['name']}", "", "| Figure | Value |", "| --- | --- |"]
    lines += [f"| {name} | {value} |" for name, value in _table4_rows(report)]
    lines += provenance_markdown(report)
    lines += _per_label_markdown(data)
    imported = (data.get("provenance") or {}).get("imported")
    crowd_rows = _import_rows(data["crowd"]) if imported else _crowd_rows(data["crowd"])
    lines += ["", "## Crowd", ""] + [f"- {name}: {value}" for name, value in crowd_rows]
    lines += tables_markdown(report)
    lines += _model_rater_markdown(data["model_raters"])
    lines += rater_roles_markdown(data["model_raters"])
    lines += study_flow_markdown(data["study_flow"])
    lines += ["", "## Methods", "", methods_paragraph(report), ""]
    lines += ["## Limitations", "", limitations_paragraph(report), ""]
    return "\n".join(lines)


def _per_label_markdown(data: dict) -> list[str]:
    specific = {row["label"]: row for row in (data.get("tables") or {}).get("specific_agreement", [])}
    lines = ["", "## Agreement per label (95 % bootstrap intervals)", ""]
    lines += [
        "N: dialogues where the label was given. Specific agreement: of the answer pairs on a dialogue that "
        "include the label, the share where both are it. Alpha and AC1 are one label against all others: "
        "with many labels the others dominate both answers and they approach 1 for every label, so they do "
        "not compare labels.",
        "",
    ]
    lines += ["| Label | N | Specific agreement | " + " | ".join(FIGURE_NAMES.values()) + " |"]
    lines += ["| --- | ---: | ---: |" + " --- |" * len(FIGURE_NAMES)]
    for label, figures in data["agreement"]["per_label"].items():
        found = specific.get(label, {"items": 0, "value": None})
        lines.append(
            f"| {label} | {found['items']:,} | {_num(found['value'])} | "
            + " | ".join(_interval(figures[name]) for name in FIGURE_NAMES)
            + " |"
        )
    return lines


def _import_rows(crowd: dict) -> list[tuple[str, str]]:
    return [
        ("answer columns in the source file (not workers)", _count(crowd["workers"])),
        ("HITs, timing, pay, quiz", "none recorded here (imported)"),
        ("answers", _count(crowd["answers"])),
    ]


def _crowd_rows(crowd: dict) -> list[tuple[str, str]]:
    hits, accuracy = crowd["hits_per_worker"], crowd["dawid_skene_accuracy"]
    return [
        ("workers", _count(crowd["workers"])),
        ("HITs per worker (median, p90, max)", f"{hits['median']}, {hits['p90']}, {hits['maximum']}"),
        ("median minutes per HIT", _num(crowd["median_minutes_per_hit"], 2)),
        ("effective hourly pay", _num(crowd["effective_hourly_pay"], 2)),
        (f"platform minimum ({crowd['platform']})", _num(crowd["platform_minimum"], 2)),
        (
            "Dawid-Skene accuracy per worker (min, p10, median, p90, max)",
            ", ".join(_num(accuracy[k]) for k in ("minimum", "p10", "median", "p90", "maximum")),
        ),
        (
            "flagged workers (too fast)",
            "n/a (no timing)" if crowd["flagged_workers"] is None else str(crowd["flagged_workers"]),
        ),
        ("blocked workers", str(crowd["blocked_workers"])),
        (
            f"answers bought (policy {crowd['policy']}) / what the fixed policy would buy",
            f"{crowd['answers']} / {crowd['fixed_policy_answers']}",
        ),
    ]


def _model_rater_markdown(raters: list[dict]) -> list[str]:
    if not raters:
        return []
    lines = ["", "## Models as raters (against the crowd's gold, on items they did not learn from)", ""]
    lines += ["| Rater | Items | Accuracy | Cohen's kappa | AC1 | ECE | Gold changed with it in Dawid-Skene |"]
    lines += ["| --- |" + " --- |" * 6]
    for rater in raters:
        humans = rater["humans"]
        lines.append(
            f"| {rater['rater']} | {rater['items']} | {_num(rater['accuracy'])} | {_num(rater['kappa'])} | "
            f"{_num(rater['ac1'])} | {_num(rater['calibration_error'])} | {rater['gold_changed']} |"
        )
        lines.append(
            f"| human workers on the same items (median of {humans['workers']}) | | {_num(humans['accuracy'])} | "
            f"{_num(humans['kappa'])} | {_num(humans['ac1'])} | | |"
        )
    return lines


def to_latex(report: StudyReport) -> str:
    """Tables and the methods paragraph, every text escaped, to paste into a paper."""
    rows = [[name, value] for name, value in _table4_rows(report)]
    caption = f"Crowd annotation of {report.campaign['name']}; intervals are 95% bootstrap intervals over items."
    return "\n\n".join(
        [
            tabular(caption, ["Figure", "Value"], rows, "lr", label="tab:study"),
            per_label_table(report),
            *rater_tables(report),
            methods_paragraph(report, latex=True),
            "",
            *study_flow_latex(report.study_flow),
        ]
    )


def to_standalone_latex(report: StudyReport) -> str:
    """A document that compiles on its own (one pdflatex run), with the limitations and the citations."""
    rows = [[name, value] for name, value in _table4_rows(report)]
    caption = f"Crowd annotation of {report.campaign['name']}; intervals are 95% bootstrap intervals over items."
    body = "\n\n".join(
        [
            tabular(caption, ["Figure", "Value"], rows, "lr", label="tab:study"),
            per_label_table(report),
            *rater_tables(report),
            methods_section(report),
        ]
    )
    return standalone_latex(report, body)
