"""Seeded generator of short subtitle films for the turn segmenter (written for this project).

Two speakers take turns. A question is usually answered by the other speaker; an answer or a
statement is often followed by the same speaker's continuation ("And then...", "But..."). Turns
are laid out in cues the way subtitlers do: two one-sentence turns share a dashed cue
(`- A` / `- B`), a longer turn fills a cue with two sentences or runs over into the next cue;
gaps are short inside a scene and long between scenes. A share of the turns break the pattern
(`noise`), so a perfect score is impossible.
"""

import random
from dataclasses import dataclass
from pathlib import Path

QUESTIONS = [
    "Where were you last night?",
    "Did you see the car outside?",
    "Why are you so late?",
    "What did the doctor say?",
    "Can you hear me?",
    "Are you coming with us?",
    "Who told you that?",
    "How much did it cost?",
    "Do you trust him?",
    "Is the door locked?",
    "When does the train leave?",
    "Have you eaten anything today?",
]
ANSWERS = [
    "Yes, I did.",
    "No, not yet.",
    "Maybe later.",
    "Sure, why not.",
    "I don't know.",
    "Because I was tired.",
    "Not really.",
    "Of course I am.",
    "Nobody told me.",
    "Yes, of course.",
    "No, I never do.",
    "At home, with my sister.",
]
CONTINUATIONS = [
    "And then I went home.",
    "But it was too late.",
    "Also, my phone was dead.",
    "Then the lights went out.",
    "So I stayed there all night.",
    "And I waited for you.",
    "But nobody came.",
    "And it was raining again.",
    "So we left early.",
    "Then he closed the window.",
]
STATEMENTS = [
    "I found the keys.",
    "The train leaves at nine.",
    "We have to go now.",
    "Look at this!",
    "Listen to me.",
    "This is the last time.",
    "My brother called this morning.",
    "The shop closes at six.",
    "I need a drink.",
    "We are out of time!",
]
GENRES = ["Drama", "Comedy", "Thriller"]


@dataclass
class Turn:
    speaker: int
    sentences: list[str]


def turns(rng: random.Random, count: int, noise: float) -> list[Turn]:
    result: list[Turn] = []
    speaker = 0
    for _ in range(count):
        previous = result[-1].sentences[-1] if result else ""
        if previous.endswith("?") and rng.random() > noise:
            first = rng.choice(ANSWERS)
        else:
            first = rng.choice(QUESTIONS if rng.random() < 0.5 else STATEMENTS + ANSWERS)
        body = [first]
        while not body[-1].endswith("?") and rng.random() < 0.5 and len(body) < 3:
            body.append(rng.choice(CONTINUATIONS))
        if rng.random() < noise:  # a turn that breaks the pattern: a continuation opens it
            body.insert(0, rng.choice(CONTINUATIONS))
        result.append(Turn(speaker, body))
        speaker = 1 - speaker
    return result


def cues(rng: random.Random, film: list[Turn], noise: float = 0.1) -> list[tuple[float, float, str, list[int]]]:
    """(start, end, text, speaker of each sentence) per cue."""
    laid: list[tuple[float, float, str, list[int]]] = []
    clock = 5.0
    index = 0
    while index < len(film):
        turn = film[index]
        after = film[index + 1] if index + 1 < len(film) else None
        clock += rng.uniform(6, 10) if rng.random() < 0.08 else rng.uniform(0.2, 1.5)
        if after and len(turn.sentences) == 1 and len(after.sentences) == 1 and rng.random() < 0.5:
            text = f"- {turn.sentences[0]}\n- {after.sentences[0]}"
            if rng.random() < noise:  # a subtitler's slip: two speakers in a cue without dashes
                text = text.replace("- ", "")
            laid.append(_cue(rng, clock, text, [turn.speaker, after.speaker]))
            index += 2
        else:
            for start in range(0, len(turn.sentences), 2):
                chunk = turn.sentences[start : start + 2]
                joiner = "\n" if rng.random() < 0.5 else " "
                laid.append(_cue(rng, clock, joiner.join(chunk), [turn.speaker] * len(chunk)))
                clock = laid[-1][1] + rng.uniform(0.1, 0.5)
            index += 1
        clock = laid[-1][1]
    return laid


def _cue(rng: random.Random, clock: float, text: str, speakers: list[int]):
    return (clock, clock + rng.uniform(1.5, 3.0), text, speakers)


def stamp(seconds: float) -> str:
    millis = round(seconds * 1000)
    hours, millis = divmod(millis, 3_600_000)
    minutes, millis = divmod(millis, 60_000)
    secs, millis = divmod(millis, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d},{millis:03d}"


def srt_document(laid) -> str:
    return "".join(f"{n}\n{stamp(a)} --> {stamp(b)}\n{text}\n\n" for n, (a, b, text, _) in enumerate(laid, 1))


def truth_document(laid, genre: str) -> str:
    """The true speakers in the hand-labelled format (annotation.ingest.segmenter_training), with the
    sentences cut as the pipeline cuts them, so the generated films can be scored pair by pair."""
    lines = [f"# film: generated; genre: {genre}"]
    for start, end, text, speakers in laid:
        runs = text.split("\n") if text.startswith("- ") else [text]
        sentences = [s for run in runs for s in _sentences(run.removeprefix("- "))]
        lines.extend(f"{start:.3f}\t{end:.3f}\t{who}\t{s}" for who, s in zip(speakers, sentences, strict=True))
    return "\n".join(lines) + "\n"


def _sentences(text: str) -> list[str]:
    pieces, current = [], []
    for word in text.replace("\n", " ").split():
        current.append(word)
        if word.endswith((".", "!", "?")):
            pieces.append(" ".join(current))
            current = []
    return pieces + ([" ".join(current)] if current else [])


def write_films(folder: Path, films: int, seed: int = 7, turns_per_film: int = 60, noise: float = 0.1) -> list[Path]:
    """`films` SubRip files under folder/<Genre>/film_NN.srt, each with its truth beside it in
    film_NN.turns.tsv; returns the SubRip paths."""
    rng = random.Random(seed)
    paths = []
    for number in range(films):
        genre = GENRES[number % len(GENRES)]
        path = folder / genre / f"film_{number:02d}.srt"
        path.parent.mkdir(parents=True, exist_ok=True)
        laid = cues(rng, turns(rng, turns_per_film, noise), noise)
        path.write_text(srt_document(laid), encoding="utf-8")
        path.with_suffix(".turns.tsv").write_text(truth_document(laid, genre), encoding="utf-8")
        paths.append(path)
    return paths
