"""Find the text encoding of a subtitle file without reading it all into memory.

Order: a byte-order mark wins; then UTF-16 without a BOM (every other byte NUL); then UTF-8 if the
whole file decodes (checked in chunks, so memory stays flat); otherwise the legacy code page is
chosen by what its reading of a sample looks like. Each candidate (cp1252, cp1250, cp1251, cp1253,
GB18030, ...) decodes the lines that hold non-ASCII bytes; a reading scores the share of its
non-ASCII characters that are letters of one language the code page serves (or ordinary
punctuation), less those in impossible places (a Cyrillic or CJK letter glued to a Latin one, an
upper-case accented letter inside a lower-case word). A cp1252 reading of Czech mixes Danish `ø`
with Italian `ì` and loses to cp1250; a cp1252 reading of Russian (`Ãäå òû`) loses to cp1251.
The `--language` hint only breaks ties. A file whose best reading is still mostly implausible, or
whose text is UTF-8 read as a code page (`Ã©`, `Ä\x8d`), is refused as mojibake.
"""

import codecs
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from annotation.ingest.language import MIN_PROBABILITY, identify
from annotation.ingest.records import SubtitleFormatError

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_LEGACY_CODE_PAGE = {
    **dict.fromkeys(("en", "fr", "de", "es", "it", "pt", "nl", "da", "sv", "no", "nb", "fi", "is", "ga"), "cp1252"),
    **dict.fromkeys(("cs", "pl", "hu", "sk", "sl", "hr", "ro", "bs", "sq"), "cp1250"),
    **dict.fromkeys(("ru", "uk", "bg", "be", "mk", "sr"), "cp1251"),
    "el": "cp1253",
    "tr": "cp1254",
    "he": "cp1255",
    "ar": "cp1256",
    **dict.fromkeys(("lt", "lv", "et"), "cp1257"),
    "zh": "gb18030",
    "ja": "shift_jis",
    "ko": "euc-kr",
}
# The non-ASCII letters each language writes (lower case; upper case is folded before the test).
_LATIN_LETTERS = {
    "fr": "àâæçéèêëîïôœùûüÿ",
    "de": "äöüß",
    "es": "áéíñóúü",
    "it": "àèéìíîòóù",
    "pt": "ãáâàçéêíóõôú",
    "nl": "ëïéèáóöüêô",
    "da": "æøåé",
    "sv": "åäöé",
    "fi": "äöå",
    "is": "áðéíóúýþæö",
    "ca": "àçèéíïòóúü",
    "cs": "áčďéěíňóřšťúůýž",
    "sk": "áäčďéíĺľňóôŕšťúýž",
    "pl": "ąćęłńóśźż",
    "hu": "áéíóöőúüű",
    "hr": "čćđšž",
    "ro": "ăâîșşțţ",
    "tr": "çğıöşüâî",
    "lt": "ąčęėįšųūž",
    "lv": "āčēģīķļņšūž",
    "et": "äöõüšž",
}
_SCRIPTS = {
    "cyrillic": ((0x0400, 0x04FF),),
    "greek": ((0x0370, 0x03FF), (0x1F00, 0x1FFF)),
    "hebrew": ((0x0590, 0x05FF),),
    "arabic": ((0x0600, 0x06FF),),
    "han": ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x3000, 0x303F), (0xFF00, 0xFFEF)),
    "kana": ((0x3040, 0x30FF), (0x4E00, 0x9FFF), (0x3000, 0x303F), (0xFF00, 0xFFEF)),
    "hangul": ((0xAC00, 0xD7AF), (0x1100, 0x11FF), (0x3130, 0x318F), (0x3000, 0x303F), (0xFF00, 0xFFEF)),
}
# Candidate code pages, most common first (the order breaks ties), and the alphabets they serve.
_CANDIDATES = {
    "cp1252": ("fr", "de", "es", "it", "pt", "nl", "da", "sv", "fi", "is", "ca"),
    "cp1250": ("cs", "sk", "pl", "hu", "hr", "ro"),
    "cp1251": ("cyrillic",),
    "cp1253": ("greek",),
    "cp1254": ("tr",),
    "cp1257": ("lt", "lv", "et"),
    "cp1255": ("hebrew",),
    "cp1256": ("arabic",),
    "gb18030": ("han",),
    "big5": ("han",),
    "shift_jis": ("kana",),
    "euc-kr": ("hangul",),
}
_PUNCTUATION = set("“”‘’„‚–—…«»¿¡€£°©®™·•\u00a0")
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")
_LATIN_NEIGHBOURS = re.compile(r"[A-Za-z][^\x00-\x7f]|[^\x00-\x7f][A-Za-z]")
_UPPER_AFTER_LOWER = re.compile(r"(?<=[a-z\u00df-\u00ff])[^\x00-\x7f]")
SHARED_LETTERS = "shows letters several languages share"
MOJIBAKE_BELOW = 0.75  # a best reading with fewer plausible characters than this is refused
_MIN_EVIDENCE = 8
_SCORE_STEP = 0.05  # plausibility this close counts as a tie  # non-ASCII characters needed before a reading can be called mojibake
_CHUNK = 1 << 20
_SAMPLE = 256 * 1024
_SCORED_BYTES = 32 * 1024


