"""The audit log: every writer of a recorded kind leaves an entry (who, when, old, new, reason),
through its page where it has one; the log itself can be neither changed nor removed."""

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib import admin
from django.test import RequestFactory
from django.urls import reverse
from django.utils import timezone

from annotation.models import AuditEntry, Label
from annotation.record import audit
from annotation.record.audit_log import AppendOnly
from config.web.pages import CONFIRM_FIELD, CONFIRM_VALUE
from labeling.models import Assignment, Campaign, Publication, Worker
from labeling.platforms import base
from labeling.platforms.sync import sync_publication
from labeling.services import payments
from labeling.services.campaigns import create_campaign
from labeling.work.hits import record_suggestion_model
from tests.conftest import REPO_ROOT
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues, make_workers

pytestmark = pytest.mark.django_db
CONFIRMED = {CONFIRM_FIELD: CONFIRM_VALUE}


@pytest.fixture
def campaign(researcher):
    with audit.acting_as(audit.person(researcher)):
        made = create_campaign("Audited", reward=Decimal("0.50"), bonus=Decimal("0.10"), quiz_pass_mark=0)
    workers = make_workers(3)
    d = make_dialogues(2)
    make_answered_hit(made, workers, {d[0]: ["Angry", "Angry", "Sad"], d[1]: ["Sad", "Homesick", "Bored"]})
    return made


def entries(kind: str, **where):
    return list(AuditEntry.objects.filter(kind=kind, **where))


def test_creating_a_campaign_records_its_settings(campaign, researcher):
    [created] = entries("campaign.created", campaign_id=campaign.pk)
    assert created.actor == "researcher" and created.actor_user_id == researcher.pk
    assert created.new["name"] == "Audited" and created.new["reward"] == "0.50"
    assert "entry_token" not in created.new


def test_a_setting_changed_on_the_settings_page_is_recorded_with_its_reason(client, researcher, campaign):
    client.force_login(researcher)
    url = reverse("labeling:campaign_settings", args=[campaign.pk])
    posted = {"name": "Audited", "description": "", "adjudicate_posterior_below": "0.7", "reason": "too many slips"}
    assert client.post(url, posted).status_code == 302
    [changed] = entries("campaign.setting_changed", campaign_id=campaign.pk)
    assert changed.old == {"adjudicate_posterior_below": None} and changed.new == {"adjudicate_posterior_below": 0.7}
    assert (changed.actor, changed.reason) == ("researcher", "too many slips")
    bad = client.post(url, {**posted, "adjudicate_posterior_below": "1.5"})
    assert bad.status_code == 400 and "adjudicate_posterior_below" in bad.content.decode()
    assert len(entries("campaign.setting_changed")) == 1


def test_a_setting_changed_through_the_api_is_recorded(client, researcher, campaign):
    client.force_login(researcher)
    url = reverse("api-campaign-settings", args=[campaign.pk])
    answered = client.patch(url, {"name": "Renamed", "reason": "typo"}, content_type="application/json")
    assert answered.status_code == 200 and answered.json()["changed"] == ["name"]
    [changed] = entries("campaign.setting_changed")
    assert changed.old == {"name": "Audited"} and changed.new == {"name": "Renamed"} and changed.reason == "typo"
    log = client.get(reverse("api-campaign-audit", args=[campaign.pk])).json()
    assert {"campaign.created", "campaign.setting_changed"} <= {row["kind"] for row in log}


def test_status_and_entry_token_changes_are_recorded_and_the_token_never(client, researcher, campaign):
    client.force_login(researcher)
    client.post(reverse("labeling:campaign_status", args=[campaign.pk]), {"status": "open"})
    client.post(reverse("labeling:campaign_rotate_token", args=[campaign.pk]), CONFIRMED)
    changes = {tuple(entry.new): entry for entry in entries("campaign.setting_changed")}
    assert changes[("status",)].old == {"status": "draft"} and changes[("status",)].new == {"status": "open"}
    token = Campaign.objects.get(pk=campaign.pk).entry_token
    assert changes[("entry_token",)].actor == "researcher"
    assert token not in str(changes[("entry_token",)].old) + str(changes[("entry_token",)].new)


def test_the_suggestion_model_a_build_records_is_logged(campaign):
    from annotation.models import ModelVersion

    version = ModelVersion.objects.create(name="weak-1", kind=ModelVersion.WEAK)
    record_suggestion_model(campaign, version)
    [changed] = entries("campaign.setting_changed")
    assert changed.new == {"suggestion_model": version.pk} and changed.actor == "system"


