"""The study report on the real EDOS crowd results, imported through the EDOS importer: the paper's
Table 4 (8,913 majority dialogues, Fleiss' kappa 0.457) with intervals, in md, tex and json; the
report says it was imported (CC BY 4.0, no HITs), and the dataset card shows the same figures."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from labeling.crowd.agreement import observed_agreement, rating_table
from labeling.models import Campaign
from labeling.services.importers.edos_format import read_edos
from tests.labeling.latex_check import latex_problems


def _answers_as_given(path) -> list[list[str]]:
    rows = read_edos(path.read_text(encoding="utf-8-sig"), str(path))
    return [[answer.raw for answer in row.answers] for row in rows]


def _rows_with_a_typed_answer(path) -> int:
    rows = read_edos(path.read_text(encoding="utf-8-sig"), str(path))
    return sum(1 for row in rows if any(answer.typed for answer in row.answers))


@pytest.mark.slow
@pytest.mark.django_db
def test_the_edos_results_give_the_papers_table_4_with_intervals(edos_csv):
    call_command("import_crowd_results", str(edos_csv), "--format", "edos-mturk", "--json", stdout=StringIO())
    campaign = Campaign.objects.get()
    out = {}
    for fmt in ("json", "md", "tex", "standalone-tex"):
        buffer = StringIO()
        call_command(
            "study_report", str(campaign.pk), "--format", fmt, "--resamples", "200", "--seed", "7", stdout=buffer
        )
        out[fmt] = buffer.getvalue()
    report = json.loads(out["json"])
    table4, overall = report["table4"], report["agreement"]["overall"]
    assert (table4["dialogues"], table4["majority"], table4["majority_share"]) == (10245, 8913, 0.87)
    assert table4["majority_gold"] == 8920
    assert table4["quiz_bonus_share"] is None  # the file holds no quiz
    assert table4["typed_dialogues"] == _rows_with_a_typed_answer(edos_csv)
    kappa = overall["fleiss_kappa"]
    assert kappa["value"] == pytest.approx(0.457, abs=0.0005)
    assert kappa["low"] < kappa["value"] < kappa["high"] and kappa["high"] - kappa["low"] < 0.03
    for name in ("krippendorff_alpha", "gwet_ac1"):
        estimate = overall[name]
        assert estimate["low"] < estimate["value"] < estimate["high"]
    # nominal alpha differs from Fleiss' kappa only by the small-sample term (n-1)/n of the pairable values
    assert overall["krippendorff_alpha"]["value"] == pytest.approx(kappa["value"], abs=0.001)
    assert report["crowd"]["workers"] == 3 and report["crowd"]["answers"] == 30735
    # the file carries no timing, HITs or pay: nothing of the kind is claimed, no one flagged for speed
    crowd = report["crowd"]
    assert crowd["median_minutes_per_hit"] is None and crowd["flagged_workers"] is None
    assert (crowd["hits"], crowd["hits_per_worker"]["count"], crowd["dawid_skene_accuracy"]["count"]) == (0, 0, 0)
    provenance = report["provenance"]
    assert (provenance["kind"], provenance["source_format"], provenance["license_name"]) == (
        "imported",
        "edos-mturk",
        "CC BY 4.0",
    )
    assert "welivita-etal-2021-large" in provenance["citation"]
    assert (provenance["hits"], provenance["quiz_answers"], provenance["rater_noun"]) == (0, 0, "answer column")
    assert "| Labeled by majority | 8,913 (87.0 %) |" in out["md"]
    assert "Fleiss' kappa | 0.457 [" in out["md"]
    assert "Labeled by majority & 8,913 (87.0 \\%) \\\\" in out["tex"]
    assert "8,913 of the 10,245 dialogues (87.0\\%) received a label by strict majority vote" in out["tex"]
    for text in (out["md"], out["tex"]):
        assert "imported from a crowd-results file" in text and "CC BY 4.0" in text
        assert "no HITs, quiz or payments ran on this site" in text
        assert "crowd workers in" not in text and "Dawid-Skene estimated" not in text
        assert "answer column 1" in text and "W1" not in text
    # the typed labels of the real file (425 answers) and everything else escaped
    assert latex_problems(out["tex"]) == [] and latex_problems(out["standalone-tex"]) == []
    # the paper tables on the real file: three answer columns, every item answered by all three
    tables = report["tables"]
    columns = {row["rater"]: row for row in tables["worker_kappa"]}
    assert set(columns) == {"answer column 1", "answer column 2", "answer column 3"}
    assert all(row["items"] == 8913 and 0.3 < row["kappa"] < 1 for row in columns.values())
    pairs = tables["pairwise_kappa"]
    assert len(pairs) == 3 and all(pair["items"] == 10245 for pair in pairs)
    # with three answers on every item, Fleiss' observed agreement is the mean of the three pairs'
    observed = observed_agreement(rating_table(_answers_as_given(edos_csv)))
    assert sum(pair["agreement"] for pair in pairs) / 3 == pytest.approx(observed, abs=0.0001)
    assert all(0.3 < pair["kappa"] < columns["answer column 1"]["kappa"] for pair in pairs)
    distribution = tables["label_distribution"]
    assert sum(row["answers"] for row in distribution) == 30735
    assert sum(row["majority_items"] for row in distribution) == 8913
    agreeing = sum(c["count"] for c in tables["confusion"] if c["majority"] == c["answer"])
    assert agreeing == pytest.approx(sum(row["agreement"] * row["items"] for row in columns.values()), abs=2)
    specific = {row["label"]: row for row in tables["specific_agreement"]}
    assert all(0 <= row["value"] <= 1 for row in specific.values() if row["value"] is not None)
    ac1_per_label = [figures["gwet_ac1"]["value"] for figures in report["agreement"]["per_label"].values()]
    assert min(ac1_per_label) > 0.9  # one-vs-rest AC1 says little: the reason specific agreement is given
    assert max(row["value"] for row in specific.values() if row["items"] > 100) < 0.9
    # every figure with its N: 30,735 answers, 10,245 dialogues with two answers or more
    assert "Agreement over the 10,245 dialogues with two answers or more (N = 30,735 answers" in out["md"]
    assert f"{table4['categories']} categories" in out["md"] and table4["categories"] > 41


@pytest.mark.slow
@pytest.mark.django_db
def test_the_edos_card_shows_the_reports_figures_its_licence_and_no_hits(edos_csv, tmp_path, settings):
    from labeling.reports.study import build_report

    settings.STUDY_REPORT_RESAMPLES = 50  # the card and the report share resamples and seed
    settings.DATASET_LICENSE = "other"  # unset: the card takes the one licence its imported source gives
    call_command("import_crowd_results", str(edos_csv), "--format", "edos-mturk", "--json", stdout=StringIO())
    campaign = Campaign.objects.get()
    report = build_report(campaign).as_dict()
    ac1 = report["agreement"]["overall"]["gwet_ac1"]["value"]
    folder = tmp_path / "hf"
    call_command("export_dataset", kind="gold", fmt="hf", out=str(folder), stdout=StringIO())
    readme = (folder / "README.md").read_text()
    row = next(line for line in readme.splitlines() if line.startswith(f"| {campaign.name} |"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[1:4] == ["10245", "8913", "0.870"]
    assert cells[5] == f"{ac1:.3f}" == "0.468"
    assert cells[6] == "3 answer columns"
    assert "license: cc-by-4.0" in readme and "Licence: `cc-by-4.0`" in readme and "CC BY 4.0" in readme
    made = readme.split("## How it was made")[1].split("## Agreement")[0]
    assert "imported from a crowd-results file" in made and "No HITs, quiz, payments" in made
    assert "hidden quiz" not in made and "settled by a reviewer" not in made and "no reviewer adjudication" in made
    assert "8920 items have a majority once typed labels are matched" in readme
