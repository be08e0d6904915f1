"""`manage.py ingest` and the writer service: counts, idempotence, atomicity, duplicates, skips."""

import gzip
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation import ingestion
from annotation.ingest import srt_reader
from annotation.ingest.records import dialogue_hash
from annotation.models import Dialogue, Movie, SubtitleFile, Turn
from tests.annotation.conftest import opus_xml

pytestmark = pytest.mark.django_db

ARGUMENT = [(1.0, 2.0, "JOHN: Where were you?"), (2.5, 4.0, "[door slams]"), (4.2, 5.0, "At the harbour.")]
REUNION = [(20.0, 21.0, "Is it really you?"), (21.5, 23.0, "- It's me.\n- I missed you."), (23.5, 24.0, "Hush.")]


def ingest(*args):
    out, err = StringIO(), StringIO()
    call_command("ingest", *map(str, args), "--json", stdout=out, stderr=err)
    return json.loads(out.getvalue()), err.getvalue()


def ingest_failing(*args):
    out, err = StringIO(), StringIO()
    with pytest.raises(CommandError):
        call_command("ingest", *map(str, args), "--json", stdout=out, stderr=err)
    return json.loads(out.getvalue()), err.getvalue()


def test_json_output_has_every_count(write_srt):
    path = write_srt("film.srt", ARGUMENT + REUNION + [(60.0, 61.0, "Subtitles by Owl")])
    report, _ = ingest(
        path, "--genre", "Drama,Romance", "--year", "1999", "--imdb-id", "tt0123456", "--title", "Harbour"
    )
    assert report == {
        "files": 1,
        "skipped_files": 0,
        "failed_files": 0,
        "sentences": 6,
        "turns": 6,
        "dialogues": 2,
        "duplicates_dropped": 0,
        "removed_by_rule": {"advert": 1, "sound_cue": 1, "speaker_name": 1},
        "languages": {"en": 2},
        "errors": [],
        "warnings": [],
        "per_file": [
            {
                "path": str(path),
                "status": "imported",
                "reason": "",
                "warnings": [],
                "encoding": "utf-8",
                "encoding_reason": "ascii only",
                "dialogues": 2,
                "languages": {"en": 2},
                "removed_by_rule": {"advert": 1, "sound_cue": 1, "speaker_name": 1},
            }
        ],
    }
    movie = Movie.objects.get()
    assert (movie.title, movie.year, movie.imdb_id, movie.genres, movie.language) == (
        "Harbour",
        1999,
        "tt0123456",
        ["Drama", "Romance"],
        "en",
    )
    texts = [[t.text for t in d.turns.all()] for d in Dialogue.objects.order_by("position")]
    assert texts == [
        ["Where were you?", "At the harbour."],
        ["Is it really you?", "It's me.", "I missed you.", "Hush."],
    ]


def test_the_subtitle_file_records_its_counts_and_cue_gaps(write_srt):
    ingest(write_srt("film.srt", ARGUMENT + REUNION))
    stored = SubtitleFile.objects.get()
    assert (stored.format, stored.sentence_count, stored.turn_count, stored.dialogue_count) == ("srt", 6, 6, 2)
    assert stored.removed_by_rule == {"sound_cue": 1, "speaker_name": 1}
    assert stored.cue_gaps["bin_seconds"] == 0.5 and stored.cue_gaps["max_seconds"] == 30
    assert sum(stored.cue_gaps["counts"]) + stored.cue_gaps["over_max"] == len(ARGUMENT + REUNION) - 1
    assert stored.cue_gaps["counts"][30] == 1  # 5.0 -> 20.0 is a 15 s gap
    dialogue = Dialogue.objects.get(position=1)
    assert (dialogue.start, dialogue.end, dialogue.turn_count, dialogue.movie_id) == (20.0, 24.0, 4, stored.movie_id)
    turn = dialogue.turns.get(position=0)
    assert (turn.start, turn.end, turn.token_count) == (20.0, 21.0, 4)
    assert dialogue.content_hash == dialogue_hash(["Is it really you?", "It's me.", "I missed you.", "Hush."])


def test_re_ingesting_the_same_file_is_a_no_op(write_srt, tmp_path):
    path = write_srt("film.srt", ARGUMENT + REUNION)
    ingest(path)
    copy = tmp_path / "renamed.srt"
    copy.write_bytes(path.read_bytes())
    report, _ = ingest(path, copy)
    assert (report["files"], report["skipped_files"], report["dialogues"]) == (0, 2, 0)
    assert (SubtitleFile.objects.count(), Dialogue.objects.count(), Turn.objects.count()) == (1, 2, 6)


