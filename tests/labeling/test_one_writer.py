"""One writer per state change: campaigns, HITs, campaign status, answer states, label lookups,
Worker rows (labeling.services.workers); and view modules that neither lock nor write rows themselves.

The source-tree checks fail as soon as a second writer (or a second spelling of a state) appears
outside the module that owns it; the behaviour tests pin what the one writer does.
"""

import re
from datetime import timedelta
from unittest import mock

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.models import Label, ModelVersion, Prediction
from labeling import platforms
from labeling.actions import SubmissionRefused
from labeling.actions.answer import save_response
from labeling.actions.claim import claim_next_hit
from labeling.models import HIT, Assignment, Campaign, HITItem, Response, Worker
from labeling.platforms import PlatformError, publish_campaign
from labeling.platforms.local import LocalPlatform
from labeling.services.campaigns import CampaignRefused, create_campaign, set_campaign_status
from labeling.services.workers import worker_for_user
from labeling.task_types.last_turn_label.label_set import DEFAULT_FALLBACK_CHOICES
from labeling.work.hits import build_hits, write_hits
from labeling.work.label_sets import campaign_labels
from tests.conftest import REPO_ROOT
from tests.labeling.hit_factory import make_dialogues

# the HITs here take their quiz screens from the built-in one-turn quiz bank
pytestmark = pytest.mark.usefixtures("quiz_demo_bank")

SOURCE_DIRS = ("annotation", "labeling", "mlworkers", "jobs", "config", "bench", "demo")

# pattern -> the only files allowed to hold it
SINGLE_WRITERS = {
    r"Campaign\.objects\.(create|bulk_create|get_or_create|update_or_create)\(": {"labeling/services/campaigns.py"},
    r"\bCampaign\(": {"labeling/models/campaign.py"},
    r"\bHIT\.objects\.(create|bulk_create|get_or_create|update_or_create)\(": {"labeling/work/hits.py"},
    r"\bHITItem\.objects\.(create|bulk_create|get_or_create|update_or_create)\(": {"labeling/work/hits.py"},
    r"\.update\(\s*status=Campaign\.": {"labeling/services/campaigns.py"},
    r"Assignment\.SUBMITTED,\s*Assignment\.APPROVED": {"labeling/models/work.py"},
    r"name__iexact": set(),
    r"Publication\.objects\.(create|bulk_create|get_or_create|update_or_create)\(": {
        "labeling/platforms/publications.py"
    },
    r"PlatformSubmission\.objects\.(create|bulk_create|get_or_create|update_or_create)\(": {
        "labeling/platforms/sync.py"
    },
    # the ledger's payment stamps and idempotency keys: labeling.services.payments only
    r"\.update\(\s*(paid_at|pay_started_at|request_token|platform_reference)=": {"labeling/services/payments.py"},
    r"\.update\(\s*platform_confirmed_at=": {"labeling/actions/submit.py"},
    # a HIT's free-seat count: moved by labeling.work.seats (and add_seat, with required_workers)
    r"\.update\(\s*seats_free=": {"labeling/work/seats.py"},
    # a participant's way through a study flow: steps, consent, practice, survey (issue 45)
    r"(StudyStep|ConsentDecision|PracticeAnswer|SurveyResponse)\.objects\.\w*\(?.*?(create|update|delete)\(": {
        "labeling/study_flow/progress.py"
    },
    # a campaign's stored figures: written by the refresh job's work only (stale while revalidate)
    r"CampaignFigures\.objects\.(create|bulk_create|get_or_create|update_or_create|update|delete)\(": {
        "labeling/reports/cache.py"
    },
}

