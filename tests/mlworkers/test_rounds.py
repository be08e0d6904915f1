"""The self-labeling rounds on a tiny keyword model and a tiny corpus (seconds, no Django)."""

from collections import Counter
from dataclasses import replace

import numpy as np
import pytest

from mlworkers.ml.expansion.embeddings import normalise_rows
from mlworkers.ml.rounds.self_labeling import (
    SBERT,
    SELF,
    InMemoryPool,
    Item,
    Learner,
    RoundsConfig,
    SelfLabelSelector,
    run_rounds,
    select_self_labels,
    stratified_split,
    vector_expander,
)

LABELS = ["Joyful", "Sad", "Neutral"]
CUE = {"Joyful": "happy", "Sad": "tears", "Neutral": "table"}


def keyword_learner(name="keywords"):
    """Learns which words go with which label; predicts softmax(3 x matching word count)."""

    def train(items):
        words = {label: Counter() for label in LABELS}
        for item in items:
            words[item.label].update(" ".join(item.turns).split())
        return words

    def predict_proba(model, items):
        words = [" ".join(item.turns).split() for item in items]
        scores = np.array([[sum(model[label][w] > 0 for w in ws) for label in LABELS] for ws in words])
        exp = np.exp(3.0 * scores)
        return exp / exp.sum(axis=1, keepdims=True)

    return Learner(name, train, predict_proba)


@pytest.fixture
def corpus():
    """Gold, test and unlabeled items of three labels; vectors cluster by label. Unlabeled items
    0..8 sit right next to a gold item (SBERT round 1), the others only share the cue word."""
    rng = np.random.default_rng(3)
    centres = {label: rng.standard_normal(16) * 3 for label in LABELS}
    vectors, key = {}, iter(range(1, 10_000))

    def make(label, spread, labeled=True, words=""):
        k = next(key)
        vectors[k] = centres[label] + spread * rng.standard_normal(16)
        return Item(k, ("so", f"{CUE[label]} {words}".strip()), label if labeled else None)

    gold = [make(label, 0.0, words=f"gold{n}") for label in LABELS for n in range(4)]
    test = [make(label, 2.0, words="test") for label in LABELS for _ in range(3)]
    near = [make(label, 0.05, labeled=False) for label in LABELS for _ in range(3)]
    far = [make(label, 6.0, labeled=False, words=f"far{n}") for label in LABELS for n in range(5)]
    for item in near:  # exactly on a gold vector's neighbourhood
        vectors[item.key] = vectors[gold[LABELS.index(_truth(item)) * 4].key] + 0.01 * rng.standard_normal(16)
    lookup = lambda keys: normalise_rows(np.array([vectors[k] for k in keys], dtype=np.float32))  # noqa: E731
    return gold, test, near + far, lookup


def _truth(item):
    return next(label for label, cue in CUE.items() if cue in item.turns[-1])


def test_four_rounds_grow_the_training_set_and_score_every_learner_on_the_same_test(corpus):
    gold, test, unlabeled, lookup = corpus
    sources_seen = []
    base_expand = vector_expander(lookup)

    def spying_expand(sources, candidates, threshold):
        sources_seen.append(({s.key for s in sources}, threshold))
        return base_expand(sources, candidates, threshold)

    config = RoundsConfig(label_names=LABELS, self_per_label=2, self_min_confidence=0.9)
    outcome = run_rounds(gold, test, unlabeled, [keyword_learner("a"), keyword_learner("b")], spying_expand, config)

    table = outcome.table()
    assert [row["name"] for row in table] == ["base", "+SBERT", "+self-labeled", "+SBERT(self)"]
    sizes = [row["training_size"] for row in table]
    by_round = Counter(n.round for n in outcome.new_labels)
    assert sizes[0] == len(gold)
    assert sizes[1] == sizes[0] + by_round[2] and by_round[2] >= 9  # the nine near items at least
    assert sizes[2] == sizes[1] + by_round[3] and 0 < by_round[3] <= 2 * len(LABELS)
    assert sizes[3] == sizes[2] + by_round[4]
    for result in outcome.rounds:
        assert set(result.scores) == {"a", "b"}
        assert all(report["n"] == len(test) for report in result.scores.values())
        assert 0.0 <= result.scores["a"]["macro_f1"] <= 1.0

    # round 2 expands from gold at 0.92, round 4 from the self-labeled at 0.9; never from test
    test_keys = {t.key for t in test}
    assert sources_seen[0] == ({g.key for g in gold}, 0.92)
    assert sources_seen[1] == ({n.key for n in outcome.new_labels if n.source == SELF}, 0.9)
    assert not any(keys & test_keys for keys, _ in sources_seen)
    assert not {n.key for n in outcome.new_labels} & test_keys

    # each unlabeled item is labeled at most once, with its true label in this easy corpus
    keys = [n.key for n in outcome.new_labels]
    assert len(keys) == len(set(keys))
    truth = {item.key: _truth(item) for item in unlabeled}
    assert all(truth[n.key] == n.label for n in outcome.new_labels)
    sbert = [n for n in outcome.new_labels if n.source == SBERT]
    assert all(n.similarity >= (0.92 if n.round == 2 else 0.9) and n.source_key for n in sbert)


