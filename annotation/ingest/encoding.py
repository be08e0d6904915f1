"""Find the text encoding of a subtitle file without reading it all into memory.

Order: a byte-order mark wins; then UTF-16 without a BOM (every other byte NUL); then UTF-8 if the
whole file decodes (checked in chunks, so memory stays flat); otherwise charset-normalizer guesses
the legacy code page (cp1252, cp1250, cp1251, ...) from a sample.

charset-normalizer alone is unreliable on short Western text (it may call French cp1252 "cp1257"),
so the code page usual for the subtitle language is preferred whenever it decodes the sample with
no more mess than the library's own best guess.
"""

import codecs
from pathlib import Path

from charset_normalizer import from_bytes
from charset_normalizer.md import mess_ratio

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
}
_MESS_TOLERANCE = 0.1
_CHUNK = 1 << 20
_SAMPLE = 256 * 1024


def detect_encoding(path: Path, language: str = "") -> str:
    """The codec name to read `path` with; `language` (ISO 639-1) breaks ties between code pages."""
    with open(path, "rb") as handle:
        head = handle.read(_SAMPLE)
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name
    utf16 = _utf16_without_bom(head)
    if utf16:
        return utf16
    if _decodes_as_utf8(path):
        return "utf-8"
    return _legacy_code_page(head, language)


def _legacy_code_page(head: bytes, language: str) -> str:
    best = from_bytes(head).best()
    fallback = best.encoding if best is not None else "cp1252"
    preferred = _LEGACY_CODE_PAGE.get(language.lower()[:2])
    if preferred is None:
        return fallback
    try:
        preferred_mess = mess_ratio(head.decode(preferred), 1.0)
    except UnicodeDecodeError:
        return fallback
    if best is None or preferred_mess <= best.chaos + _MESS_TOLERANCE:
        return preferred
    return fallback


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