def test_blocking_and_unblocking_on_the_page_and_the_api_are_recorded(client, researcher, campaign):
    worker = Worker.objects.get(external_id="w1")
    client.force_login(researcher)
    client.post(reverse("labeling:worker_block", args=[worker.pk]), {"reason": "answers in two seconds"})
    unblock = {"blocked": False, "reason": "a second look: honest work"}
    client.post(reverse("api-worker-status", args=[worker.pk]), unblock, content_type="application/json")
    [blocked] = entries("worker.blocked", worker_id=worker.pk)
    [unblocked] = entries("worker.unblocked", worker_id=worker.pk)
    assert (blocked.old, blocked.new, blocked.reason, blocked.actor) == (
        "active",
        "blocked",
        "answers in two seconds",
        "researcher",
    )
    assert (unblocked.actor, unblocked.reason) == ("researcher", "a second look: honest work")
    page = client.get(reverse("labeling:worker_audit_log", args=[worker.pk])).content.decode()
    assert "answers in two seconds" in page and "worker.unblocked" in page


def test_approving_on_the_page_and_paying_are_recorded_per_assignment(client, researcher, campaign):
    client.force_login(researcher)
    client.post(reverse("labeling:campaign_approve_submitted", args=[campaign.pk]), CONFIRMED)
    approved = entries("assignment.approved", campaign_id=campaign.pk)
    assert len(approved) == 3 and {e.actor for e in approved} == {"researcher"}
    assert {(e.old, e.new) for e in approved} == {("submitted", "approved")}
    assert {e.worker_id for e in approved} == set(Worker.objects.values_list("pk", flat=True))
    client.post(reverse("labeling:campaign_record_payments", args=[campaign.pk]), CONFIRMED)
    assert payments.mark_paid(campaign) == 6
    paid = entries("payment.paid", campaign_id=campaign.pk)
    assert len(paid) == 6 and {e.new["amount"] for e in paid} == {"0.50", "0.10"}
    assert payments.mark_paid(campaign) == 0 and len(entries("payment.paid")) == 6  # nothing twice


def test_rejecting_one_assignment_is_recorded(researcher, campaign):
    assignment = Assignment.objects.filter(hit__campaign=campaign).first()
    with audit.acting_as(audit.person(researcher)):
        payments.reject_assignment(assignment)
    [rejected] = entries("assignment.rejected")
    assert (rejected.old, rejected.new, rejected.actor) == ("submitted", "rejected", "researcher")
    with pytest.raises(payments.ReviewRefused):
        payments.approve_assignment(assignment)
    assert not entries("assignment.approved")


def test_platform_sync_approves_and_pays_as_the_sync_job(researcher, campaign):
    workers = make_workers(1, platform=Worker.PROLIFIC)
    d = make_dialogues(1, prefix="p")
    hit = make_answered_hit(campaign, workers, {d[0]: ["Angry"]})
    assignment = hit.assignments.get()
    Assignment.objects.filter(pk=assignment.pk).update(platform_assignment_id="session-1")
    publication = Publication.objects.create(
        campaign=campaign, platform="prolific", external_id="study", status=Publication.ACTIVE, places=3
    )

    class ApprovedOnThePlatform:
        name = "prolific"

        def fetch_results(self, publication):
            return [base.ExternalResult("session-1", workers[0].external_id, base.APPROVED, platform_status="APPROVED")]

        def pay_bonuses(self, publication, entries):
            return 0

    with audit.acting_as(audit.person(researcher)):  # "Sync now" on the campaign page
        sync_publication(publication, ApprovedOnThePlatform())
    [approved] = entries("assignment.approved", worker_id=workers[0].pk)
    assert (approved.actor, approved.actor_kind, approved.on_behalf_of) == ("platform-sync", "system", "researcher")
    [paid] = entries("payment.paid", worker_id=workers[0].pk)
    assert paid.actor == "platform-sync" and paid.reason == "paid by the platform with its approval"