def test_it_recurses_into_folders_and_reads_every_format(write_srt, write_file, tmp_path):
    write_srt("corpus/a/film.srt", ARGUMENT)
    xml = opus_xml([("00:00:01,000", ["Run", "!"], "00:00:02,000"), ("00:00:02,500", ["Where", "?"], "00:00:03,000")])
    write_file("corpus/b/film.xml", xml)
    write_file("corpus/b/c/film.xml.gz", gzip.compress(xml.replace("Run", "Hide").encode()))
    write_file("corpus/notes.txt", "not a subtitle")
    report, _ = ingest(tmp_path / "corpus")
    assert (report["files"], report["dialogues"]) == (3, 3)
    assert sorted(SubtitleFile.objects.values_list("format", flat=True)) == ["opus-xml", "opus-xml", "srt"]


def test_opus_meta_fills_the_movie(write_file, tmp_path):
    meta = "<source><genre>Thriller,Drama</genre><year>2004</year></source>"
    xml = opus_xml([("00:00:01,000", ["Run", "!"], "00:00:02,000"), (None, ["Why", "?"], "00:00:03,000")], meta)
    write_file("2004/345678/9.xml.gz", gzip.compress(xml.encode()))
    report, _ = ingest(tmp_path / "2004")
    movie = Movie.objects.get()
    assert (movie.year, movie.imdb_id, movie.genres) == (2004, "tt0345678", ["Thriller", "Drama"])
    assert report["dialogues"] == 1


def test_a_bad_file_leaves_nothing_and_the_others_still_import(write_srt, write_file, tmp_path, monkeypatch):
    # Batches of one and small chunks, so the late file has written dialogues before it reaches the NUL.
    monkeypatch.setattr(ingestion, "WRITE_BATCH", 1)
    monkeypatch.setattr(srt_reader, "CHUNK_CHARS", 200)
    cues = [(i * 10.0, i * 10.0 + 1, f"Scene {i} starts.\n- And goes on.") for i in range(6)]
    good = write_srt("in/good.srt", ARGUMENT)
    # nothing in bad.srt can be read (a bad cue alone is skipped; see test_ingest_real_files.py)
    bad_text = "".join(f"{n}\n00:00:{n:02d},000 -> 00:00:{n:02d},500\nLine {n}.\n\n" for n in range(1, 4))
    bad = write_file("in/bad.srt", bad_text + "\n")
    also_bad = write_file("in/broken.xml", '<document>\n<s id="1">\n<w>Hi</w>\n</document>')
    late_bad = write_srt("in/late.srt", cues)
    late_bad.write_text(late_bad.read_text() + "7\n00:01:40,000 --> 00:01:41,000\nBro\x00ken.\n")
    report, err = ingest_failing(tmp_path / "in")
    assert (report["files"], report["failed_files"]) == (1, 3)
    assert f"{bad}, line 2: malformed timestamp" in err
    assert f"{also_bad}, line 4: invalid XML" in err
    assert f"{late_bad}, line 33: contains a NUL byte" in err
    assert list(SubtitleFile.objects.values_list("name", flat=True)) == [str(good)]
    assert Movie.objects.count() == 1 and Dialogue.objects.count() == 1


def test_the_command_exits_non_zero_on_a_bad_file(write_file):
    from django.core.management import execute_from_command_line

    path = write_file("bad.srt", "1\n00:00:01,000 --> 00:00:0x,000\nOops.\n")
    with pytest.raises(SystemExit) as exit_info:
        execute_from_command_line(["manage.py", "ingest", str(path)])
    assert exit_info.value.code != 0


def test_duplicate_dialogues_are_dropped_corpus_wide(write_srt):
    ingest(write_srt("one.srt", ARGUMENT + REUNION))
    # the same reunion (different case and spacing) in another film, and twice within it
    echo = [(1.0, 2.0, "IS IT  really you?"), (2.5, 4.0, "- It's me.\n- I missed you."), (4.5, 5.0, "Hush.")]
    again = [(t + 40, u + 40, text) for t, u, text in echo]
    fresh = [(100.0, 101.0, "Goodbye, then."), (101.5, 102.0, "Goodbye.")]
    report, _ = ingest(write_srt("two.srt", echo + again + fresh))
    assert (report["dialogues"], report["duplicates_dropped"]) == (1, 2)
    assert Dialogue.objects.count() == 3
    assert SubtitleFile.objects.get(name__endswith="two.srt").duplicates_dropped == 2


def test_a_duplicate_inserted_by_another_process_is_dropped_not_an_error(write_srt):
    # A row with the same hash appears without this process having seen it (e.g. committed
    # concurrently): the unique constraint, not a pre-check, must drop it.
    movie = Movie.objects.create(title="Other")
    Dialogue.objects.create(movie=movie, content_hash=dialogue_hash(["Where were you?", "At the harbour."]))
    report, _ = ingest(write_srt("film.srt", ARGUMENT + REUNION))
    assert (report["files"], report["dialogues"], report["duplicates_dropped"]) == (1, 1, 1)
    assert Turn.objects.count() == 4


