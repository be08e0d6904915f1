"""The files BotsTalk reads: skill pools, skill contexts, NLI pairs. Pure: no Django import.

All three are JSON Lines (one object a line, blank lines skipped); a bad line raises
BotsTalkFileError naming the file and the line, before anything runs.

    pool       {"text": "I walk my two dogs every morning.", "skill": "persona"}
    contexts   {"id": "d1", "contexts": {"persona": ["I have two dogs."], "knowledge": "..."},
                "start_skill": "persona"}            (start_skill optional)
    NLI pairs  {"premise": "I have two dogs.", "hypothesis": "I never had a pet.", "label": "contradiction"}
    response pairs  {"interaction": "Where were you?", "response": "At the station."}
                    (an `extract_pairs` output: its other fields are allowed and ignored)

A pool file is also the training file of the skill classifier (utterances labeled with a skill).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

MAX_NAME = 32  # a skill or context type is stored in SkillContext.kind / TurnSkill.skill
CONTRADICTION = "contradiction"


class BotsTalkFileError(ValueError):
    pass


@dataclass(frozen=True)
class PoolUtterance:
    text: str
    skill: str


@dataclass(frozen=True)
class DialogueContexts:
    """One dialogue to generate: its skill contexts by type (in file order) and, optionally, the
    skill whose agent opens it. `line` is where it came from, for later error messages."""

    id: str
    contexts: dict[str, list[str]]
    start_skill: str = ""
    line: int = 0

    def premises(self) -> list[tuple[str, str]]:
        """(context type, text) for every piece of context: the moderator's NLI premises."""
        return [(kind, text) for kind, texts in self.contexts.items() for text in texts]


@dataclass(frozen=True)
class NLIPair:
    premise: str
    hypothesis: str
    label: str


@dataclass(frozen=True)
class ResponsePair:
    """An interaction and the response that followed it (a SubTle pair): a corpus agent's candidate."""

    interaction: str
    response: str


# what `manage.py extract_pairs` writes besides the two texts (annotation.ingest.pairs.Pair)
PAIR_FILE_FIELDS = {
    "id", "file", "interaction_cue", "response_cue", "interaction_start", "interaction_end", "response_start",
    "response_end",
}  # fmt: skip


@dataclass
class _Reader:
    path: Path
    allowed: set[str]
    required: set[str]
    seen: dict[str, int] = field(default_factory=dict)

    def objects(self) -> Iterator[tuple[int, dict]]:
        if not self.path.is_file():
            raise BotsTalkFileError(f"{self.path}: no such file")
        with self.path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    yield number, self._object(number, line)

    def _object(self, number: int, line: str) -> dict:
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise self.error(number, f"not valid JSON ({error.msg})") from None
        if not isinstance(record, dict):
            raise self.error(number, f"expected an object with {', '.join(sorted(self.required))}")
        unknown = sorted(set(record) - self.allowed)
        if unknown:
            raise self.error(number, f"unknown field {unknown[0]!r} (allowed: {', '.join(sorted(self.allowed))})")
        missing = sorted(self.required - set(record))
        if missing:
            raise self.error(number, f"missing {missing[0]!r}")
        return record

    def error(self, number: int, message: str) -> BotsTalkFileError:
        return BotsTalkFileError(f"{self.path}:{number}: {message}")

    def text(self, number: int, record: dict, name: str) -> str:
        value = record.get(name)
        if not isinstance(value, str) or not value.strip():
            raise self.error(number, f"{name!r} must be a non-empty string")
        return " ".join(value.split())

    def name(self, number: int, record: dict, key: str) -> str:
        value = self.text(number, record, key)
        if len(value) > MAX_NAME:
            raise self.error(number, f"{key!r} is longer than {MAX_NAME} characters")
        return value


def read_pool(paths: Iterable[str | Path]) -> list[PoolUtterance]:
    """Utterances with their skill from one or more files; a folder stands for its *.jsonl files.
    A repeated (text, skill) is kept once."""
    utterances: dict[tuple[str, str], PoolUtterance] = {}
    for path in expand_paths(paths):
        reader = _Reader(path, allowed={"text", "skill", "id"}, required={"text", "skill"})
        for number, record in reader.objects():
            item = PoolUtterance(reader.text(number, record, "text"), reader.name(number, record, "skill"))
            utterances.setdefault((item.text, item.skill), item)
    if not utterances:
        raise BotsTalkFileError(f"{', '.join(str(p) for p in paths)}: no utterances")
    return list(utterances.values())


