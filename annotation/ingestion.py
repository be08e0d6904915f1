"""Write subtitle files into the corpus: the Django shell around the pure `annotation.ingest` core.

`ingest_paths` (the command) and the `ingest` job both run `ingest_file` on each file, one
transaction: a file that fails leaves nothing behind, and the others still import. Re-ingesting a
file with the same sha256 is a no-op. Duplicate dialogues are refused by the unique
`Dialogue.content_hash`; they are inserted with ignore_conflicts and counted, so a duplicate written
at the same moment by another process is dropped too rather than failing the file.
"""

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

from django.conf import settings
from django.db import DataError, IntegrityError, connection, transaction
from django.db.models import Count

from annotation.ingest import CleaningRules, DialogueRecord, FileMeta, FileRun, PipelineConfig, SubtitleFormatError
from annotation.ingest.language import UNKNOWN
from annotation.ingest.pipeline import SRT, meta_from_path, subtitle_format
from annotation.ingest.svm_segmenter import SegmenterModel, SvmSegmenter, load_model
from annotation.ingest.turns import PunctuationSegmenter, TurnSegmenter
from annotation.models import Dialogue, Movie, SubtitleFile, Turn
from annotation.papers import DIALOGUE_GAP_SECONDS
from annotation.splits import split_for

WRITE_BATCH = 500
IMPORTED, SKIPPED, FAILED = "imported", "skipped", "failed"


@dataclass
class IngestOptions:
    """What the caller knows better than the file: flags of the command, parameters of the job."""

    genres: list[str] = field(default_factory=list)
    language: str = "en"
    gap_seconds: float | None = None
    year: int | None = None
    imdb_id: str = ""
    title: str = ""
    disabled_rules: list[str] = field(default_factory=list)
    segmenter: str = ""  # "" or "punctuation": the rule; "svm:PATH": a model from train_segmenter
    _model: SegmenterModel | None = field(default=None, init=False, repr=False, compare=False)

    def pipeline_config(self) -> PipelineConfig:
        disabled = [*settings.INGEST_DISABLED_RULES, *self.disabled_rules]
        gap = self.gap_seconds if self.gap_seconds is not None else settings.DIALOGUE_GAP_SECONDS
        return PipelineConfig(
            gap_seconds=gap,
            rules=CleaningRules.without(disabled),
            segmenter=self.turn_segmenter(gap),
            language=self.language,
        )

    def turn_segmenter(self, gap: float = DIALOGUE_GAP_SECONDS) -> TurnSegmenter:
        """The segmenter `segmenter` names; a model file is read once (ModelError naming the file,
        ValueError for an unknown name). Neither joins text more than `gap` seconds later. Its genre feature is the first `genres` entry."""
        kind, _, path = self.segmenter.partition(":")
        if kind in ("", "punctuation") and not path:
            return PunctuationSegmenter(max_join_gap=gap)
        if kind != "svm" or not path:
            raise ValueError(f"segmenter: expected 'punctuation' or 'svm:PATH', got {self.segmenter!r}")
        if self._model is None:
            self._model = load_model(path)
        # the model's own language: its features were lemmatised in it
        return SvmSegmenter(self._model, self.genres[0] if self.genres else "", max_join_gap=gap)

    def file_meta(self, path: Path) -> FileMeta:
        meta = meta_from_path(path)
        meta.title = self.title or meta.title
        meta.year = self.year if self.year is not None else meta.year
        meta.imdb_id = self.imdb_id or meta.imdb_id
        meta.genres = list(self.genres)  # empty lets the OPUS <meta> block fill them
        meta.language = self.language
        return meta


@dataclass
class FileOutcome:
    path: str
    status: str
    reason: str = ""
    sentences: int = 0
    turns: int = 0
    dialogues: int = 0
    duplicates_dropped: int = 0
    removed_by_rule: Counter = field(default_factory=Counter)
    encoding: str = ""
    encoding_reason: str = ""
    languages: Counter = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        """What the report lists for one file: how it was decoded, its languages, each rule's count."""
        return {
            "path": self.path,
            "status": self.status,
            "reason": self.reason,
            "warnings": list(self.warnings),
            "encoding": self.encoding,
            "encoding_reason": self.encoding_reason,
            "dialogues": self.dialogues,
            "languages": dict(self.languages.most_common()),
            "removed_by_rule": dict(sorted(self.removed_by_rule.items())),
        }


