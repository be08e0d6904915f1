"""Which language a dialogue is in: py3langid, whose model ships inside the package (offline).

One call per dialogue (all its turns joined), never per cue: the identifier costs about the same
for a line as for a paragraph, and a paragraph is far surer. Text too short to tell (fewer than
`MIN_LETTERS` letters) is `UNKNOWN`, and so is a best guess below `MIN_PROBABILITY`.
"""

from functools import cache

UNKNOWN = "und"  # ISO 639-2 "undetermined"
MIN_LETTERS = 12
MIN_PROBABILITY = 0.5


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


def language_of(text: str) -> str:
    """The code of `text`, or UNKNOWN when the identifier is unsure."""
    code, probability = identify(text)
    return code if probability >= MIN_PROBABILITY else UNKNOWN