@dataclass(frozen=True, slots=True)
class EncodingGuess:
    """The codec a file is read with and why (shown per file in the ingest report)."""

    encoding: str
    reason: str


def detect_encoding(path: Path, language: str = "") -> str:
    """The codec name to read `path` with; `language` (ISO 639-1) breaks ties between code pages."""
    return guess_encoding(path, language).encoding


def guess_encoding(path: Path, language: str = "") -> EncodingGuess:
    """The codec and the reason; raises SubtitleFormatError when every reading looks like mojibake."""
    with open(path, "rb") as handle:
        head = handle.read(_SAMPLE)
    for bom, name in _BOMS:
        if head.startswith(bom):
            return EncodingGuess(name, "byte-order mark")
    utf16 = _utf16_without_bom(head)
    if utf16:
        return EncodingGuess(utf16, "NUL bytes in every other position")
    if _decodes_as_utf8(path):
        _refuse_double_encoding(path, head.decode("utf-8", errors="ignore"), "utf-8")
        return EncodingGuess("utf-8", "ascii only" if head.isascii() else "valid UTF-8")
    return legacy_code_page(head, language, str(path))


def legacy_code_page(head: bytes, language: str = "", name: str = "") -> EncodingGuess:
    """The code page whose reading of the non-ASCII lines of `head` looks most like a language."""
    sample = _non_ascii_lines(head)
    hinted = _LEGACY_CODE_PAGE.get(language.lower()[:2])
    readings = []
    for order, codec in enumerate(_CANDIDATES):
        try:
            text = sample.decode(codec)
        except UnicodeDecodeError:
            continue
        score, alphabet, chars = plausibility(text, _CANDIDATES[codec])
        readings.append(_Reading(codec, text, round(score / _SCORE_STEP) * _SCORE_STEP, alphabet, chars, order))
    if not readings:
        raise SubtitleFormatError(name, None, "no known encoding decodes this file")
    best = _best_reading(readings, hinted)
    if best.chars >= _MIN_EVIDENCE and best.score < MOJIBAKE_BELOW:
        raise SubtitleFormatError(
            name,
            None,
            f"unknown encoding: the best reading ({best.codec}) looks like mojibake ({best.score:.0%} plausible)",
        )
    _refuse_double_encoding(name, best.text, best.codec)
    return EncodingGuess(best.codec, f"{best.codec} reading {_reads_as(best)} ({best.why})")


def _reads_as(reading: "_Reading") -> str:
    """What the chosen reading looks like, for the report: the language the identifier reads in it
    when it is sure; else the one alphabet whose letters alone explain it; else neither. The
    alphabets of one code page share most of their characters (é, ’, …), so the first of equals
    would name a language the letters do not show (an English film "looks like fr")."""
    code, probability = identify(reading.text)
    if probability >= MIN_PROBABILITY:
        return f"looks like {code}"
    return f"looks like {reading.alphabet}" if reading.alphabet else SHARED_LETTERS


@dataclass(slots=True)
class _Reading:
    codec: str
    text: str
    score: float
    alphabet: str
    chars: int
    order: int
    why: str = ""


