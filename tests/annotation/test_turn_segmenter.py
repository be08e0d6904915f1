"""The trained SVM turn segmenter: features, weak labels, the model file, training and evaluation
(pure core), and `manage.py train_segmenter` / `ingest --segmenter svm:PATH`."""

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.ingest.records import Sentence
from annotation.ingest.segmenter_training import (
    evaluate_labelled,
    read_labelled_turns,
    train_on_files,
)
from annotation.ingest.svm_segmenter import (
    CHANGE,
    MODEL_VERSION,
    SAME,
    DensityClock,
    Lemmatiser,
    ModelError,
    SegmenterModel,
    SvmSegmenter,
    file_pairs,
    load_model,
    weak_label,
)
from tests.annotation.segmenter_films import write_films

ROOT = Path(__file__).resolve().parents[2]
SHIPPED_EVAL = ROOT / "annotation/ingest/data/turns_eval_en.tsv"


def features_of(a: Sentence, b: Sentence, genre="drama") -> list[str]:
    (_, _, _), (_, _, features) = file_pairs([a, b], genre, Lemmatiser("en"))
    return features


# A model that reads one feature: a sentence opening with "and" continues the turn.
AND_CONTINUES = SegmenterModel({"b:first=and": -2.0}, 1.0)


def test_pair_features_lemmatise_and_see_cue_gap_genre_and_crosses():
    features = features_of(Sentence("Where were you?", 1.0, 3.0), Sentence("The dogs ran home.", 3.4, 5.0))
    assert {"a:u=be", "b:u=dog", "b:u=run", "a:bi=where_be", "a:first=where", "a:last=?"} <= set(features)
    assert {"b:first2=the_dog", "a:last2=you_?", "cue=other", "gap=1", "genre=drama", "a:last*b:first=?|the"} <= set(
        features
    )
    same_cue = features_of(Sentence("Hi.", 1.0, 3.0), Sentence("Bye.", 1.0, 3.0))
    assert "cue=same" in same_cue and "gap=0" in same_cue
    assert "gap=unknown" in features_of(Sentence("Hi.", None, None), Sentence("Bye.", None, None))


def test_gap_buckets_have_their_edges_where_documented():
    gaps = {gap: features_of(Sentence("A.", 0.0, 1.0), Sentence("B.", 1.0 + gap, 9.0)) for gap in (0.29, 0.3, 5.0)}
    assert "gap=0" in gaps[0.29] and "gap=1" in gaps[0.3] and "gap=4" in gaps[5.0]


def test_density_counts_sentences_per_minute_so_far():
    clock = DensityClock()
    assert [clock.tick(t) for t in (0.0, 1.0, 2.0)] == ["0", "0", "0"]  # 3 a minute: the first minute is assumed
    busy = DensityClock()
    assert [busy.tick(t * 2.0) for t in range(30)][-1] == "5"  # 30 sentences in under a minute
    assert DensityClock().tick(None) == "unknown"


def test_weak_labels_come_from_dashes_inside_one_cue_only():
    first = Sentence("Ready?", 1.0, 3.0)
    assert weak_label(first, Sentence("Yes.", 1.0, 3.0, new_speaker=True)) == CHANGE
    assert weak_label(first, Sentence("Go on.", 1.0, 3.0)) == SAME
    assert weak_label(first, Sentence("Yes.", 3.0, 4.0, new_speaker=True)) is None  # next cue: unknown
    assert weak_label(Sentence("Ready?", None, None), Sentence("Yes.", None, None, True)) is None


def test_the_segmenter_trusts_dashes_and_unfinished_sentences_and_asks_the_model_otherwise():
    sentences = [
        Sentence("I went out.", 1, 2),
        Sentence("And I saw him.", 2.5, 3),  # model: same speaker
        Sentence("And then?", 3.5, 4, new_speaker=True),  # a dash beats the model
        Sentence("Nothing.", 4.5, 5),  # model: a change
        Sentence("I was going to...", 5.5, 6),
        Sentence("...wait for you.", 6.5, 7),  # the punctuation rule joins it
    ]
    turns = [t.text for t in SvmSegmenter(AND_CONTINUES).segment(sentences)]
    assert turns == ["I went out. And I saw him.", "And then?", "Nothing.", "I was going to... wait for you."]
    assert list(SvmSegmenter(AND_CONTINUES).segment([])) == []


