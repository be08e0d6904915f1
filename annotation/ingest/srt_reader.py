"""SubRip reader: the `srt` package parses the cues; this module only feeds it well.

The file is decoded and handed to `srt.parse` in chunks cut at cue boundaries, so memory stays flat.
`srt` already accepts missing cue numbers, `.` or `:` before the milliseconds, missing milliseconds,
position suffixes (`X1:100 X2:200 ...`) and empty cues. The one quirk it misreads is a one- or
two-digit fraction (`00:00:01.5` is 1.5 s, srt says 1.005 s), so such fractions are padded first
from the first chunk whose end times show the quirk on (a tool that writes them writes them
everywhere; testing every line for it would cost as much as the parse).
Universal newlines turn CRLF and CR-only line ends into LF. Out-of-order cues are put back in order
within a sliding window.

A bad cue (a broken timestamp, text after the timing line that is not coordinates) refuses the
file when the caller passes no `skipped` list; with one, the cue is skipped, its SubtitleFormatError
(file and line) appended there, and the rest of the file read. A file in which nothing can be read
is refused either way, with its first problem.
"""

import io
import re
from collections.abc import Iterator
from operator import attrgetter
from pathlib import Path

import srt

from annotation.ingest.encoding import detect_encoding
from annotation.ingest.gaps import CueGapHistogram
from annotation.ingest.records import Cue, SubtitleFormatError

# srt's own patterns, so the plain path reads exactly what `srt.parse` reads
_SRT_CUE = srt.SRT_REGEX
_SRT_TIMESTAMP = srt.TS_REGEX

CHUNK_CHARS = 256 * 1024
REORDER_WINDOW = 256

_SHORT_FRACTION_START = re.compile(r"^([ \t]*\d+:\d+:\d+[,.:])(\d{1,2})(?=[ \t]*-->)", re.MULTILINE)
_SHORT_FRACTION_END = re.compile(r"(-->[ \t]*\d+:\d+:\d+[,.:])(\d{1,2})(?!\d)")
_LOOKS_LIKE_TIME = re.compile(r"\d+:\d+")
# srt keeps whatever follows the end time as `proprietary`; a real suffix is "X1:100 X2:200 ...",
# while "00:00:0x,000" would leave "x,000" there: a broken timestamp, not a suffix.
_POSITION_SUFFIX = re.compile(r"[A-Za-z]+\d*:")


def read_srt_cues(
    path: Path,
    language: str = "",
    reorder_window: int = REORDER_WINDOW,
    gaps: CueGapHistogram | None = None,
    encoding: str | None = None,
    skipped: list[SubtitleFormatError] | None = None,
) -> Iterator[Cue]:
    """Cues in start-time order (exact for cues displaced by fewer than `reorder_window` places),
    each added to the `gaps` histogram as it passes. `encoding` skips the detection (the caller
    has already run it, e.g. to report why). `skipped`: where bad cues are listed instead of
    refusing the file (see the module's docstring)."""
    batches = _parse_cue_batches(path, language, encoding, skipped)
    return _in_start_order(batches, reorder_window, gaps or CueGapHistogram())


def _parse_cue_batches(
    path: Path, language: str, encoding: str | None, skipped: list[SubtitleFormatError] | None
) -> Iterator[list[Cue]]:
    """The cues of each chunk of the file, one list per chunk."""
    read = 0
    for batch in _parse_chunks(path, language, encoding, skipped):
        read += len(batch)
        yield batch
    if not read and skipped:
        raise skipped[0]  # nothing in the file could be read: refuse it with its first problem


