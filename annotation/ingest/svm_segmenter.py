"""A trained turn segmenter: a linear SVM over features of adjacent sentences (EDOS 3.1, after Lison
& Meena 2016). No Django import.

Features of a pair (previous sentence `a`, next sentence `b`): lemmatised unigrams and bigrams of
both (simplemma, offline), their first and last tokens and bigrams, whether they share a cue (the
pipeline gives every sentence of a cue the cue's times, so `b` starting before `a` ends means one
cue), the time gap (bucketed), the movie's genre, the file's sentence density so far (sentences per
minute from the file's first sentence to `b`, bucketed, so the segmenter stays streaming), and
crosses of these. The SVM's weights are kept by feature name, so a model is a JSON file of weights
and applying it is a sum of a few dozen dictionary look-ups per sentence (no pickle, no sklearn at
ingest time).

Weak supervision (`weak_pairs`): subtitles mark a speaker change inside a cue with dashes
(`- Where to?` / `- Home.`). Within one cue, a dash-led sentence after another sentence is a
*change*; a sentence that is not dash-led after another of the same cue is the *same* speaker (two
sentences of one dash run, or of a cue without dashes). Pairs across cues carry no label and are not
used. Noise: files that never use dashes put two speakers in an undashed cue now and then (labelled
*same*, wrongly); an annotator's stray dash makes a false *change*; and since every training pair
lies inside one cue, the shared-cue and gap features are nearly constant in training and earn little
weight, while the model is applied across cues too. The hand-labelled set (`read_labelled_turns`)
measures what that costs.
"""

import json
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from annotation.ingest.records import Sentence, TurnRecord
from annotation.ingest.sentences import CLOSERS, TERMINALS, starts_lower_case
from annotation.papers import DIALOGUE_GAP_SECONDS

MODEL_FORMAT = "svm-turn-segmenter"
MODEL_VERSION = 1
FEATURES = [
    "unigrams",
    "bigrams",
    "first_last_tokens",
    "first_last_bigrams",
    "shared_cue",
    "gap",
    "genre",
    "density",
    "crosses",
]
ELLIPSES = ("...", "…")
_TOKEN = re.compile(r"\w+|[^\w\s]")
_GAP_EDGES = (0.3, 1.0, 2.0, 5.0)
_DENSITY_EDGES = (6, 10, 14, 18, 24)
_LEMMA_CACHE_LIMIT = 200_000


class ModelError(ValueError):
    """A model file that cannot be used; the message names the file."""


class Lemmatiser:
    """simplemma with a cache: a film repeats its words, and a look-up is far cheaper than a lemma."""

    def __init__(self, language: str = "en") -> None:
        import simplemma

        self.language = language or "en"
        self._lemmatize = simplemma.lemmatize
        self._cache: dict[str, str] = {}

    def __call__(self, token: str) -> str:
        lemma = self._cache.get(token)
        if lemma is None:
            if len(self._cache) > _LEMMA_CACHE_LIMIT:
                self._cache.clear()
            lemma = self._lemmatize(token, lang=self.language).lower() if token.isalpha() else token
            self._cache[token] = lemma
        return lemma


@dataclass(slots=True)
class SentenceView:
    """What the features read of one sentence, computed once per sentence."""

    lemmas: list[str]
    start: float | None
    end: float | None


def sentence_view(sentence: Sentence, lemmatise: Callable[[str], str]) -> SentenceView:
    lemmas = [lemmatise(token) for token in _TOKEN.findall(sentence.text.lower())] or ["<empty>"]
    return SentenceView(lemmas, sentence.start, sentence.end)


def _side_features(side: str, lemmas: list[str]) -> list[str]:
    bigrams = [f"{x}_{y}" for x, y in zip(lemmas, lemmas[1:], strict=False)] or [f"{lemmas[0]}_"]
    return [
        *(f"{side}:u={lemma}" for lemma in set(lemmas)),
        *(f"{side}:bi={bigram}" for bigram in set(bigrams)),
        f"{side}:first={lemmas[0]}",
        f"{side}:last={lemmas[-1]}",
        f"{side}:first2={bigrams[0]}",
        f"{side}:last2={bigrams[-1]}",
    ]


def bucket(value: float, edges: tuple) -> str:
    return str(next((i for i, edge in enumerate(edges) if value < edge), len(edges)))


def pair_features(a: SentenceView, b: SentenceView, genre: str, density: str) -> list[str]:
    return [*_side_features("a", a.lemmas), *_side_features("b", b.lemmas), *pair_only_features(a, b, genre, density)]