def _best_reading(readings: list["_Reading"], hinted: str | None) -> "_Reading":
    """Highest plausibility; among equals the hinted code page, then the reading the language
    identifier is surest of (Greek read as cp1251 is all Cyrillic letters, but no language), then
    the more common code page."""
    top_score = max(r.score for r in readings)
    top = [r for r in readings if r.score == top_score]
    detail = f"{top_score:.0%} of {top[0].chars} characters plausible"
    if len(top) == 1 or len({r.text for r in top}) == 1:
        best = min(top, key=lambda r: (r.codec != hinted, r.order))
        best.why = detail
        return best
    hint = next((r for r in top if r.codec == hinted), None)
    if hint is not None:
        hint.why = f"{detail}, hint {hinted}"
        return hint
    surest = {r.codec: identify(r.text) for r in top}
    best = max(top, key=lambda r: (surest[r.codec][1], -r.order))
    code, probability = surest[best.codec]
    best.why = f"{detail}, reads as {code!r} with p={probability:.2f}"
    return best


def plausibility(text: str, alphabets: tuple[str, ...]) -> tuple[float, str, int]:
    """(share of plausible non-ASCII characters, the one alphabet that explains them best or "" when
    several explain them equally, their count)."""
    chars = Counter("".join(_NON_ASCII_RUN.findall(text)))
    total = sum(chars.values())
    if not total:
        return 1.0, "ascii", 0
    misplaced = _misplaced(text)
    explained_by = {name: _explained(chars, _alphabet(name)) for name in alphabets}
    most = max(explained_by.values())
    best = [name for name, explained in explained_by.items() if explained == most]
    # an alphabet is named only when its letters single it out: é or ’ alone shows no language
    return max(most - misplaced, 0) / total, best[0] if len(best) == 1 else "", total


def _explained(chars: Counter, alphabet: frozenset[str]) -> int:
    return sum(count for char, count in chars.items() if char in alphabet or char.lower() in alphabet)


def _misplaced(text: str) -> int:
    glued = sum(
        1 for pair in _LATIN_NEIGHBOURS.findall(text) if _is_other_script(pair[0] if pair[1].isascii() else pair[1])
    )
    upper = sum(1 for char in _UPPER_AFTER_LOWER.findall(text) if char.isupper())
    return glued + upper


def _is_other_script(char: str) -> bool:
    return char.isalpha() and ord(char) > 0x24F


@cache
def _alphabet(name: str) -> frozenset[str]:
    if name in _LATIN_LETTERS:
        return frozenset(_LATIN_LETTERS[name]) | _PUNCTUATION
    ranges = _SCRIPTS[name]
    return frozenset(chr(code) for low, high in ranges for code in range(low, high + 1)) | _PUNCTUATION


def _non_ascii_lines(head: bytes) -> bytes:
    """The lines holding non-ASCII bytes, up to a few KB: what tells the code pages apart.
    The head is cut at its last line end so that no multi-byte character is split."""
    cut = head.rfind(b"\n") if len(head) == _SAMPLE else -1
    lines = [line for line in (head[: cut + 1] if cut != -1 else head).split(b"\n") if not line.isascii()]
    sample, size = [], 0
    for line in lines:
        sample.append(line)
        size += len(line)
        if size > _SCORED_BYTES:
            break
    return b"\n".join(sample)


def _refuse_double_encoding(name: str, text: str, codec: str) -> None:
    """UTF-8 bytes read as a code page (`cafÃ©`, `proÄŤ`) and stored that way: refuse, don't ingest."""
    words = [word for word in text.split() if not word.isascii()][:500]
    if len(words) < 3:
        return
    double = sum(1 for word in words if _is_utf8_read_as_code_page(word))
    if double >= max(3, len(words) // 2):
        raise SubtitleFormatError(
            name, None, f"mojibake: {double} of {len(words)} words are UTF-8 read as a code page (read as {codec})"
        )


def _is_utf8_read_as_code_page(word: str) -> bool:
    for code_page in ("cp1252", "cp1250"):
        try:
            fixed = word.encode(code_page).decode("utf-8")
        except UnicodeError:
            continue
        if fixed != word:
            return True
    return False


def _utf16_without_bom(head: bytes) -> str | None:
    sample = head[:4096]
    if len(sample) < 4:
        return None
    even_nuls = sample[0::2].count(0) / (len(sample) / 2)
    odd_nuls = sample[1::2].count(0) / (len(sample) / 2)
    if odd_nuls > 0.3 and even_nuls < 0.05:
        return "utf-16-le"
    if even_nuls > 0.3 and odd_nuls < 0.05:
        return "utf-16-be"
    return None


def _decodes_as_utf8(path: Path) -> bool:
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(_CHUNK):
                decoder.decode(chunk)
            decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True