def read_contexts(path: str | Path, skills: Iterable[str] = ()) -> list[DialogueContexts]:
    """The dialogues to generate. `skills` (the pools' skills), when given, checks start_skill."""
    known = set(skills)
    reader = _Reader(Path(path), allowed={"id", "contexts", "start_skill"}, required={"id", "contexts"})
    dialogues = []
    for number, record in reader.objects():
        identifier = reader.text(number, record, "id")
        if identifier in reader.seen:
            raise reader.error(number, f"id {identifier!r} is already used on line {reader.seen[identifier]}")
        reader.seen[identifier] = number
        start = reader.name(number, record, "start_skill") if "start_skill" in record else ""
        if start and known and start not in known:
            raise reader.error(number, f"start_skill {start!r} has no pool (pools: {', '.join(sorted(known))})")
        dialogues.append(DialogueContexts(identifier, _contexts(reader, number, record["contexts"]), start, number))
    if not dialogues:
        raise BotsTalkFileError(f"{path}: no dialogues")
    return dialogues


def _contexts(reader: _Reader, number: int, raw) -> dict[str, list[str]]:
    if not isinstance(raw, dict) or not raw:
        raise reader.error(number, "'contexts' must be a non-empty object of context type -> text or list of texts")
    contexts = {}
    for kind, value in raw.items():
        if not isinstance(kind, str) or not kind.strip() or len(kind) > MAX_NAME:
            raise reader.error(number, f"context type {kind!r} must be a name of 1 to {MAX_NAME} characters")
        texts = [value] if isinstance(value, str) else value
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) and t.strip() for t in texts):
            raise reader.error(number, f"context {kind!r} must be a non-empty text or a list of non-empty texts")
        contexts[kind.strip()] = [" ".join(t.split()) for t in texts]
    return contexts


def read_nli_pairs(path: str | Path) -> list[NLIPair]:
    """Premise/hypothesis pairs with a label; the labels must include "contradiction"."""
    reader = _Reader(
        Path(path), allowed={"premise", "hypothesis", "label"}, required={"premise", "hypothesis", "label"}
    )
    pairs = []
    for number, record in reader.objects():
        label = reader.name(number, record, "label").lower()
        pairs.append(NLIPair(reader.text(number, record, "premise"), reader.text(number, record, "hypothesis"), label))
    if not pairs:
        raise BotsTalkFileError(f"{path}: no pairs")
    if CONTRADICTION not in {p.label for p in pairs}:
        raise BotsTalkFileError(f"{path}: no pair is labeled {CONTRADICTION!r}; the moderator needs that label")
    if len({p.label for p in pairs}) < 2:
        raise BotsTalkFileError(f"{path}: every pair has the same label; give contradictions and others")
    return pairs


def read_response_pairs(path: str | Path) -> list[ResponsePair]:
    """Interaction-response pairs, e.g. the JSON Lines output of `manage.py extract_pairs`."""
    allowed = {"interaction", "response"} | PAIR_FILE_FIELDS
    reader = _Reader(Path(path), allowed=allowed, required={"interaction", "response"})
    pairs = [
        ResponsePair(reader.text(number, record, "interaction"), reader.text(number, record, "response"))
        for number, record in reader.objects()
    ]
    if not pairs:
        raise BotsTalkFileError(f"{path}: no pairs")
    return pairs


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given; a folder is its *.jsonl files in name order."""
    expanded = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(path.glob("*.jsonl"))
            if not found:
                raise BotsTalkFileError(f"{path}: a folder with no .jsonl files")
            expanded.extend(found)
        else:
            expanded.append(path)
    return expanded


def split_paths(text: str) -> list[str]:
    """A job parameter naming several files: separated by commas or white space."""
    return [part for part in text.replace(",", " ").split() if part]
