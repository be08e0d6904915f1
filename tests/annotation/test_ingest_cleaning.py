"""Every cleaning rule, on and off (pure core, no database)."""

import pytest

from annotation.ingest import CleaningRules, FileRun, PipelineConfig


def run(path, *disabled):
    file_run = FileRun(path, PipelineConfig(rules=CleaningRules.without(disabled)))
    dialogues = [[turn.text for turn in dialogue.turns] for dialogue in file_run.dialogues()]
    return dialogues, file_run.stats.removed_by_rule


def scene(*texts):
    """One cue per text, 1 s apart: a single dialogue unless a rule cuts it."""
    return [(float(i), i + 0.8, text) for i, text in enumerate(texts)]


@pytest.mark.parametrize("line", ["JOHN: Where were you?", "MAN 2: Where were you?", "DR. HALE: Where were you?"])
def test_speaker_names_are_stripped(write_srt, line):
    dialogues, removed = run(write_srt("s.srt", scene(line, "Out.")))
    assert dialogues == [["Where were you?", "Out."]]
    assert removed["speaker_name"] == 1


def test_speaker_names_stay_when_the_rule_is_off(write_srt):
    dialogues, removed = run(write_srt("s.srt", scene("JOHN: Where were you?", "Out.")), "speaker_name")
    assert dialogues == [["JOHN: Where were you?", "Out."]]
    assert removed["speaker_name"] == 0


def test_a_colon_in_ordinary_speech_is_not_a_speaker(write_srt):
    dialogues, _ = run(write_srt("s.srt", scene("Listen: we leave at 10:30.", "Fine.")))
    assert dialogues == [["Listen: we leave at 10:30.", "Fine."]]


@pytest.mark.parametrize(
    "noise", ["[door slams]", "( clock ticking )", "♪ Moon river, wider than a mile ♪", "# la la la #"]
)
def test_sound_and_music_cues_are_removed(write_srt, noise):
    dialogues, removed = run(write_srt("s.srt", scene("Who is there?", noise, "Only me.")))
    assert dialogues == [["Who is there?", "Only me."]]
    assert removed["sound_cue"] == 1


def test_sound_cues_inside_a_line_are_cut_out(write_srt):
    dialogues, _ = run(write_srt("s.srt", scene("[gasps] Who is there?", "Only (laughs) me.")))
    assert dialogues == [["Who is there?", "Only me."]]


def test_sound_cues_stay_when_the_rule_is_off(write_srt):
    dialogues, removed = run(write_srt("s.srt", scene("Who is there?", "[door slams]", "Only me.")), "sound_cue")
    # kept as text, and with no terminal punctuation it runs on into the next sentence
    assert dialogues == [["Who is there?", "[door slams] Only me."]]
    assert removed["sound_cue"] == 0


def test_a_line_emptied_by_cleaning_neither_makes_nor_breaks_a_turn(write_srt):
    dialogues, _ = run(write_srt("s.srt", scene("I was going", "[thunder]", "- JOHN:", "to tell you.", "Tell me.")))
    assert dialogues == [["I was going to tell you.", "Tell me."]]


@pytest.mark.parametrize(
    "advert",
    [
        "Subtitles by Night Owl Crew",
        "Downloaded from www.opensubtitles.org",
        "Sync and corrections by Marek",
        "Visit example.com for more",
    ],
)
def test_advert_cues_are_dropped(write_srt, advert):
    dialogues, removed = run(write_srt("s.srt", scene("Are you ready?", advert, "As I'll ever be.")))
    assert dialogues == [["Are you ready?", "As I'll ever be."]]
    assert removed["advert"] == 1


def test_adverts_stay_when_the_rule_is_off(write_srt):
    dialogues, removed = run(write_srt("s.srt", scene("Are you ready?", "Subtitles by Night Owl Crew")), "advert")
    assert dialogues == [["Are you ready?", "Subtitles by Night Owl Crew"]]
    assert removed["advert"] == 0


TURN_RULE_CASES = [
    ("previously_on", "Previously on Harbour Lights..."),
    ("too_short", "A"),
    (
        "too_long",
        "When the ferry finally came we had been waiting on that cold pier for hours, "
        "and nobody said a single word to anyone.",
    ),
    ("non_alphabetic", "12 345 678 90 11?"),
    ("repeated_tokens", "No no no no no no."),
]


@pytest.mark.parametrize(("rule", "text"), TURN_RULE_CASES)
def test_a_removed_turn_takes_the_rest_of_its_dialogue_with_it(write_srt, rule, text):
    # dash-led, so each is its own turn whatever its punctuation
    path = write_srt("t.srt", scene("First we talk.", "Then we argue.", f"- {text}", "- And then?", "- We make up."))
    dialogues, removed = run(path)
    assert dialogues == [["First we talk.", "Then we argue."]]
    assert removed[rule] == 1
    assert removed["after_removed_turn"] == 2


@pytest.mark.parametrize(("rule", "text"), TURN_RULE_CASES)
def test_a_turn_rule_that_is_off_keeps_the_turn(write_srt, rule, text):
    path = write_srt("t.srt", scene("First we talk.", "Then we argue.", f"- {text}", "- And then?"))
    dialogues, removed = run(path, rule)
    assert dialogues == [["First we talk.", "Then we argue.", text, "And then?"]]
    assert removed[rule] == 0


def test_a_turn_repeating_the_previous_one_is_removed_unless_switched_off(write_srt):
    path = write_srt("r.srt", scene("Help me.", "Hold on!", "Hold on!", "I'm slipping."))
    assert run(path)[0] == [["Help me.", "Hold on!"]]
    assert run(path)[1]["repeated_turn"] == 1
    assert run(path, "repeated_turn")[0] == [["Help me.", "Hold on!", "Hold on!", "I'm slipping."]]


