"""Spreadsheet-safe CSV cells: the escape the writers apply and the gold reader undoes.

A spreadsheet runs a cell that starts with `=`, `+`, `-` or `@` as a formula (and a leading tab or
carriage return can hide one), so an exported turn text such as `=HYPERLINK(...)` would execute
when a researcher opens the file. Text cells that start with one of those characters get a single
quote in front (the OWASP "CSV injection" escape, as `defusedcsv` does); a text cell that already
starts with a quote gets one more, so the escape is a bijection and `unescape_cell` gives back the
exact original. Numbers are written as they are (`-0.5` stays a number). JSONL and the Hugging Face
folder are not spreadsheet formats and are left untouched.
"""

import csv
from collections.abc import Iterable, Iterator
from typing import Any

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"
_ESCAPED = (*FORMULA_PREFIXES, QUOTE)


def escape_cell(value: Any) -> Any:
    """`value` with a quote in front when it is text starting with a formula prefix or a quote."""
    if isinstance(value, str) and value.startswith(_ESCAPED):
        return QUOTE + value
    return value


def unescape_cell(text: str) -> str:
    """The inverse of `escape_cell` for a cell read back from one of our CSV files."""
    if text.startswith(QUOTE) and text[1:].startswith(_ESCAPED):
        return text[1:]
    return text


class BadRecord(ValueError):
    """A CSV record an importer must refuse; `line` is where the record starts."""

    def __init__(self, line: int, reason: str):
        super().__init__(reason)
        self.line, self.reason = line, reason


def checked_records(reader: Iterator[Any]) -> Iterator[tuple[int, Any]]:
    """(start line, record) for each record of a `csv.reader` or `csv.DictReader`.

    Raises BadRecord naming the line for a NUL byte, a field over `csv.field_size_limit()`
    characters, or text the csv module cannot parse, so every importer reports them as
    `file:line: reason` instead of a traceback.
    """
    line = reader.line_num + 1
    while True:
        try:
            record = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise BadRecord(line, _csv_reason(error)) from error
        values = record.values() if isinstance(record, dict) else record
        if any("\0" in value for value in _texts(values)):
            raise BadRecord(line, "contains a NUL byte")
        yield line, record
        line = reader.line_num + 1


def _texts(values: Iterable[Any]) -> Iterator[str]:
    for value in values:
        if isinstance(value, str):
            yield value
        elif isinstance(value, list):  # DictReader's extra fields
            yield from (v for v in value if isinstance(v, str))


def _csv_reason(error: csv.Error) -> str:
    if "field larger than field limit" in str(error):
        return f"a field is longer than {csv.field_size_limit()} characters"
    return f"not valid CSV ({error})"
