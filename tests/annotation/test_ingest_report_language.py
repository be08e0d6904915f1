"""What the ingest report says a film is in: the languages of its dialogues, and what the chosen
code page's reading looks like. Each film here is written for this test in English, French,
Spanish or German, as a cp1252 file (the legacy code page of all four) and as UTF-8, long and
short; the report must name the film's own language and no other (an English film with curly
apostrophes and a "café" used to "look like fr": the first of the cp1252 alphabets that all
explain é and ’ equally)."""

import re

import pytest

from annotation.ingest import FileRun
from annotation.ingest.encoding import plausibility
from tests.annotation.conftest import srt_text

FILMS = {
    "en": [
        "I’m not going back to that house, Tom.",
        "You don’t have a choice. It’s the only place we’ve got left.",
        "Then we’ll sleep in the car… I don’t care.",
        "Meet me at the café on the corner at eight, and we’ll talk about it.",
        "Fine. But I’m not promising anything, and you know why.",
        "I know. I’ve always known. That’s what scares me.",
    ],
    "fr": [
        "Je ne retournerai pas dans cette maison, Thomas.",
        "Tu n’as pas le choix. C’est le seul endroit qui nous reste.",
        "Alors on dormira dans la voiture… ça m’est égal.",
        "Retrouve-moi au café du coin à huit heures, on en parlera.",
        "D’accord. Mais je ne promets rien, et tu sais pourquoi.",
        "Je sais. Je l’ai toujours su. C’est ce qui me fait peur.",
    ],
    "es": [
        "No voy a volver a esa casa, Tomás.",
        "No tienes elección. Es el único sitio que nos queda.",
        "Entonces dormiremos en el coche… me da igual.",
        "¿Nos vemos en el café de la esquina a las ocho y lo hablamos?",
        "Vale. Pero no prometo nada, y ya sabes por qué.",
        "Lo sé. Siempre lo he sabido. Eso es lo que me asusta.",
    ],
    "de": [
        "Ich gehe nicht zurück in dieses Haus, Thomas.",
        "Du hast keine Wahl. Es ist der einzige Ort, der uns geblieben ist.",
        "Dann schlafen wir eben im Auto… das ist mir egal.",
        "Triff mich um acht im Café an der Ecke, dann reden wir darüber.",
        "Gut. Aber ich verspreche nichts, und du weißt, warum.",
        "Ich weiß. Ich habe es immer gewusst. Das macht mir Angst.",
    ],
}
SHORT = {
    "en": ["Where’s the café you told me about?", "It’s closed. I’m sorry, they’ve moved away."],
    "fr": ["Où est le café dont tu m’as parlé ?", "Il est fermé. Je suis désolé, ils sont partis."],
    "es": ["¿Dónde está el café del que me hablaste?", "Está cerrado. Lo siento, se han mudado."],
    "de": ["Wo ist das Café, von dem du erzählt hast?", "Es ist geschlossen. Tut mir leid, sie sind weggezogen."],
}


def ingest(write_file, lines: list[str], encoding: str) -> FileRun:
    text = srt_text([(1.0 + 2 * i, 2.5 + 2 * i, line) for i, line in enumerate(lines)])
    run = FileRun(write_file("film.srt", text, encoding=encoding))
    list(run.dialogues())
    return run


def named_language(reason: str) -> str | None:
    found = re.search(r"looks like (\w+)", reason)
    return found.group(1) if found else None


@pytest.mark.parametrize("encoding", ["cp1252", "utf-8"])
@pytest.mark.parametrize("length", ["long", "short"])
@pytest.mark.parametrize("code", sorted(FILMS))
def test_the_report_names_the_films_own_language(write_file, code, length, encoding):
    run = ingest(write_file, (FILMS if length == "long" else SHORT)[code], encoding)
    assert run.stats.encoding == encoding
    assert dict(run.stats.languages) == {code: 1}
    if encoding == "cp1252":  # a short file may be too little to name one; never another
        assert named_language(run.stats.encoding_reason) in ((code,) if length == "long" else (code, None))


def test_an_english_film_with_curly_apostrophes_does_not_look_like_french(write_file):
    reason = ingest(write_file, FILMS["en"], "cp1252").stats.encoding_reason
    assert reason.startswith("cp1252 reading looks like en (")


def test_an_alphabet_is_named_only_when_its_letters_single_it_out():
    shared = plausibility("It’s the café…", ("fr", "de", "es", "it"))
    assert shared == (1.0, "", 3)  # é, ’ and … are in every one of them
    assert plausibility("Grüße aus Köln", ("fr", "de", "es"))[1] == "de"  # ß: German alone
