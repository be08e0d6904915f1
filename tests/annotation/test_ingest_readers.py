"""The SubRip and OPUS readers, quirk by quirk (pure core, no database)."""

import codecs
import gzip

import pytest

from annotation.ingest import FileRun, PipelineConfig, SubtitleFormatError, srt_reader
from annotation.ingest.opus_reader import join_tokens, read_opus_sentences
from annotation.ingest.pipeline import meta_from_path
from annotation.ingest.records import FileMeta
from annotation.ingest.srt_reader import read_srt_cues
from tests.annotation.conftest import opus_xml, srt_text

SCENE = [(1.0, 2.0, "Where were you?"), (2.5, 4.0, "At the harbour."), (4.5, 6.0, "All night long?")]


def cues_of(path, language=""):
    return [(cue.start, cue.end, cue.text) for cue in read_srt_cues(path, language)]


def turn_texts(path, **config):
    return [[turn.text for turn in dialogue.turns] for dialogue in FileRun(path, PipelineConfig(**config)).dialogues()]


def test_it_reads_a_plain_srt(write_srt):
    assert cues_of(write_srt("plain.srt", SCENE)) == SCENE


@pytest.mark.parametrize(
    ("encoding", "prefix"),
    [("utf-8", codecs.BOM_UTF8), ("utf-16-le", codecs.BOM_UTF16_LE), ("utf-16-be", codecs.BOM_UTF16_BE)],
)
def test_it_reads_files_with_a_byte_order_mark(write_file, encoding, prefix):
    text = srt_text([(1.0, 2.0, "Ça va, Zoë?"), (2.5, 3.0, "Très bien.")])
    path = write_file("bom.srt", prefix + text.encode(encoding))
    assert [text for _, _, text in cues_of(path)] == ["Ça va, Zoë?", "Très bien."]


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_it_reads_utf16_without_a_byte_order_mark(write_file, encoding):
    path = write_file("utf16.srt", srt_text(SCENE), encoding=encoding)
    assert cues_of(path) == SCENE


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_it_reads_crlf_and_cr_only_line_ends(write_file, newline):
    path = write_file(
        "ends.srt", srt_text([(1.0, 2.0, "First line\nsecond line"), (3.0, 4.0, "Next.")]), newline=newline
    )
    assert cues_of(path) == [(1.0, 2.0, "First line\nsecond line"), (3.0, 4.0, "Next.")]


@pytest.mark.parametrize(
    ("encoding", "language", "lines"),
    [
        ("cp1252", "en", ["I can’t believe it’s you, Zoë.", "The café on Rue Dupré — “closed”, naïvely."]),
        ("cp1250", "cs", ["Proč jsi mi to neřekl? Čekala jsem celou noc.", "Řekni mi pravdu, prosím. Už nemůžu dál."]),
        ("cp1251", "ru", ["Где ты был всю ночь? Я ждала тебя до утра.", "Прости меня, пожалуйста. Я так не могу."]),
        ("cp1251", "", ["Где ты был всю ночь? Я ждала тебя до утра.", "Прости меня, пожалуйста. Я так не могу."]),
    ],
)
def test_it_detects_legacy_code_pages(write_file, encoding, language, lines):
    path = write_file("legacy.srt", srt_text([(1.0, 2.0, lines[0]), (3.0, 4.0, lines[1])]), encoding=encoding)
    assert [text for _, _, text in cues_of(path, language)] == lines


def test_it_reads_cues_without_numbers(write_file):
    path = write_file("nonum.srt", "00:00:01,000 --> 00:00:02,000\nOne.\n\n00:00:03,000 --> 00:00:04,000\nTwo.\n")
    assert cues_of(path) == [(1.0, 2.0, "One."), (3.0, 4.0, "Two.")]


def test_it_reads_dot_short_and_missing_milliseconds(write_file):
    path = write_file(
        "millis.srt",
        "1\n00:00:01.250 --> 00:00:02.5\nDot.\n\n2\n00:00:03 --> 00:00:04\nNone.\n\n3\n00:00:05,75 --> 00:00:06,000\nShort.\n",
    )
    assert cues_of(path) == [(1.25, 2.5, "Dot."), (3.0, 4.0, "None."), (5.75, 6.0, "Short.")]


def test_it_ignores_position_suffixes(write_file):
    path = write_file("pos.srt", "1\n00:00:01,000 --> 00:00:02,000  X1:100 X2:200 Y1:300 Y2:400\nPlaced.\n")
    assert cues_of(path) == [(1.0, 2.0, "Placed.")]


def test_it_puts_cues_back_in_time_order(write_file):
    shuffled = [SCENE[2], SCENE[0], SCENE[1]]
    path = write_file("order.srt", srt_text(shuffled))
    assert cues_of(path) == SCENE


