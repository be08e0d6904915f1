"""The built-in DEMO quiz bank and the reading of quiz pool files. Pure, no Django.

TESTS ONLY: the built-in questions are one-turn texts whose answers and distractors are here in
the public source, so anyone can look them up, and their single turn tells them from work; they
serve tests and load benchmarks that switch QUIZ_DEMO_BANK on, never the demo (which imports a
real pool) nor a real campaign. Real quiz items are whole corpus dialogues with a known answer, kept secret in the
database (labeling.work.quiz_pool), imported with `import_quiz` from a file read by parse_quiz_csv.
Every sentence here was written for this project.
"""

import csv
import hashlib
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from annotation.export.cells import BadRecord, checked_records
from annotation.taxonomy import canonical_label, normalise_label_name


@dataclass(frozen=True)
class QuizSpec:
    text: str
    label: str
    distractors: tuple[str, str]
    explanation: str

    @property
    def choices(self) -> list[str]:
        """Gold and distractors in an order fixed by the text, so the gold has no fixed place."""
        return shuffled_choices(self.text, [self.label, *self.distractors])


def shuffled_choices(text: str, choices: Sequence[str]) -> list[str]:
    return sorted(choices, key=lambda name: hashlib.sha256(f"{text}|{name}".encode()).hexdigest())


