"""A seeded demo corpus: short dialogues over the 41 labels, written as subtitle files.

`generate(size, seed)` is pure and deterministic (same size and seed, same bytes); `write_corpus`
puts the files in a folder with `truth.jsonl`, the label each dialogue's last turn was written for
(what the simulated crowd knows, `labeling.platforms.simulated_crowd`). The variety makes every step show
something: paraphrases (a lead-in word or a changed ending on an earlier dialogue) for the SBERT
expansion, lines that fit two labels so workers disagree, dialogues in French, Spanish and German
for the language filter, and subtitle noise (tags, sound and music cues, speaker names, repeated
cues, adverts) for the cleaning report. Dialogues are more than 5 s apart, turns less.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from annotation.demo_corpus import scenes
from annotation.taxonomy import LABEL_NAMES

DEFAULT_SIZE = 2400
DEFAULT_SEED = 15
DIALOGUES_PER_FILM = 60
TRUTH_FILE = "truth.jsonl"
PARAPHRASE_SHARE = 0.3
AMBIGUOUS_SHARE = 0.1
FOREIGN_SHARE = 0.04

_ADJECTIVES = ("Quiet", "Last", "Northern", "Broken", "Silver", "Long", "Distant", "Little", "Winter", "Open")
_NOUNS = ("Harbour", "Orchard", "Lantern", "Crossing", "Summer", "Bridge", "Garden", "Letters", "Road", "Tide")


@dataclass(frozen=True)
class DemoDialogue:
    turns: tuple[str, ...]
    label: str | None  # the label its last turn was written for; None for another language
    alt: str | None = None  # a second label the last turn fits as well (the crowd may split)
    language: str = "en"
    paraphrase_of: int | None = None  # index of the dialogue it rewords


@dataclass
class DemoCorpus:
    dialogues: list[DemoDialogue]
    files: dict[str, bytes] = field(default_factory=dict)  # file name -> content
    truth: list[dict] = field(default_factory=list)  # one record per dialogue, with its file

    def paraphrase_pairs(self) -> list[tuple[DemoDialogue, DemoDialogue]]:
        return [(self.dialogues[d.paraphrase_of], d) for d in self.dialogues if d.paraphrase_of is not None]


def generate(size: int = DEFAULT_SIZE, seed: int = DEFAULT_SEED) -> DemoCorpus:
    if size < len(LABEL_NAMES):
        raise ValueError(f"size must be at least {len(LABEL_NAMES)} (one dialogue per label), not {size}")
    rng = random.Random(seed)
    dialogues = _dialogues(size, rng)
    corpus = DemoCorpus(dialogues)
    for film, first in enumerate(range(0, size, DIALOGUES_PER_FILM)):
        indices = list(range(first, min(first + DIALOGUES_PER_FILM, size)))
        name, content = _film_file(film, [dialogues[i] for i in indices], rng)
        corpus.files[name] = content
        corpus.truth.extend(_truth_record(name, i, dialogues[i]) for i in indices)
    return corpus


def write_corpus(corpus: DemoCorpus, folder: Path) -> list[Path]:
    """Write the files (only those whose bytes differ, so a rerun leaves the folder untouched)."""
    folder.mkdir(parents=True, exist_ok=True)
    truth = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in corpus.truth).encode()
    written = []
    for name, content in [*corpus.files.items(), (TRUTH_FILE, truth)]:
        path = folder / name
        if not path.exists() or path.read_bytes() != content:
            path.write_bytes(content)
            written.append(path)
    return written


def normalised(text: str) -> str:
    """The key a turn is found by after ingestion (tags, punctuation, spacing and case aside)."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


# --- Dialogues -----------------------------------------------------------------------------------


def _dialogues(size: int, rng: random.Random) -> list[DemoDialogue]:
    dialogues: list[DemoDialogue] = []
    originals: list[int] = []
    for index in range(size):
        roll = rng.random()
        if index >= len(LABEL_NAMES) and originals and roll < PARAPHRASE_SHARE:
            source = rng.choice(originals)
            dialogues.append(_paraphrase(dialogues[source], source, rng))
            continue
        if index >= len(LABEL_NAMES) and roll > 1 - FOREIGN_SHARE:
            dialogues.append(_foreign(rng))
            continue
        label = LABEL_NAMES[index % len(LABEL_NAMES)] if index < len(LABEL_NAMES) else rng.choice(LABEL_NAMES)
        ambiguous = index >= len(LABEL_NAMES) and roll > 1 - FOREIGN_SHARE - AMBIGUOUS_SHARE
        dialogues.append(_scene(label, rng, ambiguous=ambiguous))
        originals.append(index)
    return dialogues


def _scene(label: str, rng: random.Random, *, ambiguous: bool) -> DemoDialogue:
    alt = None
    if ambiguous:
        label, alt, final = rng.choice(scenes.AMBIGUOUS)
    openers, finals = scenes.SCENES[label]
    if not ambiguous:
        final = rng.choice(finals)
    context = [rng.choice(openers)]
    extra = rng.choice((0, 0, 1, 1, 2))
    context = rng.sample(scenes.GENERIC_OPENERS, extra) + context
    slots = {
        "name": rng.choice(scenes.NAMES),
        "place": rng.choice(scenes.PLACES),
        "thing": rng.choice(scenes.THINGS),
        "when": rng.choice(scenes.WHENS),
    }
    turns = tuple(_capitalised(line.format(**slots)) for line in [*context, final])
    return DemoDialogue(turns, label, alt)