def test_an_empty_cue_is_read_and_makes_no_sentence(write_file):
    path = write_file(
        "empty.srt",
        "1\n00:00:01,000 --> 00:00:02,000\nI was going\n\n2\n00:00:02,100 --> 00:00:02,500\n\n\n"
        "3\n00:00:02,600 --> 00:00:04,000\nto say goodbye.\n\n4\n00:00:04,500 --> 00:00:05,000\nThen say it.\n",
    )
    assert len(cues_of(path)) == 4
    assert turn_texts(path) == [["I was going to say goodbye.", "Then say it."]]


def test_it_strips_html_font_and_ass_tags(write_srt):
    path = write_srt(
        "tags.srt",
        [(1.0, 2.0, '<i>Run!</i> <font color="#ff0000">Now!</font>'), (2.5, 3.0, "{\\an8}<b>Where to?</b>")],
    )
    assert turn_texts(path) == [["Run!", "Now!", "Where to?"]]


def test_a_malformed_timestamp_names_the_file_and_line(write_file):
    path = write_file(
        "bad.srt", "1\n00:00:01,000 --> 00:00:02,000\nFine.\n\n2\n00:00:03,000 -> 00:00:04,000\nBroken.\n"
    )
    run = FileRun(path)
    list(run.dialogues())  # the bad cue is skipped, the rest read
    (error,) = run.stats.skipped_cues
    assert error.line == 6
    assert "bad.srt, line 6" in str(error) and "malformed timestamp" in str(error)


def test_a_nul_byte_is_refused_naming_the_file_and_line(write_file):
    path = write_file(
        "nul.srt", "1\n00:00:01,000 --> 00:00:02,000\nFine.\n\n2\n00:00:03,000 --> 00:00:04,000\nBro\x00ken.\n"
    )
    with pytest.raises(SubtitleFormatError) as error:
        list(FileRun(path).dialogues())
    assert error.value.line == 7
    assert "nul.srt, line 7: contains a NUL byte" in str(error.value)


def test_junk_after_a_timestamp_is_a_malformed_timestamp_not_a_position_suffix(write_file):
    path = write_file("junk.srt", srt_text(SCENE) + "4\n00:00:07,000 --> 00:00:0x,000\nOops.\n")
    with pytest.raises(SubtitleFormatError, match="malformed timestamp") as error:
        list(read_srt_cues(path))
    assert error.value.line == 14


def test_chunked_reading_gives_the_same_cues_and_true_error_lines(write_file, monkeypatch):
    cues = [(i * 3.0, i * 3.0 + 2.0, f"Line number {i}.") for i in range(200)]
    text = srt_text(cues) + "201\n00:10:00,000 --> 00:1O:01,000\nBroken.\n"
    path = write_file("long.srt", text)
    monkeypatch.setattr(srt_reader, "CHUNK_CHARS", 300)
    with pytest.raises(SubtitleFormatError) as error:
        list(read_srt_cues(path))
    assert error.value.line == 200 * 4 + 2
    path = write_file("long_ok.srt", srt_text(cues))
    assert cues_of(path) == cues


def test_opus_sentences_carry_times_only_where_markers_are(write_file):
    xml = opus_xml(
        [
            ("00:00:51,819", ["Where", "were", "you", "?"], None),
            (None, ["I", "do", "n't", "know", "."], "00:00:53,610"),
            ("00:01:10,000", ["Come", "home", "."], "00:01:11,500"),
        ]
    )
    path = write_file("movie.xml", xml)
    sentences = [(s.text, s.start, s.end) for s in read_opus_sentences(path, FileMeta())]
    assert sentences == [
        ("Where were you?", 51.819, None),
        ("I don't know.", None, 53.61),
        ("Come home.", 70.0, 71.5),
    ]


def test_opus_gz_reads_like_xml_and_fills_meta(write_file):
    meta = (
        "<subtitle><language>English</language><duration>01:30:00,000</duration></subtitle>"
        "<source><genre>Comedy, Drama</genre><year>1995</year></source><imdb>113101</imdb>"
    )
    xml = opus_xml([("00:00:01,000", ["Hello", "."], "00:00:02,000"), (None, ["Hi", "!"], None)], meta)
    plain = write_file("a/movie.xml", xml)
    packed = write_file("b/movie.xml.gz", gzip.compress(xml.encode()))
    runs = [FileRun(plain), FileRun(packed)]
    results = [[[t.text for t in d.turns] for d in run.dialogues()] for run in runs]
    assert results[0] == results[1] == [["Hello.", "Hi!"]]
    assert runs[1].meta.genres == ["Comedy", "Drama"]
    assert (runs[1].meta.year, runs[1].meta.imdb_id, runs[1].meta.duration) == (1995, "tt0113101", "01:30:00,000")