Q = QuizSpec
BUILTIN_QUIZ: tuple[QuizSpec, ...] = (
    Q(
        "The ropes are checked, the map is marked and the torches are charged. Let the storm come.",
        "Prepared",
        ("Confident", "Anticipating"),
        "Everything is already done for what is coming: that is being prepared.",
    ),
    Q(
        "Any minute now the doors open and we'll finally see who got the prize.",
        "Anticipating",
        ("Excited", "Anxious"),
        "The speaker is waiting for an expected moment, without fear or joy dominating.",
    ),
    Q(
        "The swelling's gone down a little. Maybe she'll be walking again by spring.",
        "Hopeful",
        ("Confident", "Anticipating"),
        "'Maybe' marks a belief that something good could happen, not certainty.",
    ),
    Q(
        "Did you see my daughter up there? First in her class, and she paid for school herself.",
        "Proud",
        ("Impressed", "Joyful"),
        "Pleasure in the achievement of someone close is pride.",
    ),
    Q(
        "Tickets! Real tickets! We're seeing them live on Saturday, I can't believe it!",
        "Excited",
        ("Joyful", "Anticipating"),
        "Eager energy about something that is about to happen: excitement.",
    ),
    Q(
        "Listen to them all singing in the kitchen. This house hasn't been this happy in years.",
        "Joyful",
        ("Content", "Nostalgic"),
        "Great delight in the moment: joy, stronger than quiet contentment.",
    ),
    Q(
        "A cup of tea, the rain on the roof and nowhere to be. This is enough for me.",
        "Content",
        ("Joyful", "Grateful"),
        "Quiet satisfaction with how things are is contentment.",
    ),
    Q(
        "You've been coughing all week. Sit down, I'll bring you a blanket and some honey.",
        "Caring",
        ("Consoling", "Suggesting"),
        "Looking after someone's wellbeing with kindness is caring.",
    ),
    Q(
        "You stayed up all night fixing my bike. I don't know how to thank you.",
        "Grateful",
        ("Impressed", "Caring"),
        "Thankfulness for something done for the speaker: gratitude.",
    ),
    Q(
        "Here's the key to the safe. I know you'll keep it where it belongs.",
        "Trusting",
        ("Confident", "Faithful"),
        "Relying on the other person's honesty is trust.",
    ),
    Q(
        "Don't worry about the exam. I know this subject better than the teacher does.",
        "Confident",
        ("Proud", "Prepared"),
        "Being sure of oneself and of the outcome is confidence.",
    ),
    Q(
        "Twenty years I've waited for him, and I'll wait twenty more. He promised he'd return.",
        "Faithful",
        ("Hopeful", "Trusting"),
        "Steadfast loyalty that holds on whatever happens: faithful.",
    ),
    Q(
        "You painted this in one afternoon? It looks like it belongs in a museum.",
        "Impressed",
        ("Surprised", "Proud"),
        "Admiration for someone else's skill is being impressed.",
    ),
    Q(
        "Snow? In July? I went to bed in summer and woke up in winter!",
        "Surprised",
        ("Disappointed", "Annoyed"),
        "Something unexpected catches the speaker off guard.",
    ),
    Q(
        "It's coming up the stairs. Hide, hide, please, it's going to find us!",
        "Terrified",
        ("Afraid", "Anxious"),
        "Overwhelming, extreme fear is terror, stronger than being afraid.",
    ),
    Q(
        "I don't like walking past that dog. It always growls at me.",
        "Afraid",
        ("Apprehensive", "Terrified"),
        "Fear of a concrete harm, but not overwhelming: afraid.",
    ),
    Q(
        "I'm not sure about signing this lease. Something about that landlord feels wrong.",
        "Apprehensive",
        ("Anxious", "Afraid"),
        "Unease that something bad might happen, without present danger: apprehensive.",
    ),
    Q(
        "The results should have come by now. Why hasn't the hospital called?",
        "Anxious",
        ("Apprehensive", "Questioning"),
        "Tense worry about an uncertain outcome is anxiety.",
    ),
    Q(
        "I waved back at him, and he was waving at the woman behind me. Everyone saw.",
        "Embarrassed",
        ("Ashamed", "Guilty"),
        "Self-conscious after an awkward but harmless moment: embarrassment.",
    ),
    Q(
        "I cheated on the test and my friend got blamed for it. I can't face her.",
        "Ashamed",
        ("Guilty", "Embarrassed"),
        "Feeling bad about one's own wrong conduct, hiding from others: shame.",
    ),
    Q(
        "The fire took everything. Forty years of our life, gone by morning.",
        "Devastated",
        ("Sad", "Disappointed"),
        "Overwhelming shock and grief after a loss is devastation.",
    ),
    Q(
        "The old cat died last night. The porch looks so empty without her.",
        "Sad",
        ("Devastated", "Lonely"),
        "Sorrow that is felt but not overwhelming: sadness.",
    ),
    Q(
        "I trained all year for this race, and they cancelled it the day before.",
        "Disappointed",
        ("Sad", "Annoyed"),
        "Hopes that were not met leave the speaker let down.",
    ),
    Q(
        "Another Sunday with no visitors. Even the postman doesn't stop here anymore.",
        "Lonely",
        ("Sad", "Nostalgic"),
        "Sadness that comes from being without company is loneliness.",
    ),
    Q(
        "I still keep the ticket stub from our first film together in my wallet.",
        "Sentimental",
        ("Nostalgic", "Caring"),
        "Tender feeling stirred by a keepsake: sentimental.",
    ),
    Q(
        "Back then we'd ride our bikes to the river every evening. Those were the days.",
        "Nostalgic",
        ("Sentimental", "Content"),
        "Fond longing for the past is nostalgia.",
    ),
    Q(
        "I told him to take the shortcut. If I hadn't, he'd never have crashed.",
        "Guilty",
        ("Ashamed", "Sad"),
        "Feeling responsible for a harm done is guilt.",
    ),
    Q(
        "He spat in the soup and served it anyway? That's revolting.",
        "Disgusted",
        ("Angry", "Surprised"),
        "Being repelled by something offensive is disgust.",
    ),
    Q(
        "You crashed my car and didn't even tell me? Get out before I throw you out!",
        "Furious",
        ("Angry", "Annoyed"),
        "Rage, far stronger than plain anger, is fury.",
    ),
    Q(
        "Why did you tell my sister what I said? That was between us.",
        "Angry",
        ("Furious", "Annoyed"),
        "Strong displeasure at someone's act, without rage: anger.",
    ),
    Q(
        "Could you please stop humming? I've read this page four times.",
        "Annoyed",
        ("Angry", "Questioning"),
        "Mild irritation is annoyance.",
    ),
    Q(
        "Of course he gave her the solo. She always gets everything she wants.",
        "Jealous",
        ("Annoyed", "Disappointed"),
        "Resentment of a rival's advantage is jealousy.",
    ),
    Q(
        "Yes, that's right. Taking the train is the smarter choice.",
        "Agreeing",
        ("Acknowledging", "Suggesting"),
        "The speaker states agreement with what was said.",
    ),
    Q(
        "Right, so the package arrives Tuesday and I sign for it. Understood.",
        "Acknowledging",
        ("Agreeing", "Questioning"),
        "The speaker shows the message was heard and understood, without taking sides.",
    ),
    Q(
        "Keep swimming, you're almost at the boat. Just a few more strokes!",
        "Encouraging",
        ("Suggesting", "Wishing"),
        "Giving someone the confidence to keep going is encouraging.",
    ),
    Q(
        "Shh, it's over now. You're safe, I'm right here with you.",
        "Consoling",
        ("Caring", "Sympathizing"),
        "Comforting someone in distress is consoling.",
    ),
    Q(
        "Losing a job like that, right before the holidays, must feel awful.",
        "Sympathizing",
        ("Consoling", "Acknowledging"),
        "Expressing understanding of how someone feels is sympathizing.",
    ),
    Q(
        "What if we leave the car here and walk the last mile?",
        "Suggesting",
        ("Questioning", "Encouraging"),
        "Proposing a course of action is suggesting, even when phrased as a question.",
    ),
    Q(
        "Which platform does the night train leave from?",
        "Questioning",
        ("Suggesting", "Acknowledging"),
        "A plain request for information is questioning.",
    ),
    Q(
        "Safe travels, and may the weather be kind to you all the way.",
        "Wishing",
        ("Caring", "Encouraging"),
        "Expressing good wishes for someone is wishing.",
    ),
    Q(
        "The library closes at six on Fridays.",
        "Neutral",
        ("Acknowledging", "Questioning"),
        "Plain information with no particular emotion or intent is neutral.",
    ),
)


