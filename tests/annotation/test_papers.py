"""The papers' numbers: each pinned at its value, listed with its source, defined once.

Changing a rule by accident must fail here: the values are written out below (a second time on
purpose), the reference page must match the module, and no source file may carry its own copy of
a value where it means the rule."""

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

from annotation import papers
from annotation.ingest.cleaning import CleaningRules
from annotation.readability import Candidate, build_vocabulary, rank_candidates
from tests.conftest import REPO_ROOT

# The papers' values, as a researcher citing EDOS expects them.
EXPECTED = {
    "DIALOGUE_GAP_SECONDS": 5.0,
    "TURN_MIN_CHARS": 2,
    "TURN_MAX_CHARS": 100,
    "PREFILTER_CONFIDENCE": 0.9,
    "CANDIDATES_PER_LABEL": 250,
    "READABILITY_LENGTH_DAMPING": 87.0,
    "READABILITY_DIVERSITY_WEIGHT": 0.04,
    "SBERT_EXPANSION_THRESHOLD": 0.92,
    "SBERT_SECOND_THRESHOLD": 0.9,
    "SELF_LABELS_PER_LABEL": 100,
    "SELF_LABEL_MIN_CONFIDENCE": 0.9,
    "TURN_WEIGHT_DECAY": 0.5,
    "CLASSIFIER_LEARNING_RATE": 2e-5,
    "DIALOGUES_PER_HIT": 15,
    "QUIZ_ITEMS_PER_HIT": 5,
    "WORKERS_PER_HIT": 3,
    "QUIZ_BONUS_MARK": 3,
}

# What a line must say for a literal on it to mean the rule (a bare 0.5 or 3 means nothing).
CONTEXTS = {
    "DIALOGUE_GAP_SECONDS": r"gap",
    "TURN_MIN_CHARS": r"min_chars",
    "TURN_MAX_CHARS": r"max_chars",
    "PREFILTER_CONFIDENCE": r"min_confidence|prefilter|PREFILTER",
    "CANDIDATES_PER_LABEL": r"per_label",
    "READABILITY_LENGTH_DAMPING": r"DAMPING|n_tokens|len\(tokens\)",
    "READABILITY_DIVERSITY_WEIGHT": r"DIVERSITY|distinct",
    "SBERT_EXPANSION_THRESHOLD": r".",  # 0.92 means nothing else in this project
    "SBERT_SECOND_THRESHOLD": r"threshold",
    "SELF_LABELS_PER_LABEL": r"self_per_label",
    "SELF_LABEL_MIN_CONFIDENCE": r"self_min_confidence",
    "TURN_WEIGHT_DECAY": r"decay",
    "CLASSIFIER_LEARNING_RATE": r"\blr\b|learning_rate",
    "DIALOGUES_PER_HIT": r"dialogues_per_hit|ROWS_PER_HIT",
    "QUIZ_ITEMS_PER_HIT": r"quiz_per_hit",
    "WORKERS_PER_HIT": r"workers_per_hit",
    "QUIZ_BONUS_MARK": r"pass_mark",
}

SOURCE_FOLDERS = ("annotation", "labeling", "mlworkers", "jobs", "config")
# file, constant: why its literal is not the paper's rule
ALLOWED = {
    # ACUTE-Eval pairwise campaigns (labeling/task_types/pairwise.py) are not the EDOS crowd task:
    # their form, API and the demo's pairwise campaign choose their own HIT shape
    ("labeling/pages/forms.py", "WORKERS_PER_HIT"),
    ("labeling/api/serializers.py", "WORKERS_PER_HIT"),
    ("mlworkers/demo.py", "WORKERS_PER_HIT"),
    # the trained segmenter's gap-feature bucket edges (0.3, 1, 2, 5 s): fixed by the saved models'
    # features, not the dialogue split
    ("annotation/ingest/svm_segmenter.py", "DIALOGUE_GAP_SECONDS"),
    # the redundancy form's suggested model threshold for model_informed (our choice, not a paper's:
    # the papers buy three answers for every dialogue)
    ("labeling/crowd/redundancy.py", "SBERT_SECOND_THRESHOLD"),
}


