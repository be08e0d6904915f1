"""The study report in LaTeX: every text escaped (`latex_escape`), the tables a paper needs (Table 4,
agreement per label, raters against the majority, pairs of raters, the label distribution, the
most frequent disagreements with the majority) and a standalone document with the citations that
compiles with one `pdflatex` run (a `thebibliography`, no BibTeX pass)."""

from labeling.reports.study.figures import StudyReport
from labeling.reports.study.latex_escape import bibtex_key, bibtex_reference, latex_escape
from labeling.reports.study.methods import limitations_paragraph, methods_paragraph

CONFUSION_ROWS = 30  # the most frequent disagreements in the .tex; the CSV holds every cell
PAIR_ROWS = 40

REFERENCES = [
    (
        "welivita-etal-2021-large",
        "Anuradha Welivita, Yubo Xie and Pearl Pu. 2021. A Large-Scale Dataset for Empathetic Response "
        "Generation. In Proceedings of EMNLP 2021, Association for Computational Linguistics.",
    ),
    (
        "welivita-etal-2020-fine",
        "Anuradha Welivita, Yubo Xie and Pearl Pu. 2020. Fine-grained Emotion and Intent Learning in Movie "
        "Dialogues. arXiv:2012.13624.",
    ),
    (
        "fleiss1971",
        "Joseph L. Fleiss. 1971. Measuring nominal scale agreement among many raters. Psychological Bulletin 76(5).",
    ),
    (
        "gwet2008",
        "Kilem L. Gwet. 2008. Computing inter-rater reliability and its variance in the presence of high agreement. British Journal of Mathematical and Statistical Psychology 61(1).",
    ),
    (
        "krippendorff2011",
        "Klaus Krippendorff. 2011. Computing Krippendorff's Alpha-Reliability. University of Pennsylvania.",
    ),
    (
        "cohen1960",
        "Jacob Cohen. 1960. A coefficient of agreement for nominal scales. Educational and Psychological Measurement 20(1).",
    ),
    (
        "dawid1979",
        "A. P. Dawid and A. M. Skene. 1979. Maximum likelihood estimation of observer error-rates using the EM algorithm. Applied Statistics 28(1).",
    ),
]


def _num(value, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _interval(e: dict) -> str:
    if e["value"] is None:
        return "n/a"
    if e["low"] is None:
        return _num(e["value"])
    return f"{_num(e['value'])} [{_num(e['low'])}, {_num(e['high'])}]"


def tabular(caption: str, header: list[str], rows: list[list], align: str, *, label: str = "") -> str:
    """A float table; every cell and the caption escaped here (pass plain text)."""
    body = [" & ".join(latex_escape(cell) for cell in row) + " \\\\" for row in rows]
    return "\n".join(
        [
            "\\begin{table}[t]",
            "\\centering",
            "\\small",
            f"\\begin{{tabular}}{{{align}}}",
            "\\hline",
            " & ".join(latex_escape(cell) for cell in header) + " \\\\",
            "\\hline",
            *body,
            "\\hline",
            "\\end{tabular}",
            f"\\caption{{{latex_escape(caption)}}}",
            *([f"\\label{{{label}}}"] if label else []),
            "\\end{table}",
        ]
    )


def per_label_table(report: StudyReport) -> str:
    data = report.as_dict()
    specific = {row["label"]: row for row in (data.get("tables") or {}).get("specific_agreement", [])}
    rows = []
    for label, figures in data["agreement"]["per_label"].items():
        found = specific.get(label, {"items": 0, "value": None})
        rows.append(
            [
                label,
                f"{found['items']:,}",
                _num(found["value"]),
                _interval(figures["fleiss_kappa"]),
                _interval(figures["gwet_ac1"]),
            ]
        )
    return tabular(
        "Agreement per label: dialogues where the label was given (N), positive specific agreement, Fleiss' "
        "category kappa with 95% bootstrap intervals, and one-vs-rest AC1 (with many labels near 1 for every "
        "label, since the other labels dominate; not a comparison between labels).",
        ["Label", "N", "Specific agreement", "Category kappa", "AC1 (one vs rest)"],
        rows,
        "lrrrr",
        label="tab:per-label",
    )


def rater_tables(report: StudyReport) -> list[str]:
    data = report.as_dict()
    tables = data.get("tables")
    if not tables:
        return []
    noun = (data.get("provenance") or {}).get("rater_noun", "worker")
    raters = [
        [row["rater"], f"{row['items']:,}", _num(row["agreement"]), _num(row["kappa"])]
        for row in tables["worker_kappa"]
    ]
    pairs = sorted(tables["pairwise_kappa"], key=lambda row: -row["items"])[:PAIR_ROWS]
    distribution = [
        [row["label"], f"{row['answers']:,}", f"{row['majority_items']:,}", _num(row["majority_share"])]
        for row in tables["label_distribution"]
    ]
    disagreements = sorted(
        (cell for cell in tables["confusion"] if cell["majority"] != cell["answer"]), key=lambda cell: -cell["count"]
    )[:CONFUSION_ROWS]
    return [
        tabular(
            f"Each {noun} against the majority (dialogues with a majority the {noun} answered; the {noun}'s own "
            "answer is part of the majority).",
            [noun.capitalize(), "N", "Agreement", "Cohen's kappa"],
            raters,
            "lrrr",
            label="tab:rater-kappa",
        ),
        tabular(
            f"Cohen's kappa of each pair of {noun}s over the dialogues both answered (N), most shared first.",
            ["First", "Second", "N", "Agreement", "Cohen's kappa"],
            [[p["first"], p["second"], f"{p['items']:,}", _num(p["agreement"]), _num(p["kappa"])] for p in pairs],
            "llrrr",
            label="tab:pairwise-kappa",
        ),
        tabular(
            "Label distribution: answers per label (as given) and dialogues each label won by majority.",
            ["Label", "Answers", "Majority dialogues", "Share of majorities"],
            distribution,
            "lrrr",
            label="tab:labels",
        ),
        tabular(
            f"The most frequent disagreements: the majority label, a {noun}'s other answer, and how often.",
            [noun.capitalize(), "Majority", "Answer", "Count"],
            [[c["rater"], c["majority"], c["answer"], f"{c['count']:,}"] for c in disagreements],
            "lllr",
            label="tab:confusion",
        ),
    ]


def standalone_latex(report: StudyReport, body: str) -> str:
    """A document that compiles on its own: `body` (the report's tables and paragraphs), the
    limitations and the references, with the source's own citation for an import."""
    data = report.as_dict()
    provenance = data.get("provenance") or {}
    references = list(REFERENCES)
    citation = provenance.get("citation") or ""
    if provenance.get("imported") and bibtex_key(citation) not in dict(references):
        references.append((bibtex_key(citation), bibtex_reference(citation)))
    items = [f"\\bibitem{{{key}}} {latex_escape(text)}" for key, text in references]
    title = latex_escape(f"Study report: {data['campaign']['name']}")
    return "\n".join(
        [
            "\\documentclass{article}",
            "\\usepackage[T1]{fontenc}",
            "\\usepackage[utf8]{inputenc}",
            f"\\title{{{title}}}",
            "\\date{}",
            "\\begin{document}",
            "\\maketitle",
            body,
            "\\section*{Limitations}",
            limitations_paragraph(report, latex=True),
            "",
            "\\begin{thebibliography}{9}",
            *items,
            "\\end{thebibliography}",
            "\\end{document}",
            "",
        ]
    )


def methods_section(report: StudyReport) -> str:
    return "\n".join(["\\section*{Methods}", methods_paragraph(report, latex=True)])
