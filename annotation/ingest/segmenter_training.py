"""Training and evaluating the SVM turn segmenter on subtitle files (no Django import).

Held-out pairs: every fifth file (the 5th, 10th, ... in path order) is held out; with fewer than five
files, the last fifth of the weak pairs is. The hand-labelled evaluation format (`read_labelled_turns`):

    # film: Night Train; genre: thriller       <- starts a film (genre optional)
    12.0<TAB>14.5<TAB>A<TAB>Is this seat taken?
    12.0<TAB>14.5<TAB>B<TAB>No, sit down.       <- same times as the line above: the same cue
    15.1<TAB>16.0<TAB>B<TAB>I'm getting off soon.

One sentence per line: start and end in seconds (empty when unknown), a speaker tag, the text
without speaker dashes. A turn boundary lies wherever the speaker tag changes; other `#` lines and
blank lines are ignored.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from annotation.ingest.pipeline import FileRun, PipelineConfig
from annotation.ingest.records import Sentence, SubtitleFormatError
from annotation.ingest.svm_segmenter import (
    CHANGE,
    SAME,
    Lemmatiser,
    Scores,
    SegmenterModel,
    file_pairs,
    normalise_genre,
    runs_on,
    score_labels,
    train_model,
    weak_pairs,
)

HOLD_OUT_EVERY = 5


class TrainingError(ValueError):
    """Training cannot go on; the message names the file or files."""


@dataclass
class TrainingResult:
    model: SegmenterModel
    held_out: Scores
    train_pairs: int
    changes: int
    files: int


def file_sentences(path: Path, language: str) -> list[Sentence]:
    run = FileRun(path, PipelineConfig(language=language))
    return list(run.sentences())


def train_on_files(files: Iterable[tuple[Path, str]], language: str = "en", c: float = 0.1) -> TrainingResult:
    """Weak pairs of every (path, genre); trains on all but the held-out ones and scores those."""
    files = list(files)
    lemmatise = Lemmatiser(language)
    train, held = [], []
    for number, (path, genre) in enumerate(files, 1):
        try:
            pairs = list(weak_pairs(file_sentences(path, language), normalise_genre(genre), lemmatise))
        except OSError as exc:
            raise TrainingError(f"{path}: cannot read: {exc.strerror or exc}") from None
        except SubtitleFormatError as exc:
            raise TrainingError(str(exc)) from None
        (held if len(files) >= HOLD_OUT_EVERY and number % HOLD_OUT_EVERY == 0 else train).extend(pairs)
    if not held:
        cut = len(train) - len(train) // HOLD_OUT_EVERY
        train, held = train[:cut], train[cut:]
    _check_both_labels(train, files)
    model = train_model(train, c)
    model.language = language
    held_out = score_labels([model.predict(f) for f, _ in held], [label for _, label in held])
    changes = sum(label for _, label in train)
    return TrainingResult(model, held_out, len(train), changes, len(files))


def _check_both_labels(train: list, files: list) -> None:
    names = ", ".join(str(path) for path, _ in files[:3]) + (" ..." if len(files) > 3 else "")
    labels = {label for _, label in train}
    if CHANGE not in labels:
        raise TrainingError(f"{names}: no speaker changes to learn from (no cue with dash-led '- A' / '- B' lines)")
    if SAME not in labels:
        raise TrainingError(f"{names}: no same-speaker pairs to learn from (no cue with two sentences of one speaker)")


@dataclass
class LabelledFilm:
    name: str
    genre: str
    sentences: list[Sentence]
    speakers: list[str]


def read_labelled_turns(path: Path) -> list[LabelledFilm]:
    """The hand-labelled set (format above); ValueError naming `path:line` on a bad line."""
    films: list[LabelledFilm] = []
    with open(path, encoding="utf-8") as handle:
        for number, raw in enumerate(handle, 1):
            line = raw.rstrip("\n")
            if line.startswith("# film:"):
                films.append(_film_header(line))
            elif line.strip() and not line.startswith("#"):
                if not films:
                    raise ValueError(f"{path}:{number}: a sentence before the first '# film:' line")
                _add_sentence(films[-1], line, f"{path}:{number}")
    if not any(len(film.sentences) > 1 for film in films):
        raise ValueError(f"{path}: no film with two or more sentences")
    return films


def _film_header(line: str) -> LabelledFilm:
    """ "# film: X; genre: Y" -> LabelledFilm("X", "Y")."""
    parts = (part.split(":", 1) for part in line.removeprefix("#").split(";") if ":" in part)
    fields = {key.strip(): value.strip() for key, value in parts}
    return LabelledFilm(fields.get("film", ""), fields.get("genre", ""), [], [])


def _add_sentence(film: LabelledFilm, line: str, where: str) -> None:
    parts = line.split("\t")
    if len(parts) != 4 or not parts[2].strip() or not parts[3].strip():
        raise ValueError(f"{where}: expected start<TAB>end<TAB>speaker<TAB>text")
    try:
        start, end = (float(value) if value.strip() else None for value in parts[:2])
    except ValueError:
        raise ValueError(f"{where}: start and end must be seconds or empty") from None
    film.sentences.append(Sentence(parts[3].strip(), start, end))
    film.speakers.append(parts[2].strip())


@dataclass
class Evaluation:
    model: Scores
    punctuation: Scores


def evaluate_labelled(model: SegmenterModel, films: list[LabelledFilm], genre: str = "") -> Evaluation:
    """The SVM segmenter's and the punctuation rule's decision on every adjacent pair of the set.
    A pair whose first sentence cannot end a turn is 'same' for both (the shared hard rule)."""
    lemmatise = Lemmatiser(model.language)
    expected, by_model, by_rule = [], [], []
    for film in films:
        speakers = iter(film.speakers)
        last_speaker = next(speakers, None)
        pairs = file_pairs(film.sentences, normalise_genre(genre or film.genre), lemmatise)
        for previous, sentence, features in pairs:
            if previous is None:
                continue
            speaker = next(speakers)
            expected.append(CHANGE if speaker != last_speaker else SAME)
            last_speaker = speaker
            forced_same = runs_on(previous.text, sentence.text)
            by_rule.append(SAME if forced_same else CHANGE)
            by_model.append(SAME if forced_same else model.predict(features))
    return Evaluation(score_labels(by_model, expected), score_labels(by_rule, expected))