def test_each_paper_number_has_the_papers_value():
    assert {name: getattr(papers, name) for name in EXPECTED} == EXPECTED


def test_the_module_lists_every_number_with_its_source_and_where_users_meet_it():
    listed = {number.name: number for number in papers.PAPER_NUMBERS}
    assert sorted(listed) == sorted(EXPECTED)
    for name, number in listed.items():
        assert number.value == getattr(papers, name)
        assert re.search(r"\b(EDOS|OSED)\b", number.source), name
        assert number.where.strip(), name


def test_the_reference_page_matches_the_module():
    page = REPO_ROOT / "docs" / "reference" / "papers-constants.md"
    assert page.read_text() == papers.markdown(), "run: python -m annotation.papers > " + str(page)


def stray_copies() -> list[str]:
    """`path:line constant` for every numeric literal equal to a paper number on a line that means its rule."""
    found = []
    for folder in SOURCE_FOLDERS:
        for path in sorted((REPO_ROOT / folder).rglob("*.py")):
            relative = path.relative_to(REPO_ROOT).as_posix()
            if "/migrations/" in relative or relative == "annotation/papers.py":
                continue
            found += [f"{relative}:{line} {name}" for line, name in literal_rules(path.read_text(), relative)]
    return found


def literal_rules(source: str, relative: str = "") -> list[tuple[int, str]]:
    hits = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.NUMBER:
            continue
        value = ast.literal_eval(token.string)
        for name, expected in EXPECTED.items():
            if value == expected and re.search(CONTEXTS[name], token.line, re.I) and (relative, name) not in ALLOWED:
                hits.append((token.start[0], name))
    return hits


def test_no_source_file_keeps_its_own_copy_of_a_paper_number():
    assert stray_copies() == []


@pytest.mark.parametrize(
    "line",
    [
        "    quiz_pass_mark = models.PositiveSmallIntegerField(default=4)",  # not the value: not flagged
        "Threshold = Field(0.91, ge=0.0)",
    ],
)
def test_the_stray_check_ignores_other_values(line):
    assert literal_rules(line + "\n") == []


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("    quiz_pass_mark = models.PositiveSmallIntegerField(default=3)", "QUIZ_BONUS_MARK"),
        ("Threshold = Field(0.92, ge=0.0)", "SBERT_EXPANSION_THRESHOLD"),
        ("    gap_seconds: float = 5.0", "DIALOGUE_GAP_SECONDS"),
        ("    max_chars: int = 100", "TURN_MAX_CHARS"),
        ('DIALOGUE_GAP_SECONDS = env_float("DIALOGUE_GAP_SECONDS", 5.0)', "DIALOGUE_GAP_SECONDS"),
        ("def turn_weights(index, decay=0.5):", "TURN_WEIGHT_DECAY"),
    ],
)
def test_the_stray_check_sees_a_second_copy(line, name):
    assert name in {found for _, found in literal_rules(line + "\n")}


def test_the_stray_check_skips_comments_and_strings():
    assert literal_rules('x = 1  # gap of 5.0 s\ny = "min_confidence 0.9"\n') == []


def test_a_candidate_at_exactly_the_prefilter_is_kept_by_the_ranking():
    vocabulary = build_vocabulary(["I am so happy today."])
    at, under = (Candidate(i, i, "I am so happy today.", "Joyful", c) for i, c in ((1, 0.9), (2, 0.8999)))
    assert [r.candidate.turn_id for r in rank_candidates([at, under], vocabulary)] == [1]


def test_the_cleaning_rules_default_to_turns_of_2_to_100_characters():
    rules = CleaningRules()
    assert (rules.min_chars, rules.max_chars) == (2, 100)


def test_the_dead_scene_break_helper_is_gone():
    # one copy of the gap rule: DialogueSplitter.split, read by every ingest
    assert not re.search(r"def is_scene_break", Path(REPO_ROOT, "annotation/ingest/dialogues.py").read_text())
