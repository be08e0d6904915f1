"""import_crowd_results --format edos-mturk: a hand-written file of the same shape, and the real one."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.ingest.records import dialogue_hash
from annotation.models import Dialogue, Turn, TurnLabel
from labeling.crowd.majority import majority_vote
from labeling.models import AggregatedLabel, Assignment, Campaign, HITItem, Response, Worker
from labeling.reports.campaign import campaign_report
from labeling.services.importers.edos_format import (
    EdosFormatError,
    parse_answer,
    read_edos,
    row_content_hash,
    summarise,
)

HEADER = "Count,Index,DialogID,Dialog,Agreed emotion (2/3 vote),Worker 1 answer,Worker 2 answer,Worker 3 answer\n"
ROWS = (
    '1,0.9-1,101,"Where were you?\nOut.",Annoyed,Annoyed,Angry,Annoyed\n'
    "2,0.9-2,102,We lost the house.,-,Sad,Devastated,Forgetful (Other)\n"
    "3,0.8-3,103,Fine by me.,-,Agreeing,neutral (Other),Neutral\n"
    '4,0.9-4,104,"Where were you?\nOut.",Angry,Angry,Angry,Furious\n'  # the same text as row 1
    "5,0.9-5,105,Look at that!,Surprised,Surprised,Surprised,Impressed\n"
)


def _write(tmp_path, body: str, name: str = "crowd.csv"):
    path = tmp_path / name
    path.write_text(HEADER + body, encoding="utf-8")
    return path


def _import(path, *extra) -> dict:
    out = StringIO()
    call_command("import_crowd_results", str(path), "--format", "edos-mturk", "--json", *extra, stdout=out)
    return json.loads(out.getvalue())


def test_an_answer_typed_through_other_loses_its_suffix():
    answer = parse_answer("Forgetful (Other)")
    assert (answer.text, answer.typed, answer.raw) == ("Forgetful", True, "Forgetful (Other)")
    assert not parse_answer("Sad").typed


def test_figures_follow_the_papers_rule_and_ours():
    rows = read_edos(HEADER + ROWS, "crowd.csv")
    assert [row.line for row in rows] == [2, 4, 5, 6, 8]
    assert rows[0].turns == ("Where were you?", "Out.")
    figures = summarise(rows)
    assert figures["dialogues"] == 5
    assert figures["majority"] == 3  # "neutral (Other)" is not "Neutral" under the paper's rule
    assert figures["majority_normalized"] == 4
    assert figures["other_answers"] == 2
    assert figures["other_answers_matching_a_label"] == 1
    assert figures["duplicate_texts"] == 1


def test_rows_with_the_same_text_get_different_content_hashes():
    rows = read_edos(HEADER + ROWS, "crowd.csv")
    assert rows[0].turns == rows[3].turns and rows[0].index == "0.9-1"
    assert row_content_hash(rows[0]) != row_content_hash(rows[3])
    # nor is it the hash a subtitle ingestion gives the same text: the crowd item stays apart
    assert row_content_hash(rows[0]) != dialogue_hash(rows[0].turns)
    assert row_content_hash(rows[0]) == row_content_hash(read_edos(HEADER + ROWS, "copy.csv")[0])


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("1,0.9-1,101,Hello.,-,Sad,Angry\n", "line 2: expected 8 fields, found 7"),
        ("1,0.9-1,101,Hello.,-,Sad,Angry,Joyful\n2,0.9-2,,Hi.,-,Sad,Angry,Joyful\n", "line 3: empty DialogID"),
        ("1,0.9-1,101,,-,Sad,Angry,Joyful\n", "line 2: empty Dialog"),
        (
            "1,0.9-1,101,Hello.,Sad,Sad,Angry,Joyful\n",
            "line 2: 'Agreed emotion' is 'Sad' but the three answers give '-'",
        ),
        ("1,0.9-1,101,Hello.,-,Sad,,Joyful\n", "line 2: empty Worker 2 answer"),
        ("1, ,101,Hello.,-,Sad,Angry,Joyful\n", "line 2: empty Index"),
        (
            "1,0.9-1,101,Hello.,-,Sad,Angry,Joyful\n2,0.9-1,102,Hi.,-,Sad,Angry,Joyful\n",
            "line 3: Index '0.9-1' repeats line 2",
        ),
        (
            '1,0.9-1,101,"Hello.\nThere.",-,Sad,Angry,Joyful\n2,0.9-2,102,Hi\0.,-,Sad,Angry,Joyful\n',
            "line 4: contains a NUL byte",
        ),
        ("1,0.9-1,101," + "x" * 200_000 + ",-,Sad,Angry,Joyful\n", "line 2: a field is longer than 131072 characters"),
    ],
)
def test_a_bad_row_is_an_error_naming_the_line(body, message):
    with pytest.raises(EdosFormatError, match=message):
        read_edos(HEADER + body, "crowd.csv")


def test_a_wrong_header_is_an_error():
    with pytest.raises(EdosFormatError, match="line 1: expected the columns"):
        read_edos("a,b,c\n1,2,3\n", "crowd.csv")


@pytest.mark.django_db
def test_the_import_stores_one_dialogue_per_row_with_its_answers_and_crowd_labels(tmp_path):
    result = _import(_write(tmp_path, ROWS))
    assert result["dialogues"] == 5 and result["majority"] == 3 and result["majority_normalized"] == 4
    campaign = Campaign.objects.get(pk=result["stored"]["campaign"])
    assert campaign.status == Campaign.CLOSED and campaign.source_sha256
    # rows 1 and 4 share one text but are two crowd items: two dialogues, nothing pooled
    assert Dialogue.objects.count() == 5 and result["stored"]["dialogues_created"] == 5
    first, fourth = Dialogue.objects.get(external_id="101"), Dialogue.objects.get(external_id="104")
    assert [t.text for t in first.turns.order_by("position")] == ["Where were you?", "Out."]
    assert [t.text for t in fourth.turns.order_by("position")] == ["Where were you?", "Out."]
    assert HITItem.objects.filter(hit__campaign=campaign).count() == 5
    assert Response.objects.filter(item__hit__campaign=campaign).count() == 15
    assert set(Worker.objects.filter(platform=Worker.MTURK).values_list("external_id", flat=True)) == {
        "edos-worker-1",
        "edos-worker-2",
        "edos-worker-3",
    }
    assert Assignment.objects.filter(hit__campaign=campaign, status=Assignment.APPROVED).count() == 3
    typed = Response.objects.get(new_label_text="Forgetful")
    assert typed.method == Response.OTHER_NEW and typed.label is None
    annoyed = AggregatedLabel.objects.get(campaign=campaign, dialogue=first)
    assert annoyed.votes == {"Annoyed": 2, "Angry": 1} and annoyed.label.name == "Annoyed"
    angry = AggregatedLabel.objects.get(campaign=campaign, dialogue=fourth)
    assert angry.votes == {"Angry": 2, "Furious": 1} and angry.label.name == "Angry"
    # the stored majorities follow the normalised rule: "neutral (Other)" joins "Neutral"
    neutral = AggregatedLabel.objects.get(campaign=campaign, dialogue__external_id="103")
    assert neutral.label.name == "Neutral"
    majorities = AggregatedLabel.objects.filter(campaign=campaign, status=AggregatedLabel.MAJORITY)
    assert majorities.count() == result["majority_normalized"] == result["stored"]["aggregated"]["majority"] == 4
    crowd = TurnLabel.objects.filter(source=TurnLabel.CROWD)
    assert sorted(crowd.values_list("label__name", flat=True)) == ["Angry", "Annoyed", "Neutral", "Surprised"]
    assert crowd.get(label__name="Surprised").provenance["votes"] == {"Surprised": 2, "Impressed": 1}


@pytest.mark.django_db
def test_the_summary_line_says_what_was_stored(tmp_path):
    out = StringIO()
    call_command("import_crowd_results", str(_write(tmp_path, ROWS)), stdout=out)
    assert "5 dialogues, 3 with a 2-of-3 majority" in out.getvalue()
    assert "5 new dialogues, 4 majority labels (typed labels normalised), 4 crowd turn labels" in out.getvalue()


@pytest.mark.django_db
def test_importing_the_same_file_twice_is_refused(tmp_path):
    path = _write(tmp_path, ROWS)
    _import(path)
    with pytest.raises(CommandError, match="already imported as campaign"):
        _import(path)
    assert Campaign.objects.count() == 1


@pytest.mark.django_db
def test_a_row_imported_before_reuses_its_dialogue_but_the_same_text_elsewhere_does_not(tmp_path):
    _import(_write(tmp_path, ROWS, "first.csv"))
    again = "1,0.9-5,105,Look at that!,Surprised,Surprised,Surprised,Joyful\n"  # row 5 of the first file
    second = _import(_write(tmp_path, again, "b.csv"))
    assert second["stored"]["dialogues_created"] == 0 and second["stored"]["dialogues_reused"] == 1
    other_row = "1,0.9-9,999,Look at that!,Surprised,Surprised,Surprised,Joyful\n"
    third = _import(_write(tmp_path, other_row, "c.csv"))
    assert third["stored"]["dialogues_created"] == 1
    assert Dialogue.objects.count() == 6


@pytest.mark.django_db
def test_a_dialogue_ingested_from_subtitles_with_the_same_text_is_not_pooled(tmp_path):
    ingested = Dialogue.objects.create(content_hash=dialogue_hash(["Look at that!"]), turn_count=1)
    Turn.objects.create(dialogue=ingested, position=0, text="Look at that!")
    result = _import(_write(tmp_path, ROWS))
    assert result["stored"]["dialogues_created"] == 5
    assert not AggregatedLabel.objects.filter(dialogue=ingested).exists()


@pytest.mark.django_db
def test_a_bad_row_saves_nothing(tmp_path):
    body = ROWS + "6,0.9-6,106,Hm.,-,Sad,NotALabel,Joyful\n"
    with pytest.raises(CommandError, match="line 9: 'NotALabel' is not a label"):
        _import(_write(tmp_path, body))
    assert not Campaign.objects.exists() and not Dialogue.objects.exists() and not Response.objects.exists()


def _stored_majorities_under_the_papers_rule(campaign: Campaign) -> int:
    """Rebuild each item's three answers as the file gave them (a typed one with its suffix)."""
    answers: dict[int, list[str]] = {}
    for item, label, typed in Response.objects.filter(item__hit__campaign=campaign).values_list(
        "item_id", "label__name", "new_label_text"
    ):
        answers.setdefault(item, []).append(label or f"{typed} (Other)")
    return sum(1 for given in answers.values() if majority_vote(given).is_majority)


