"""LaTeX escaping, and a BibTeX entry read back as a reference line. Pure, no Django."""

import re

# the ten characters LaTeX gives a meaning; each replaced in one pass, so an escape is never escaped again
_SPECIAL = {
    "\\": "\\textbackslash{}",
    "&": "\\&",
    "%": "\\%",
    "$": "\\$",
    "#": "\\#",
    "_": "\\_",
    "{": "\\{",
    "}": "\\}",
    "~": "\\textasciitilde{}",
    "^": "\\textasciicircum{}",
}
_SPECIAL_RE = re.compile("|".join(re.escape(char) for char in _SPECIAL))


def latex_escape(text: str) -> str:
    """`text` as LaTeX prints it literally."""
    return _SPECIAL_RE.sub(lambda match: _SPECIAL[match.group(0)], str(text))


def bibtex_key(entry: str) -> str:
    """The key of a BibTeX entry (`@inproceedings{key, ...`), "" when there is none or it holds a
    character that \\cite would not take as given."""
    found = re.match(r"\s*@\w+\s*\{\s*([\w:.\-]+)\s*,", entry or "")
    return found.group(1) if found else ""


def bibtex_reference(entry: str) -> str:
    """Author. Year. Title. Venue: read from the entry's fields, for a `thebibliography` item."""
    fields = {
        name.lower(): value.strip()
        for name, value in re.findall(r'(\w+)\s*=\s*["{](.+?)["}]\s*,?\s*$', entry or "", flags=re.MULTILINE)
    }
    parts = [fields.get(name, "") for name in ("author", "year", "title", "booktitle", "journal", "publisher")]
    return ". ".join(part for part in parts if part) + "."
