"""One subtitle file through the whole pure pipeline: read, clean, segment, split.

run = FileRun(path, PipelineConfig(gap_seconds=DIALOGUE_GAP_SECONDS))
for dialogue in run.dialogues():   # streamed; nothing is held but the current dialogue
    ...
run.stats, run.meta                # complete once the iteration has finished
"""

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from annotation.ingest.cleaning import CleaningRules
from annotation.ingest.dialogues import DialogueSplitter
from annotation.ingest.encoding import guess_encoding
from annotation.ingest.gaps import CueGapHistogram
from annotation.ingest.language import dialogue_language
from annotation.ingest.opus_reader import normalise_imdb_id, read_opus_sentences
from annotation.ingest.records import DialogueRecord, FileMeta, Sentence, SubtitleFormatError
from annotation.ingest.sentences import SentenceBuilder
from annotation.ingest.srt_reader import REORDER_WINDOW, read_srt_cues
from annotation.ingest.turns import PunctuationSegmenter, TurnSegmenter
from annotation.papers import DIALOGUE_GAP_SECONDS

SRT, OPUS = "srt", "opus-xml"
SUFFIXES = {".srt": SRT, ".xml": OPUS, ".xml.gz": OPUS}
_IMDB_IN_PATH = re.compile(r"tt(\d{6,9})")
_YEAR = re.compile(r"(?:19|20)\d\d")


@dataclass
class PipelineConfig:
    gap_seconds: float = DIALOGUE_GAP_SECONDS
    rules: CleaningRules = field(default_factory=CleaningRules)
    segmenter: TurnSegmenter = field(default_factory=PunctuationSegmenter)
    language: str = ""
    reorder_window: int = REORDER_WINDOW


@dataclass
class FileStats:
    sentences: int = 0
    turns: int = 0
    dialogues: int = 0
    removed_by_rule: Counter = field(default_factory=Counter)
    cue_gaps: CueGapHistogram = field(default_factory=CueGapHistogram)
    encoding: str = ""
    encoding_reason: str = ""
    languages: Counter = field(default_factory=Counter)
    # bad cues skipped, each naming the file and line; the rest of the file was read
    skipped_cues: list[SubtitleFormatError] = field(default_factory=list)

    def warnings(self) -> list[str]:
        return [f"{error} (cue skipped)" for error in self.skipped_cues]


def subtitle_format(path: Path) -> str | None:
    name = path.name.lower()
    return next((fmt for suffix, fmt in SUFFIXES.items() if name.endswith(suffix)), None)


def meta_from_path(path: Path) -> FileMeta:
    """Title from the file name; IMDb id and year from `tt1234567` in the path or the OPUS
    corpus layout `.../<year>/<imdb number>/<file>.xml.gz`."""
    meta = FileMeta(title=_title_from_name(path))
    found = _IMDB_IN_PATH.search(str(path))
    if found:
        meta.imdb_id = normalise_imdb_id(found.group(1))
    parts = path.parts
    if len(parts) >= 3 and parts[-2].isdigit() and _YEAR.fullmatch(parts[-3]):
        meta.imdb_id = meta.imdb_id or normalise_imdb_id(parts[-2])
        meta.year = int(parts[-3])
    return meta


def _title_from_name(path: Path) -> str:
    stem = path.name
    for suffix in (".gz", ".xml", ".srt"):
        stem = stem.removesuffix(suffix).removesuffix(suffix.upper())
    title = " ".join(stem.replace("_", " ").replace(".", " ").split())
    return title.title() if title.islower() else title


class FileRun:
    def __init__(self, path: Path, config: PipelineConfig | None = None, meta: FileMeta | None = None) -> None:
        self.path = Path(path)
        self.config = config or PipelineConfig()
        self.format = subtitle_format(self.path)
        if self.format is None:
            raise ValueError(f"{self.path}: not a subtitle file (.srt, .xml, .xml.gz)")
        self.meta = meta or meta_from_path(self.path)
        self.stats = FileStats()

    def dialogues(self) -> Iterator[DialogueRecord]:
        """The file's clean dialogues; `stats` is complete once this is exhausted."""
        builder = SentenceBuilder(self.config.rules, self.stats.removed_by_rule, self.config.gap_seconds)
        splitter = DialogueSplitter(self.config.gap_seconds, self.config.rules, self.stats.removed_by_rule)
        languages = self.stats.languages
        for dialogue in splitter.split(self.config.segmenter.segment(self.sentences(builder))):
            self.stats.dialogues += 1
            dialogue.language = dialogue_language(dialogue.turns)
            languages[dialogue.language] += 1
            yield dialogue
        self.stats.sentences = builder.count
        self.stats.turns = splitter.turn_count

    def sentences(self, builder: SentenceBuilder | None = None) -> Iterator[Sentence]:
        builder = builder or SentenceBuilder(self.config.rules, self.stats.removed_by_rule, self.config.gap_seconds)
        if self.format == SRT:
            guess = guess_encoding(self.path, self.config.language)
            self.stats.encoding, self.stats.encoding_reason = guess.encoding, guess.reason
            cues = read_srt_cues(
                self.path,
                self.config.language,
                self.config.reorder_window,
                self.stats.cue_gaps,
                guess.encoding,
                skipped=self.stats.skipped_cues,
            )
            return builder.from_cues(cues)
        self.stats.encoding, self.stats.encoding_reason = "xml", "the XML declaration (UTF-8 by default)"
        raw = read_opus_sentences(self.path, self.meta, self.stats.cue_gaps)
        return builder.from_opus(raw)