@pytest.mark.slow
@pytest.mark.django_db
def test_the_real_file_reproduces_the_papers_table_4_in_what_it_stores(edos_csv):
    result = _import(edos_csv)
    assert result["dialogues"] == 10245
    assert result["majority"] == 8913
    assert result["majority_rate"] == pytest.approx(0.870, abs=0.0005)
    assert result["fleiss_kappa"] == pytest.approx(0.46, abs=0.005)
    assert result["other_answers"] == 425
    assert result["majority_normalized"] == 8920
    assert result["duplicate_dialog_ids"] == 49 and result["duplicate_texts"] == 412
    stored = result["stored"]
    campaign = Campaign.objects.get(pk=stored["campaign"])
    # one dialogue per row, even for the 412 rows repeating another row's text
    assert Dialogue.objects.count() == stored["dialogues_created"] == 10245
    assert HITItem.objects.filter(hit__campaign=campaign).values("dialogue").distinct().count() == 10245
    assert Response.objects.filter(item__hit__campaign=campaign).count() == 30735
    # the paper's rule over the stored answers: a typed answer is stored as typed, so the one row
    # whose two typed answers differ only by a double space before " (Other)" stays apart, as in the paper
    assert _stored_majorities_under_the_papers_rule(campaign) == 8913
    # what the gold labels hold: the normalised rule (7 more, where a typed label spelled a label)
    majorities = AggregatedLabel.objects.filter(campaign=campaign, status=AggregatedLabel.MAJORITY)
    assert AggregatedLabel.objects.filter(campaign=campaign).count() == 10245
    assert majorities.count() == stored["aggregated"]["majority"] == 8920
    # one majority is a typed label that is no label of the taxonomy: it gets no crowd TurnLabel
    crowd = TurnLabel.objects.filter(source=TurnLabel.CROWD)
    assert majorities.filter(label__isnull=False).count() == 8919
    assert crowd.count() == stored["aggregated"]["turn_labels"] == 8919
    agreement = campaign_report(campaign)["agreement"]
    assert (agreement["items"], agreement["majority"], agreement["majority_rate"]) == (10245, 8920, 0.8707)
