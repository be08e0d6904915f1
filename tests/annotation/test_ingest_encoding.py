"""Encoding detection without the user naming the language (pure core, no database).

Every file here is written by the test in the code page under test; the lines are ours."""

import pytest

from annotation.ingest import FileRun, SubtitleFormatError
from annotation.ingest.encoding import guess_encoding, legacy_code_page
from annotation.ingest.srt_reader import read_srt_cues
from tests.annotation.conftest import srt_text

LINES = {
    "cs": ["Proč jsi mi to neřekl? Čekala jsem celou noc.", "Řekni mi pravdu, prosím. Už nemůžu dál, je to šílené."],
    "pl": ["Gdzie byłeś całą noc? Czekałam na ciebie.", "Przepraszam, zgubiłem telefon. Źle się czuję."],
    "ru": ["Где ты был всю ночь? Я ждала тебя до утра.", "Прости меня, пожалуйста. Я так не могу."],
    "el": ["Πού ήσουν όλη νύχτα; Σε περίμενα ως το πρωί.", "Συγγνώμη, έχασα το τηλέφωνό μου."],
    "fr": ["Où étais-tu toute la nuit ? Je t'ai attendu.", "Désolé, j'ai perdu mon téléphone. C'est déjà ça."],
    "en": ["I can’t believe it’s you, Zoë.", "The café on Rue Dupré — “closed”, naïvely."],
    "zh": ["你昨晚去哪里了？我一直等到天亮。", "对不起，我把手机弄丢了。"],
}


def srt_in(lines: list[str]) -> str:
    return srt_text([(1.0 + 2 * i, 2.0 + 2 * i, line) for i, line in enumerate(lines)])


def texts(path, language=""):
    return [cue.text for cue in read_srt_cues(path, language)]


@pytest.mark.parametrize(
    ("language", "encoding", "expected"),
    [
        ("cs", "cp1250", "cp1250"),
        ("pl", "cp1250", "cp1250"),
        ("ru", "cp1251", "cp1251"),
        ("fr", "cp1252", "cp1252"),
        ("en", "cp1252", "cp1252"),
        ("el", "cp1253", "cp1253"),
        ("zh", "gb2312", "gb18030"),  # GB18030 is GB2312's superset: the same text
    ],
)
@pytest.mark.parametrize("hint", ["", "en"])  # "en" is the ingest default: it must not force cp1252
def test_the_code_page_is_right_without_naming_the_language(write_file, language, encoding, expected, hint):
    path = write_file("legacy.srt", srt_in(LINES[language]), encoding=encoding)
    assert guess_encoding(path, hint).encoding == expected
    assert texts(path, hint) == LINES[language]


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_without_a_bom_is_found_from_its_nul_bytes(write_file, encoding):
    path = write_file("utf16.srt", srt_in(LINES["cs"]), encoding=encoding)
    guess = guess_encoding(path)
    assert guess.encoding == encoding and "NUL" in guess.reason
    assert texts(path) == LINES["cs"]


def test_a_czech_file_read_as_cp1252_would_be_mojibake_and_loses():
    data = "\n".join(LINES["cs"]).encode("cp1250") + b"\n"
    guess = legacy_code_page(data, "en")
    assert guess.encoding == "cp1250"
    assert "cs" in guess.reason and "plausible" in guess.reason


def test_the_hint_breaks_a_tie_but_never_beats_a_plainer_reading():
    # Bytes that are the same letters in cp1250 and cp1252 ("á", "é", "í"): the hint decides.
    same = "Má pravdu, je tím víc.".encode("cp1250")
    assert legacy_code_page(same + b"\n", "cs").encoding == "cp1250"
    assert legacy_code_page(same + b"\n", "en").encoding == "cp1252"
    # Russian bytes with an English hint are still Russian.
    assert legacy_code_page("\n".join(LINES["ru"]).encode("cp1251") + b"\n", "en").encoding == "cp1251"


def test_utf8_read_as_a_code_page_and_saved_again_is_refused(write_file):
    double = "\n".join(LINES["cs"] + LINES["fr"]).encode("utf-8").decode("cp1250", errors="replace")
    path = write_file("double.srt", srt_in(double.split("\n")), encoding="utf-8")
    with pytest.raises(SubtitleFormatError, match="mojibake") as error:
        list(FileRun(path).dialogues())
    assert "double.srt" in str(error.value)


def test_a_file_no_code_page_reads_plausibly_is_refused_not_ingested(write_file):
    # UTF-8 text with one stray cp1252 byte: not UTF-8, and every code page makes mojibake of it.
    data = srt_in(LINES["cs"] + LINES["ru"]).encode("utf-8") + b"\x9d\n"
    path = write_file("mixed.srt", data)
    with pytest.raises(SubtitleFormatError, match="mojibake|encoding"):
        list(FileRun(path).dialogues())


def test_plain_ascii_and_utf8_say_why(write_file):
    assert guess_encoding(write_file("a.srt", srt_in(["Hello there."]))).reason == "ascii only"
    assert guess_encoding(write_file("u.srt", srt_in(LINES["ru"]))).encoding == "utf-8"


def test_the_file_run_records_the_encoding_and_why(write_file):
    path = write_file("legacy.srt", srt_in(LINES["cs"]), encoding="cp1250")
    run = FileRun(path)
    list(run.dialogues())
    assert run.stats.encoding == "cp1250" and "cs" in run.stats.encoding_reason
