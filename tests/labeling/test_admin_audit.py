"""The admin changes nothing of the study's record unlogged: every change form and delete action of
every model the admin shows (annotation, labeling, jobs) is walked, each recorded field changed
through it; a change either goes through the page's writer (and leaves an audit entry) or does not
happen (the field is read-only, the change or the deletion is refused with the reason)."""

import json
from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib import admin
from django.db import models
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from annotation.models import AuditEntry, Label, ModelVersion, Movie, SkillContext, SubtitleFile, TurnSkill
from annotation.record import audit
from annotation.record.admin_guard import ADMIN_REASON, NeverDeleted
from jobs.models import JobRun
from labeling.models import Campaign, QuizQuestion, RaterAnswer, Worker
from labeling.services import campaigns
from labeling.services.campaigns import create_campaign
from labeling.services.importers.quiz import import_quiz_file
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues, make_workers

pytestmark = pytest.mark.django_db
APPS = ("annotation", "labeling", "jobs")

# The fields the audit log records, per model: a campaign's every setting (campaign.created records
# them all, campaign.setting_changed each change), a worker's status, what gold labels and answers
# name a label by, a quiz item's question and known answer, what a model version was trained on,
# and the log itself.
LOGGED = {
    Campaign: "every field",
    Worker: "every field",
    AuditEntry: "every field",
    RaterAnswer: "every field",
    Label: ("name", "kind", "position"),
    QuizQuestion: ("text", "dialogue", "task_type", "gold_label", "gold", "choices", "source"),
    ModelVersion: ("kind", "base_model", "label_names", "training_data", "hyperparameters", "metrics"),
}
# the logged fields the admin changes through the page's writer (which records the entry)
THROUGH_WRITERS = {Campaign: campaigns.EDITABLE_SETTINGS}
# what the admin may change freely, each with why it is not the study's record
NOT_RECORDED = {
    Movie: ({"title", "year", "imdb_id", "genres", "language"}, "corpus metadata, not a label or a decision"),
    SubtitleFile: (
        {
            "movie",
            "name",
            "format",
            "sha256",
            "sentence_count",
            "turn_count",
            "dialogue_count",
            "duplicates_dropped",
            "removed_by_rule",
            "cue_gaps",
            "encoding",
            "encoding_reason",
            "language_counts",
        },
        "ingestion's own figures about a file",
    ),
    Label: ({"description", "example_1", "example_2", "is_active"}, "what annotators read; whether it is offered"),
    ModelVersion: ({"name", "suggests_since", "artifact_dir"}, "a display name; HIT builds record the model used"),
    QuizQuestion: ({"explanation", "is_active"}, "the feedback text; whether the item is used from now on"),
    TurnSkill: (
        {"turn", "source", "model_version", "skill", "distribution", "passed_mic", "provenance"},
        "skill labels (BotsTalk), no kind of the audit log",
    ),
    SkillContext: ({"dialogue", "kind", "position", "text"}, "generation context, no kind of the audit log"),
    JobRun: (
        {
            "kind",
            "parameters",
            "status",
            "attempts",
            "heartbeat_at",
            "progress_done",
            "progress_total",
            "message",
            "result",
            "error",
            "created_by",
            "parent",
            "started_at",
            "finished_at",
        },
        "the job queue's bookkeeping",
    ),
}
# the models whose rows the admin may delete, each with why no record goes with them
DELETABLE = {
    QuizQuestion: "an unused item (one a HIT holds is protected by its foreign key)",
    TurnSkill: "a skill label, no kind of the audit log",
    SkillContext: "generation context, no kind of the audit log",
    JobRun: "the job queue's bookkeeping",
}


@pytest.fixture
def superuser(django_user_model):
    return django_user_model.objects.create_superuser("admin", "admin@example.org", "pw-admin")


@pytest.fixture
def rows(superuser):
    """One row of every model the admin shows, the campaign with answers and gold."""
    with audit.acting_as(audit.person(superuser)):
        campaign = create_campaign("Walked", reward=Decimal("0.50"), time_limit_minutes=60)
    dialogues = make_dialogues(2)
    workers = make_workers(3)
    make_answered_hit(campaign, workers, {dialogues[0]: ["Sad", "Sad", "Angry"], dialogues[1]: ["Angry"] * 3})
    turn = dialogues[0].turns.order_by("-position").first()
    movie = dialogues[0].movie or Movie.objects.create(title="Walked film")
    version = ModelVersion.objects.create(kind=ModelVersion.DIALOGUE, name="v1", base_model="minilm")
    made = {
        Campaign: campaign,
        Worker: workers[0],
        Label: Label.objects.get(name="Sad"),
        QuizQuestion: QuizQuestion.objects.create(
            text="t", dialogue=dialogues[1], gold_label=Label.objects.get(name="Angry"), source="imported"
        ),
        ModelVersion: version,
        Movie: movie,
        SubtitleFile: SubtitleFile.objects.create(movie=movie, name="a.srt", format="srt", sha256="0" * 64),
        TurnSkill: TurnSkill.objects.create(turn=turn, source=TurnSkill.CLASSIFIER, model_version=version, skill="s"),
        SkillContext: SkillContext.objects.create(dialogue=dialogues[0], kind="persona", position=0, text="x"),
        AuditEntry: audit.record(audit.WORKER_BLOCKED, superuser, workers[1], "active", "blocked", "spam"),
        RaterAnswer: RaterAnswer.objects.create(campaign=campaign, rater="endpoint:m", turn=turn, status="ok"),
        JobRun: JobRun.objects.create(kind="labeling.model_rater", parameters={"campaign_id": campaign.pk}),
    }
    return made


