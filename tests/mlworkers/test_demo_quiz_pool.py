"""The demo's quiz pool: which ranked candidates become quiz dialogues (the rest stay work)."""

from annotation.readability import Candidate, RankedCandidate
from labeling.platforms.simulated_crowd import Truth
from mlworkers.chain.demo import quiz_pool_rows


def ranked(dialogue_id: int, text: str, label: str, rank: int) -> RankedCandidate:
    return RankedCandidate(Candidate(dialogue_id * 10, dialogue_id, text, label, 0.9), 1.0, rank)


def test_the_pool_takes_every_second_candidate_of_each_label_with_its_known_label():
    candidates = [
        ranked(1, "We won!", "Joyful", 1),
        ranked(2, "Nobody came.", "Joyful", 2),  # the weak labeler was wrong: the truth says Sad
        ranked(3, "Look at that.", "Joyful", 3),
        ranked(4, "What a day", "Joyful", 4),
        ranked(5, "I did it.", "Proud", 2),
    ]
    truth = {"we won": Truth("Joyful"), "nobody came": Truth("Sad"), "what a day": Truth("Joyful")}
    truth |= {"look at that": Truth("Surprised"), "i did it": Truth("Proud")}
    assert quiz_pool_rows(candidates, truth) == [(2, "Sad"), (4, "Joyful"), (5, "Proud")]


def test_it_refuses_lines_written_for_two_labels_and_lines_without_truth():
    candidates = [ranked(1, "Since you left...", "Sad", 2), ranked(2, "Who knows?", "Sad", 4)]
    assert quiz_pool_rows(candidates, {"since you left": Truth("Sad", alt="Lonely")}) == []