def test_opus_reads_plain_text_sentences_without_tokens(write_file):
    path = write_file("raw.xml", '<document><s id="1">Just  text,\n no tokens.</s></document>')
    assert [s.text for s in read_opus_sentences(path, FileMeta())] == ["Just text, no tokens."]


def test_invalid_opus_xml_names_the_line(write_file):
    path = write_file("broken.xml", '<document>\n<s id="1">\n<w>Hi</w>\n</x>\n</document>')
    with pytest.raises(SubtitleFormatError) as error:
        list(FileRun(path).dialogues())
    assert error.value.line == 4 and "invalid XML" in str(error.value) and "broken.xml" in str(error.value)


def test_the_opus_corpus_layout_gives_year_and_imdb_id(tmp_path):
    meta = meta_from_path(tmp_path / "xml" / "en" / "1995" / "113101" / "6470.xml.gz")
    assert (meta.year, meta.imdb_id) == (1995, "tt0113101")
    assert meta_from_path(tmp_path / "tt0068646_the_godfather.srt").imdb_id == "tt0068646"


def test_tokens_are_joined_back_into_text():
    tokens = ["He", "said", '"', "go", "home", '"', "(", "quietly", ")", "and", "I", "ca", "n't", "."]
    assert join_tokens(tokens) == 'He said "go home" (quietly) and I can\'t.'


# --- As lenient as srt/pysubs2, and no more (issue 11 point 2). Every file is written here. ---

TWO_CUES = [(1.0, 2.0, "Hello."), (3.0, 4.0, "Bye.")]
LENIENT = {
    "coordinates": "1\n00:00:01,000 --> 00:00:02,000 X1:40 X2:600 Y1:20 Y2:50\nHello.\n\n"
    "2\n00:00:03,000 --> 00:00:04,000 X1:40 X2:600 Y1:20 Y2:50\nBye.\n",
    "blanks after the times": "1\n00:00:01,000 --> 00:00:02,000   \nHello.\n\n2\n00:00:03,000 --> 00:00:04,000\t\nBye.\n",
    "no index lines": "00:00:01,000 --> 00:00:02,000\nHello.\n\n00:00:03,000 --> 00:00:04,000\nBye.\n",
    "dot milliseconds": "1\n00:00:01.000 --> 00:00:02.000\nHello.\n\n2\n00:00:03.000 --> 00:00:04.000\nBye.\n",
    "extra blank lines": "\n\n1\n00:00:01,000 --> 00:00:02,000\nHello.\n\n\n\n\n2\n00:00:03,000 --> 00:00:04,000\nBye.\n\n\n",
    "blank line after the index": "1\n\n00:00:01,000 --> 00:00:02,000\nHello.\n\n2\n00:00:03,000 --> 00:00:04,000\nBye.\n",
    "no final newline": "1\n00:00:01,000 --> 00:00:02,000\nHello.\n\n2\n00:00:03,000 --> 00:00:04,000\nBye.",
    "no spaces round the arrow": "1\n00:00:01,000-->00:00:02,000\nHello.\n\n2\n00:00:03,000-->00:00:04,000\nBye.\n",
    "one-digit hours": "1\n0:00:01,000 --> 0:00:02,000\nHello.\n\n2\n0:00:03,000 --> 0:00:04,000\nBye.\n",
}


@pytest.mark.parametrize("quirk", sorted(LENIENT))
def test_what_the_srt_library_accepts_is_read(write_file, quirk):
    import srt

    text = LENIENT[quirk]
    expected = [(c.start.total_seconds(), c.end.total_seconds(), c.content.strip()) for c in srt.parse(text)]
    assert expected == TWO_CUES  # the library's reading, the yardstick
    assert [(a, b, t.strip()) for a, b, t in cues_of(write_file("q.srt", text))] == TWO_CUES


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("1\n00:00:01,000 --> 00:00:02,000\nHello.\n\n2\n00:00:03,000 -->\nBye.\n", 6),  # no end time
        ("1\n00:00:01,000 --> 00:00:02,000\nHello.\n\n2\n00:00:03,000 --> 00:00:04,000 junk here\nBye.\n", 6),
        ("1\n00:00:01,000 --> 00:00:02,000\nHello.\n\n2\nat three --> at four\nBye.\n", 6),
    ],
)
def test_anything_else_is_refused_naming_file_and_line(write_file, text, line):
    path = write_file("bad.srt", text)
    with pytest.raises(SubtitleFormatError) as error:
        list(read_srt_cues(path))
    assert error.value.line == line and f"bad.srt, line {line}" in str(error.value)
