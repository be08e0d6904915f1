"""The papers' ingest rules where a user meets them: `manage.py ingest` with no `--gap` splits
dialogues at a silence of over 5 s (5.0 s itself does not split), and turns of 2 to 100 characters
are kept while a longer one goes with the rest of its dialogue (annotation/papers.py)."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from annotation.ingest import FileRun, PipelineConfig
from annotation.models import Dialogue


def scene(*texts):
    """One cue per text, 1 s apart: a single dialogue unless a rule cuts it."""
    return [(float(i), i + 0.8, text) for i, text in enumerate(texts)]


def turns_of(path):
    return [[turn.text for turn in dialogue.turns] for dialogue in FileRun(path, PipelineConfig()).dialogues()]


def test_a_turn_of_exactly_100_characters_is_kept(write_srt):
    text = "We waited on the cold pier for hours while the ferry sat out there beyond the harbour wall until du."
    assert len(text) == 100
    path = write_srt("t.srt", scene("First we talk.", f"- {text}", "- And then?"))
    assert turns_of(path) == [["First we talk.", text, "And then?"]]


def test_a_turn_of_101_characters_is_removed_with_the_turns_after_it(write_srt):
    text = "We waited on the cold pier for hours while the ferry sat out there beyond the harbour wall until dus."
    assert len(text) == 101
    path = write_srt("t.srt", scene("First we talk.", "Then we argue.", f"- {text}", "- And then?", "- We make up."))
    assert turns_of(path) == [["First we talk.", "Then we argue."]]


def test_a_turn_of_2_characters_is_kept_and_one_of_1_is_not(write_srt):
    kept = write_srt("k.srt", scene("Are you there?", "- Ok", "- Now?"))
    cut = write_srt("c.srt", scene("Are you there?", "Maybe.", "- A", "- Now?"))
    assert turns_of(kept) == [["Are you there?", "Ok", "Now?"]]
    assert turns_of(cut) == [["Are you there?", "Maybe."]]


def ingested_dialogues(path) -> list[int]:
    out = StringIO()
    call_command("ingest", str(path), "--json", stdout=out, stderr=StringIO())
    assert json.loads(out.getvalue())["failed_files"] == 0
    return list(Dialogue.objects.order_by("position").values_list("turn_count", flat=True))


@pytest.mark.django_db
@pytest.mark.parametrize(("gap", "dialogues"), [(5.2, [2, 2]), (4.8, [4]), (5.0, [4])])
def test_the_ingest_command_with_no_gap_option_splits_over_5_seconds(write_srt, gap, dialogues):
    cues = [(0.0, 1.0, "Where were you?"), (1.5, 2.5, "At the harbour.")]
    cues += [(2.5 + gap, 3.5 + gap, "Is it really you?"), (4.0 + gap, 5.0 + gap, "Yes, it is me.")]
    assert ingested_dialogues(write_srt("gap.srt", cues)) == dialogues
