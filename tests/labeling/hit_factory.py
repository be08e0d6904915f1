"""Builders for the annotator tests: an open campaign over hand-written dialogues, built into HITs.

Plain functions (not fixtures) so concurrency tests running in threads can call them too.
"""

from annotation.models import Dialogue, Turn
from labeling.models import Campaign

FALLBACK = ["Neutral", "Joyful", "Sad"]


_LINES = [
    "Did you lock the back door?",
    "I think so. Why are you whispering?",
    "Because someone is walking around downstairs.",
    "The letter finally came this morning.",
    "And? Don't keep me waiting!",
]


def make_dialogues(count: int, *, prefix: str = "d") -> list[Dialogue]:
    """`count` dialogues of two or three turns, each with its own text so content hashes differ."""
    dialogues = []
    for index in range(count):
        dialogue = Dialogue.objects.create(position=index, content_hash=f"{prefix}-{index}", turn_count=2 + index % 2)
        for position in range(dialogue.turn_count):
            text = f"{_LINES[(index + position) % len(_LINES)]} ({prefix}{index}.{position})"
            Turn.objects.create(dialogue=dialogue, position=position, text=text)
        dialogues.append(dialogue)
    return dialogues


def open_campaign(**fields) -> Campaign:
    values = {"name": "Night shift", "status": Campaign.OPEN, "fallback_choices": FALLBACK}
    values.update(fields)
    return Campaign.objects.create(**values)


def answer_everything(assignment, *, wrong_quiz: int = 0) -> None:
    """Answer every screen of the assignment's seat with its first choice, except quiz screens:
    right, or (for the first `wrong_quiz` of them) a choice that is not the gold label."""
    from labeling.actions.answer import save_response
    from labeling.models import Response, seat_items_q

    wrong_left = wrong_quiz
    for item in assignment.hit.items.filter(seat_items_q(assignment.seat)).select_related("quiz_question__gold_label"):
        name = item.choices[0]
        if item.is_quiz:
            gold = item.quiz_question.gold_label.name
            name = next(c for c in item.choices if c != gold) if wrong_left else gold
            wrong_left = max(wrong_left - 1, 0)
        # a known answer outside the three choices is given through "Other", as on a work screen
        method = Response.TOP3 if name in item.choices else Response.OTHER_LIST
        save_response(assignment, item, label_name=name, method=method)


def screen_item(assignment, position: int):
    """The item the assignment's holder sees on screen `position`: the HIT's shared items and its
    seat's own quiz items (labeling.models.seat_items_q), so a test reads the right screen whether
    quiz items are shared by the seats (the default) or drawn per seat (QUIZ_ITEMS_PER_SEAT=1)."""
    from labeling.models import seat_items_q

    return assignment.hit.items.filter(seat_items_q(assignment.seat)).get(position=position)