def _shown() -> dict:
    return {model: model_admin for model, model_admin in admin.site._registry.items() if model._meta.app_label in APPS}


def test_every_model_the_admin_shows_is_walked_here(rows):
    assert set(_shown()) == set(rows)


def test_every_field_the_admin_lets_change_is_a_writers_or_not_the_record(rows, rf, superuser):
    """A field added to a model and left editable in the admin fails here until it is classified."""
    for model, model_admin in _shown().items():
        editable = _editable(model_admin, rows[model], rf, superuser)
        through = set(THROUGH_WRITERS.get(model, ()))
        free = NOT_RECORDED.get(model, (set(), ""))[0]
        assert editable <= through | free, (
            f"{model.__name__}: unclassified editable {sorted(editable - through - free)}"
        )
        logged = _logged(model)
        assert not (editable & logged) - through, f"{model.__name__}: logged and editable {editable & logged}"


def test_changing_each_logged_field_in_the_admin_is_recorded_or_refused(rows, client, superuser):
    client.force_login(superuser)
    for model, model_admin in _shown().items():
        obj = rows[model]
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_change", args=[obj.pk])
        assert client.get(url).status_code == 200, url  # every change page opens (read-only ones too)
        editable = _editable(model_admin, obj, None, superuser)
        for name in sorted(_logged(model)):
            field = model._meta.get_field(name)
            before_value = _stored(model, obj.pk, field)
            entries_before = AuditEntry.objects.count()
            data = _post_data(model.objects.get(pk=obj.pk), editable) | _another(field, obj)
            response = client.post(url, data)
            assert response.status_code in (302, 403), f"{model.__name__}.{name}: {response.status_code}"
            after_value = _stored(model, obj.pk, field)
            if name in THROUGH_WRITERS.get(model, ()):
                assert after_value != before_value, f"{model.__name__}.{name} was not changed"
                [entry] = AuditEntry.objects.order_by("-pk")[: AuditEntry.objects.count() - entries_before]
                assert (entry.kind, entry.actor, entry.reason) == (audit.CAMPAIGN_SETTING, "admin", ADMIN_REASON)
                assert list(entry.new) == [name]
            else:
                assert after_value == before_value, f"{model.__name__}.{name} changed in the admin"
                assert AuditEntry.objects.count() == entries_before


def test_a_campaigns_time_limit_and_status_cannot_change_in_the_admin(rows, client, superuser):
    campaign = rows[Campaign]
    client.force_login(superuser)
    url = reverse("admin:labeling_campaign_change", args=[campaign.pk])
    data = {"name": "Renamed", "description": "", "adjudicate_posterior_below": "", "time_limit_minutes": "5"}
    data["status"] = Campaign.CLOSED
    assert client.post(url, data).status_code == 302
    campaign.refresh_from_db()
    assert (campaign.name, campaign.time_limit_minutes, campaign.status) == ("Renamed", 60, Campaign.DRAFT)
    [entry] = AuditEntry.objects.filter(kind=audit.CAMPAIGN_SETTING, campaign_id=campaign.pk)
    assert (entry.old, entry.new, entry.actor) == ({"name": "Walked"}, {"name": "Renamed"}, "admin")


def test_each_delete_action_is_refused_with_why_or_touches_no_record(rows, client, superuser):
    client.force_login(superuser)
    for model, model_admin in _shown().items():
        obj, label = rows[model], f"{model._meta.app_label}_{model._meta.model_name}"
        delete = reverse(f"admin:{label}_delete", args=[obj.pk])
        entries_before = AuditEntry.objects.count()
        if model in DELETABLE:
            assert client.post(delete, {"post": "yes"}).status_code == 302
            assert not model.objects.filter(pk=obj.pk).exists(), model.__name__
            continue
        response = client.post(delete, {"post": "yes"}, follow=True)
        assert model.objects.filter(pk=obj.pk).exists(), f"{model.__name__} deleted in the admin"
        if isinstance(model_admin, NeverDeleted):  # refused with the reason, back on the row
            assert response.redirect_chain[-1][0].endswith(f"/{obj.pk}/change/"), model.__name__
            assert escape(model_admin.deletion_refused) in response.content.decode(), model.__name__
        else:
            assert response.status_code == 403, model.__name__
        # the bulk action is not offered: posting it deletes nothing
        changelist = reverse(f"admin:{label}_changelist")
        client.post(changelist, {"action": "delete_selected", "_selected_action": [obj.pk], "post": "yes"})
        assert model.objects.filter(pk=obj.pk).exists(), f"{model.__name__} deleted by the bulk action"
        assert AuditEntry.objects.count() == entries_before