def test_self_labels_take_the_most_confident_per_label_above_the_floor():
    items = [Item(k, ("x",)) for k in range(6)]
    probabilities = np.array(
        [[0.95, 0.05, 0], [0.99, 0.01, 0], [0.97, 0.03, 0], [0.2, 0.8, 0], [0.05, 0.95, 0], [0, 0.05, 0.95]]
    )
    config = RoundsConfig(label_names=LABELS, self_per_label=2, self_min_confidence=0.9)
    chosen = select_self_labels(items, probabilities, config, round_number=3)
    assert [(n.key, n.label) for n in chosen] == [(1, "Joyful"), (2, "Joyful"), (4, "Sad"), (5, "Neutral")]
    assert all(n.source == SELF and n.round == 3 for n in chosen)


def test_the_held_out_split_is_stratified_fixed_and_disjoint():
    labeled = [(k, LABELS[k % 3]) for k in range(300)] + [(1000 + k, "Rare") for k in range(5)]
    split = stratified_split(labeled, seed=5)
    assert split == stratified_split(list(reversed(labeled)), seed=5)  # fixed whatever the input order
    per_label = Counter((dict(labeled)[k], s) for k, s in split.items())
    for label in LABELS:
        assert per_label[(label, "test")] == 20  # 20 % of 100
        assert per_label[(label, "validation")] == 8  # 10 % of the other 80
    assert per_label[("Rare", "test")] == 1
    assert set(split) == {k for k, _ in labeled}


class SpyingPool(InMemoryPool):
    """Records every read of the unlabeled texts."""

    def __init__(self, items):
        super().__init__(items)
        self.reads = []

    def read(self, keys):
        self.reads.append(list(keys))
        return super().read(keys)


def test_the_unlabeled_pool_is_read_in_chunks_never_whole_and_the_result_is_the_same(corpus):
    gold, test, unlabeled, lookup = corpus
    learners = [keyword_learner("a")]
    config = RoundsConfig(label_names=LABELS, self_per_label=2, self_min_confidence=0.9, chunk_size=4)
    pool = SpyingPool(unlabeled)
    chunked = run_rounds(gold, test, pool, learners, vector_expander(lookup), config)

    assert pool.reads and max(len(keys) for keys in pool.reads) <= 4
    # the vector expander needs no texts: only self-labeling and the items joining training read them
    assert sum(len(keys) for keys in pool.reads) <= 2 * len(unlabeled)
    whole = run_rounds(gold, test, unlabeled, learners, vector_expander(lookup), replace(config, chunk_size=10_000))
    same = lambda labels: [(n.key, n.label, n.source, n.round, n.source_key) for n in labels]  # noqa: E731
    assert same(chunked.new_labels) == same(whole.new_labels)
    scores = lambda labels: [n.confidence for n in labels]  # noqa: E731
    assert scores(chunked.new_labels) == pytest.approx(scores(whole.new_labels), abs=1e-5)  # matmul blocks
    assert chunked.table() == whole.table()


def test_self_labels_chosen_chunk_by_chunk_equal_those_chosen_at_once():
    rng = np.random.default_rng(7)
    items = [Item(k, ("x",)) for k in range(300)]
    probabilities = rng.dirichlet([0.2, 0.2, 0.2], size=300)
    probabilities[::7] = probabilities[3]  # ties: the lower key wins
    config = RoundsConfig(label_names=LABELS, self_per_label=5, self_min_confidence=0.6)
    selector = SelfLabelSelector(config, round_number=3)
    for start in range(0, 300, 17):
        selector.add(items[start : start + 17], probabilities[start : start + 17])
    at_once = select_self_labels(items, probabilities, config, round_number=3)
    assert selector.chosen() == at_once
    by_label = Counter(n.label for n in at_once)
    assert all(count <= 5 for count in by_label.values()) and sum(by_label.values()) > 5
    # the reference rule, spelled out: per label, sort by (-confidence, key) and take the first 5
    best, confidence = probabilities.argmax(axis=1), probabilities.max(axis=1)
    expected = []
    for index, label in enumerate(LABELS):
        rows = sorted((-confidence[r], r) for r in range(300) if best[r] == index and confidence[r] >= 0.6)
        expected += [(r, label) for _, r in rows[:5]]
    assert sorted(expected) == [(n.key, n.label) for n in at_once]


def test_rounds_without_a_gain_say_why_and_rounds_with_one_say_nothing():
    from mlworkers.ml.rounds.self_labeling import why_no_gain

    flat = [
        {"round": 1, "name": "base", "dialogue_macro_f1": 0.207},
        {"round": 2, "name": "+SBERT", "dialogue_macro_f1": 0.214, "expanded": 183, "threshold": 0.92},
        {
            "round": 3,
            "name": "+self-labeled",
            "dialogue_macro_f1": 0.214,
            "self_labeled": 0,
            "highest_confidence": 0.23,
        },
        {"round": 4, "name": "+SBERT(self)", "dialogue_macro_f1": 0.214, "expanded": 0, "threshold": 0.9},
    ]
    notes = why_no_gain(flat, test_size=18)
    assert len(notes) == 3
    assert "Round 3 (+self-labeled) added no labels" in notes[0] and "0.23" in notes[0] and "0.9" in notes[0]
    assert "Round 4 (+SBERT(self)) added no labels" in notes[1] and "0.9 similar" in notes[1]
    assert "+0.007" in notes[2] and "18 test dialogues" in notes[2] and "0.056" in notes[2]
    gained = [dict(flat[0]), {**flat[3], "dialogue_macro_f1": 0.69}]
    assert why_no_gain(gained, test_size=18) == []  # a gain larger than one test dialogue needs no excuse
    assert why_no_gain(flat, test_size=18, learner="fasttext") == []  # no figures for it: nothing to say