def test_aggregation_records_each_gold_label_as_the_aggregation_job(client, researcher, campaign, run_jobs_at_once):
    client.force_login(researcher)
    client.post(reverse("labeling:campaign_aggregate", args=[campaign.pk]))
    gold = entries("gold.changed", campaign_id=campaign.pk, target_type="aggregatedlabel")
    assert len(gold) == 2 and {e.actor for e in gold} == {"aggregation"}
    assert {e.on_behalf_of for e in gold} == {"researcher"}
    assert {e.new["label"] for e in gold} == {"Angry", None}
    assert entries("gold.changed", target_type="turnlabel")[0].new["label"] == "Angry"
    # a rejection takes the majority away: the next aggregation records the change
    rejected = Assignment.objects.filter(hit__campaign=campaign, worker__external_id="w1").get()
    payments.reject_assignment(rejected)
    client.post(reverse("labeling:campaign_aggregate", args=[campaign.pk]))
    [changed] = [e for e in entries("gold.changed", target_type="aggregatedlabel") if e.old is not None]
    assert changed.old == {"label": "Angry", "status": "majority"} and changed.new["status"] == "unresolved"
    [removed] = entries("gold.removed", target_type="turnlabel")
    assert removed.old["label"] == "Angry"


def test_accepting_and_refusing_proposals_on_the_page_are_recorded(client, researcher, campaign):
    client.force_login(researcher)
    client.post(reverse("labeling:label_accept"), {"text": "Homesick", **CONFIRMED})
    [accepted] = entries("proposal.accepted")
    assert accepted.new == {"label": "Homesick"} and accepted.actor == "researcher"
    assert Label.objects.by_name("Homesick") is not None
    refuse = reverse("labeling:label_refuse")
    assert client.post(refuse, {"text": "Bored", "reason": ""}).status_code == 400
    client.post(refuse, {"text": "Bored", "reason": "a mood, not an emotion of the set"})
    [refused] = entries("proposal.refused")
    assert refused.old == {"proposal": "Bored"} and refused.reason == "a mood, not an emotion of the set"
    report = client.get(reverse("labeling:campaign_report", args=[campaign.pk])).content.decode()
    assert "Bored" not in report.split('Answers through "Other"')[1].split("Payments due")[0]


def test_import_dataset_records_the_gold_it_writes(tmp_path):
    from annotation.export.importer import import_gold
    from annotation.export.reader import ImportedDialogue, ImportedTurn, content_hash_of

    turns = [ImportedTurn(2, 0, "You came back.", "Surprised", 1.0, "train", {})]
    imported = ImportedDialogue("k1", 2, content_hash_of(["You came back."]), turns=turns)
    import_gold([imported], "gold.csv")
    [entry] = entries("gold.changed", target_type="turnlabel")
    assert entry.actor == "import-dataset" and entry.new == {"label": "Surprised"}


# --- append-only --------------------------------------------------------------------------------


def test_entries_are_never_updated_or_deleted(researcher):
    entry = audit.record(audit.WORKER_BLOCKED, researcher, ("worker", 1), "active", "blocked", "spam")
    entry.reason = "rewritten"
    with pytest.raises(AppendOnly):
        entry.save()
    with pytest.raises(AppendOnly):
        entry.delete()
    with pytest.raises(AppendOnly):
        AuditEntry.objects.filter(pk=entry.pk).update(reason="rewritten")
    with pytest.raises(AppendOnly):
        AuditEntry.objects.all().delete()
    with pytest.raises(AppendOnly):
        AuditEntry.objects.bulk_update([entry], ["reason"])
    assert AuditEntry.objects.get(pk=entry.pk).reason == "spam"


def test_the_admin_shows_the_log_but_changes_nothing(researcher):
    model_admin = admin.site._registry[AuditEntry]
    request = RequestFactory().get("/")
    request.user = researcher
    assert not model_admin.has_add_permission(request)
    assert not model_admin.has_change_permission(request)
    assert not model_admin.has_delete_permission(request)


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="unknown audit kind"):
        audit.record("gold.rewritten", None, ("turn", 1))


# --- no writer without its entry ----------------------------------------------------------------

