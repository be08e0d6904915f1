"""The commands the getting-started page uses to run a first campaign from the shell: add_accounts,
draft_quiz, record_payments --approve-submitted --mark-paid, simulate_crowd without --truth."""

import csv
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from annotation.models import Label, ModelVersion, Prediction
from labeling.models import Assignment, PaymentEntry, Worker
from tests.labeling.crowd_factories import make_answered_hit
from tests.labeling.hit_factory import make_dialogues, open_campaign

pytestmark = pytest.mark.django_db


def run(*arguments) -> str:
    out = StringIO()
    call_command(*arguments, stdout=out)
    return out.getvalue()


# --- add_accounts -----------------------------------------------------------------------------------


def test_add_accounts_makes_annotators_with_a_worker_and_a_printed_password(client):
    output = run("add_accounts", "alice", "bob")
    password = output.split("annotator alice  password: ")[1].split()[0]
    alice = get_user_model().objects.get(username="alice")
    assert not alice.is_staff and Worker.objects.filter(user=alice, platform=Worker.SITE).exists()
    assert alice.check_password(password)
    client.force_login(alice)
    assert client.get("/labeling/").status_code == 200


def test_add_accounts_makes_a_researcher_a_staff_account_without_a_worker():
    run("add_accounts", "--researcher", "ada")
    ada = get_user_model().objects.get(username="ada")
    assert ada.is_staff and not Worker.objects.filter(user=ada).exists()


def test_add_accounts_refuses_a_taken_name_and_creates_none_of_the_others():
    run("add_accounts", "alice")
    with pytest.raises(CommandError, match="already taken: alice"):
        run("add_accounts", "carol", "alice")
    assert not get_user_model().objects.filter(username="carol").exists()


def test_add_accounts_refuses_a_bad_name_naming_it():
    with pytest.raises(CommandError, match="NAME 'no spaces please'"):
        run("add_accounts", "no spaces please")
    assert not get_user_model().objects.exists()


# --- draft_quiz -------------------------------------------------------------------------------------


def _weak_labels(dialogues, confidence: float) -> None:
    weak = ModelVersion.objects.create(kind=ModelVersion.WEAK, name="weak", base_model="x")
    labels = list(Label.objects.filter(name__in=["Sad", "Joyful", "Angry"]))
    for index, dialogue in enumerate(dialogues):
        last = dialogue.turns.order_by("-position").first()
        label = labels[index % len(labels)]
        Prediction.objects.create(
            turn=last, model_version=weak, label=label, confidence=confidence, top_k=[[label.name, confidence]]
        )


def test_draft_quiz_writes_confident_dialogues_that_import_quiz_accepts(tmp_path):
    dialogues = make_dialogues(6)
    _weak_labels(dialogues, 0.95)
    out = tmp_path / "quiz.csv"
    assert "4 dialogue(s) drafted" in run("draft_quiz", "--out", str(out), "--count", "4")
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 4 and {row["label"] for row in rows} == {"Sad", "Joyful", "Angry"}
    first = next(d for d in dialogues if d.pk == int(rows[0]["dialogue"]))
    assert rows[0]["text"].endswith(first.turns.order_by("-position").first().text)
    assert "4 quiz dialogue(s) in the pool" in run("import_quiz", str(out))


def test_draft_quiz_says_what_is_missing():
    with pytest.raises(CommandError, match="no suggestion model yet"):
        run("draft_quiz", "--out", "unused.csv")
    _weak_labels(make_dialogues(2), 0.4)
    with pytest.raises(CommandError, match="--min-confidence 0.9"):
        run("draft_quiz", "--out", "unused.csv")


# --- record_payments --approve-submitted --mark-paid ------------------------------------------------


def test_record_payments_approves_records_and_marks_paid_in_one_command():
    campaign = open_campaign(reward="0.50", bonus="0", currency="USD")
    workers = [Worker.objects.create(platform=Worker.SITE, external_id=f"w{i}") for i in range(3)]
    make_answered_hit(campaign, workers, {make_dialogues(1)[0]: ["Sad", "Sad", "Angry"]})
    assert Assignment.objects.filter(status=Assignment.SUBMITTED).count() == 3
    output = run("record_payments", str(campaign.pk))
    assert "0 new entries for 0 approved" in output  # without the flag nothing is approved
    output = run("record_payments", str(campaign.pk), "--approve-submitted", "--mark-paid")
    assert "3 submitted assignments approved" in output and "$0.50" in output
    assert PaymentEntry.objects.filter(paid_at__isnull=False).count() == 3