@dataclass
class IngestReport:
    files: int = 0
    skipped_files: int = 0
    failed_files: int = 0
    sentences: int = 0
    turns: int = 0
    dialogues: int = 0
    duplicates_dropped: int = 0
    removed_by_rule: Counter = field(default_factory=Counter)
    languages: Counter = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    per_file: list[dict] = field(default_factory=list)

    def add(self, outcome: FileOutcome) -> None:
        self.per_file.append(outcome.as_json())
        self.warnings += outcome.warnings
        if outcome.status == FAILED:
            self.failed_files += 1
            self.errors.append(outcome.reason)
            return
        if outcome.status == SKIPPED:
            self.skipped_files += 1
        else:
            self.files += 1
        self.sentences += outcome.sentences
        self.turns += outcome.turns
        self.dialogues += outcome.dialogues
        self.duplicates_dropped += outcome.duplicates_dropped
        self.removed_by_rule.update(outcome.removed_by_rule)
        self.languages.update(outcome.languages)

    def as_json(self) -> dict:
        return {
            "files": self.files,
            "skipped_files": self.skipped_files,
            "failed_files": self.failed_files,
            "sentences": self.sentences,
            "turns": self.turns,
            "dialogues": self.dialogues,
            "duplicates_dropped": self.duplicates_dropped,
            "removed_by_rule": dict(sorted(self.removed_by_rule.items())),
            "languages": dict(self.languages.most_common()),
            "errors": list(self.errors),
            "warnings": list(self.warnings),
            "per_file": list(self.per_file),
        }


class _SkipFile(Exception):
    """Raised inside the file's transaction to roll it back when the file turns out to be skipped."""