def pair_only_features(a: SentenceView, b: SentenceView, genre: str, density: str) -> list[str]:
    """The features of the pair as such (each side's own features are `_side_features`)."""
    if a.end is None or b.start is None:
        cue, gap = "unknown", "unknown"
    else:
        cue = "same" if b.start < a.end else "other"
        gap = bucket(max(0.0, b.start - a.end), _GAP_EDGES)
    a_last, b_first = a.lemmas[-1], b.lemmas[0]
    return [
        f"cue={cue}",
        f"gap={gap}",
        f"genre={genre}",
        f"density={density}",
        f"a:last*b:first={a_last}|{b_first}",
        f"a:last*b:first2={a_last}|{'_'.join(b.lemmas[:2])}",
        f"cue*a:last={cue}|{a_last}",
        f"gap*a:last={gap}|{a_last}",
        f"gap*b:first={gap}|{b_first}",
        f"genre*a:last={genre}|{a_last}",
        f"density*gap={density}|{gap}",
    ]


class DensityClock:
    """The file's sentences per minute so far, bucketed; before a minute has passed, a minute is assumed."""

    def __init__(self) -> None:
        self.first: float | None = None
        self.count = 0

    def tick(self, start: float | None) -> str:
        self.count += 1
        if start is None:
            return "unknown"
        if self.first is None:
            self.first = start
        minutes = max(1.0, (start - self.first) / 60)
        return bucket(self.count / minutes, _DENSITY_EDGES)


def file_pairs(sentences: Iterable[Sentence], genre: str, lemmatise: Callable[[str], str]):
    """(previous, next, features) for every sentence of a file in order; the first has no previous
    (None) and no features."""
    clock = DensityClock()
    previous: Sentence | None = None
    previous_view: SentenceView | None = None
    for sentence in sentences:
        view = sentence_view(sentence, lemmatise)
        density = clock.tick(sentence.start)
        yield previous, sentence, pair_features(previous_view, view, genre, density) if previous else []
        previous, previous_view = sentence, view


CHANGE, SAME = 1, 0


def weak_label(previous: Sentence, sentence: Sentence) -> int | None:
    """Change inside a cue when the sentence is dash-led, same when not; across cues, unknown."""
    if previous.end is None or sentence.start is None or not sentence.start < previous.end:
        return None
    return CHANGE if sentence.new_speaker else SAME


def weak_pairs(sentences: Iterable[Sentence], genre: str, lemmatise) -> Iterator[tuple[list[str], int]]:
    for previous, sentence, features in file_pairs(sentences, genre, lemmatise):
        label = weak_label(previous, sentence) if previous else None
        if label is not None:
            yield features, label


def normalise_genre(genre: str) -> str:
    return "_".join(genre.casefold().split()) or "unknown"


@dataclass
class SegmenterModel:
    weights: dict[str, float]
    intercept: float
    language: str = "en"
    training: dict = field(default_factory=dict)

    def score(self, features: list[str]) -> float:
        get = self.weights.get
        return self.intercept + sum(get(name, 0.0) for name in features)

    def predict(self, features: list[str]) -> int:
        return CHANGE if self.score(features) > 0 else SAME

    def save(self, path: Path) -> None:
        document = {
            "format": MODEL_FORMAT,
            "version": MODEL_VERSION,
            "features": FEATURES,
            "language": self.language,
            "training": self.training,
            "intercept": self.intercept,
            "weights": self.weights,
        }
        partial = path.with_name(f".{path.name}.partial")
        partial.write_text(json.dumps(document, ensure_ascii=False, sort_keys=True), encoding="utf-8")
        os.replace(partial, path)  # a reader never sees half a model


def load_model(path: str | Path) -> SegmenterModel:
    """The model saved at `path`; ModelError naming the file when it is missing, corrupt, or of
    another format version."""
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ModelError(f"{path}: cannot read the model: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ModelError(f"{path}: not a turn segmenter model (not JSON)") from None
    if not isinstance(document, dict) or document.get("format") != MODEL_FORMAT:
        raise ModelError(f"{path}: not a turn segmenter model (format is not {MODEL_FORMAT!r})")
    if document.get("version") != MODEL_VERSION:
        raise ModelError(
            f"{path}: model version {document.get('version')!r}, this code reads version {MODEL_VERSION}; retrain it"
        )
    try:
        weights = {str(name): float(weight) for name, weight in document["weights"].items()}
        return SegmenterModel(
            weights, float(document["intercept"]), str(document.get("language", "en")), document.get("training", {})
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        raise ModelError(f"{path}: corrupt turn segmenter model (weights or intercept)") from None


def train_model(examples: list[tuple[list[str], int]], c: float = 0.1, min_count: int = 2) -> SegmenterModel:
    """Fit a linear SVM on (features, label) pairs; features seen fewer than `min_count` times are dropped."""
    import numpy as np
    from scipy.sparse import csr_matrix
    from sklearn.svm import LinearSVC

    counts = Counter(name for features, _ in examples for name in set(features))
    vocabulary = {name: i for i, name in enumerate(sorted(n for n, k in counts.items() if k >= min_count))}
    rows, cols = [], []
    for row, (features, _) in enumerate(examples):
        present = {vocabulary[name] for name in features if name in vocabulary}
        rows.extend([row] * len(present))
        cols.extend(present)
    matrix = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(examples), len(vocabulary)))
    labels = np.array([label for _, label in examples])
    svm = LinearSVC(C=c, class_weight="balanced").fit(matrix, labels)
    names = list(vocabulary)
    weights = {names[i]: round(float(w), 6) for i, w in enumerate(svm.coef_[0]) if abs(w) > 1e-6}
    return SegmenterModel(weights, float(svm.intercept_[0]))