def _foreign(rng: random.Random) -> DemoDialogue:
    """Two or three lines of one other language, the first addressed to someone by name."""
    language, options = rng.choice(sorted(scenes.FOREIGN.items()))
    lines = [line for pair in rng.sample(options, 2) for line in pair][: rng.choice((2, 3))]
    first = lines[0]
    lines[0] = f"{rng.choice(scenes.NAMES)}, {first[0].lower()}{first[1:]}" if first[0] not in "¿¡" else first
    return DemoDialogue(tuple(lines), None, language=language)


def _paraphrase(source: DemoDialogue, source_index: int, rng: random.Random) -> DemoDialogue:
    """The same scene reworded a little: a lead-in word on the last line, maybe on the first too."""
    turns = list(source.turns)
    turns[-1] = _with_lead_in(turns[-1], rng)
    if len(turns) > 2 and rng.random() < 0.5:
        turns[0] = _with_lead_in(turns[0], rng)
    return DemoDialogue(tuple(turns), source.label, source.alt, source.language, source_index)


def _with_lead_in(line: str, rng: random.Random) -> str:
    first = line.split(" ", 1)[0].strip(",'")
    keep_case = first in ("I", "I'm", "I've", "I'll", "I'd") or first in scenes.NAMES
    return rng.choice(scenes.LEAD_INS) + (line if keep_case else line[0].lower() + line[1:])


def _capitalised(line: str) -> str:
    return line[0].upper() + line[1:]


def _truth_record(file_name: str, index: int, dialogue: DemoDialogue) -> dict:
    record = asdict(dialogue)
    record.update(file=file_name, index=index, turns=list(dialogue.turns), last_turn=dialogue.turns[-1])
    return record


# --- Subtitle files ------------------------------------------------------------------------------


@dataclass
class _Cue:
    start: float
    end: float
    lines: list[str]


def _film_file(film: int, dialogues: list[DemoDialogue], rng: random.Random) -> tuple[str, bytes]:
    title = f"{_ADJECTIVES[film % len(_ADJECTIVES)]} {_NOUNS[(film * 3 + film // 10) % len(_NOUNS)]} {film + 1}"
    slug = re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_")
    as_xml = film % 4 == 3
    cues = _cues(dialogues, rng, noisy=not as_xml)
    if as_xml:
        return f"{slug}.xml", _opus_xml(cues)
    crlf = film % 5 == 1
    return f"{slug}.srt", _srt(cues, crlf=crlf)


def _cues(dialogues: list[DemoDialogue], rng: random.Random, *, noisy: bool) -> list[_Cue]:
    cues: list[_Cue] = []
    clock = 20.0 + rng.random() * 10
    for dialogue in dialogues:
        if noisy and rng.random() < 0.05:  # a music cue between scenes: removed whole
            cues.append(_Cue(clock, clock + 3.0, [rng.choice(scenes.MUSIC_CUES)]))
            clock += 3.0 + 6.0 + rng.random() * 4
        for position, text in enumerate(dialogue.turns):
            last = position == len(dialogue.turns) - 1
            lines = [_noisy(text, rng) if noisy else text]
            if noisy and not last and rng.random() < 0.05:  # a sound cue of its own between turns
                cues.append(_Cue(clock, clock + 1.2, [rng.choice(scenes.SOUND_CUES)]))
                clock += 1.2 + 0.3
            duration = 1.2 + 0.04 * len(text) + rng.random()
            cues.append(_Cue(clock, clock + duration, lines))
            clock += duration + 0.2 + rng.random()
            if noisy and last and rng.random() < 0.03:  # the same line again: a repeated turn
                cues.append(_Cue(clock, clock + duration, list(lines)))
                clock += duration + 0.3
        clock += 7.0 + rng.random() * 12  # more than the 5 s that start a new dialogue
    if noisy:
        cues.append(_Cue(clock + 10, clock + 14, [rng.choice(scenes.ADVERTS)]))
    return cues


def _noisy(text: str, rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.08:
        return f"<i>{text}</i>"
    if roll < 0.14:
        return f"{rng.choice(scenes.SPEAKERS)} {text}"
    if roll < 0.19:
        return f"{rng.choice(scenes.SOUND_CUES)} {text}"
    if roll < 0.21:
        return f'<font color="#ffff00">{text}</font>'
    return text


def _timestamp(seconds: float, separator: str = ",") -> str:
    millis = int(round(seconds * 1000))
    hours, rest = divmod(millis, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs, millis = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}{separator}{millis:03d}"


def _srt(cues: list[_Cue], *, crlf: bool) -> bytes:
    blocks = [
        f"{number}\n{_timestamp(cue.start)} --> {_timestamp(cue.end)}\n" + "\n".join(cue.lines) + "\n"
        for number, cue in enumerate(cues, start=1)
    ]
    text = "\n".join(blocks)
    return (text.replace("\n", "\r\n") if crlf else text).encode("utf-8")


_TOKEN = re.compile(r"\w+(?:'\w+)?|[^\w\s]")


def _opus_xml(cues: list[_Cue]) -> bytes:
    out = ['<?xml version="1.0" encoding="utf-8"?>', '<document id="demo">']
    for number, cue in enumerate(cues, start=1):
        out.append(f'  <s id="{number}">')
        out.append(f'    <time id="T{number}S" value="{_timestamp(cue.start)}" />')
        tokens = _TOKEN.findall(" ".join(cue.lines))
        out.extend(f'    <w id="{number}.{i}">{_xml_escape(token)}</w>' for i, token in enumerate(tokens, start=1))
        out.append(f'    <time id="T{number}E" value="{_timestamp(cue.end)}" />')
        out.append("  </s>")
    out.append("</document>")
    return ("\n".join(out) + "\n").encode("utf-8")


def _xml_escape(token: str) -> str:
    return token.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