def _parse_chunks(
    path: Path, language: str, encoding: str | None, skipped: list[SubtitleFormatError] | None
) -> Iterator[list[Cue]]:
    encoding = encoding or detect_encoding(path, language)
    with open(path, "rb") as raw:
        text = io.TextIOWrapper(raw, encoding=encoding, errors="replace", newline=None)
        first_line = 1
        short_fractions = False
        for chunk in _chunks_at_cue_boundaries(text):
            # The end-time pattern starts with the literal "-->", which the regex engine finds
            # fast, so it is a cheap test; once a file shows the quirk, every later chunk is padded.
            short_fractions = short_fractions or bool(_SHORT_FRACTION_END.search(chunk))
            if short_fractions:
                chunk = _pad_short_fractions(chunk)
            if "\0" in chunk:  # no database stores it in text, and no subtitle means it
                line = first_line + chunk.count("\n", 0, chunk.index("\0"))
                raise SubtitleFormatError(str(path), line, "contains a NUL byte")
            yield list(_parse_chunk(chunk, first_line, str(path), skipped))
            first_line += chunk.count("\n")


def _chunks_at_cue_boundaries(text: io.TextIOBase) -> Iterator[str]:
    pending = ""
    while block := text.read(CHUNK_CHARS):
        pending += block
        cut = _last_cue_boundary(pending)
        if cut > 0:
            yield pending[:cut]
            pending = pending[cut:]
    if pending.strip():
        yield pending


def _last_cue_boundary(text: str) -> int:
    # A blank line followed by a digit (a cue number or timestamp) ends a cue; a blank line inside
    # a cue's text does not, so the cut never splits a cue.
    at = text.rfind("\n\n")
    while at != -1 and not text[at + 2 : at + 3].isdigit():
        at = text.rfind("\n\n", 0, at)
    return at + 2 if at != -1 else 0


def _parse_chunk(chunk: str, first_line: int, name: str, skipped: list[SubtitleFormatError] | None) -> Iterator[Cue]:
    chunk = chunk.lstrip("\ufeff")
    cues = _read_plain_chunk(chunk)
    if cues is not None:
        return iter(cues)
    # anything unusual: srt's own parser, which also says where the chunk goes wrong
    if skipped is None:
        return _parse_chunk_with_srt(chunk, first_line, name)
    return _parse_chunk_skipping(chunk, first_line, name, skipped)


def _parse_chunk_skipping(chunk: str, first_line: int, name: str, skipped: list[SubtitleFormatError]) -> Iterator[Cue]:
    """srt's parse of the chunk, a bad cue skipped (and listed) instead of ending the file: text
    srt cannot read is passed over up to the next cue it can; a cue with junk after its timing
    line is dropped alone."""
    while chunk.strip():
        try:
            for number, cue in enumerate(srt.parse(chunk)):
                if cue.proprietary and not _is_position_suffix(cue.proprietary):
                    line = _timestamp_line(chunk, number, first_line)
                    skipped.append(
                        SubtitleFormatError(name, line, f"malformed timestamp (trailing {cue.proprietary!r})")
                    )
                    continue
                start, end = cue.start.total_seconds(), cue.end.total_seconds()
                yield Cue(start, end if end > start else start, cue.content)
            return
        except srt.SRTParseError as exc:
            skipped.append(_format_error(exc, chunk, first_line, name))
            first_line += chunk.count("\n", 0, exc.actual_start)
            chunk = chunk[exc.actual_start :]  # the next cue srt can read, or the end
        except ValueError as exc:  # srt refuses e.g. an hour field it cannot fit in a timedelta
            skipped.append(SubtitleFormatError(name, first_line, f"unreadable cue: {exc}"))
            return


def _read_plain_chunk(chunk: str) -> list[Cue] | None:
    """The cues of a chunk that `srt.parse` would read without complaint, read with srt's own
    pattern but with times turned straight into seconds (srt's timedelta per timestamp is about
    half of its cost); None when anything is unusual (a gap between cues, a bad timestamp, text
    after the end time that is not coordinates), so the caller falls back on `srt.parse`.
    Seconds come out exactly as `timedelta.total_seconds()` would give them."""
    cues: list[Cue] = []
    expected = 0
    for match in _SRT_CUE.finditer(chunk):
        if match.start() != expected and not (expected == 0 and chunk[: match.start()].isspace()):
            return None
        _index, raw_start, raw_end, trailing, content = match.groups()
        if trailing and not _is_position_suffix(trailing):
            return None
        start, end = _seconds(raw_start), _seconds(raw_end)
        if start is None or end is None:
            return None
        cues.append(Cue(start, end if end > start else start, content.replace("\r\n", "\n")))
        expected = match.end()
    if expected != len(chunk) and not (expected == 0 and (not chunk or chunk.isspace())):
        return None
    return cues