@dataclass
class Scores:
    accuracy: float
    precision: float
    recall: float
    pairs: int

    def as_dict(self) -> dict:
        return {name: round(getattr(self, name), 4) for name in ("accuracy", "precision", "recall")} | {
            "pairs": self.pairs
        }


def score_labels(predicted: list[int], expected: list[int]) -> Scores:
    """Accuracy, and precision and recall of the speaker-change class."""
    both = list(zip(predicted, expected, strict=True))
    hits = sum(p == e for p, e in both)
    true_changes = sum(p == e == CHANGE for p, e in both)
    said, real = predicted.count(CHANGE), expected.count(CHANGE)
    total = len(both)
    return Scores(
        hits / total if total else 0.0,
        true_changes / said if said else 0.0,
        true_changes / real if real else 0.0,
        total,
    )


class SvmSegmenter:
    """The `TurnSegmenter` plug for a trained model. A dash-led sentence is a new speaker and a
    sentence that cannot end a turn (no terminal punctuation; an ellipsis before a lower-case start)
    joins it, as in `PunctuationSegmenter`; every other pair of sentences is the model's call."""

    def __init__(
        self, model: SegmenterModel, genre: str = "", language: str = "", max_join_gap: float = DIALOGUE_GAP_SECONDS
    ) -> None:
        self.model = model
        self.max_join_gap = max_join_gap
        self.genre = normalise_genre(genre)
        self.lemmatise = Lemmatiser(language or model.language)

    def segment(self, sentences: Iterable[Sentence]) -> Iterator[TurnRecord]:
        turn: TurnRecord | None = None
        previous: Sentence | None = None
        clock = DensityClock()
        score = self._scorer()
        for sentence in sentences:
            density = clock.tick(sentence.start)
            if (
                turn is not None
                and not sentence.new_speaker
                and not (
                    sentence.start is not None
                    and turn.end is not None
                    and sentence.start - turn.end > self.max_join_gap
                )
                and (runs_on(turn.text, sentence.text) or score(previous, sentence, density) <= 0)
            ):
                turn.text += " " + sentence.text.lstrip(".… ")
                turn.end = sentence.end
                turn.sentence_count += 1
            else:
                if turn is not None:
                    yield turn
                turn = TurnRecord(sentence.text, sentence.start, sentence.end)
            previous = sentence
        if turn is not None:
            yield turn

    def _scorer(self):
        """score(a, b, density) == model.score(pair_features(...)), computed lazily: only pairs the
        rules leave open are scored, and a sentence's view and side sums are computed once."""
        get, intercept, genre, lemmatise = self.model.weights.get, self.model.intercept, self.genre, self.lemmatise
        last: list = [None, None, {}]  # the sentence last viewed, its view, its side sums

        def side_sum(sentence: Sentence, side: str) -> tuple[SentenceView, float]:
            if last[0] is not sentence:
                last[:] = [sentence, sentence_view(sentence, lemmatise), {}]
            sums = last[2]
            if side not in sums:
                sums[side] = sum(get(name, 0.0) for name in _side_features(side, last[1].lemmas))
            return last[1], sums[side]

        def score(a: Sentence, b: Sentence, density: str) -> float:
            a_view, a_sum = side_sum(a, "a")
            b_view, b_sum = side_sum(b, "b")
            pair_sum = sum(get(name, 0.0) for name in pair_only_features(a_view, b_view, genre, density))
            return intercept + a_sum + b_sum + pair_sum

        return score


def runs_on(previous: str, sentence: str) -> bool:
    """The punctuation rule's join: the turn so far cannot end here."""
    trimmed = previous.rstrip(CLOSERS)
    return not trimmed.endswith(TERMINALS) or (trimmed.endswith(ELLIPSES) and starts_lower_case(sentence))
