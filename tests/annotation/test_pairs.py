"""SubTle interaction-response pairs: the rules at their edges (pure core) and `manage.py extract_pairs`."""

import csv
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.export.cells import escape_cell
from annotation.ingest.pairs import extract_pairs, pair_key, score_pairs
from annotation.ingest.records import Cue


def pairs(*cues, max_gap=1.0):
    return [(p.interaction, p.response) for p in extract_pairs([Cue(*c) for c in cues], "f.srt", max_gap)]


def test_two_complete_cues_close_together_form_a_pair():
    assert pairs((1.0, 2.0, "Where were you?"), (2.5, 3.0, "At the market.")) == [("Where were you?", "At the market.")]


def test_a_gap_of_exactly_max_gap_is_no_pair_and_just_under_is():
    assert pairs((1.1, 2.1, "Are you ready?"), (3.1, 4.0, "Always.")) == []
    assert pairs((1.1, 2.1, "Are you ready?"), (3.099, 4.0, "Always.")) == [("Are you ready?", "Always.")]
    assert pairs((1.1, 2.1, "Are you ready?"), (4.0, 5.0, "Always."), max_gap=2.0) == [("Are you ready?", "Always.")]


def test_chained_cues_give_overlapping_pairs():
    assert pairs((1, 2, "One?"), (2.2, 3, "Two!"), (3.2, 4, "Three.")) == [("One?", "Two!"), ("Two!", "Three.")]


def test_an_ellipsis_ending_means_the_same_speaker_runs_on():
    assert pairs((1, 2, "I was going to..."), (2.2, 3, "Tell you.")) == []
    assert pairs((1, 2, "I was going to…"), (2.2, 3, "Tell you.")) == []


def test_a_lower_case_start_is_a_continuation_not_a_response():
    assert pairs((1, 2, "I told you so."), (2.2, 3, "and you laughed.")) == []


def test_first_or_second_cue_without_final_punctuation_is_no_pair():
    assert pairs((1, 2, "I told you"), (2.2, 3, "You did.")) == []
    assert pairs((1, 2, "You did?"), (2.2, 3, "I did, really")) == []
    assert pairs((1, 2, "[door slams]"), (2.2, 3, "Who is it?")) == []


def test_speaker_dashes_are_stripped_and_a_two_speaker_cue_is_a_pair_of_its_own():
    assert pairs((1, 2, "- Coming?\n- In a minute."), (2.5, 3, "hurry up!")) == [("Coming?", "In a minute.")]


def test_a_dash_stands_for_the_capital_so_a_dashed_lower_case_line_is_complete():
    assert pairs((1, 2, "In a minute."), (2.5, 3, "- hurry up!")) == [("In a minute.", "hurry up!")]
    assert pairs((1, 2, "— rápido!"), (2.5, 3, "– Já vou.")) == [("rápido!", "Já vou.")]


def test_markup_and_closing_quotes_do_not_hide_the_punctuation():
    assert pairs((1, 2, '<i>He said "go."</i>'), (2.5, 3, "{\\an8}So we went!")) == [('He said "go."', "So we went!")]


def test_portuguese_capitals_accents_and_punctuation():
    assert pairs((1, 2, "É verdade?"), (2.4, 3, "Óbvio que é.")) == [("É verdade?", "Óbvio que é.")]
    assert pairs((1, 2, "Então…"), (2.4, 3, "Água, por favor.")) == []
    assert pairs((1, 2, "Foi você?"), (2.4, 3, "ótimo.")) == []


def test_pairs_carry_file_cue_numbers_and_times():
    (pair,) = extract_pairs([Cue(1, 2, ""), Cue(3, 4, "Hi."), Cue(4.5, 5, "Hello.")], "films/a.srt")
    assert pair.as_dict() == {
        "interaction": "Hi.",
        "response": "Hello.",
        "file": "films/a.srt",
        "interaction_cue": 2,
        "response_cue": 3,
        "interaction_start": 3,
        "interaction_end": 4,
        "response_start": 4.5,
        "response_end": 5,
    }


def test_scores_judge_only_the_files_the_reference_names():
    extracted = [pair_key("x/a.srt", 1, 2), pair_key("a.srt", 3, 4), pair_key("b.srt", 1, 2)]
    score = score_pairs(extracted, [pair_key("a.srt", 1, 2), pair_key("a.srt", 5, 6)])
    assert (score.matched, score.extracted, score.expected) == (1, 2, 2)
    assert (score.precision, score.recall) == (0.5, 0.5)


def test_csv_cells_that_would_run_as_formulas_are_defused():
    assert [escape_cell(v) for v in ("=SUM(A1)", "+1", "@x", "Fine.", 3)] == ["'=SUM(A1)", "'+1", "'@x", "Fine.", 3]


# --- the command ---

FILM = [
    (1.0, 2.0, "- Did you lock the door?\n- Of course I did."),
    (2.5, 3.5, "Then why is it open?"),
    (4.0, 5.0, "Because the wind..."),
    (5.2, 6.0, "pushed it."),
    (9.0, 10.0, "Nobody believes that."),
]


