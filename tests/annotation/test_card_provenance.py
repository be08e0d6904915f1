"""The dataset card says what happened to each campaign's labels and nothing else: the quiz and
reviewers only where there were any, an import as an import with its source's licence."""

from annotation.export.card import dataset_license, how_it_was_made

HERE = {"name": "Ours", "imported": False, "quiz_answers": 0, "adjudicated": 0, "items": 10, "workers": 4}
IMPORT = {
    "name": "EDOS import",
    "imported": True,
    "source_format": "edos-mturk",
    "license": "cc-by-4.0",
    "license_name": "CC BY 4.0",
    "adjudicated": 0,
    "items": 10245,
    "workers": 3,
    "answers": 30735,
}


def test_a_campaign_without_quiz_or_reviewer_claims_neither():
    text = " ".join(how_it_was_made([HERE]))
    assert "with no quiz" in text and "no item was settled by a reviewer" in text
    assert "hidden quiz" not in text and "audit log keeps" not in text
    text = " ".join(how_it_was_made([{**HERE, "quiz_answers": 12, "adjudicated": 2}]))
    assert "hidden quiz questions of known answer (12 quiz answers)" in text and "2 items without one" in text


def test_an_import_is_described_as_one():
    text = " ".join(how_it_was_made([IMPORT]))
    assert "imported from a crowd-results file (format `edos-mturk`, licence CC BY 4.0)" in text
    assert "No HITs, quiz, payments or suggestions ran here" in text and "3 answer columns" in text
    assert "cut from movie subtitles" not in text and "no reviewer adjudication" in text
    both = how_it_was_made([HERE, IMPORT])
    assert any("Crowd campaigns run here (Ours)" in p for p in both) and any("EDOS import" in p for p in both)


def test_the_licence_is_the_sources_only_while_none_is_configured_and_all_agree():
    assert dataset_license("other", [IMPORT]) == "cc-by-4.0"
    assert dataset_license("cc-by-nc-4.0", [IMPORT]) == "cc-by-nc-4.0"  # the project's choice stands
    assert dataset_license("other", [IMPORT, HERE]) == "other"  # our own labels: the project decides
    assert dataset_license("other", [IMPORT, {**IMPORT, "license": "mit"}]) == "other"
    assert dataset_license("other", []) == "other"
