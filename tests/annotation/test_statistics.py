"""Table 3 / Table 9 statistics, example selection and evaluation reports on hand-made records."""

import pytest

from annotation.analysis.evaluation import evaluation_report
from annotation.analysis.examples import ExampleFilter, select_examples
from annotation.analysis.ordering import UnorderedInput
from annotation.analysis.records import ExampleTurn, LabeledTurn
from annotation.analysis.statistics import dataset_statistics

# dialogue 1: 3 turns (4+6+2 tokens), dialogue 2: 1 turn (5), dialogue 5: 2 turns (3+3)
TINY = [
    LabeledTurn(1, 0, 4, "Sad"),
    LabeledTurn(1, 1, 6, "Consoling"),
    LabeledTurn(1, 2, 2, "Sad"),
    LabeledTurn(2, 0, 5, "Joyful"),
    LabeledTurn(5, 0, 3, "Sad"),
    LabeledTurn(5, 1, 3, "Joyful"),
]


def test_it_computes_the_sizes_of_table_3_by_hand():
    sizes = dataset_statistics(TINY).sizes
    assert (sizes.dialogues, sizes.turns, sizes.tokens) == (3, 6, 23)
    assert sizes.turns_per_dialogue == pytest.approx(2.0)
    assert sizes.tokens_per_dialogue == pytest.approx(23 / 3)
    assert sizes.tokens_per_turn == pytest.approx(23 / 6)


def test_it_counts_dialogues_by_their_first_turn_and_turns_by_label():
    stats = dataset_statistics(TINY)
    assert stats.dialogues_by_first_label == {"Sad": 2, "Joyful": 1}
    assert stats.turns_by_label == {"Sad": 3, "Consoling": 1, "Joyful": 2}
    rows = {row.label: row for row in stats.label_rows(["Joyful", "Sad", "Consoling", "Afraid"])}
    assert list(rows) == ["Joyful", "Sad", "Consoling"]
    assert rows["Sad"].dialogue_share == pytest.approx(2 / 3)
    assert rows["Sad"].turn_share == pytest.approx(3 / 6)
    assert rows["Consoling"].dialogues == 0


def test_the_first_labeled_turn_decides_when_turn_one_has_no_label():
    stats = dataset_statistics([LabeledTurn(1, 1, 2, "Angry"), LabeledTurn(1, 2, 2, "Sad")])
    assert stats.dialogues_by_first_label == {"Angry": 1}


def test_unlabeled_turns_count_in_sizes_only():
    stats = dataset_statistics([LabeledTurn(1, 0, 3, None), LabeledTurn(1, 1, 4, None)])
    assert (stats.sizes.dialogues, stats.sizes.turns, stats.sizes.tokens) == (1, 2, 7)
    assert not stats.turns_by_label and not stats.label_rows()


def test_a_turn_with_two_extended_labels_counts_once():
    stats = dataset_statistics([LabeledTurn(1, 0, 3, "Sad"), LabeledTurn(1, 0, 3, "Lonely")])
    assert stats.sizes.turns == 1
    assert stats.turns_by_label == {"Sad": 1}


def test_it_refuses_unsorted_rows():
    with pytest.raises(UnorderedInput):
        dataset_statistics([LabeledTurn(2, 0, 1, "Sad"), LabeledTurn(1, 0, 1, "Sad")])


def test_an_empty_dataset_has_zero_averages():
    sizes = dataset_statistics([]).sizes
    assert (sizes.turns_per_dialogue, sizes.tokens_per_dialogue, sizes.tokens_per_turn) == (0.0, 0.0, 0.0)


EXAMPLE_TURNS = [
    ExampleTurn(1, 0, "a", "Sad", 0.9),
    ExampleTurn(1, 1, "b", None, None),
    ExampleTurn(2, 0, "c", "Joyful", 0.4),
    ExampleTurn(2, 1, "d", "Sad", 0.55),
    ExampleTurn(3, 0, "e", "Sad", 0.99),
]


def test_examples_are_filtered_by_label_and_confidence():
    chosen = select_examples(EXAMPLE_TURNS, ExampleFilter(label="sad", min_confidence=0.5, max_confidence=0.95))
    assert [e.dialogue_id for e in chosen] == [1, 2]
    assert chosen[1].matching_positions == frozenset({1})
    assert [t.text for t in chosen[1].turns] == ["c", "d"]


def test_examples_stop_at_the_limit():
    assert [e.dialogue_id for e in select_examples(EXAMPLE_TURNS, ExampleFilter(), limit=2)] == [1, 2]
    assert select_examples(EXAMPLE_TURNS, ExampleFilter(label="Angry")) == []


def test_the_evaluation_report_reads_dict_and_list_forms():
    report = evaluation_report(
        {
            "accuracy": 0.8,
            "macro_f1": 0.7,
            "precision": 0.75,
            "recall": 0.65,
            "per_label": {"Sad": {"precision": 1.0, "recall": 0.5, "f1-score": 0.667, "support": 2}},
            "confusion": {"labels": ["Sad", "Joyful"], "matrix": [[1, 1], [0, 3]]},
        }
    )
    assert report.summary == {"accuracy": 0.8, "macro_f1": 0.7, "precision": 0.75, "recall": 0.65}
    assert report.per_label[0].f1 == 0.667 and report.per_label[0].support == 2
    assert report.confusion_labels == ["Sad", "Joyful"] and report.confusion == [[1, 1], [0, 3]]

    listed = evaluation_report(
        {"per_label": [{"label": "Sad", "f1": 0.5}], "confusion": [[2, 0], [1, 1]]}, label_names=["Sad"]
    )
    assert listed.per_label[0].label == "Sad" and listed.per_label[0].precision is None
    assert listed.confusion_labels == ["Sad", "#1"]
    assert evaluation_report({}).is_empty
