"""The adjudication queue: a reviewer settles what the crowd left unsettled, or sends it back."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.models import AuditEntry, TurnLabel
from labeling.models import HIT, AggregatedLabel, Assignment, HITItem, Worker
from labeling.services import adjudication
from labeling.services.campaigns import create_campaign
from labeling.task_types.last_turn_label.aggregation import aggregate_campaign
from tests.labeling.crowd_factories import answer, make_answered_hit, make_dialogues, make_workers

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def reviewer(django_user_model):
    user = django_user_model.objects.create_user("reviewer", password="pw-reviewer")
    call_command("grant_reviewer", "reviewer", stdout=StringIO())
    return user


@pytest.fixture
def disputed():
    """One item with a majority (Angry 2 of 3) and one without (Sad, Lonely, Joyful)."""
    campaign = create_campaign("Disputed")
    workers = make_workers(3)
    d = make_dialogues(2)
    make_answered_hit(campaign, workers, {d[0]: ["Angry", "Angry", "Furious"], d[1]: ["Sad", "Lonely", "Joyful"]})
    aggregate_campaign(campaign)
    unresolved = AggregatedLabel.objects.get(campaign=campaign, dialogue=d[1])
    return campaign, unresolved, d


def test_a_reviewer_settles_an_unresolved_item_and_the_log_shows_it_with_the_reason(
    client, reviewer, researcher, disputed
):
    campaign, row, _ = disputed
    client.force_login(reviewer)
    queue = client.get(reverse("labeling:adjudication_queue", args=[campaign.pk]))
    assert queue.status_code == 200 and row.turn.text in queue.content.decode()

    item = client.get(reverse("labeling:adjudication_item", args=[campaign.pk, row.pk]), **HTMX)
    page = item.content.decode()
    assert item.status_code == 200 and 'id="adjudication-item"' in page and "<html" not in page
    assert "Lonely" in page and "Joyful" in page and "Dawid-Skene accuracy" in page
    assert "Angry, Sad, Joyful" in page  # the suggestions the screen offered

    reason = "The reply mourns the old house: sadness, not loneliness."
    settle = reverse("labeling:adjudication_settle", args=[campaign.pk, row.pk])
    answered = client.post(settle, {"label": "Sad", "reason": reason}, **HTMX)
    assert answered.status_code == 200 and "Settled as Sad" in answered.content.decode()

    row.refresh_from_db()
    assert row.status == AggregatedLabel.ADJUDICATED and row.label.name == "Sad"
    assert row.adjudicated_by == reviewer and row.adjudication_reason == reason and row.adjudicated_at
    gold = TurnLabel.objects.get(turn=row.turn, source=TurnLabel.CROWD)
    assert gold.label.name == "Sad" and gold.provenance["adjudicated"]["by"] == "reviewer"
    entry = AuditEntry.objects.get(kind="adjudication.settled", turn_id=row.turn_id)
    assert (entry.actor, entry.actor_kind, entry.reason) == ("reviewer", "user", reason)
    assert entry.old == {"label": None, "status": "unresolved"} and entry.new["label"] == "Sad"
    assert entry.campaign_id == campaign.pk

    client.force_login(researcher)
    log = client.get(reverse("labeling:campaign_audit_log", args=[campaign.pk])).content.decode()
    assert "adjudication.settled" in log and "sadness, not loneliness" in log
    assert row not in adjudication.queue(campaign)


def test_aggregating_again_keeps_the_reviewers_label(reviewer, disputed):
    campaign, row, d = disputed
    adjudication.settle(row, "Sad", reviewer, "read the whole dialogue")
    # a fourth answer arrives for the item, then the campaign is aggregated again
    extra = Worker.objects.create(platform=Worker.SITE, external_id="w4")
    item = HITItem.objects.get(hit__campaign=campaign, dialogue=d[1])
    assignment = Assignment.objects.create(
        hit=item.hit, worker=extra, status=Assignment.SUBMITTED, expires_at=row.updated_at
    )
    answer(assignment, item, "Lonely")
    aggregate_campaign(campaign)
    row.refresh_from_db()
    assert row.status == AggregatedLabel.ADJUDICATED and row.label_text == "Sad"
    assert row.answer_count == 4 and row.votes["Lonely"] == 2  # the counts beside it move on
    gold = TurnLabel.objects.get(turn=row.turn, source=TurnLabel.CROWD)
    assert gold.label.name == "Sad" and gold.provenance["adjudicated"]["reason"] == "read the whole dialogue"
    assert not AuditEntry.objects.filter(kind="gold.changed", turn_id=row.turn_id, actor="aggregation").exclude(
        old=None
    )


@pytest.mark.parametrize(
    ("posted", "field"),
    [({"label": "Sad", "reason": "  "}, "reason"), ({"label": "Not a label", "reason": "why"}, "label")],
)
def test_a_decision_without_a_reason_or_with_a_foreign_label_is_refused(client, reviewer, disputed, posted, field):
    campaign, row, _ = disputed
    client.force_login(reviewer)
    answered = client.post(reverse("labeling:adjudication_settle", args=[campaign.pk, row.pk]), posted, **HTMX)
    assert answered.status_code == 400 and f"{field}:" in answered.content.decode()
    row.refresh_from_db()
    assert row.status == AggregatedLabel.UNRESOLVED
    assert not AuditEntry.objects.filter(kind="adjudication.settled").exists()


def test_a_second_decision_on_a_settled_item_is_refused(reviewer, researcher, disputed):
    _, row, _ = disputed
    adjudication.settle(row, "Sad", reviewer, "first")
    with pytest.raises(adjudication.AdjudicationRefused, match="already settled by reviewer"):
        adjudication.settle(row, "Joyful", researcher, "second")


def test_sending_back_opens_a_follow_up_seat_and_the_item_returns_with_new_answers(client, reviewer, disputed):
    campaign, row, d = disputed
    client.force_login(reviewer)
    url = reverse("labeling:adjudication_send_back", args=[campaign.pk, row.pk])
    assert client.post(url, {"reason": ""}, **HTMX).status_code == 400
    answered = client.post(url, {"reason": "three different answers; one more reading"}, **HTMX)
    assert answered.status_code == 200 and "1 follow-up HIT opened" in answered.content.decode()
    follow_up = HIT.objects.get(campaign=campaign, kind=HIT.FOLLOW_UP)
    assert follow_up.required_workers == 1
    assert follow_up.items.filter(target_turn=row.turn).exists()
    assert row not in adjudication.queue(campaign)
    entry = AuditEntry.objects.get(kind="adjudication.sent_back")
    assert entry.new["follow_up_hits"] == [follow_up.pk] and entry.actor == "reviewer"

    # a fourth worker answers in the follow-up HIT
    fourth = Worker.objects.create(platform=Worker.SITE, external_id="w4")
    assignment = Assignment.objects.create(
        hit=follow_up, worker=fourth, status=Assignment.SUBMITTED, expires_at=row.updated_at
    )
    answer(assignment, follow_up.items.get(target_turn=row.turn), "Sad")
    aggregate_campaign(campaign)
    row.refresh_from_db()
    assert row.sent_back_at is None and row.answer_count == 4


def test_the_posterior_threshold_comes_from_the_setting_unless_the_campaign_sets_one(settings, disputed):
    campaign, unresolved, d = disputed
    majority = AggregatedLabel.objects.get(campaign=campaign, dialogue=d[0])
    settings.ADJUDICATE_POSTERIOR_BELOW = 1.0
    assert set(adjudication.queue(campaign)) == {unresolved, majority}
    campaign.adjudicate_posterior_below = 0.0
    assert list(adjudication.queue(campaign)) == [unresolved]


ROLES = ["researcher", "reviewer", "annotator", "outsider", "anonymous"]
# who may: the queue and decisions for reviewers and researchers; the campaign's log and
# settings for researchers only
EXPECTED = {
    "queue": {"researcher": 200, "reviewer": 200, "annotator": 403, "outsider": 403, "anonymous": 302},
    "item": {"researcher": 200, "reviewer": 200, "annotator": 403, "outsider": 403, "anonymous": 302},
    "turn_log": {"researcher": 200, "reviewer": 200, "annotator": 403, "outsider": 403, "anonymous": 302},
    "campaign_log": {"researcher": 200, "reviewer": 403, "annotator": 403, "outsider": 403, "anonymous": 302},
    "settings": {"researcher": 200, "reviewer": 403, "annotator": 403, "outsider": 403, "anonymous": 302},
}


def _urls(campaign, row) -> dict[str, str]:
    return {
        "queue": reverse("labeling:adjudication_queue", args=[campaign.pk]),
        "item": reverse("labeling:adjudication_item", args=[campaign.pk, row.pk]),
        "turn_log": reverse("labeling:turn_audit_log", args=[row.turn_id]),
        "campaign_log": reverse("labeling:campaign_audit_log", args=[campaign.pk]),
        "settings": reverse("labeling:campaign_settings", args=[campaign.pk]),
    }


@pytest.mark.parametrize("role", ROLES)
def test_every_role_gets_what_it_may_see(client, role, researcher, reviewer, annotators, outsider, disputed):
    campaign, row, _ = disputed
    users = {"researcher": researcher, "reviewer": reviewer, "annotator": annotators[0], "outsider": outsider}
    if role in users:
        client.force_login(users[role])
    for page, url in _urls(campaign, row).items():
        assert client.get(url).status_code == EXPECTED[page][role], (page, role)


@pytest.mark.parametrize("role", ROLES)
def test_only_reviewers_and_researchers_decide(client, role, researcher, reviewer, annotators, outsider, disputed):
    campaign, row, _ = disputed
    users = {"researcher": researcher, "reviewer": reviewer, "annotator": annotators[0], "outsider": outsider}
    if role in users:
        client.force_login(users[role])
    settle = reverse("labeling:adjudication_settle", args=[campaign.pk, row.pk])
    answered = client.post(settle, {"label": "Sad", "reason": "a reason"})
    allowed = role in ("researcher", "reviewer")
    assert answered.status_code == (302 if allowed or role == "anonymous" else 403)
    row.refresh_from_db()
    assert (row.status == AggregatedLabel.ADJUDICATED) == allowed
    if allowed:
        assert AuditEntry.objects.get(kind="adjudication.settled").actor == users[role].username


def test_revoking_the_reviewer_role_closes_the_queue(client, reviewer, disputed):
    campaign, _, _ = disputed
    call_command("grant_reviewer", "reviewer", "--revoke", stdout=StringIO())
    client.force_login(reviewer)
    assert client.get(reverse("labeling:adjudication_queue", args=[campaign.pk])).status_code == 403


def test_worker_figures_follow_the_answers_and_are_recomputed_when_they_change(disputed):
    campaign, row, d = disputed
    figures = adjudication.worker_figures(campaign)
    workers = {w.external_id: w.pk for w in Worker.objects.all()}
    assert set(figures) == set(workers.values())
    assert all(quiz is None for quiz, _ in figures.values())  # no quiz items in these HITs
    # w1 and w2 agree on the majority item; w3 alone answered Furious
    assert figures[workers["w1"]][1] > figures[workers["w3"]][1]
    assert adjudication.worker_figures(campaign) == figures  # the cached figures
    rejected = Assignment.objects.get(hit__campaign=campaign, worker__external_id="w1")
    Assignment.objects.filter(pk=rejected.pk).update(status=Assignment.REJECTED)
    assert workers["w1"] not in adjudication.worker_figures(campaign)  # no longer counted: recomputed