# Worker rows: created, merged and blocked by labeling.services.workers only (the patterns are checked
# against planted examples below, so a second writer cannot slip past in another spelling)
WORKER_BY_MANAGER = (  # any write through the manager, after any chain of calls (filter, select_for_update ...)
    r"\bWorker\.objects(?:\s*\.\s*\w+\((?:[^()]|\([^()]*\))*\))*\s*\.\s*"
    r"(?:create|bulk_create|get_or_create|update_or_create|update|bulk_update|delete)\("
)
WORKER_INSTANCE_SAVED = r"(?i)\b\w*worker\w*\.(?:save|delete)\("
WORKER_WRITERS = {
    WORKER_BY_MANAGER: {"labeling/services/workers.py"},
    WORKER_INSTANCE_SAVED: {"labeling/services/workers.py"},
    # a new row built by hand (Worker(pk=...) only names a row, as a compiled query's placeholder)
    r"\bWorker\((?!models\.Model\)|pk=)": {"labeling/services/workers.py"},
    # a worker blocked, merged or given an account on the instance
    r"(?i)\b\w*worker\w*\.(?:status|user|user_id|landing_key)\s*=(?!=)": {"labeling/services/workers.py"},
    r"\.merged_into(?:_id)?\s*=(?!=)": {"labeling/services/workers.py"},
    r"\.status\s*=\s*Worker\.": {"labeling/services/workers.py"},
}
SINGLE_WRITERS.update(WORKER_WRITERS)

# Views call services and render: no row lock and no row write is spelled in a module of the pages
# or of the API.
# (labeling/pages/annotator.py's autosave still takes a lock through hot_reads.own_assignment(lock=True),
# a call this check does not see: the annotator fast path's module owns that read.)
VIEW_MODULES = tuple(
    path.relative_to(REPO_ROOT).as_posix()
    for group in ("pages", "api")
    for path in sorted((REPO_ROOT / "labeling" / group).glob("*.py"))
)
ROW_LOCK = r"select_for_update\("
ROW_WRITE = (
    r"\.objects(?:\s*\.\s*\w+\((?:[^()]|\([^()]*\))*\))*\s*\.\s*"
    r"(?:create|bulk_create|get_or_create|update_or_create|update|bulk_update|delete)\(|\.save\("
)