def run(*args):
    out, err = StringIO(), StringIO()
    call_command("extract_pairs", *map(str, args), stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def fails(*args):
    with pytest.raises(CommandError) as caught:
        call_command("extract_pairs", *map(str, args), stdout=StringIO(), stderr=StringIO())
    return str(caught.value)


def test_command_writes_jsonl_and_a_per_genre_table(write_srt, tmp_path):
    write_srt("corpus/Drama/door.srt", FILM)
    write_srt("corpus/Comedy/short.srt", [(1, 2, "Hello?"), (2.5, 3, "Hi!")])
    out_file = tmp_path / "pairs.jsonl"
    out, _ = run(tmp_path / "corpus", "--out", out_file)
    rows = [json.loads(line) for line in out_file.read_text(encoding="utf-8").splitlines()]
    assert [(r["interaction"], r["response"], r["interaction_cue"], r["response_cue"]) for r in rows] == [
        ("Hello?", "Hi!", 1, 2),
        ("Did you lock the door?", "Of course I did.", 1, 1),
        ("Of course I did.", "Then why is it open?", 1, 2),
    ]
    table = out.splitlines()
    assert table[0].split() == ["genre", "files", "cues", "pairs", "pairs/cue"]
    assert table[1].split() == ["Comedy", "1", "2", "1", "0.500"]
    assert table[2].split() == ["Drama", "1", "5", "2", "0.400"]
    assert table[3].split() == ["total", "2", "7", "3", "0.429"]


def test_command_writes_csv_and_scores_against_a_reference(write_srt, tmp_path):
    path = write_srt("door.srt", FILM)
    reference = tmp_path / "expected.jsonl"
    reference.write_text(
        '{"file": "door.srt", "interaction_cue": 1, "response_cue": 1}\n'
        '{"file": "door.srt", "interaction_cue": 4, "response_cue": 5}\n',
        encoding="utf-8",
    )
    out_file = tmp_path / "pairs.csv"
    out, _ = run(path, "--out", out_file, "--format", "csv", "--reference", reference, "--max-gap", "5")
    with open(out_file, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["interaction_cue"], r["response_cue"]) for r in rows] == [("1", "1"), ("1", "2")]
    assert "precision=0.500 recall=0.500" in out
    assert "Unknown" not in out and "unknown" in out


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"file": "a.srt", "interaction_cue": 1}\n', "expected.jsonl:1: missing 'response_cue'"),
        ("\nnot json\n", "expected.jsonl:2: not JSON"),
        ('{"file": "a.srt", "interaction_cue": "x", "response_cue": 2}\n', "expected.jsonl:1: cue numbers"),
    ],
)
def test_a_bad_reference_names_its_line(write_srt, tmp_path, content, message):
    path = write_srt("door.srt", FILM)
    (tmp_path / "expected.jsonl").write_text(content, encoding="utf-8")
    assert message in fails(path, "--out", tmp_path / "o.jsonl", "--reference", tmp_path / "expected.jsonl")
    assert not (tmp_path / "o.jsonl").exists()


def test_missing_paths_and_empty_folders_are_one_line_errors(tmp_path):
    assert (
        fails(tmp_path / "nope.srt", "--out", tmp_path / "o.jsonl")
        == f"{tmp_path / 'nope.srt'}: no such file or folder"
    )
    (tmp_path / "empty").mkdir()
    assert fails(tmp_path / "empty", "--out", tmp_path / "o.jsonl").startswith(f"{tmp_path / 'empty'}: no .srt file")


def test_an_unreadable_file_is_named_and_the_others_are_still_written(write_srt, write_file, tmp_path):
    write_srt("films/good.srt", FILM)
    bad = write_file("films/bad.srt", "1\n00:00:01,000 --> 00:00:0x,000\nHello.\n\n")
    out_file = tmp_path / "o.jsonl"
    err = StringIO()
    with pytest.raises(CommandError, match="1 file"):
        call_command("extract_pairs", tmp_path / "films", "--out", out_file, stdout=StringIO(), stderr=err)
    assert str(bad) in err.getvalue()
    assert len(out_file.read_text(encoding="utf-8").splitlines()) == 2


def test_command_reads_portuguese_in_a_legacy_code_page(write_file, tmp_path):
    text = (
        "1\n00:00:01,000 --> 00:00:02,000\n- Você está aí?\n\n2\n00:00:02,500 --> 00:00:03,000\nÉ claro que estou.\n\n"
    )
    path = write_file("pt/filme.srt", text, encoding="cp1252")
    out_file = tmp_path / "pt.jsonl"
    run(path, "--out", out_file, "--language", "pt", "--genre", "Drama")
    (row,) = [json.loads(line) for line in out_file.read_text(encoding="utf-8").splitlines()]
    assert (row["interaction"], row["response"]) == ("Você está aí?", "É claro que estou.")
