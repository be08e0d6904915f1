"""The study's record for the paper: `build_report(campaign) -> StudyReport` and its renderers
(`to_markdown`, `to_latex`, `to_json`, `methods_paragraph`). See docs/analysis/study-report.md."""

from labeling.reports.study.figures import StudyReport, Table4, build_report
from labeling.reports.study.methods import limitations_paragraph, methods_paragraph
from labeling.reports.study.render import to_json, to_latex, to_markdown, to_standalone_latex

__all__ = [
    "StudyReport",
    "Table4",
    "build_report",
    "limitations_paragraph",
    "methods_paragraph",
    "to_json",
    "to_latex",
    "to_markdown",
    "to_standalone_latex",
]