def test_a_short_repetition_is_not_mostly_repeated_tokens(write_srt):
    assert run(write_srt("t.srt", scene("Go, go, go!", "Run.")))[0] == [["Go, go, go!", "Run."]]


def test_dialogues_with_fewer_than_two_turns_are_dropped_unless_switched_off(write_srt):
    path = write_srt("one.srt", [(0.0, 1.0, "Alone at last."), (20.0, 21.0, "Hello?"), (21.5, 22.0, "Hi.")])
    dialogues, removed = run(path)
    assert dialogues == [["Hello?", "Hi."]]
    assert removed["too_few_turns"] == 1
    assert run(path, "too_few_turns")[0] == [["Alone at last."], ["Hello?", "Hi."]]


def test_an_unknown_rule_name_is_refused():
    with pytest.raises(ValueError, match="unknown cleaning rule"):
        CleaningRules.without(["no_such_rule"])


# --- Quirks of real subtitle files (issue 11): every line below is written for these tests. ---


def test_a_sound_cue_spanning_two_lines_is_removed_whole(write_srt):
    dialogues, removed = run(write_srt("s.srt", scene("Who is there?", "(ELECTRONIC\nMELODY)", "Only me.")))
    assert dialogues == [["Who is there?", "Only me."]]
    assert removed["sound_cue"] == 1


def test_a_sound_cue_left_open_is_closed_at_the_start_of_the_next_subtitle(write_srt):
    dialogues, removed = run(write_srt("s.srt", scene("Who is there? (DISTANT", "SIRENS) Only me.", "Good.")))
    assert dialogues == [["Who is there?", "Only me.", "Good."]]
    assert removed["sound_cue"] == 2


@pytest.mark.parametrize("song", ["¶ Over the hills and far away ¶", "# Over the hills", "♫ far away"])
def test_song_lines_are_removed(write_srt, song):
    dialogues, removed = run(write_srt("s.srt", scene("Who is there?", song, "Only me.")))
    assert dialogues == [["Who is there?", "Only me."]]
    assert removed["sound_cue"] == 1


def test_ass_line_breaks_and_tags_are_markup(write_srt):
    path = write_srt("s.srt", scene("{\\i1}Where were you?{\\i0}\\NOut.", "<b>Where</b>\\hexactly?"))
    dialogues, removed = run(path)
    assert dialogues == [["Where were you?", "Out.", "Where exactly?"]]
    assert removed["markup"] == 2
    kept, removed = run(path, "markup")
    assert kept[0][0].startswith("{\\i1}Where") and removed["markup"] == 0


@pytest.mark.parametrize("line", ["Jack: Where were you?", "Dr. Hale: Where were you?", "MARY JANE: Where were you?"])
def test_speaker_names_in_any_case_are_stripped(write_srt, line):
    dialogues, removed = run(write_srt("s.srt", scene(line, "Out.")))
    assert dialogues == [["Where were you?", "Out."]]
    assert removed["speaker_name"] == 1


def test_a_dash_after_a_finished_sentence_starts_another_speakers_turn(write_srt):
    path = write_srt("s.srt", scene("Are you coming? - I am. - Good.", "Let us go then."))
    dialogues, removed = run(path)
    assert dialogues == [["Are you coming?", "I am.", "Good.", "Let us go then."]]
    assert removed["mid_line_dash"] == 2
    # off, the dashes survive into the text (sentences still split at the full stops)
    assert run(path, "mid_line_dash")[0] == [["Are you coming?", "- I am.", "- Good.", "Let us go then."]]


def test_a_dash_inside_a_sentence_is_not_a_speaker_change(write_srt):
    dialogues, removed = run(write_srt("s.srt", scene("It was - how to say - odd.", "Very.")))
    assert dialogues == [["It was - how to say - odd.", "Very."]]
    assert removed["mid_line_dash"] == 0


def test_an_unfinished_sentence_is_not_joined_to_a_line_far_later(write_srt):
    path = write_srt(
        "s.srt", [(0.0, 1.0, "Hello."), (1.5, 2.5, "I was going"), (70.0, 71.0, "Somewhere else."), (71.5, 72, "Yes.")]
    )
    assert run(path)[0] == [["Hello.", "I was going"], ["Somewhere else.", "Yes."]]
    # within the gap it still runs on
    near = write_srt("n.srt", [(0.0, 1.0, "Hello."), (1.5, 2.5, "I was going"), (4.0, 5.0, "home."), (5.5, 6, "Ok.")])
    assert run(near)[0] == [["Hello.", "I was going home.", "Ok."]]


def opus_run(write_file, sentences, *disabled):
    from tests.annotation.conftest import opus_xml

    path = write_file("o.xml", opus_xml([(None, tokens, None) for tokens in sentences]))
    return run(path, *disabled)


def test_opus_contraction_tokens_are_joined(write_file):
    sentences = [["I", "can", "'t", "stay", "."], ["He", "'", "s", "late", "."], ["We", "do", "n't", "mind", "."]]
    dialogues, removed = opus_run(write_file, sentences)
    assert dialogues == [["I can't stay.", "He's late.", "We don't mind."]]
    assert removed["opus_contraction"] == 1 + 1  # "do n't" is glued by the token joiner already
    dialogues, removed = opus_run(write_file, sentences, "opus_contraction")
    assert dialogues == [["I can 't stay.", "He ' s late.", "We don't mind."]]


def test_every_new_rule_can_be_switched_off_by_name():
    rules = CleaningRules.without(["markup", "mid_line_dash", "opus_contraction"])
    assert rules.disabled() == ["markup", "mid_line_dash", "opus_contraction"]