def test_deleting_a_campaign_in_the_admin_says_to_close_it_on_its_page(rows, client, superuser):
    client.force_login(superuser)
    campaign = rows[Campaign]
    response = client.get(reverse("admin:labeling_campaign_delete", args=[campaign.pk]), follow=True)
    page = response.content.decode()
    assert "A campaign is never deleted" in page and "Close it on its campaign page" in page
    assert Campaign.objects.filter(pk=campaign.pk).exists()


def test_a_quiz_items_answer_imported_again_differently_is_recorded(tmp_path):
    dialogue = make_dialogues(1)[0]
    pool = tmp_path / "pool.csv"
    pool.write_text(f"dialogue,label\n{dialogue.pk},Sad\n")
    import_quiz_file(pool)
    import_quiz_file(pool)  # the same answer again: nothing changed, nothing recorded
    assert not AuditEntry.objects.filter(kind=audit.QUIZ_GOLD_CHANGED).exists()
    pool.write_text(f"dialogue,label\n{dialogue.pk},Angry\n")
    [question] = import_quiz_file(pool)
    [entry] = AuditEntry.objects.filter(kind=audit.QUIZ_GOLD_CHANGED)
    assert (entry.target_id, entry.old, entry.new) == (str(question.pk), {"label": "Sad"}, {"label": "Angry"})


# --- helpers ---------------------------------------------------------------------------------------


def _logged(model) -> set[str]:
    names = LOGGED.get(model, ())
    if names == "every field":
        return {f.name for f in model._meta.get_fields() if (f.concrete or f.many_to_many) and not f.auto_created}
    return set(names)


def _editable(model_admin, obj, rf, user) -> set[str]:
    from django.test import RequestFactory

    request = (rf or RequestFactory()).get("/")
    request.user = user
    if not model_admin.has_change_permission(request, obj):
        return set()
    form = model_admin.get_form(request, obj, change=True)
    return set(form.base_fields) - set(model_admin.get_readonly_fields(request, obj))


def _stored(model, pk, field):
    if field.many_to_many:
        return sorted(model.objects.get(pk=pk).__getattribute__(field.name).values_list("pk", flat=True))
    return getattr(model.objects.get(pk=pk), field.attname)


def _post_data(obj, names: set[str]) -> dict:
    """The change form's POST for `names`, holding their current values."""
    data: dict = {}
    for name in names:
        field = obj._meta.get_field(name)
        data |= _form_value(field, obj, getattr(obj, field.attname) if not field.many_to_many else None)
    return data


def _form_value(field, obj, value) -> dict:
    name = field.name
    if field.many_to_many:
        return {name: [str(pk) for pk in getattr(obj, name).values_list("pk", flat=True)]}
    if isinstance(field, models.BooleanField):
        return {name: "on"} if value else {}
    if isinstance(field, models.DateTimeField):
        return {f"{name}_0": value.date().isoformat(), f"{name}_1": value.time().isoformat()} if value else {}
    if isinstance(field, models.JSONField):
        return {name: json.dumps(value)}
    return {name: "" if value is None else str(value)}


def _another(field, obj) -> dict:
    """A different value for `field`, as the change form would post it."""
    current = getattr(obj, field.attname) if not field.many_to_many else None
    if field.many_to_many:
        return {field.name: [str(pk) for pk in Label.objects.values_list("pk", flat=True)[:2]]}
    if field.choices:
        return {field.name: next(str(v) for v, _ in field.choices if v != current)}
    if isinstance(field, models.ForeignKey):
        other = field.related_model.objects.exclude(pk=current).values_list("pk", flat=True).first()
        return {field.name: "" if other is None else str(other)}
    if isinstance(field, models.BooleanField):
        return {} if current else {field.name: "on"}
    if isinstance(field, models.DateTimeField):
        moved = (current or timezone.now()) - timedelta(days=3)
        return {f"{field.name}_0": moved.date().isoformat(), f"{field.name}_1": moved.time().isoformat()}
    if isinstance(field, models.JSONField) and field.name == "study_flow":  # a flow its writer accepts
        return {field.name: json.dumps({"instructions": "Read every dialogue to its end."})}
    if isinstance(field, models.JSONField):
        return {field.name: json.dumps({"changed": True})}
    if isinstance(field, models.FloatField):
        return {field.name: "0.5" if current != 0.5 else "0.25"}
    if isinstance(field, models.IntegerField | models.DecimalField):
        return {field.name: str((current or 0) + 1)}
    return {field.name: f"{current or ''}changed"}
