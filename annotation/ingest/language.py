"""Which language a dialogue is in: py3langid, whose model ships inside the package (offline).

One call per dialogue (all its turns joined), never per cue: a paragraph is far surer than a line.
Text too short to tell (fewer than `MIN_LETTERS` letters) is `UNKNOWN`, and so is a best guess
below `MIN_PROBABILITY`.

The identifier walks every byte in Python (about 100 us a dialogue, more than the rest of the
ingest pipeline together), so plain English, nearly all of an English corpus, is recognised first
from its function words: at least `ENGLISH_MIN_HITS` words, and `ENGLISH_MIN_SHARE` of all words,
from `ENGLISH_WORDS`, frequent English words that are not words of other languages. Anything
else goes to the identifier. tests/annotation/test_ingest_language.py pins that the shortcut
agrees with the identifier.
"""

from functools import cache

UNKNOWN = "und"  # ISO 639-2 "undetermined"
MIN_LETTERS = 12
MIN_PROBABILITY = 0.5
ENGLISH_WORDS = frozenset(
    [
        "the",
        "you",
        "your",
        "you're",
        "i",
        "i'm",
        "i'll",
        "i've",
        "i'd",
        "it's",
        "that's",
        "don't",
        "can't",
        "won't",
        "didn't",
        "isn't",
        "what's",
        "and",
        "what",
        "that",
        "this",
        "with",
        "have",
        "are",
        "they",
        "she",
        "he's",
        "there",
        "here",
        "where",
        "why",
        "how",
        "would",
        "could",
        "should",
        "been",
        "just",
        "know",
        "want",
        "think",
        "about",
        "from",
        "when",
        "going",
        "gonna",
        "yeah",
        "okay",
        "right",
        "out",
        "them",
        "him",
        "her",
        "my",
        "me",
        "we",
        "was",
        "were",
        "will",
        "not",
        "of",
        "to",
        "it",
        "is",
        "be",
        "do",
        "did",
        "get",
        "got",
        "all",
        "one",
        "can",
        "now",
        "then",
    ]
)
ENGLISH_MIN_HITS = 3
ENGLISH_MIN_SHARE = 0.35
_ENGLISH_SAMPLE_WORDS = 40
_PUNCTUATION_TO_SPACE = str.maketrans(dict.fromkeys('.,!?;:"()[]-', " "))


@cache
def _identifier():
    # Loaded once per process, on first use (about 0.2 s), so importing the ingest core stays cheap.
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def identify(text: str) -> tuple[str, float]:
    """(ISO 639-1 code, probability) of `text`; (UNKNOWN, 0.0) when the text is too short to tell."""
    if sum(1 for char in text if char.isalpha()) < MIN_LETTERS:
        return UNKNOWN, 0.0
    code, probability = _identifier().classify(text)
    return code, float(probability)


def looks_english(text: str) -> bool:
    """Plain English by its function words, read from the first `_ENGLISH_SAMPLE_WORDS` words."""
    words = text[: _ENGLISH_SAMPLE_WORDS * 6].lower().translate(_PUNCTUATION_TO_SPACE).split()[:_ENGLISH_SAMPLE_WORDS]
    hits = sum(map(ENGLISH_WORDS.__contains__, words))
    return hits >= ENGLISH_MIN_HITS and hits >= ENGLISH_MIN_SHARE * len(words)


def language_of(text: str) -> str:
    """The code of `text`, or UNKNOWN when the identifier is unsure."""
    if text.isascii() and looks_english(text):
        return "en"
    code, probability = identify(text)
    return code if probability >= MIN_PROBABILITY else UNKNOWN


def dialogue_language(turns) -> str:
    """The language of a dialogue (TurnRecords or anything with `.text`), its turns read at once."""
    head = " ".join([turn.text for turn in turns[:6]])
    if head.isascii() and looks_english(head):
        return "en"
    return language_of(" ".join([turn.text for turn in turns]))


def texts_language(texts: list[str]) -> str:
    """The language of a dialogue given as its turns' texts."""
    head = " ".join(texts[:6])
    if head.isascii() and looks_english(head):
        return "en"
    return language_of(" ".join(texts))