def _source_files():
    for top in SOURCE_DIRS:
        for path in sorted((REPO_ROOT / top).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path.relative_to(REPO_ROOT).as_posix(), path.read_text(encoding="utf-8")


@pytest.mark.parametrize("pattern", sorted(SINGLE_WRITERS))
def test_each_state_change_has_one_writer(pattern):
    allowed = SINGLE_WRITERS[pattern]
    offenders = [
        f"{name}:{text.count(chr(10), 0, match.start()) + 1}"
        for name, text in _source_files()
        for match in re.finditer(pattern, text)
        if name not in allowed
    ]
    assert offenders == [], f"{pattern!r} outside {sorted(allowed) or 'anywhere'}: {offenders}"


def test_the_source_check_sees_the_writers_it_allows():
    """The check above would pass vacuously if it read no files: the owners must hold the patterns."""
    texts = dict(_source_files())
    assert "HITItem.objects.bulk_create(" in texts["labeling/work/hits.py"]
    assert "Campaign.objects.create(" in texts["labeling/services/campaigns.py"]
    for pattern in (WORKER_BY_MANAGER, WORKER_INSTANCE_SAVED):
        assert re.search(pattern, texts["labeling/services/workers.py"]), pattern


WORKER_WRITES_PLANTED = [
    'Worker.objects.create(external_id="x")',
    "Worker.objects.bulk_create([one, two])",
    "Worker.objects.select_for_update().get_or_create(\n    platform=platform,\n    external_id=external_id,\n)",
    "(\n    Worker.objects.filter(pk=worker.pk)\n    .update(status=Worker.BLOCKED)\n)",
    "Worker.objects.filter(pk=identity.pk, merged_into__isnull=True).update(merged_into=proven)",
    "Worker.objects.filter(external_id__in=ids).delete()",
    'Worker(external_id="x", platform=Worker.MTURK).save()',
    'worker.save(update_fields=["user"])',
    "locked_worker.status = Worker.BLOCKED",
    "assignment.worker.merged_into = proven",
    "identity.merged_into_id = proven.pk",
    "someone.status = Worker.ACTIVE",
    "worker.user = account",
    "Worker.objects.update_or_create(user=user)",
]
WORKER_READS_PLANTED = [
    "Worker.objects.filter(platform=p, status=Worker.BLOCKED).exists()",
    "Worker.objects.select_for_update().get(pk=worker.pk)",
    "Worker.objects.filter(pk__in=ids).values_list('pk', 'external_id')",
    "Worker.objects.in_bulk(list(per_worker))",
    "query = open_hits_for(Worker(pk=self.WORKER), None, now=self.NOW)",
    "class Worker(models.Model):",
    "if worker.status == Worker.BLOCKED:",
    ".exclude(worker__status=Worker.BLOCKED)",
]


@pytest.mark.parametrize("text", WORKER_WRITES_PLANTED)
def test_the_worker_patterns_catch_every_spelling_of_a_worker_write(text):
    assert any(re.search(pattern, text) for pattern in WORKER_WRITERS), text


@pytest.mark.parametrize("text", WORKER_READS_PLANTED)
def test_the_worker_patterns_leave_reads_and_locks_alone(text):
    assert not any(re.search(pattern, text) for pattern in WORKER_WRITERS), text


@pytest.mark.parametrize("module", VIEW_MODULES)
def test_views_lock_and_write_no_rows_themselves(module):
    text = dict(_source_files())[module]
    spelled = [
        f"{module}:{text.count(chr(10), 0, match.start()) + 1}: {match.group(0)}"
        for pattern in (ROW_LOCK, ROW_WRITE)
        for match in re.finditer(pattern, text)
    ]
    assert spelled == [], "a view calls a service to lock or write rows"


def test_the_view_check_reads_every_page_and_api_module():
    assert {"labeling/pages/annotator.py", "labeling/pages/researcher.py", "labeling/api/views.py"} <= set(VIEW_MODULES)


def test_the_view_check_sees_writes_and_locks():
    planted = "with transaction.atomic():\n    Campaign.objects.select_for_update().get(pk=pk)\n"
    assert re.search(ROW_LOCK, planted)
    for write in WORKER_WRITES_PLANTED[:6] + ["campaign.save()", "Assignment.objects.filter(pk=1).update(x=2)"]:
        assert re.search(ROW_WRITE, write), write
    assert not re.search(ROW_WRITE, "Assignment.objects.filter(pk=1).values_list('pk').first()")


# --- Label.objects: one case rule ---------------------------------------------------------------


@pytest.mark.django_db
def test_by_name_ignores_case_and_runs_of_spaces_and_nothing_else():
    sad = Label.objects.get(name="Sad")
    assert Label.objects.by_name("  sAD ") == sad
    assert Label.objects.by_name("Sa d") is None
    assert Label.objects.by_name("Sadness") is None
    assert Label.objects.by_name("   ") is None
    two_words = Label.objects.create(name="Quietly Proud", kind=Label.PROPOSED)
    assert Label.objects.by_name("quietly \t  PROUD") == two_words
    assert Label.objects.offered().by_name("Quietly Proud") is None  # proposed: not offered


@pytest.mark.django_db
def test_by_name_folds_non_ascii_names_the_same_way_on_every_database():
    angst = Label.objects.create(name="Ångst", kind=Label.PROPOSED)
    assert Label.objects.by_name("ÅNGST") == angst
    assert Label.objects.by_name("ångst") == angst


@pytest.mark.django_db
def test_named_narrows_a_filter_and_by_names_keeps_the_names_as_given():
    assert list(Label.objects.named("NEUTRAL").values_list("name", flat=True)) == ["Neutral"]
    found = Label.objects.by_names(["neutral", "Sad", "Nope"])
    assert {name: label.name for name, label in found.items()} == {"neutral": "Neutral", "Sad": "Sad"}


# --- Assignment.objects: the answer states ------------------------------------------------------


@pytest.mark.django_db
def test_done_is_submitted_or_approved_and_a_seat_is_done_or_live():
    campaign = create_campaign("States")
    (hit,) = write_hits(campaign, [[HITItem(quiz_question=None, choices=["Sad", "Neutral", "Angry"])]])
    now = timezone.now()
    by_status = {}
    for status in (Assignment.ACCEPTED, Assignment.SUBMITTED, Assignment.APPROVED, Assignment.REJECTED):
        worker = Worker.objects.create(external_id=f"w-{status}")
        by_status[status] = Assignment.objects.create(
            hit=hit, worker=worker, status=status, expires_at=now + timedelta(hours=1)
        )
    stale = Assignment.objects.create(
        hit=hit, worker=Worker.objects.create(external_id="stale"), expires_at=now - timedelta(seconds=1)
    )
    assert set(Assignment.objects.done()) == {by_status[Assignment.SUBMITTED], by_status[Assignment.APPROVED]}
    assert set(Assignment.objects.live()) == {by_status[Assignment.ACCEPTED]}
    assert stale not in Assignment.objects.holding_a_seat()
    assert Assignment.objects.holding_a_seat().count() == 3
    assert by_status[Assignment.APPROVED].is_done and not by_status[Assignment.REJECTED].is_done


# --- create_campaign ----------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_new_campaign_is_a_draft_with_the_offered_labels_and_the_default_fallback():
    Label.objects.create(name="Crowd idea", kind=Label.PROPOSED)
    Label.objects.filter(name="Wishing").update(is_active=False)
    campaign = create_campaign("Round 1")
    names = set(campaign.labels.values_list("name", flat=True))
    assert campaign.status == Campaign.DRAFT
    assert names == set(Label.objects.offered().values_list("name", flat=True))
    assert "Crowd idea" not in names and "Wishing" not in names and len(names) == 40
    assert campaign.fallback_choices == list(DEFAULT_FALLBACK_CHOICES)


@pytest.mark.django_db
def test_a_fallback_outside_the_label_set_is_refused_and_nothing_is_saved():
    labels = list(Label.objects.filter(name__in=["Sad", "Angry", "Joyful", "Neutral"]))
    with pytest.raises(CampaignRefused) as refused:
        create_campaign("Narrow", labels=labels, fallback_choices=["Sad", "Angry", "Questioning"])
    assert refused.value.field == "fallback_choices" and "Questioning" in refused.value.message
    with pytest.raises(CampaignRefused) as refused:
        create_campaign("Open already", status=Campaign.OPEN)
    assert refused.value.field == "status"
    assert not Campaign.objects.exists()
    narrow = create_campaign("Narrow", labels=labels, fallback_choices=["sad", "ANGRY", "joyful"])
    assert narrow.fallback_choices == ["Sad", "Angry", "Joyful"]  # the taxonomy's spelling


@pytest.mark.django_db
def test_without_the_default_fallback_in_the_set_the_sets_first_three_are_used():
    labels = list(Label.objects.filter(name__in=["Sad", "Angry", "Joyful", "Lonely"]))
    campaign = create_campaign("Emotions", labels=labels)
    expected = [lb.name for lb in sorted(labels, key=lambda lb: (lb.position, lb.name))[:3]]
    assert campaign.fallback_choices == expected


# --- the campaign's label set is read -----------------------------------------------------------


@pytest.mark.django_db
def test_build_hits_offers_only_suggestions_from_the_campaigns_label_set():
    labels = list(Label.objects.filter(name__in=["Sad", "Devastated", "Neutral", "Joyful", "Angry"]))
    campaign = create_campaign("Set", labels=labels, fallback_choices=["Neutral", "Joyful", "Angry"], quiz_per_hit=0)
    dialogue = make_dialogues(1)[0]
    last = dialogue.turns.order_by("-position").first()
    weak = ModelVersion.objects.create(kind=ModelVersion.WEAK, name="weak", base_model="x")
    top = [["Sad", 0.7], ["Lonely", 0.2], ["Devastated", 0.1]]  # Lonely is not in the set
    Prediction.objects.create(turn=last, model_version=weak, label=labels[0], confidence=0.7, top_k=top)
    build_hits(campaign, [dialogue], seed=0)
    assert HITItem.objects.get(dialogue=dialogue).choices == ["Sad", "Devastated", "Neutral"]


@pytest.mark.django_db
def test_an_answer_outside_the_campaigns_label_set_is_refused_or_kept_as_text(django_user_model):
    labels = list(Label.objects.filter(name__in=["Sad", "Angry", "Joyful", "Neutral"]))
    campaign = create_campaign("Set", labels=labels, fallback_choices=["Sad", "Angry", "Joyful"], quiz_per_hit=0)
    build_hits(campaign, make_dialogues(1), seed=0)
    set_campaign_status(campaign, Campaign.OPEN)
    assignment = claim_next_hit(worker_for_user(django_user_model.objects.create(username="a1")), campaign)
    item = assignment.hit.items.get()
    assert save_response(assignment, item, label_name="neutral", method=Response.OTHER_LIST).label.name == "Neutral"
    with pytest.raises(SubmissionRefused, match="in this campaign"):
        save_response(assignment, item, label_name="Lonely", method=Response.OTHER_LIST)
    typed = save_response(assignment, item, new_label_text="lonely", method=Response.OTHER_NEW)
    assert (typed.label, typed.new_label_text, typed.method) == (None, "lonely", Response.OTHER_NEW)
    assert set(campaign_labels(campaign)) == set(labels)


@pytest.mark.django_db
def test_a_campaign_with_no_label_set_recorded_offers_the_default_set():
    legacy = Campaign.objects.create(name="Older row")  # as rows made before create_campaign were
    assert set(campaign_labels(legacy)) == set(Label.objects.offered())
    assert set(campaign_labels(legacy.pk)) == set(Label.objects.offered())


# --- write_hits ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_write_hits_numbers_after_the_last_hit_and_places_the_screens():
    campaign = create_campaign("Writer", workers_per_hit=3, tie_break_workers=2)
    dialogues = make_dialogues(3)
    turns = [d.turns.order_by("-position").first() for d in dialogues]
    screens = [
        [HITItem(dialogue=d, target_turn=t, choices=["Sad", "Angry", "Joyful"])]
        for d, t in zip(dialogues, turns, strict=True)
    ]
    first = write_hits(campaign, screens[:2])
    more = write_hits(campaign, [screens[2]], kind=HIT.TIE_BREAK, required_workers=2)
    assert [h.position for h in first + more] == [1, 2, 3]
    assert [(h.kind, h.required_workers) for h in first + more] == [
        (HIT.REGULAR, 3), (HIT.REGULAR, 3), (HIT.TIE_BREAK, 2)
    ]  # fmt: skip
    assert list(HITItem.objects.filter(hit=more[0]).values_list("position", "dialogue_id")) == [(1, dialogues[2].pk)]


@pytest.mark.django_db
def test_write_hits_refuses_an_empty_hit_and_writes_nothing():
    campaign = create_campaign("Writer")
    screen = HITItem(choices=["Sad", "Angry", "Joyful"])
    with pytest.raises(ValueError, match="screens: HIT 2 of 2 has no screens"):
        write_hits(campaign, [[screen], []])
    with pytest.raises(ValueError, match="kind"):
        write_hits(campaign, [[screen]], kind="bonus")
    assert not HIT.objects.exists() and not HITItem.objects.exists()


# --- publishing opens through set_campaign_status -----------------------------------------------


@pytest.mark.django_db
def test_publishing_opens_the_campaign_through_set_campaign_status():
    campaign = create_campaign("To publish")
    build_hits(campaign, make_dialogues(2), seed=1)
    with mock.patch.object(platforms, "set_campaign_status", wraps=set_campaign_status) as opener:
        assert publish_campaign(campaign, LocalPlatform(), "http://localhost") == 1
    opener.assert_called_once_with(campaign, Campaign.OPEN)
    assert Campaign.objects.get(pk=campaign.pk).status == Campaign.OPEN


@pytest.mark.django_db
def test_a_closed_campaign_is_not_published():
    campaign = create_campaign("Closed")
    build_hits(campaign, make_dialogues(2), seed=1)
    set_campaign_status(campaign, Campaign.CLOSED)
    with pytest.raises(PlatformError, match="closed"):
        publish_campaign(campaign, LocalPlatform(), "http://localhost")
    assert not HIT.objects.exclude(external_id="").exists()
    assert Campaign.objects.get(pk=campaign.pk).status == Campaign.CLOSED


@pytest.mark.django_db
def test_the_admin_shows_workers_and_blocks_them_through_the_one_writer(admin_client):
    worker = Worker.objects.create(platform=Worker.SITE, external_id="admin-blocked")  # test setup
    changelist = reverse("admin:labeling_worker_changelist")
    assert admin_client.get(changelist).status_code == 200
    assert admin_client.post(reverse("admin:labeling_worker_add"), {"external_id": "x"}).status_code == 403
    edit = admin_client.post(reverse("admin:labeling_worker_change", args=[worker.pk]), {"status": "active"})
    assert edit.status_code == 403
    admin_client.post(changelist, {"action": "block_workers", "_selected_action": [worker.pk]})
    worker.refresh_from_db()
    assert worker.status == Worker.BLOCKED
    admin_client.post(changelist, {"action": "unblock_workers", "_selected_action": [worker.pk]})
    worker.refresh_from_db()
    assert worker.status == Worker.ACTIVE
