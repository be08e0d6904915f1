"""The study report on the real EDOS crowd results, imported through the EDOS importer: the paper's
Table 4 (8,913 majority dialogues, Fleiss' kappa 0.457) with intervals, in md, tex and json."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from labeling.importers.edos_format import read_edos
from labeling.models import Campaign


def _rows_with_a_typed_answer(path) -> int:
    rows = read_edos(path.read_text(encoding="utf-8-sig"), str(path))
    return sum(1 for row in rows if any(answer.typed for answer in row.answers))


@pytest.mark.slow
@pytest.mark.django_db
def test_the_edos_results_give_the_papers_table_4_with_intervals(edos_csv):
    call_command("import_crowd_results", str(edos_csv), "--format", "edos-mturk", "--json", stdout=StringIO())
    campaign = Campaign.objects.get()
    out = {}
    for fmt in ("json", "md", "tex"):
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
    # the file carries no timing: no minutes per HIT, no hourly pay, no one flagged for speed
    crowd = report["crowd"]
    assert crowd["median_minutes_per_hit"] is None and crowd["flagged_workers"] is None
    assert (crowd["platform"], crowd["hits_per_worker"]["median"]) == ("mturk", 683)
    assert "| Labeled by majority | 8,913 (87.0 %) |" in out["md"]
    assert "Fleiss' kappa | 0.457 [" in out["md"]
    assert "Labeled by majority & 8,913 (87.0 \\%) \\\\" in out["tex"]
    assert "8,913 dialogues (87.0\\%) received a label by strict majority vote" in out["tex"]