def test_documentaries_are_skipped(write_srt, write_file):
    report, _ = ingest(write_srt("nature.srt", ARGUMENT), "--genre", "Documentary")
    assert (report["skipped_files"], report["removed_by_rule"]) == (1, {"documentary": 1})
    xml = opus_xml(
        [("00:00:01,000", ["Look", "."], "00:00:02,000"), ("00:00:02,500", ["Whales", "!"], "00:00:03,000")],
        "<source><genre>Documentary,History</genre><year>2001</year></source>",
    )
    report, _ = ingest(write_file("whales.xml", xml))
    assert report["skipped_files"] == 1
    assert (Movie.objects.count(), SubtitleFile.objects.count(), Dialogue.objects.count()) == (0, 0, 0)


def test_documentaries_import_when_the_rule_is_off(write_srt):
    report, _ = ingest(write_srt("nature.srt", ARGUMENT), "--genre", "Documentary", "--disable-rule", "documentary")
    assert (report["files"], report["dialogues"]) == (1, 1)


def test_the_gap_flag_overrides_the_setting(write_srt, settings):
    settings.DIALOGUE_GAP_SECONDS = 100.0
    path = write_srt("gap.srt", ARGUMENT + REUNION)
    report, _ = ingest(path, "--gap", "5")
    assert report["dialogues"] == 2


def test_the_gap_setting_is_the_default(write_srt, settings):
    settings.DIALOGUE_GAP_SECONDS = 100.0
    report, _ = ingest(write_srt("gap.srt", ARGUMENT + REUNION))
    assert report["dialogues"] == 1


def test_a_missing_path_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError, match="no such file or folder"):
        call_command("ingest", str(tmp_path / "nowhere.srt"), stdout=StringIO())


def test_the_plain_output_summarises(write_srt):
    out = StringIO()
    call_command("ingest", str(write_srt("film.srt", ARGUMENT + REUNION)), stdout=out)
    assert "imported:" in out.getvalue() and "2 dialogues" in out.getvalue()


def test_the_demo_subtitles_give_a_few_dozen_dialogues(settings):
    from pathlib import Path

    report, _ = ingest(Path(settings.BASE_DIR) / "demo" / "subtitles", "--genre", "Drama")
    assert (report["files"], report["failed_files"]) == (4, 0)
    assert report["dialogues"] >= 30
    lengths = list(Dialogue.objects.values_list("turn_count", flat=True))
    assert min(lengths) >= 2 and max(lengths) <= 6


# Written for these tests: an English scene and a French one, 30 s apart, in one cp1250 file
# (French letters that cp1250 shares), and a Czech file.
BILINGUAL = [
    (1.0, 2.0, "Where have you been all this time?"),
    (2.5, 4.0, "I was at the station, waiting for the last train."),
    (40.0, 41.0, "Je t'ai attendu toute la nuit, mon ami."),
    (41.5, 43.0, "Je suis désolé, je ne savais pas quoi faire."),
]
CZECH = [(1.0, 2.0, "Proč jsi mi to neřekl? Čekala jsem celou noc."), (2.5, 4.0, "Řekni mi pravdu, prosím.")]


def test_the_report_lists_per_file_encoding_languages_and_rule_counts(write_srt):
    mixed = write_srt("mixed.srt", BILINGUAL, encoding="cp1250")
    czech = write_srt("czech.srt", CZECH, encoding="cp1250")
    report, _ = ingest(mixed, czech)
    by_path = {entry["path"]: entry for entry in report["per_file"]}
    assert by_path[str(mixed)]["languages"] == {"en": 1, "fr": 1}
    assert by_path[str(czech)]["encoding"] == "cp1250" and "cs" in by_path[str(czech)]["encoding_reason"]
    assert by_path[str(czech)]["languages"] == {"cs": 1}
    assert report["languages"] == {"en": 1, "fr": 1, "cs": 1}
    stored = SubtitleFile.objects.get(name=str(czech))
    assert (stored.encoding, stored.language_counts) == ("cp1250", {"cs": 1})
    assert sorted(Dialogue.objects.values_list("language", flat=True)) == ["cs", "en", "fr"]
    assert all(d.split for d in Dialogue.objects.all())  # every dialogue stored with its split


def test_a_mojibake_file_is_reported_and_nothing_of_it_is_stored(write_file):
    double = "Proč jsi mi to neřekl? Už nemůžu dál, je to šílené.".encode().decode("cp1250")
    path = write_file("double.srt", f"1\n00:00:01,000 --> 00:00:02,000\n{double}\n\n", encoding="utf-8")
    report, err = ingest_failing(path)
    assert report["failed_files"] == 1 and "mojibake" in err and "double.srt" in err
    assert not SubtitleFile.objects.exists() and not Dialogue.objects.exists()


def test_the_human_summary_names_encoding_languages_and_rules(write_srt):
    path = write_srt("film.srt", ARGUMENT + REUNION)
    out = StringIO()
    call_command("ingest", str(path), stdout=out)
    text = out.getvalue()
    assert "encoding utf-8: ascii only" in text and "languages: en 2" in text
    assert "cleaning rules: sound_cue 1, speaker_name 1" in text
