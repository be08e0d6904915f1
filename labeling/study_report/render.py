"""The study report as Markdown, LaTeX (a table and the methods paragraph, ready to paste) and JSON."""

import json

from labeling.study_report.figures import StudyReport
from labeling.study_report.flow import study_flow_latex, study_flow_markdown

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


def methods_paragraph(report: StudyReport, *, latex: bool = False) -> str:
    """One paragraph with every figure filled in."""
    data = report.as_dict()
    t4, crowd, agreement = data["table4"], data["crowd"], data["agreement"]
    overall = agreement["overall"]
    pct = "\\%" if latex else "%"
    kappa_word, alpha_word = ("$\\kappa$", "$\\alpha$") if latex else ("kappa", "alpha")

    def interval(name: str) -> str:
        e = overall[name]
        if e["low"] is None:
            return _num(e["value"])
        return (
            f"{_num(e['value'])} (95{pct} CI {_num(e['low'])}--{_num(e['high'])})"
            if latex
            else (f"{_num(e['value'])} (95 % CI {_num(e['low'])} to {_num(e['high'])})")
        )

    share = "n/a" if t4["majority_share"] is None else f"{t4['majority_share'] * 100:.1f}{pct}"
    sentences = [
        f"{_count(t4['dialogues'])} dialogues were labeled by {_count(crowd['workers'])} crowd workers "
        f"in {_count(crowd['hits'])} HITs ({_count(crowd['answers'])} answers; a fixed policy of "
        f"{_count(crowd['fixed_policy_answers'])} answers).",
        f"{_count(t4['majority'])} dialogues ({share}) received a label by strict majority vote, "
        f"with labels typed through ``Other'' counted as given"
        if latex
        else f"{_count(t4['majority'])} dialogues ({share}) received a label by strict majority vote, "
        f'with labels typed through "Other" counted as given',
    ]
    sentences[-1] += f" ({_count(t4['majority_gold'])} once typed labels are matched to the label set)."
    sentences.append(
        f"Agreement over items with at least two answers was Fleiss' {kappa_word} = {interval('fleiss_kappa')}, "
        f"Krippendorff's {alpha_word} = {interval('krippendorff_alpha')} and Gwet's AC1 = {interval('gwet_ac1')}, "
        f"intervals from {_count(agreement['resamples'])} bootstrap resamples of the items (seed {agreement['seed']})."
    )
    if t4["quiz_bonus_share"] is not None:
        sentences.append(
            f"{t4['quiz_bonus_share'] * 100:.1f}{pct} of the {t4['quiz_workers']} workers who took the quiz "
            f"reached the bonus mark of {t4['quiz_bonus_mark']} correct answers."
        )
    sentences.append(f"Workers typed a label of their own on {_count(t4['typed_dialogues'])} dialogues.")
    spread = crowd["hits_per_worker"]
    if crowd["workers"]:
        sentences.append(
            f"Each worker did a median of {_num(spread['median'], 1)} HITs (90th percentile {_num(spread['p90'], 1)}, "
            f"maximum {_num(spread['maximum'], 0)})."
        )
    if crowd["effective_hourly_pay"] is not None:
        minimum = crowd["platform_minimum"]
        sentences.append(
            f"A HIT took a median of {_num(crowd['median_minutes_per_hit'], 1)} minutes, an effective pay of "
            f"{_num(crowd['effective_hourly_pay'], 2)} {data['campaign']['currency']} per hour"
            + (f" (platform minimum {_num(minimum, 2)})." if minimum is not None else ".")
        )
    accuracy = crowd["dawid_skene_accuracy"]
    if accuracy["count"]:
        sentences.append(
            f"Dawid-Skene estimated a median worker accuracy of {_num(accuracy['median'])} "
            f"(10th to 90th percentile {_num(accuracy['p10'])} to {_num(accuracy['p90'])}); "
            + (
                f"{crowd['flagged_workers']} workers were flagged as too fast and {crowd['blocked_workers']} blocked."
                if crowd["flagged_workers"] is not None
                else f"{crowd['blocked_workers']} workers were blocked."
            )
        )
    return " ".join(sentences)


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
    ]


def to_markdown(report: StudyReport) -> str:
    data = report.as_dict()
    lines = [f"# Study report: {data['campaign']['name']}", "", "| Figure | Value |", "| --- | --- |"]
    lines += [f"| {name} | {value} |" for name, value in _table4_rows(report)]
    lines += ["", "## Agreement per label (95 % bootstrap intervals)", ""]
    lines += ["| Label | " + " | ".join(FIGURE_NAMES.values()) + " |", "| --- |" + " --- |" * len(FIGURE_NAMES)]
    for label, figures in data["agreement"]["per_label"].items():
        lines.append(f"| {label} | " + " | ".join(_interval(figures[name]) for name in FIGURE_NAMES) + " |")
    lines += ["", "## Crowd", ""] + [f"- {name}: {value}" for name, value in _crowd_rows(data["crowd"])]
    lines += _model_rater_markdown(data["model_raters"])
    lines += study_flow_markdown(data["study_flow"])
    lines += ["", "## Methods", "", methods_paragraph(report), ""]
    return "\n".join(lines)


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
    lines = ["", "## Models as raters (against the crowd's gold)", ""]
    lines += ["| Rater | Items | Accuracy | Cohen's kappa | AC1 | ECE | Gold changed with it in Dawid-Skene |"]
    lines += ["| --- |" + " --- |" * 6]
    for rater in raters:
        lines.append(
            f"| {rater['rater']} | {rater['items']} | {_num(rater['accuracy'])} | {_num(rater['kappa'])} | "
            f"{_num(rater['ac1'])} | {_num(rater['calibration_error'])} | {rater['gold_changed']} |"
        )
    humans = raters[0]["humans"]
    lines.append(
        f"| human workers (median of {humans['workers']}) | | {_num(humans['accuracy'])} | {_num(humans['kappa'])} | "
        f"{_num(humans['ac1'])} | | |"
    )
    return lines


def _latex_escape(text: str) -> str:
    for char, escaped in (("\\", "\\textbackslash{}"), ("&", "\\&"), ("%", "\\%"), ("_", "\\_"), ("#", "\\#")):
        text = text.replace(char, escaped)
    return text


def to_latex(report: StudyReport) -> str:
    rows = [f"{_latex_escape(name)} & {_latex_escape(value)} \\\\" for name, value in _table4_rows(report)]
    return "\n".join(
        [
            "\\begin{table}[t]",
            "\\centering",
            "\\begin{tabular}{lr}",
            "\\hline",
            "Figure & Value \\\\",
            "\\hline",
            *rows,
            "\\hline",
            "\\end{tabular}",
            f"\\caption{{Crowd annotation of {_latex_escape(report.campaign['name'])}; intervals are 95\\% "
            "bootstrap intervals over items.}",
            "\\end{table}",
            "",
            methods_paragraph(report, latex=True),
            "",
            *study_flow_latex(report.study_flow),
        ]
    )
