"""OpenSubtitles / OPUS XML reader, streamed with lxml `iterparse` so memory stays flat.

A document is `<s id>` sentences of `<w>` tokens (or plain text in the "raw" release), with
`<time id="T1S" value="00:00:51,819"/>` markers where a subtitle block starts (S) or ends (E).
A sentence gets a start only when a start marker precedes its first word, and an end only when an
end marker follows its last word; otherwise that time is None ("no time"). The `<meta>` block
(usually at the end) fills genre, year, IMDb id and duration into the caller's FileMeta.

A film written in capitals: a `<w>` may carry, besides its text, other forms of the word as
attributes (the parsed releases give `lemma`, others a normalised or initial form). An attribute
that equals the upper-case token but for case is its normal-case form ("KNOW" -> lemma "know";
"PARIS" -> "Paris"; "WENT" -> lemma "go" is not one). A sentence all in capitals takes those forms;
when most of its words have one, the words without one are lower-cased too ("I" stays), and the
sentence starts with a capital. A sentence in normal case is left as written (a shouted "NO!").
"""

import gzip
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

from annotation.ingest.gaps import CueGapHistogram
from annotation.ingest.records import FileMeta, SubtitleFormatError

_TIME = re.compile(r"(\d+):(\d+):(\d+)(?:[,.:](\d+))?")
_ATTACH_TO_PREVIOUS = {
    ".",
    ",",
    "!",
    "?",
    ";",
    ":",
    "...",
    "…",
    ")",
    "]",
    "}",
    "%",
    "n't",
    "'s",
    "'m",
    "'re",
    "'ve",
    "'ll",
    "'d",
}
_ATTACH_TO_NEXT = {"(", "[", "{", "¿", "¡", "$"}


@dataclass(slots=True)
class RawSentence:
    text: str
    start: float | None
    end: float | None


def read_opus_sentences(path: Path, meta: FileMeta, gaps: CueGapHistogram | None = None) -> Iterator[RawSentence]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as handle:
        try:
            for _, element in etree.iterparse(handle, events=("end",), tag=("s", "meta")):
                if element.tag == "s":
                    yield _sentence(element, gaps)
                else:
                    read_meta(element, meta)
                _release(element)
        except etree.XMLSyntaxError as exc:
            raise SubtitleFormatError(str(path), exc.lineno, f"invalid XML: {exc.msg}") from None
        except (OSError, EOFError) as exc:  # a truncated or corrupt .gz
            raise SubtitleFormatError(str(path), None, f"cannot read: {exc}") from None


def _release(element) -> None:
    # Clear the finished element and everything before it, so the tree never grows.
    element.clear(keep_tail=False)
    parent = element.getparent()
    if parent is not None:
        while element.getprevious() is not None:
            del parent[0]


def _sentence(element, gaps: CueGapHistogram | None) -> RawSentence:
    start = end = None
    seen_word = False
    tokens: list[str] = []
    forms: list[str | None] = []
    for child in element.iter("w", "time"):
        if child.tag == "w":
            token = child.text or ""
            tokens.append(token)
            forms.append(_normal_case_form(child, token) if len(child.attrib) > 1 else None)
            seen_word, end = True, None
            continue
        value = parse_time(child.get("value", ""))
        if child.get("id", "").endswith("S"):
            if gaps is not None:
                gaps.block_start(value)
            if not seen_word and start is None:
                start = value
        else:
            if gaps is not None:
                gaps.block_end(value)
            end = value
    if any(forms):
        tokens = in_normal_case(tokens, forms)
    text = join_tokens(tokens) if tokens else " ".join("".join(element.itertext()).split())
    return RawSentence(text, start, end)


def _normal_case_form(element, token: str) -> str | None:
    """An attribute of the `<w>` that spells the upper-case `token` in another case, if any."""
    if not token.isupper():
        return None
    lowered = token.lower()
    for name, value in element.attrib.items():
        if name != "id" and value != token and value.lower() == lowered:
            return value
    return None


def in_normal_case(tokens: list[str], forms: list[str | None]) -> list[str]:
    """The tokens of a sentence all in capitals, in the normal case its file gives (see the module
    docstring); any other sentence unchanged."""
    cased = [index for index, token in enumerate(tokens) if token.lower() != token.upper()]
    if not cased or not all(tokens[index].isupper() for index in cased):
        return tokens
    most = sum(forms[index] is not None for index in cased) * 2 > len(cased)
    result = list(tokens)
    for index in cased:
        form = forms[index]
        if form is not None:
            result[index] = form
        elif most and tokens[index] != "I":
            result[index] = tokens[index].lower()
    first = cased[0]
    result[first] = result[first][:1].upper() + result[first][1:]
    return result


def parse_time(value: str) -> float | None:
    match = _TIME.fullmatch(value.strip())
    if not match:
        return None
    hours, minutes, seconds, fraction = match.groups()
    millis = int(fraction.ljust(3, "0")[:3]) if fraction else 0
    return int(hours) * 3600 + int(minutes) * 60 + int(seconds) + millis / 1000


def join_tokens(tokens: list[str]) -> str:
    """Undo the tokenisation: "I", "do", "n't", "know", "." -> "I don't know."."""
    words: list[str] = []
    glue_next = quote_open = False
    for token in tokens:
        if token == '"':
            if quote_open and words:
                words[-1] += token
            else:
                words.append(token)
                glue_next = True
            quote_open = not quote_open
            continue
        if words and (glue_next or token in _ATTACH_TO_PREVIOUS or token.lower() in _ATTACH_TO_PREVIOUS):
            words[-1] += token
        else:
            words.append(token)
        glue_next = token in _ATTACH_TO_NEXT
    return " ".join(words)


def read_meta(element, meta: FileMeta) -> None:
    """Fill what `meta` lacks from an OPUS <meta> block; caller-given values are kept."""
    for child in element.iter():
        tag = str(child.tag).lower()
        text = (child.text or "").strip()
        if not text:
            continue
        if tag == "genre" and not meta.genres:
            meta.genres = [g.strip() for g in text.split(",") if g.strip()]
        elif tag == "year" and meta.year is None and text[:4].isdigit():
            meta.year = int(text[:4])
        elif tag in {"imdb", "imdbid", "imdb_id", "idmovieimdb"} and not meta.imdb_id:
            meta.imdb_id = normalise_imdb_id(text)
        elif tag in {"title", "moviename", "original"} and not meta.title:
            meta.title = text
        elif tag == "duration" and child.getparent() is not None and child.getparent().tag == "subtitle":
            meta.duration = text
        elif tag == "language" and not meta.language:
            meta.language = text


def normalise_imdb_id(value: str) -> str:
    digits = "".join(ch for ch in value if ch.isdigit())
    return f"tt{digits.zfill(7)}"[:20] if digits else ""
