"""The study flow's part of the study report in Markdown and LaTeX: the funnel, the exit survey
(scales with their distribution, choices counted, free text listed, escaped) and practice
accuracy beside quiz accuracy per worker. The JSON carries the same figures as they are."""

import html
import re

from labeling.reports.study.latex_escape import latex_escape

MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+\-.!|])")


def markdown_text(text: str) -> str:
    """A participant's free text as inert Markdown: one line, HTML escaped, markup characters escaped."""
    one_line = " ".join(str(text).split())
    return MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(one_line, quote=False))


def latex_text(text: str) -> str:
    return latex_escape(" ".join(str(text).split()))


def _share(value) -> str:
    return "n/a" if value is None else f"{value * 100:.1f} %"


def study_flow_markdown(flow: dict) -> list[str]:
    if not flow:
        return []
    funnel = flow["funnel"]
    lines = ["", "## Study flow", "", f"Steps: {', '.join(flow['steps'])}.", "", "| Step | Participants |"]
    lines += ["| --- | --- |"] + [f"| {name} | {count} |" for name, count in funnel["counts"].items()]
    lines += ["", "Median seconds per step: " + ", ".join(_seconds(funnel["median_seconds"])) + "."]
    lines += _survey_markdown(flow["survey"])
    if flow["practice_and_quiz"]:
        lines += ["", "### Practice and quiz accuracy per worker", ""]
        lines += [
            "| Worker | Practice accuracy | Practice attempts | Quiz accuracy | Quiz answers |",
            "| --- |" + " --- |" * 4,
        ]
        lines += [
            f"| {r['worker']} | {_share(r['practice_accuracy'])} | {r['practice_attempts']} | "
            f"{_share(r['quiz_accuracy'])} | {r['quiz_answers']} |"
            for r in flow["practice_and_quiz"]
        ]
    return lines


def _seconds(medians: dict) -> list[str]:
    return [f"{name} {'n/a' if value is None else value}" for name, value in medians.items()]


def _survey_markdown(summary: list[dict]) -> list[str]:
    if not summary:
        return []
    lines = ["", "### Exit survey", ""]
    for question in summary:
        lines.append(f"- **{markdown_text(question['question'])}** ({question['answers']} answers)")
        if question["kind"] == "scale":
            spread = ", ".join(f"{value}: {count}" for value, count in question["distribution"].items())
            lines.append(f"  - median {question['median'] if question['median'] is not None else 'n/a'}; {spread}")
        elif question["kind"] == "choice":
            lines += [f"  - {markdown_text(choice)}: {count}" for choice, count in question["counts"].items()]
        else:
            lines += [f"  - “{markdown_text(text)}”" for text in question["texts"]]
    return lines


def study_flow_latex(flow: dict) -> list[str]:
    if not flow:
        return []
    rows = [f"{latex_text(name)} & {count} \\\\" for name, count in flow["funnel"]["counts"].items()]
    lines = ["\\begin{table}[t]", "\\centering", "\\begin{tabular}{lr}", "\\hline", "Step & Participants \\\\"]
    lines += ["\\hline", *rows, "\\hline", "\\end{tabular}", "\\caption{Where participants went in the study flow.}"]
    lines += ["\\end{table}", ""]
    for question in flow["survey"]:
        lines.append(f"\\paragraph{{{latex_text(question['question'])}}} {question['answers']} answers.")
        if question["kind"] == "scale":
            lines.append(", ".join(f"{v}: {c}" for v, c in question["distribution"].items()) + ".")
        elif question["kind"] == "choice":
            lines.append(", ".join(f"{latex_text(k)}: {c}" for k, c in question["counts"].items()) + ".")
        else:
            lines += ["\\begin{itemize}", *[f"\\item {latex_text(t)}" for t in question["texts"]], "\\end{itemize}"]
    return lines