def find_subtitle_files(paths: Iterable[str | Path]) -> list[Path]:
    """The subtitle files named or found (recursively) under `paths`, in a stable order.
    A path that does not exist is an error now, before anything is written."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.is_file() and subtitle_format(p)))
        elif path.is_file():
            found.append(path)
        else:
            raise FileNotFoundError(f"{path}: no such file or folder")
    return found


def ingest_paths(
    paths: Iterable[str | Path],
    options: IngestOptions | None = None,
    on_file: Callable[[FileOutcome], None] | None = None,
) -> IngestReport:
    options = options or IngestOptions()
    report = IngestReport()
    for path in find_subtitle_files(paths):
        outcome = ingest_file(path, options)
        report.add(outcome)
        if on_file:
            on_file(outcome)
    return report


def ingest_file(path: Path, options: IngestOptions) -> FileOutcome:
    """Import one file in one transaction; never raises for a bad file (the outcome says FAILED)."""
    name = str(path)
    if subtitle_format(path) is None:
        return FileOutcome(name, FAILED, f"{name}: not a subtitle file (.srt, .xml, .xml.gz)")
    try:
        digest = file_sha256(path)
    except OSError as exc:
        return FileOutcome(name, FAILED, f"{name}: cannot read: {exc.strerror or exc}")
    if SubtitleFile.objects.filter(sha256=digest).exists():
        return FileOutcome(name, SKIPPED, "already ingested")
    run = FileRun(path, options.pipeline_config(), options.file_meta(path))
    if run.config.rules.documentary and run.meta.is_documentary:
        return _documentary(name)
    try:
        with transaction.atomic():
            return _write_file(run, digest)
    except _SkipFile:
        return _documentary(name)
    except SubtitleFormatError as exc:
        return FileOutcome(name, FAILED, str(exc))
    except OSError as exc:
        return FileOutcome(name, FAILED, f"{name}: cannot read: {exc}")
    except DataError as exc:  # a value the columns cannot hold; the file's transaction is rolled back
        return FileOutcome(name, FAILED, f"{name}: cannot store: {exc}")
    except IntegrityError:
        if SubtitleFile.objects.filter(sha256=digest).exists():  # another process took this file first
            return FileOutcome(name, SKIPPED, "already ingested")
        raise


def _documentary(name: str) -> FileOutcome:
    return FileOutcome(name, SKIPPED, "documentary", removed_by_rule=Counter(documentary=1))


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _write_file(run: FileRun, digest: str) -> FileOutcome:
    movie = _find_or_create_movie(run.meta)
    subtitle_file = SubtitleFile.objects.create(
        movie=movie,
        name=str(run.path)[-500:],
        format=SubtitleFile.SRT if run.format == SRT else SubtitleFile.OPUS,
        sha256=digest,
    )
    stored = turns = duplicates = 0
    seen_in_file: set[str] = set()
    languages: Counter = Counter()
    for batch in _batches(run.dialogues(), WRITE_BATCH):
        written, turns_written = _write_dialogues(batch, subtitle_file, seen_in_file, languages)
        stored, turns, duplicates = stored + written, turns + turns_written, duplicates + len(batch) - written
    # OPUS files name their genre in a <meta> block at the end: only now is a documentary known.
    if run.config.rules.documentary and run.meta.is_documentary:
        raise _SkipFile
    _complete_movie(movie, run.meta)
    _set_movie_language(movie)
    stats = run.stats
    subtitle_file.sentence_count = stats.sentences
    subtitle_file.turn_count = turns
    subtitle_file.dialogue_count = stored
    subtitle_file.duplicates_dropped = duplicates
    subtitle_file.removed_by_rule = dict(sorted(stats.removed_by_rule.items()))
    subtitle_file.cue_gaps = stats.cue_gaps.as_dict()
    subtitle_file.encoding, subtitle_file.encoding_reason = stats.encoding, stats.encoding_reason[:300]
    subtitle_file.language_counts = dict(languages.most_common())
    subtitle_file.save()
    return FileOutcome(
        str(run.path),
        IMPORTED,
        sentences=stats.sentences,
        turns=turns,
        dialogues=stored,
        duplicates_dropped=duplicates,
        removed_by_rule=Counter(stats.removed_by_rule),
        encoding=stats.encoding,
        encoding_reason=stats.encoding_reason,
        languages=languages,
        warnings=stats.warnings(),
    )


def _write_dialogues(
    batch: list[DialogueRecord], subtitle_file: SubtitleFile, seen: set[str], languages: Counter
) -> tuple[int, int]:
    """Insert a batch; returns (dialogues written, turns written), counting the written ones'
    languages. The rest were duplicates."""
    fresh: dict[str, DialogueRecord] = {}
    for record in batch:
        content_hash = record.content_hash
        if content_hash not in seen:
            seen.add(content_hash)
            fresh[content_hash] = record
    Dialogue.objects.bulk_create(
        [
            Dialogue(
                movie_id=subtitle_file.movie_id,
                file=subtitle_file,
                position=record.position,
                start=record.start,
                end=record.end,
                content_hash=content_hash,
                turn_count=len(record.turns),
                split=split_for(content_hash),
                language=record.language,
            )
            for content_hash, record in fresh.items()
        ],
        ignore_conflicts=True,
    )
    # ignore_conflicts gives no ids back; the rows that are ours are the ones this file owns.
    ids = dict(
        Dialogue.objects.filter(file=subtitle_file, content_hash__in=list(fresh)).values_list("content_hash", "id")
    )
    languages.update(fresh[content_hash].language for content_hash in ids)
    turns = Turn.objects.bulk_create(
        Turn(
            dialogue_id=dialogue_id,
            position=position,
            text=turn.text,
            start=turn.start,
            end=turn.end,
            token_count=turn.token_count,
        )
        for content_hash, dialogue_id in ids.items()
        for position, turn in enumerate(fresh[content_hash].turns)
    )
    return len(ids), len(turns)


def _find_or_create_movie(meta: FileMeta) -> Movie:
    # Shards ingest files of one movie side by side: on PostgreSQL a transaction-scoped advisory
    # lock on the movie's key makes find-or-create one at a time (held until the file commits).
    if connection.vendor == "postgresql":
        key = meta.imdb_id or f"{meta.title}\x1f{meta.year}"
        lock = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True)
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [lock])
    if meta.imdb_id:
        movie = Movie.objects.filter(imdb_id=meta.imdb_id).first()
    else:
        movie = Movie.objects.filter(title=meta.title, year=meta.year, imdb_id="").first()
    if movie is None:
        movie = Movie.objects.create(
            title=meta.title[:300] or "Untitled",
            year=meta.year,
            imdb_id=meta.imdb_id[:20],
            genres=list(meta.genres),
            language=UNKNOWN,  # until its dialogues say (_set_movie_language)
        )
    return movie


def _set_movie_language(movie: Movie) -> None:
    """The language most of the movie's stored dialogues were identified in (ties: the lower code),
    or unknown when none was: not the `--language` hint, which only breaks code-page ties."""
    counts = (
        Dialogue.objects.filter(movie=movie)
        .exclude(language__in=[UNKNOWN, ""])
        .values_list("language")
        .annotate(n=Count("pk"))
        .order_by("-n", "language")
    )
    language = next((code for code, _ in counts[:1]), UNKNOWN)
    if language != movie.language:
        Movie.objects.filter(pk=movie.pk).update(language=language)
        movie.language = language


def _complete_movie(movie: Movie, meta: FileMeta) -> None:
    """Add what the file's <meta> block told us after the movie row was made."""
    genres = list(dict.fromkeys([*movie.genres, *meta.genres]))
    changed = {
        "genres": genres if genres != movie.genres else None,
        "year": meta.year if movie.year is None and meta.year else None,
        "imdb_id": meta.imdb_id if not movie.imdb_id and meta.imdb_id else None,
    }
    updates = {name: value for name, value in changed.items() if value is not None}
    if updates:
        Movie.objects.filter(pk=movie.pk).update(**updates)
        for name, value in updates.items():
            setattr(movie, name, value)


def _batches(items: Iterator, size: int) -> Iterator[list]:
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch
