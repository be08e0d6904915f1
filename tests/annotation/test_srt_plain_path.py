"""The plain path of the SRT reader (srt's pattern, times straight to seconds) reads exactly what
`srt.parse` reads, and hands anything unusual back to it."""

from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.ingest.srt_reader import _parse_chunk_with_srt, _read_plain_chunk

stamps = st.tuples(st.integers(0, 99), st.integers(0, 59), st.integers(0, 59), st.integers(0, 999))
texts = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40).filter(
    lambda t: t.strip() and not t.strip()[0].isdigit()
)


def stamp(parts, separator=",") -> str:
    hours, minutes, seconds, millis = parts
    return f"{hours:02d}:{minutes:02d}:{seconds:02d}{separator}{millis:03d}"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(stamps, stamps, texts, st.booleans(), st.sampled_from(["", " X1:40 X2:600"])), max_size=8),
    st.sampled_from(["\n", "\r\n"]),
    st.sampled_from([",", "."]),
)
def test_the_plain_path_reads_what_srt_reads(cues, newline, separator):
    blocks = []
    for number, (start, end, text, with_index, suffix) in enumerate(cues, start=1):
        index = f"{number}{newline}" if with_index else ""
        blocks.append(f"{index}{stamp(start, separator)} --> {stamp(end, separator)}{suffix}{newline}{text}{newline}")
    chunk = newline.join(blocks)
    plain = _read_plain_chunk(chunk)
    assert plain is not None
    assert plain == list(_parse_chunk_with_srt(chunk, 1, "x.srt"))


def test_anything_unusual_goes_back_to_srt():
    good = "1\n00:00:01,000 --> 00:00:02,500\nHello.\n\n"
    assert _read_plain_chunk(good) is not None
    assert _read_plain_chunk("garbage before the first cue\n\n" + good) is None  # srt names the line
    assert _read_plain_chunk(good + "garbage\n\n" + good) == list(
        _parse_chunk_with_srt(good + "garbage\n\n" + good, 1, "x")
    )
    assert _read_plain_chunk("1\n00:00:01,000 --> 00:00:0x,000\nOops.\n") is None  # not coordinates
    assert _read_plain_chunk("1\n9999999:00:01,000 --> 9999999:00:02,000\nLate.\n") is None  # srt's limit
    assert _read_plain_chunk("  \n" + good) == _read_plain_chunk(good)  # leading blanks, as srt allows