class QuizFileError(ValueError):
    pass


@dataclass(frozen=True)
class PoolRow:
    """One row of a quiz pool file: a corpus dialogue (its id) and the known label of its last turn."""

    line: int
    dialogue_id: int
    label: str
    explanation: str


def parse_quiz_csv(content: str, source: str, label_names: Iterable[str]) -> list[PoolRow]:
    """Read a CSV with a `dialogue,label` header (an `explanation` column is optional): each row
    names a whole corpus dialogue by id and the known label of its last turn. Errors name the
    line: an id that is not a positive integer, an unknown label, a dialogue listed twice.
    """
    reader = csv.DictReader(io.StringIO(content))
    try:
        header = reader.fieldnames or []
    except csv.Error as error:
        raise QuizFileError(f"{source}: line 1: {error}") from error
    missing = {"dialogue", "label"} - set(header)
    if missing:
        raise QuizFileError(f"{source}: line 1: missing column(s) {', '.join(sorted(missing))}; need dialogue,label")
    by_folded = {normalise_label_name(name): name for name in label_names}
    try:
        rows = _pool_rows(checked_records(reader), source, by_folded)
    except BadRecord as bad:  # a NUL byte, an oversized field, broken quoting
        raise QuizFileError(f"{source}: line {bad.line}: {bad.reason}") from bad
    if not rows:
        raise QuizFileError(f"{source}: no rows")
    return rows


def _pool_rows(records, source: str, by_folded: dict[str, str]) -> list[PoolRow]:
    rows: list[PoolRow] = []
    seen: dict[int, int] = {}
    for line, row in records:
        raw_id, raw_label = (row.get("dialogue") or "").strip(), (row.get("label") or "").strip()
        if not (raw_id.isascii() and raw_id.isdigit()) or len(raw_id) > 18 or int(raw_id) < 1:
            raise QuizFileError(f"{source}: line {line}: dialogue must be a dialogue id, got {raw_id!r}")
        label = canonical_label(raw_label) or by_folded.get(normalise_label_name(raw_label))
        if label is None:
            raise QuizFileError(f"{source}: line {line}: unknown label {raw_label!r}")
        if int(raw_id) in seen:
            raise QuizFileError(f"{source}: line {line}: dialogue {raw_id} already on line {seen[int(raw_id)]}")
        seen[int(raw_id)] = line
        rows.append(PoolRow(line, int(raw_id), label, (row.get("explanation") or "").strip()))
    return rows


def check_bank(specs: Iterable[QuizSpec], label_names: Sequence[str]) -> list[str]:
    """Problems with a bank: labels without a question, distractors that are not labels or repeat."""
    specs = list(specs)
    names = set(label_names)
    problems = [f"no question for {name}" for name in label_names if name not in {s.label for s in specs}]
    for spec in specs:
        if len({spec.label, *spec.distractors}) != 3 or not set(spec.distractors) <= names:
            problems.append(f"bad choices for {spec.text[:40]!r}")
    return problems
