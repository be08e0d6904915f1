"""The rater's prompt over a campaign's label set with few-shot examples from gold, and how its
answer is read. Pure, no Django."""

from collections.abc import Sequence
from dataclasses import dataclass

from annotation.taxonomy import normalise_label_name

MAX_LABEL_ANSWER = 64  # a longer reply is no label, however it reads


@dataclass(frozen=True)
class Example:
    turns: tuple[str, ...]  # the dialogue up to and with the labeled (last) turn
    label: str


def dialogue_text(turns: Sequence[str]) -> str:
    return "\n".join(f"{'A' if k % 2 == 0 else 'B'}: {text}" for k, text in enumerate(turns))


def build_messages(labels: Sequence[str], examples: Sequence[Example], turns: Sequence[str]) -> list[dict]:
    system = (
        "You label the last turn of a dialogue with the emotion or intent it expresses. "
        f"Answer with exactly one label from this list and nothing else: {', '.join(labels)}."
    )
    messages = [{"role": "system", "content": system}]
    for example in examples:
        messages.append({"role": "user", "content": dialogue_text(example.turns)})
        messages.append({"role": "assistant", "content": example.label})
    messages.append({"role": "user", "content": dialogue_text(turns)})
    return messages


@dataclass(frozen=True)
class ReadAnswer:
    label: str | None  # a label of the set
    outside: str | None  # a label-like answer that is not in the set


def read_answer(content: str, labels: Sequence[str]) -> ReadAnswer:
    """The label a reply names, case, spaces, quotes and a final full stop aside."""
    text = content.strip().rstrip(".").strip().strip("\"'`").rstrip(".").strip()
    by_name = {normalise_label_name(label): label for label in labels}
    found = by_name.get(normalise_label_name(text))
    if found:
        return ReadAnswer(found, None)
    if text and len(text) <= MAX_LABEL_ANSWER and "\n" not in text:
        return ReadAnswer(None, text)
    return ReadAnswer(None, None)