def _seconds(timestamp: str) -> float | None:
    match = _SRT_TIMESTAMP.match(timestamp)
    if match is None:
        return None
    hours, minutes, seconds, millis = match.groups()
    if len(hours) > 6:  # srt's timedelta refuses what would not fit: let it say so
        return None
    whole = int(hours) * 3600 + int(minutes) * 60 + int(seconds)
    return (whole * 1_000_000 + int(millis or 0) * 1000) / 1_000_000


def _parse_chunk_with_srt(chunk: str, first_line: int, name: str) -> Iterator[Cue]:
    try:
        for number, cue in enumerate(srt.parse(chunk)):
            if cue.proprietary and not _is_position_suffix(cue.proprietary):
                line = _timestamp_line(chunk, number, first_line)
                raise SubtitleFormatError(name, line, f"malformed timestamp (trailing {cue.proprietary!r})")
            start, end = cue.start.total_seconds(), cue.end.total_seconds()
            yield Cue(start, end if end > start else start, cue.content)
    except srt.SRTParseError as exc:
        raise _format_error(exc, chunk, first_line, name) from None
    except SubtitleFormatError:
        raise
    except ValueError as exc:  # srt refuses e.g. an hour field it cannot fit in a timedelta
        raise SubtitleFormatError(name, None, f"unreadable cue: {exc}") from None


def _is_position_suffix(trailing: str) -> bool:
    """What follows the end time: nothing but blanks, or coordinates ("X1:40 X2:600 Y1:20 Y2:50")."""
    trailing = trailing.strip()
    return not trailing or bool(_POSITION_SUFFIX.match(trailing))


def _pad_short_fractions(chunk: str) -> str:
    pad = lambda m: m.group(1) + m.group(2).ljust(3, "0")  # noqa: E731
    return _SHORT_FRACTION_END.sub(pad, _SHORT_FRACTION_START.sub(pad, chunk))


def _timestamp_line(chunk: str, cue_number: int, first_line: int) -> int:
    """The line of the chunk's `cue_number`-th timestamp (each cue srt parsed has exactly one)."""
    seen = -1
    for offset, line in enumerate(chunk.split("\n")):
        if "-->" in line:
            seen += 1
            if seen == cue_number:
                return first_line + offset
    return first_line


def _format_error(exc: srt.SRTParseError, chunk: str, first_line: int, name: str) -> SubtitleFormatError:
    line = first_line + chunk.count("\n", 0, exc.expected_start)
    for offset, text in enumerate(exc.unmatched_content.split("\n")):
        if "-->" in text or _LOOKS_LIKE_TIME.search(text):
            return SubtitleFormatError(name, line + offset, f"malformed timestamp {text.strip()!r}")
    skipped = len(exc.unmatched_content) - len(exc.unmatched_content.lstrip("\n"))
    snippet = exc.unmatched_content.strip().split("\n")[0]
    return SubtitleFormatError(name, line + skipped, f"cannot parse a cue from {snippet[:60]!r}")


def _in_start_order(batches: Iterator[list[Cue]], window: int, gaps: CueGapHistogram) -> Iterator[Cue]:
    # Each chunk's cues join the last `window` cues of the chunks before and are sorted together
    # (timsort: near-linear on nearly sorted cues, in C); all but the last `window` are ready, in
    # order, and go into the gap histogram as they leave.
    start = attrgetter("start")
    pending: list[Cue] = []
    for batch in batches:
        pending += batch
        pending.sort(key=start)
        cut = len(pending) - window
        if cut > 0:
            ready, pending = pending[:cut], pending[cut:]
            gaps.add_cues(ready)
            yield from ready
    gaps.add_cues(pending)
    yield from pending