SOURCE_DIRS = ("annotation", "labeling", "mlworkers", "jobs", "config", "bench", "demo")
# a write of a logged field -> the modules allowed to hold it (each records an entry beside it)
LOGGED_WRITES = {
    r"\.update\(\s*paid_at=": {"labeling/services/payments.py"},
    r"status=Assignment\.(APPROVED|REJECTED)\)": {"labeling/services/payments.py"},
    r"Worker\.objects\.filter\([^)]*\)\.update\(\s*status=": {"labeling/services/workers.py"},
    r"\.update\(\s*entry_token=": {
        "labeling/services/entry_tokens.py",
        "labeling/migrations/0004_entry_token_and_platform_confirmation.py",
    },
    r"\.update\(\s*suggestion_model=": {"labeling/work/hits.py"},
    r"\.update\(\s*status=Campaign\.|\.update\(status=status\)": {
        "labeling/services/campaigns.py",
        "labeling/services/workers.py",
    },
    r"AggregatedLabel\.objects\.(bulk_create|bulk_update|update_or_create|create)\(": {
        "labeling/task_types/last_turn_label/aggregation.py",
        # the scale bench's fixture: a campaign's aggregated labels in bulk, for its downloads (the
        # product's aggregation would take minutes at 1M answers); no one changed a label there
        "bench/report_scale.py",
    },
    r"status=AggregatedLabel\.ADJUDICATED,": {"labeling/services/adjudication.py"},
    r"TurnLabel\.objects\.(create|bulk_create|bulk_update|update_or_create)\(": {
        "labeling/task_types/last_turn_label/aggregation.py",
        "labeling/services/adjudication.py",
        "annotation/export/importer.py",
        "mlworkers/expansion/sbert.py",  # sbert and self labels: not gold
    },
    r"Label\.objects\.create\(\s*name=": {"labeling/reports/campaign.py"},
    # a quiz item's known answer changed in place (creating new items in bulk is not a change)
    r"QuizQuestion\.objects\.(update_or_create|bulk_update)\(|\.update\(\s*gold_label=": {
        "labeling/services/importers/quiz.py",
        "labeling/migrations/0003_seed_quiz_questions.py",  # the built-in demo bank, seeded
    },
}


def _sources():
    for directory in SOURCE_DIRS:
        for path in sorted((REPO_ROOT / directory).rglob("*.py")):
            yield path.relative_to(REPO_ROOT).as_posix(), path.read_text(encoding="utf-8")


@pytest.mark.parametrize("pattern", sorted(LOGGED_WRITES))
def test_logged_fields_are_written_only_beside_an_audit_entry(pattern):
    allowed = LOGGED_WRITES[pattern]
    offenders = [
        f"{name}:{text[: match.start()].count(chr(10)) + 1}"
        for name, text in _sources()
        for match in re.finditer(pattern, text)
        if name not in allowed
    ]
    assert offenders == [], f"{pattern!r} outside {sorted(allowed)}: {offenders}"


def test_each_allowed_writer_module_records_an_entry():
    modules = {name for allowed in LOGGED_WRITES.values() for name in allowed}
    modules -= {"mlworkers/expansion/sbert.py", "labeling/migrations/0004_entry_token_and_platform_confirmation.py"}
    modules -= {"labeling/migrations/0003_seed_quiz_questions.py"}
    modules -= {"bench/report_scale.py"}  # a benchmark's fixture in its own database (see LOGGED_WRITES)
    for name in sorted(modules):
        text = (REPO_ROOT / name).read_text(encoding="utf-8")
        assert re.search(
            r"audit(_trail)?\.(record|entry|record_many|paying|watching_assignment|assignments_moved|setting_changed|campaign_created)|gold_trail\.",
            text,
        ), name


def test_the_scan_sees_a_planted_writer():
    planted = "PaymentEntry.objects.filter(pk=1).update(paid_at=now)\nqs.update(status=Assignment.APPROVED)\n"
    assert re.search(r"\.update\(\s*paid_at=", planted)
    assert re.search(r"status=Assignment\.(APPROVED|REJECTED)\)", planted)


def test_an_old_entry_stays_readable_after_its_rows_are_gone(researcher, campaign):
    """No foreign keys: deleting a campaign neither cascades into the log nor rewrites it."""
    campaign_id = campaign.pk
    Campaign.objects.filter(pk=campaign_id).delete()
    assert entries("campaign.created", campaign_id=campaign_id)
    assert timezone.now() - entries("campaign.created")[0].at < timedelta(minutes=5)


def test_the_api_with_basic_authentication_names_its_user(client, researcher, campaign):
    """DRF authenticates inside the view, after the middleware ran: the entry still names the user."""
    import base64

    worker = Worker.objects.get(external_id="w2")
    credentials = base64.b64encode(b"researcher:pw-researcher").decode()
    answered = client.post(
        reverse("api-worker-status", args=[worker.pk]),
        {"blocked": True, "reason": "copied answers"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Basic {credentials}",
    )
    assert answered.status_code == 200
    [blocked] = entries("worker.blocked", worker_id=worker.pk)
    assert (blocked.actor, blocked.actor_user_id, blocked.reason) == ("researcher", researcher.pk, "copied answers")
