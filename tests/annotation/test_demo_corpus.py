"""The generated demo corpus: deterministic, every label, one sentence per turn, and the variety the
pipeline steps need (paraphrases, two-label lines, other languages, subtitle noise)."""

import json
import re

import numpy as np
import pytest

from annotation.demo_corpus import scenes
from annotation.demo_corpus.generator import TRUTH_FILE, generate, normalised, write_corpus
from annotation.taxonomy import LABEL_NAMES

SMALL = 300


def every_line():
    yield from scenes.GENERIC_OPENERS
    for openers, finals in scenes.SCENES.values():
        yield from openers
        yield from finals
    yield from (line for _, _, line in scenes.AMBIGUOUS)


def test_the_same_seed_gives_the_same_bytes_and_another_seed_other_bytes():
    first, again, other = generate(SMALL, 7), generate(SMALL, 7), generate(SMALL, 8)
    assert first.files == again.files and first.truth == again.truth
    assert first.files != other.files


def test_it_covers_every_label_even_at_the_smallest_size():
    assert set(scenes.SCENES) == set(LABEL_NAMES)
    for size in (len(LABEL_NAMES), SMALL):
        assert {d.label for d in generate(size).dialogues if d.label} == set(LABEL_NAMES)
    with pytest.raises(ValueError, match="at least 41"):
        generate(40)


def test_every_written_line_is_one_short_sentence_so_it_is_one_turn():
    for line in every_line():
        assert not re.search(r"[.!?](?=\s)", line), line
        assert (
            len(line.format(name="Rafael", place="the hospital", thing="the photograph", when="after the storm")) <= 90
        )


def test_it_has_paraphrases_two_label_lines_other_languages_and_noise():
    corpus = generate()
    languages = {d.language for d in corpus.dialogues}
    assert {"en", "fr", "es", "de"} <= languages
    assert len(corpus.paraphrase_pairs()) > 300
    assert sum(1 for d in corpus.dialogues if d.alt) > 100
    srt = b"".join(content for name, content in corpus.files.items() if name.endswith(".srt")).decode()
    for noise in ("<i>", "<font", "♪", "[door slams]", "(sighs)", "TOM:", "Subtitles by"):
        assert noise in srt, noise
    assert any(name.endswith(".xml") for name in corpus.files)
    assert any(b"\r\n" in content for content in corpus.files.values())


def test_dialogues_are_more_than_five_seconds_apart_and_turns_less():
    corpus = generate(SMALL)
    name = next(n for n in corpus.files if n.endswith(".xml"))  # no noise cues: one cue per turn
    times = re.findall(r'value="(\d\d):(\d\d):(\d\d),(\d\d\d)"', corpus.files[name].decode())
    seconds = [int(h) * 3600 + int(m) * 60 + int(s) + int(ms) / 1000 for h, m, s, ms in times]
    gaps = [start - end for end, start in zip(seconds[1::2], seconds[2::2], strict=False)]
    records = [r for r in corpus.truth if r["file"] == name]
    within = sum(len(r["turns"]) - 1 for r in records)
    assert sorted(gaps)[:within] and max(sorted(gaps)[:within]) < 5
    assert min(sorted(gaps)[within:]) > 5 and len(gaps) - within == len(records) - 1


def test_write_corpus_writes_only_what_changed(tmp_path):
    corpus = generate(SMALL)
    assert len(write_corpus(corpus, tmp_path)) == len(corpus.files) + 1
    assert write_corpus(corpus, tmp_path) == []
    records = [json.loads(line) for line in (tmp_path / TRUTH_FILE).read_text().splitlines()]
    assert len(records) == SMALL and {"label", "alt", "last_turn", "file"} <= set(records[0])


@pytest.mark.django_db
def test_ingesting_it_reports_languages_cleaning_and_duplicates(tmp_path):
    from annotation.ingestion import IngestOptions, ingest_paths
    from annotation.models import Dialogue

    corpus = generate(SMALL)
    write_corpus(corpus, tmp_path)
    report = ingest_paths([tmp_path], IngestOptions()).as_json()
    assert report["failed_files"] == 0
    removed = report["removed_by_rule"]
    assert {"markup", "sound_cue", "speaker_name", "advert"} <= {k for k, v in removed.items() if v}
    assert {language for language, _ in Dialogue.objects.language_counts()} >= {"en", "fr", "es", "de"}
    # the last turn of every English dialogue is one the truth file knows
    truth = {normalised(r["last_turn"]) for r in corpus.truth}
    english = Dialogue.objects.filter(language="en").prefetch_related("turns")
    assert all(normalised(list(d.turns.all())[-1].text) in truth for d in english)
    assert english.count() > SMALL * 0.7


@pytest.mark.slow
def test_paraphrases_are_neighbours_for_the_sbert_expansion():
    """With the real encoder and the expansion's own dialogue vector, paraphrase pairs reach the
    0.92 threshold; dialogues of different labels mostly do not."""
    from mlworkers.ml import loading
    from mlworkers.ml.expansion.embeddings import dialogue_embedding

    corpus = generate(SMALL)
    pairs = corpus.paraphrase_pairs()[:60]
    encoder = loading.load_sentence_transformer("minilm", device="cpu")

    def vector(dialogue):
        turns = encoder.encode(list(dialogue.turns), convert_to_numpy=True)
        v = dialogue_embedding(turns)
        return v / np.linalg.norm(v)

    similarities = [float(vector(a) @ vector(b)) for a, b in pairs]
    assert np.mean(np.array(similarities) >= 0.92) > 0.9
    english = [d for d in corpus.dialogues if d.language == "en" and d.paraphrase_of is None]
    strangers = [(a, b) for a, b in zip(english[:40], english[40:80], strict=True) if a.label != b.label]
    assert np.mean([float(vector(a) @ vector(b)) >= 0.92 for a, b in strangers]) < 0.1
