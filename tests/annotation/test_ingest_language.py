"""The language of each dialogue (pure core, no database). Every line is written for these tests."""

import pytest

from annotation.ingest import FileRun
from annotation.ingest.language import UNKNOWN, identify, language_of, looks_english, texts_language

DIALOGUES = {
    "en": ["Where have you been all night?", "I waited at the station until the last train left."],
    "fr": ["Je t'ai attendu toute la nuit à la gare.", "Je suis désolé, je ne savais pas quoi faire."],
    "de": ["Ich habe die ganze Nacht am Bahnhof gewartet.", "Es tut mir leid, ich wusste nicht, was ich tun soll."],
    "es": ["Te esperé toda la noche en la estación.", "Lo siento, no sabía qué hacer."],
    "nl": ["Ik heb de hele nacht op het station gewacht.", "Het spijt me, ik wist niet wat ik moest doen."],
    "it": ["Ti ho aspettato tutta la notte alla stazione.", "Mi dispiace, non sapevo cosa fare."],
    "cs": ["Čekala jsem na tebe celou noc na nádraží.", "Promiň, nevěděl jsem, co mám dělat."],
    "ru": ["Я ждала тебя всю ночь на вокзале.", "Прости, я не знал, что делать."],
}


@pytest.mark.parametrize("code", sorted(DIALOGUES))
def test_each_dialogue_gets_its_language(code):
    assert texts_language(DIALOGUES[code]) == code


@pytest.mark.parametrize("code", sorted(DIALOGUES))
def test_the_english_shortcut_agrees_with_the_identifier(code):
    text = " ".join(DIALOGUES[code])
    assert looks_english(text) == (code == "en")
    assert identify(text)[0] == code  # what the shortcut stands in for


def test_plain_ascii_that_is_not_english_goes_to_the_identifier():
    # ASCII only, so the byte test does not tell: the function words do.
    assert language_of("Lo siento mucho, no puedo ir contigo a la fiesta esta noche.") == "es"
    assert language_of("Het is te laat, we moeten nu naar huis gaan.") == "nl"


def test_text_too_short_to_tell_is_undetermined():
    assert identify("Ok.") == (UNKNOWN, 0.0)
    assert texts_language(["Hm?", "Yes."]) == UNKNOWN


def test_the_file_run_counts_the_languages_of_its_dialogues(write_srt):
    cues = [(1.0, 2.0, DIALOGUES["en"][0]), (2.5, 4.0, DIALOGUES["en"][1])]
    cues += [(40.0, 41.0, DIALOGUES["de"][0]), (41.5, 43.0, DIALOGUES["de"][1])]
    run = FileRun(write_srt("two.srt", cues))
    assert [d.language for d in run.dialogues()] == ["en", "de"]
    assert run.stats.languages == {"en": 1, "de": 1}