def test_a_model_round_trips_through_its_file(tmp_path):
    path = tmp_path / "m.json"
    SegmenterModel({"a:last=?": 1.5}, -0.25, "pt", {"files": 3}).save(path)
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["version"] == MODEL_VERSION and "crosses" in document["features"]
    assert load_model(path) == SegmenterModel({"a:last=?": 1.5}, -0.25, "pt", {"files": 3})


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "cannot read the model"),
        ("{not json", "not a turn segmenter model (not JSON)"),
        ('{"format": "other"}', "format is not"),
        ('{"format": "svm-turn-segmenter", "version": 99}', "model version 99, this code reads version 1"),
        ('{"format": "svm-turn-segmenter", "version": 1, "weights": [], "intercept": 0}', "corrupt"),
        ('{"format": "svm-turn-segmenter", "version": 1, "weights": {"x": "y"}, "intercept": 0}', "corrupt"),
    ],
)
def test_a_bad_model_file_is_refused_naming_the_file(tmp_path, content, message):
    path = tmp_path / "model.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(ModelError) as caught:
        load_model(path)
    assert str(caught.value).startswith(f"{path}: ") and message in str(caught.value)


def test_the_labelled_format_is_read_and_scored_pair_by_pair(tmp_path):
    path = tmp_path / "eval.tsv"
    path.write_text(
        "# comment\n# film: Tiny; genre: drama\n1\t2\tA\tI went out.\n2.5\t3\tA\tAnd I saw him.\n"
        "3.5\t4\tB\tWhere?\n\n# film: Other\n\t\tA\tHello.\n\t\tA\tI was going to...\n\t\tA\t...say hi.\n",
        encoding="utf-8",
    )
    films = read_labelled_turns(path)
    assert [(f.name, f.genre, f.speakers) for f in films] == [
        ("Tiny", "drama", ["A", "A", "B"]),
        ("Other", "", ["A"] * 3),
    ]
    assert films[1].sentences[0] == Sentence("Hello.", None, None)
    evaluation = evaluate_labelled(AND_CONTINUES, films)
    # pairs: same (model: same), change (model: change), same (model: change), same (joined by rule)
    assert evaluation.model.as_dict() == {"accuracy": 0.75, "precision": 0.5, "recall": 1.0, "pairs": 4}
    assert evaluation.punctuation.as_dict() == {"accuracy": 0.5, "precision": 0.3333, "recall": 1.0, "pairs": 4}


@pytest.mark.parametrize(
    "content, message",
    [
        ("1\t2\tA\tHi.\n", "eval.tsv:1: a sentence before the first '# film:' line"),
        ("# film: X\n1\t2\tHi.\n", "eval.tsv:2: expected start<TAB>end<TAB>speaker<TAB>text"),
        ("# film: X\n1\tx\tA\tHi.\n", "eval.tsv:2: start and end must be seconds or empty"),
        ("# film: X\n1\t2\tA\tHi.\n", "eval.tsv: no film with two or more sentences"),
    ],
)
def test_a_bad_labelled_file_names_its_line(tmp_path, content, message):
    (tmp_path / "eval.tsv").write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        read_labelled_turns(tmp_path / "eval.tsv")


def test_the_shipped_hand_labelled_set_reads():
    films = read_labelled_turns(SHIPPED_EVAL)
    assert len(films) == 3 and all(len(f.sentences) == 20 and len(set(f.speakers)) == 2 for f in films)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("films")
    return folder, write_films(folder / "train", 15, seed=7), write_films(folder / "test", 4, seed=99)


@pytest.fixture(scope="module")
def trained(corpus):
    _, train, _ = corpus
    return train_on_files([(p, p.parent.name) for p in train])


def test_training_on_weak_labels_predicts_held_out_pairs(trained):
    assert trained.files == 15 and trained.train_pairs > 300 and 0 < trained.changes < trained.train_pairs
    assert trained.held_out.pairs > 50
    assert trained.held_out.accuracy >= 0.85 and trained.held_out.recall >= 0.7
    assert trained.model.weights["a:first=and"] < 0 < trained.model.weights["a:last=?"]


def test_the_trained_model_beats_the_punctuation_rule_on_every_pair_of_unseen_films(trained, corpus):
    _, _, test = corpus
    films = [film for path in test for film in read_labelled_turns(path.with_suffix(".turns.tsv"))]
    evaluation = evaluate_labelled(trained.model, films)
    assert evaluation.model.pairs == evaluation.punctuation.pairs > 300  # cross-cue pairs included
    assert evaluation.model.accuracy > evaluation.punctuation.accuracy + 0.03


# --- commands ---


def train_command(*args):
    out = StringIO()
    call_command("train_segmenter", *map(str, args), stdout=out, stderr=StringIO())
    return out.getvalue()


def train_fails(*args) -> str:
    with pytest.raises(CommandError) as caught:
        call_command("train_segmenter", *map(str, args), stdout=StringIO(), stderr=StringIO())
    return str(caught.value)


def test_train_segmenter_prints_figures_and_saves_a_versioned_model(corpus, tmp_path):
    folder, _, _ = corpus
    model_path = tmp_path / "seg.json"
    out = train_command(folder / "train", "--out", model_path, "--eval", SHIPPED_EVAL)
    assert "held-out pairs: accuracy=" in out and "precision=" in out and "recall=" in out
    assert "hand-labelled pairs: accuracy=" in out and f"saved to {model_path}" in out
    training = json.loads(model_path.read_text(encoding="utf-8"))["training"]
    assert training["version"] == MODEL_VERSION and training["files"] == 15
    assert training["hand_labelled"]["pairs"] == 57 and 0 <= training["held_out"]["accuracy"] <= 1
    assert load_model(model_path).training == training


