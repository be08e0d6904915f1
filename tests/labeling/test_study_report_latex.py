"""The study report's LaTeX: every special character escaped in label names, typed answers and the
campaign's name (checked by a strict reader, and by pdflatex where it is installed), the per-label
and paper tables in the .tex, a standalone document with the citations, the CSV downloads."""

import csv
import io
import shutil
import subprocess

import pytest
from django.urls import reverse

from annotation.models import Label
from labeling.models import Campaign
from labeling.reports.study import build_report, to_latex, to_standalone_latex
from labeling.reports.study.latex_escape import latex_escape
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues, make_workers
from tests.labeling.latex_check import latex_problems

SPECIALS = "\\ $ ^ ~ { } & % # _"
NASTY_LABEL = "Cost_of {joy} & 100% #1 ~$x^2$ \\o/"
NASTY_TYPED = "50% $sad$ ^_^ ~{x} & #2 \\n"
NASTY_NAME = "Study #3: 100% {real} & a_b ~ $5^2$ \\end{document}"


@pytest.fixture
def nasty(db):
    Label.objects.create(name=NASTY_LABEL, kind=Label.EMOTION)
    campaign = Campaign.objects.create(name=NASTY_NAME, workers_per_hit=3)
    workers = make_workers(3)
    d = make_dialogues(4)
    make_answered_hit(
        campaign,
        workers,
        {
            d[0]: [NASTY_LABEL, NASTY_LABEL, "Sad"],
            d[1]: [NASTY_TYPED, NASTY_TYPED, NASTY_LABEL],
            d[2]: ["Sad", "Sad", NASTY_TYPED],
            d[3]: [NASTY_LABEL, "Angry", "Sad"],
        },
    )
    return campaign


def test_the_escape_covers_every_special_character_once():
    assert latex_escape(SPECIALS) == (
        "\\textbackslash{} \\$ \\textasciicircum{} \\textasciitilde{} \\{ \\} \\& \\% \\# \\_"
    )
    assert latex_problems(latex_escape(SPECIALS + " " + NASTY_NAME)) == []
    assert latex_escape("\\&") == "\\textbackslash{}\\&"  # an escape is never escaped again


def test_the_checker_finds_what_an_unescaped_text_would_break():
    assert latex_problems("a & b") and latex_problems("100% sure") and latex_problems("a_b")
    assert latex_problems("{open") and latex_problems("x^2") and latex_problems("\\input{secret}")
    assert latex_problems("\\begin{tabular}{lr}\na & b & c \\\\\n\\end{tabular}")


def test_every_text_in_the_tex_is_escaped(nasty):
    report = build_report(nasty, resamples=20)
    for tex in (to_latex(report), to_standalone_latex(report)):
        assert latex_problems(tex) == []
        assert latex_escape(NASTY_LABEL) in tex and latex_escape(NASTY_TYPED + " (Other)") in tex
        for raw in (NASTY_LABEL, NASTY_TYPED, NASTY_NAME):
            assert raw not in tex
    assert latex_escape(NASTY_NAME) in to_standalone_latex(report)


def test_the_tex_holds_the_per_label_and_paper_tables(nasty):
    tex = to_latex(build_report(nasty, resamples=20))
    for label in ("tab:study", "tab:per-label", "tab:rater-kappa", "tab:pairwise-kappa", "tab:labels", "tab:confusion"):
        assert f"\\label{{{label}}}" in tex
    per_label = tex.split("\\label{tab:study}")[1].split("\\label{tab:per-label}")[0]
    assert "Specific agreement" in per_label and latex_escape(NASTY_LABEL) in per_label
    assert "W1 & 3 &" in tex  # pseudonymous, with its N: the 3 dialogues with a majority (d3 has none)


def test_the_standalone_document_cites_and_states_its_limitations(nasty):
    tex = to_standalone_latex(build_report(nasty, resamples=20))
    assert tex.startswith("\\documentclass{article}") and tex.rstrip().endswith("\\end{document}")
    assert "\\section*{Limitations}" in tex and "\\begin{thebibliography}" in tex
    assert "\\bibitem{welivita-etal-2021-large}" in tex and "\\bibitem{gwet2008}" in tex


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_the_standalone_document_compiles(nasty, tmp_path):
    (tmp_path / "report.tex").write_text(to_standalone_latex(build_report(nasty, resamples=20)))
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "report.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert (tmp_path / "report.pdf").stat().st_size > 0


def test_the_page_offers_every_table_as_csv_and_the_standalone_tex(nasty, client, researcher, settings):
    settings.STUDY_REPORT_RESAMPLES = 20
    client.force_login(researcher)
    page = client.get(reverse("labeling:study_report", args=[nasty.pk])).content.decode()
    for name in ("rater-kappa", "pairwise-kappa", "label-distribution", "confusion", "per-label"):
        url = reverse("labeling:study_report_download", args=[nasty.pk, f"{name}.csv"])
        assert url in page
        response = client.get(url)
        assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
        rows = list(csv.DictReader(io.StringIO(response.content.decode())))
        assert rows, name
    labels = {row["label"] for row in csv.DictReader(io.StringIO(client.get(
        reverse("labeling:study_report_download", args=[nasty.pk, "label-distribution.csv"])
    ).content.decode()))}  # fmt: skip
    assert NASTY_LABEL in labels and f"{NASTY_TYPED} (Other)" in labels  # CSV keeps the text as given
    standalone = client.get(reverse("labeling:study_report_download", args=[nasty.pk, "standalone.tex"]))
    assert standalone.status_code == 200 and b"\\begin{thebibliography}" in standalone.content
    assert client.get(reverse("labeling:study_report_download", args=[nasty.pk, "xlsx"])).status_code == 404
    for chart in ("plot-rater-kappa", "plot-study-labels", "plot-specific-agreement", "plot-disagreements"):
        assert f'id="{chart}"' in page
    assert 'id="rater-kappa"' in page and 'id="limitations"' in page and 'data-provenance="here"' in page
