"""Sentences, turns and the dialogue split (pure core, no database)."""

from collections import Counter

from annotation.ingest import CleaningRules, FileRun, PipelineConfig
from annotation.ingest.dialogues import DialogueSplitter
from annotation.ingest.records import Sentence, TurnRecord
from annotation.ingest.sentences import split_sentences
from annotation.ingest.turns import PunctuationSegmenter
from tests.annotation.conftest import opus_xml


def dialogues(path, **config):
    return [[turn.text for turn in d.turns] for d in FileRun(path, PipelineConfig(**config)).dialogues()]


def segment(*texts, dash=()):
    sentences = [Sentence(text, None, None, new_speaker=i in dash) for i, text in enumerate(texts)]
    return [turn.text for turn in PunctuationSegmenter().segment(sentences)]


def test_a_dash_led_line_is_a_new_speaker(write_srt):
    path = write_srt("d.srt", [(1.0, 3.0, "- Are you coming\n- No."), (3.5, 4.0, "Why not?")])
    assert dialogues(path) == [["Are you coming", "No.", "Why not?"]]


def test_a_cue_may_hold_several_sentences(write_srt):
    path = write_srt("s.srt", [(1.0, 3.0, "I'm here. Where are you?"), (3.5, 4.0, "Behind you!")])
    assert dialogues(path) == [["I'm here.", "Where are you?", "Behind you!"]]


def test_a_sentence_may_continue_over_cues(write_srt):
    path = write_srt("c.srt", [(1.0, 2.0, "I told you that"), (2.2, 3.5, "you would regret it."), (4.0, 5.0, "I do.")])
    file_run = FileRun(path)
    turns = [d.turns for d in file_run.dialogues()][0]
    assert [(t.text, t.start, t.end) for t in turns] == [
        ("I told you that you would regret it.", 1.0, 3.5),
        ("I do.", 4.0, 5.0),
    ]
    assert file_run.stats.sentences == 2


def test_sentences_split_at_terminal_punctuation_but_not_after_titles():
    assert split_sentences('Mr. Hale is late. "Go home." Why? Now…') == [
        "Mr. Hale is late.",
        '"Go home."',
        "Why?",
        "Now…",
    ]


def test_a_sentence_joins_a_turn_that_lacks_terminal_punctuation():
    assert segment("I was thinking", "we could leave tonight.") == ["I was thinking we could leave tonight."]


def test_an_ellipsis_joins_only_a_lower_case_continuation():
    assert segment("I was going to...", "...tell you everything.") == ["I was going to... tell you everything."]
    assert segment("I was going to...", "Never mind.") == ["I was going to...", "Never mind."]


def test_a_closing_quote_after_terminal_punctuation_ends_the_turn():
    assert segment('He said "go home."', "So I went.") == ['He said "go home."', "So I went."]


def test_a_dash_starts_a_turn_even_after_an_unfinished_one():
    assert segment("Wait, I", "What?", dash={1}) == ["Wait, I", "What?"]


def test_another_segmenter_can_be_plugged_in(write_srt):
    class OneTurnPerCue:
        def segment(self, sentences):
            for sentence in sentences:
                yield TurnRecord(sentence.text.upper(), sentence.start, sentence.end)

    path = write_srt("p.srt", [(1.0, 2.0, "Hello there."), (2.5, 3.0, "Hi.")])
    assert dialogues(path, segmenter=OneTurnPerCue()) == [["HELLO THERE.", "HI."]]


def test_a_gap_over_the_threshold_starts_a_new_dialogue(write_srt):
    cues = [(0.0, 1.0, "One."), (2.0, 3.0, "Two."), (8.01, 9.0, "Three."), (9.5, 10.0, "Four."), (15.0, 16.0, "Five.")]
    path = write_srt("g.srt", cues)
    # 3.0 -> 8.01 is over 5 s; 10.0 -> 15.0 is exactly 5 s and stays together
    assert dialogues(path) == [["One.", "Two."], ["Three.", "Four.", "Five."]]


def test_the_gap_is_configurable(write_srt):
    path = write_srt("g.srt", [(0.0, 1.0, "One."), (2.0, 3.0, "Two."), (5.5, 6.0, "Three."), (6.5, 7.0, "Four.")])
    assert dialogues(path, gap_seconds=2.0) == [["One.", "Two."], ["Three.", "Four."]]
    assert dialogues(path, gap_seconds=5.0) == [["One.", "Two.", "Three.", "Four."]]


def test_turns_with_a_missing_time_stay_together(write_file):
    xml = opus_xml(
        [
            ("00:00:01,000", ["Hello", "."], None),
            (None, ["Hi", "."], None),
            (None, ["Long", "time", "."], "00:00:03,000"),
            ("00:01:00,000", ["Far", "later", "."], "00:01:01,000"),
            ("00:01:01,500", ["Indeed", "."], "00:01:02,000"),
        ]
    )
    path = write_file("t.xml", xml)
    assert dialogues(path) == [["Hello.", "Hi.", "Long time."], ["Far later.", "Indeed."]]


def test_the_cue_gap_histogram_counts_gaps_between_raw_cues(write_srt):
    cues = [(0.0, 1.0, "A b."), (1.2, 2.0, "C d."), (1.9, 3.0, "E f."), (10.0, 11.0, "G h."), (50.0, 51.0, "I j.")]
    file_run = FileRun(write_srt("h.srt", cues))
    list(file_run.dialogues())
    histogram = file_run.stats.cue_gaps.as_dict()
    assert (histogram["bin_seconds"], histogram["max_seconds"], len(histogram["counts"])) == (0.5, 30.0, 60)
    assert histogram["counts"][0] == 2  # 0.2 s and an overlap
    assert histogram["counts"][14] == 1  # 7.0 s
    assert histogram["over_max"] == 1 and sum(histogram["counts"]) == 3


def test_a_dialogue_without_times_is_closed_at_the_turn_limit():
    turns = [TurnRecord(f"Line number {i} here.", None, None) for i in range(7)]
    split = DialogueSplitter(5.0, CleaningRules(), Counter(), max_turns=3).split(turns)
    assert [len(d.turns) for d in split] == [3, 3]  # the seventh turn alone is too few