def test_train_segmenter_refuses_bad_input_in_one_line(tmp_path, write_srt):
    assert train_fails(tmp_path / "none") == f"{tmp_path / 'none'}: no such file or folder"
    (tmp_path / "empty").mkdir()
    assert "no .srt/.xml/.xml.gz file" in train_fails(tmp_path / "empty")
    plain = write_srt("plain/a.srt", [(1, 2, "One speaker. Two sentences."), (3, 4, "Still one.")])
    assert train_fails(plain) == f"{plain}: no speaker changes to learn from (no cue with dash-led '- A' / '- B' lines)"
    broken = tmp_path / "broken.srt"  # nothing in it can be read
    broken.write_text("1\n00:00:05,000 --> 00:00:0x,000\n- Oops.\n- Oh.\n\n")
    assert train_fails(broken).startswith(f"{broken}, line 2: malformed timestamp")
    assert train_fails(plain, "--eval", tmp_path / "missing.tsv").startswith(f"{tmp_path / 'missing.tsv'}: cannot read")


def test_a_failing_command_exits_non_zero_with_one_line_and_no_traceback(tmp_path):
    done = subprocess.run(
        [sys.executable, "manage.py", "train_segmenter", str(tmp_path / "nowhere")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "DEBUG": "1", "HF_HUB_OFFLINE": "1"},
        timeout=120,
    )
    assert done.returncode != 0
    assert done.stderr.strip() == f"CommandError: {tmp_path / 'nowhere'}: no such file or folder"


@pytest.mark.django_db
def test_ingest_uses_a_trained_segmenter(write_srt, tmp_path):
    from annotation.models import Turn

    AND_CONTINUES.save(tmp_path / "and.json")
    cues = [(1, 2, "I went out."), (2.5, 3, "And I saw him."), (3.5, 4, "Where?"), (4.5, 5, "At the bar.")]
    call_command("ingest", write_srt("a.srt", cues), "--segmenter", f"svm:{tmp_path / 'and.json'}", stdout=StringIO())
    assert list(Turn.objects.order_by("position").values_list("text", flat=True)) == [
        "I went out. And I saw him.",
        "Where?",
        "At the bar.",
    ]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "value, message",
    [("svm:{tmp}/nope.json", "nope.json: cannot read the model"), ("magic", "expected 'punctuation' or 'svm:PATH'")],
)
def test_ingest_refuses_a_bad_segmenter_before_any_file(write_srt, tmp_path, value, message):
    from annotation.models import SubtitleFile

    path = write_srt("a.srt", [(1, 2, "Hi."), (2.5, 3, "Hello.")])
    with pytest.raises(CommandError, match=message):
        call_command("ingest", path, "--segmenter", value.format(tmp=tmp_path), stdout=StringIO())
    assert not SubtitleFile.objects.exists()


def test_the_fast_scorer_decides_every_pair_as_the_full_feature_list_does(trained, corpus):
    from annotation.ingest.segmenter_training import file_sentences
    from annotation.ingest.svm_segmenter import runs_on

    _, _, test = corpus
    sentences = file_sentences(test[0], "en")
    expected, turn, turn_end = [], None, None
    for previous, sentence, features in file_pairs(sentences, "comedy", Lemmatiser("en")):
        joins = previous is not None and not sentence.new_speaker
        # never across more than the dialogue gap (5.0 s by default), whatever the model says
        joins = joins and not (sentence.start is not None and turn_end is not None and sentence.start - turn_end > 5.0)
        if joins and (runs_on(turn, sentence.text) or trained.model.predict(features) == SAME):
            turn += " " + sentence.text.lstrip(".… ")
            turn_end = sentence.end
            continue
        if turn is not None:
            expected.append(turn)
        turn, turn_end = sentence.text, sentence.end
    expected.append(turn)
    turns = [t.text for t in SvmSegmenter(trained.model, "Comedy").segment(sentences)]
    assert turns == expected and len(turns) < len(sentences)


def test_the_lemmatiser_follows_the_language_and_leaves_punctuation_alone():
    assert Lemmatiser("en")("were") == "be"
    assert Lemmatiser("pt")("falamos") == "falar"
    assert Lemmatiser("pt")("?") == "?"


def test_the_cores_import_neither_django_nor_sklearn():
    probe = (
        "import sys, annotation.ingest.pairs, annotation.ingest.subtitle_paths, annotation.ingest.svm_segmenter, "
        "annotation.ingest.segmenter_training; print(sorted({'django', 'sklearn', 'simplemma'} & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
