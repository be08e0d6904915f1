"""Helpers for the pipeline job tests: a small hand-written corpus, crowd gold labels, and running a
job at once. The fixtures the pipeline and suggestion tests share are in this folder's conftest."""

from annotation.models import Dialogue, Label, Turn, TurnLabel
from jobs import runtime as jobs
from jobs.models import JobRun


def run(kind, capture_on_commit, **parameters) -> JobRun:
    """Start a job and run it now (its on-commit queueing executed), refreshed."""
    with capture_on_commit(execute=True):
        job = jobs.start_job(kind, parameters)
    job.refresh_from_db()
    return job


# (turns, label of the last turn) -- written for these tests
DIALOGUES = [
    (["Did you see the results?", "We won the final, I can't believe it!"], "Excited"),
    (["How was the trip?", "The sea was calm and I loved every minute."], "Joyful"),
    (["Is she coming?", "She never called back, I waited all night."], "Disappointed"),
    (["What's wrong?", "My old dog died this morning."], "Devastated"),
    (["Where's the form?", "It's on the desk by the window."], "Neutral"),
    (["Can we talk?", "Thank you for helping me move last week."], "Grateful"),
    (["Did you lock up?", "Someone is inside the house, I can hear steps!"], "Terrified"),
    (["Why are you late?", "The bus broke down again, so annoying."], "Annoyed"),
    (["Will it work?", "I hope the doctors find a cure soon."], "Hopeful"),
    (["Ready?", "Good luck tomorrow, you will do great."], "Wishing"),
    (["Look at this.", "You painted that yourself? It's amazing."], "Impressed"),
    (["Are you okay?", "I'm so sorry about your father."], "Sympathizing"),
]


def make_corpus(dialogues=DIALOGUES, prefix="pipe") -> list[Dialogue]:
    made = []
    for index, (turns, _) in enumerate(dialogues):
        dialogue = Dialogue.objects.create(
            position=index, content_hash=f"{prefix}-{index}", turn_count=len(turns), language="en"
        )
        for position, text in enumerate(turns):
            Turn.objects.create(dialogue=dialogue, position=position, text=text, token_count=len(text.split()))
        made.append(dialogue)
    return made


def last_turn(dialogue: Dialogue) -> Turn:
    return dialogue.turns.order_by("-position").first()


def add_crowd_label(dialogue: Dialogue, label: str, split: str = "") -> TurnLabel:
    """A crowd label on the last turn; `split` sets the dialogue's stored split (else its own stays)."""
    if split:
        Dialogue.objects.filter(pk=dialogue.pk).update(split=split)
    return TurnLabel.objects.create(
        turn=last_turn(dialogue), label=Label.objects.get(name=label), source=TurnLabel.CROWD,
        provenance={"campaign": None, "votes": {label: 3}},
    )  # fmt: skip
