"""Leftovers from real third-party subtitle files (issue 26, part 3), each reproduced by a small
file written here: a bad cue skipped rather than the file refused, the movie's language from its
dialogues, an OPUS film in capitals, and the song-marker, glued-speaker and title-card rules."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from annotation.ingest import CleaningRules, FileRun, PipelineConfig, SubtitleFormatError
from annotation.models import Movie
from tests.annotation.conftest import srt_text

GOOD = [(1.0, 2.0, "Where were you?"), (2.5, 3.5, "At the harbour."), (4.0, 5.0, "All night?")]


def bad_cue_file(write_file, timing_line: str):
    """GOOD with a bad cue between its second and third cue; the bad timing line is line 10."""
    good = srt_text(GOOD).split("\n\n")
    bad = f"9\n{timing_line}\nThis cue is broken."
    return write_file("bad.srt", "\n\n".join([good[0], good[1], bad, *good[2:]]))


def texts(run):
    return [[turn.text for turn in dialogue.turns] for dialogue in run.dialogues()]


@pytest.mark.parametrize(
    "timing_line",
    [
        "00:00:03,600 --> 00:00:03,900 and then some text",  # text after the timing line
        "00:00:03,600 --> 00:00:03,900 ?!",
        "00:00:03,600 -> 00:00:03,900",  # a timing line srt cannot read
    ],
)
def test_it_skips_a_bad_cue_with_a_warning_naming_file_and_line_and_keeps_the_rest(write_file, timing_line):
    run = FileRun(bad_cue_file(write_file, timing_line))
    assert texts(run) == [["Where were you?", "At the harbour.", "All night?"]]
    (skipped,) = run.stats.skipped_cues
    assert skipped.line == 10 and str(skipped).startswith(f"{run.path}, line 10: malformed timestamp")
    assert run.stats.warnings() == [f"{skipped} (cue skipped)"]


def test_coordinates_after_the_timing_line_are_no_bad_cue(write_file):
    run = FileRun(bad_cue_file(write_file, "00:00:03,600 --> 00:00:03,900 X1:0 X2:0 Y1:0 Y2:0"))
    assert texts(run) == [["Where were you?", "At the harbour.", "This cue is broken.", "All night?"]]
    assert run.stats.skipped_cues == []


def test_it_refuses_a_file_in_which_nothing_can_be_read(write_file):
    path = write_file("none.srt", "1\n00:00:01,000 --> 00:00:02,000 junk\nOne.\n\n2\n00:00:03,000 -> 00:00:04\nTwo.\n")
    with pytest.raises(SubtitleFormatError) as error:
        list(FileRun(path).dialogues())
    assert error.value.line == 2 and "none.srt, line 2: malformed timestamp" in str(error.value)


def ingest(path):
    out, err = StringIO(), StringIO()
    call_command("ingest", str(path), "--json", stdout=out, stderr=err)
    return json.loads(out.getvalue()), err.getvalue()


@pytest.mark.django_db
def test_the_ingest_command_imports_a_file_with_a_bad_cue_and_warns(write_file):
    path = bad_cue_file(write_file, "00:00:03,600 --> 00:00:03,900 and then some text")
    report, err = ingest(path)
    assert (report["files"], report["failed_files"], report["dialogues"]) == (1, 0, 1)
    warning = f"{path}, line 10: malformed timestamp (trailing 'and then some text') (cue skipped)"
    assert report["warnings"] == [warning] and report["per_file"][0]["warnings"] == [warning]
    assert f"warning: {warning}" in err


FRENCH = [
    (1.0, 2.0, "Je ne sais pas où il est parti."),
    (2.5, 3.5, "Tu veux venir avec moi ce soir?"),
    (20.0, 21.0, "Nous allons manger chez ma mère."),
    (21.5, 22.5, "Elle a préparé un bon gâteau."),
]
SERBIAN = [
    (1.0, 2.0, "Ne znam gde je otišao."),
    (2.5, 3.5, "Hoćeš li da dođeš sa mnom večeras?"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("cues", "language"), [(FRENCH, "fr"), (SERBIAN, "sr"), (GOOD, "en")])
def test_the_movie_takes_the_language_its_dialogues_were_identified_in(write_srt, cues, language):
    ingest(write_srt("film.srt", cues))  # --language is left at its default, en
    assert Movie.objects.get().language == language


@pytest.mark.django_db
def test_a_movie_whose_dialogues_say_no_language_stays_unknown(write_srt):
    ingest(write_srt("film.srt", [(1.0, 2.0, "Oh!"), (2.5, 3.5, "Ah!")]))
    assert Movie.objects.get().language == "und"


def capitals_xml(sentences):
    """OPUS XML; a token is "TEXT" or ("TEXT", {attribute: value})."""
    parts = ['<?xml version="1.0" encoding="utf-8"?>', '<document id="1">']
    for number, (start, tokens) in enumerate(sentences, 1):
        parts += [f'<s id="{number}">', f'<time id="T{number}S" value="{start}"/>']
        for index, token in enumerate(tokens, 1):
            text, attributes = (token, {}) if isinstance(token, str) else token
            extra = "".join(f' {name}="{value}"' for name, value in attributes.items())
            parts.append(f'<w id="{number}.{index}"{extra}>{text}</w>')
        parts.append("</s>")
    return "\n".join([*parts, "</document>"])


def test_an_opus_film_in_capitals_joins_its_contractions(write_file):
    xml = capitals_xml([("00:00:01,000", ["I", "DON", "'T", "KNOW", "."]), ("00:00:02,000", ["HE", "'S", "GONE", "."])])
    run = FileRun(write_file("caps.xml", xml))
    assert texts(run) == [["I DON'T KNOW.", "HE'S GONE."]]
    assert run.stats.removed_by_rule["opus_contraction"] == 1  # "'S" the token joiner glues already


def test_an_opus_film_in_capitals_takes_the_normal_case_its_xml_gives(write_file):
    sentence = ["WHERE", "IS", "PARIS", "?"]
    with_forms = [("WHERE", {"lemma": "where"}), ("IS", {"lemma": "be"}), ("PARIS", {"lemma": "Paris"}), "?"]
    mostly = [("I", {"lemma": "I"}), ("DON", {"lemma": "do"}), ("'T", {"lemma": "not"}), ("KNOW", {"lemma": "know"})]
    mostly += [("HIM", {"norm": "him"}), ("WELL", {"norm": "well"}), ("AT", {"lemma": "at"}), ("ALL", {"lemma": "all"})]
    xml = capitals_xml([("00:00:01,000", with_forms), ("00:00:02,000", [*mostly, "."]), ("00:00:03,000", sentence)])
    # "IS" (lemma "be") and "DON" have no normal-case form; most words of their sentence do: lower-cased
    assert texts(FileRun(write_file("caps.xml", xml))) == [
        ["Where is Paris?", "I don't know him well at all.", "WHERE IS PARIS?"]
    ]


def test_a_normal_case_sentence_keeps_its_shouted_word(write_file):
    xml = capitals_xml([("00:00:01,000", ["Stop", ",", ("NO", {"lemma": "no"}), "!"]), ("00:00:02,000", ["Fine", "."])])
    assert texts(FileRun(write_file("shout.xml", xml))) == [["Stop, NO!", "Fine."]]


def scene(*texts_):
    return [(float(i), i + 0.8, text) for i, text in enumerate(texts_)]


def cleaned(path, *disabled):
    run = FileRun(path, PipelineConfig(rules=CleaningRules.without(disabled)))
    return texts(run), run.stats.removed_by_rule


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        ("Sing with me. # Happy birthday to you #", "Sing with me."),
        ("Row your boat, gently down the stream #", None),  # the end of a song begun before
        ("Come on. # Row, row, row your boat", "Come on."),  # a song to the line's end
    ],
)
def test_song_markers_inside_a_turn_are_cut_and_counted(write_srt, line, kept):
    path = write_srt("song.srt", scene("Who is there?", line, "Only me."))
    dialogues, removed = cleaned(path)
    assert dialogues == [["Who is there?", *([kept] if kept else []), "Only me."]]
    assert removed["song_marker"] == 1
    dialogues, removed = cleaned(path, "song_marker")
    assert "#" in " ".join(sum(dialogues, [])) and removed["song_marker"] == 0


def test_a_number_sign_before_a_digit_is_no_song_marker(write_srt):
    dialogues, removed = cleaned(write_srt("n.srt", scene("We are #1 now.", "Good.")))
    assert dialogues == [["We are #1 now.", "Good."]] and removed["song_marker"] == 0


@pytest.mark.parametrize("line", ["MAN:Jacques, leave the windows.", "Marie:Jacques, leave the windows."])
def test_a_speaker_name_with_no_space_after_its_colon_is_stripped(write_srt, line):
    path = write_srt("s.srt", scene(line, "Why?"))
    dialogues, removed = cleaned(path)
    assert dialogues == [["Jacques, leave the windows.", "Why?"]] and removed["speaker_name"] == 1
    assert cleaned(path, "speaker_name")[0] == [[line, "Why?"]]


def test_a_colon_in_a_time_or_address_is_no_speaker(write_srt):
    path = write_srt("t.srt", scene("Meet me at 10:30 tonight.", "Go to http://example.org now."))
    assert cleaned(path, "advert")[0] == [["Meet me at 10:30 tonight.", "Go to http://example.org now."]]


@pytest.mark.parametrize("card", ["T I T L E  3 ...", "C H A P T E R  T W O."])
def test_a_spaced_out_title_card_is_no_turn(write_srt, card):
    path = write_srt("card.srt", scene("Where were you?", card, "At the harbour."))
    dialogues, removed = cleaned(path)
    assert dialogues == [["Where were you?", "At the harbour."]] and removed["title_card"] == 1
    kept, removed = cleaned(path, "title_card")
    assert kept != dialogues and removed["title_card"] == 0  # a turn, or a turn rule ending the dialogue


def test_a_line_of_a_few_short_words_is_no_title_card(write_srt):
    path = write_srt("i.srt", scene("I, I, I do not know.", "So be it, I go."))
    assert cleaned(path)[0] == [["I, I, I do not know.", "So be it, I go."]]
