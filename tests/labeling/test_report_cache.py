"""The cached campaign report (labeling.report_cache) gives the figures the live computation gives
(labeling.reports.campaign_report), on random campaigns and after every kind of change: a new
answer, an aggregation, a block, an unblock, a platform's confirmation, an approval. The fingerprint
leaves the answers out because an answer is written only to a live assignment, whose answers the
report does not count: the last test holds the answer action to that."""

import re
from itertools import count

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from labeling import task_types, workers
from labeling.actions import SubmissionRefused
from labeling.actions.answer import save_response
from labeling.actions.submit import confirm_platform_submission
from labeling.models import Assignment, Campaign, Response, Worker
from labeling.policy import answers_bought
from labeling.report_cache import CSRF_PLACEHOLDER, cached_campaign_report, cached_figures, report_fingerprint
from labeling.reports import campaign_report
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("quiz_demo_bank")]

LABELS = ["Angry", "Sad", "Joyful", "Furious", "Proud", "Forgetful", ""]  # "" leaves an item unanswered
CHANGES = ("answer", "aggregate", "block", "unblock", "confirm", "approve")
_serial = count()


def _workers(platform: str, n: int) -> list[Worker]:
    prefix = next(_serial)
    return [Worker.objects.create(platform=platform, external_id=f"c{prefix}-{i}") for i in range(n)]


def _add_hit(campaign: Campaign, draw_answers: list[list[str]], platform: str) -> None:
    people = _workers(platform, len(draw_answers[0]))
    dialogues = make_dialogues(len(draw_answers), prefix=f"rc{next(_serial)}")
    make_answered_hit(
        campaign,
        people,
        dict(zip(dialogues, draw_answers, strict=True)),
        quiz_answers=[["Sad"] * len(people)],
    )


def _apply(change: str, campaign: Campaign, rng_index: int, answers: list[list[str]]) -> None:
    if change == "answer":
        _add_hit(campaign, answers, Worker.SITE)
        return
    assignments = list(Assignment.objects.filter(hit__campaign=campaign).select_related("worker").order_by("pk"))
    assignment = assignments[rng_index % len(assignments)]
    if change == "aggregate":
        task_types.of(campaign).aggregate(campaign)
    elif change in ("block", "unblock"):
        workers.set_blocked(assignment.worker, change == "block", reason="test")
    elif change == "confirm":
        pending = Assignment.objects.filter(hit__campaign=campaign).pending_confirmation().order_by("pk").first()
        if pending is not None:
            confirm_platform_submission(pending)
    elif change == "approve":
        Assignment.objects.filter(pk=assignment.pk, status=Assignment.SUBMITTED).update(status=Assignment.APPROVED)


def _same_figures(campaign: Campaign) -> None:
    fresh = Campaign.objects.get(pk=campaign.pk)
    assert cached_campaign_report(fresh) == campaign_report(fresh)
    assert cached_figures(fresh, "bought", answers_bought) == answers_bought(fresh)


answers_of_a_hit = st.integers(min_value=2, max_value=4).flatmap(
    lambda workers_per_hit: st.lists(
        st.lists(st.sampled_from(LABELS), min_size=workers_per_hit, max_size=workers_per_hit), min_size=1, max_size=4
    )
)


@hypothesis_settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    first=answers_of_a_hit,
    platform_first=st.booleans(),
    changes=st.lists(st.tuples(st.sampled_from(CHANGES), st.integers(0, 50), answers_of_a_hit), max_size=6),
)
def test_cached_report_equals_the_live_one_after_every_change(settings, first, platform_first, changes):
    settings.REPORT_CACHE = True
    campaign = Campaign.objects.create(name=f"Random {next(_serial)}")
    _add_hit(campaign, first, Worker.PROLIFIC if platform_first else Worker.SITE)
    _same_figures(campaign)
    _same_figures(campaign)  # the second read comes from the cache
    for change, index, answers in changes:
        _apply(change, campaign, index, answers)
        _same_figures(campaign)


@pytest.fixture
def small_campaign():
    campaign = Campaign.objects.create(name="Cache test")
    _add_hit(campaign, [["Angry", "Angry", "Sad"], ["Sad", "Sad", "Joyful"]], Worker.PROLIFIC)
    _add_hit(campaign, [["Angry", "Sad", "Sad"]], Worker.SITE)
    return campaign


@pytest.mark.parametrize("change", CHANGES)
def test_each_change_moves_the_fingerprint(small_campaign, change):
    if change == "unblock":
        workers.set_blocked(Assignment.objects.filter(hit__campaign=small_campaign).first().worker, True)
    before = report_fingerprint(small_campaign)
    _apply(change, small_campaign, 0, [["Proud", "Proud", "Proud"]])
    assert report_fingerprint(small_campaign) != before


def test_an_unchanged_campaign_is_read_from_the_cache(settings, small_campaign, django_assert_max_num_queries):
    settings.REPORT_CACHE = True
    cache.clear()
    first = cached_campaign_report(small_campaign)
    with django_assert_max_num_queries(12):  # the fingerprint's aggregates, not the whole report
        assert cached_campaign_report(small_campaign) == first


def test_the_report_page_shows_a_block_made_after_it_was_cached(settings, admin_client, small_campaign):
    settings.REPORT_CACHE = True
    url = reverse("labeling:campaign_report", args=[small_campaign.pk])
    api = f"/api/campaigns/{small_campaign.pk}/workers/"
    assert admin_client.get(url).status_code == 200
    before = admin_client.get(api).json()
    worker = Worker.objects.get(pk=before[0]["id"])
    workers.set_blocked(worker, True, reason="test")
    after = {row["id"]: row["status"] for row in admin_client.get(api).json()}
    assert after[worker.pk] == Worker.BLOCKED
    assert b"blocked" in admin_client.get(url).content.lower()


def test_turned_off_it_computes_every_time(settings, small_campaign, monkeypatch):
    settings.REPORT_CACHE = False
    calls = []
    monkeypatch.setattr("labeling.report_cache.campaign_report", lambda c: calls.append(c) or {})
    cached_campaign_report(small_campaign)
    cached_campaign_report(small_campaign)
    assert len(calls) == 2


def test_a_counted_assignment_takes_no_more_answers(small_campaign):
    """What lets the fingerprint leave the answers out: once an assignment counts, its answers
    cannot change through the answer action (nor be added)."""
    counted = Assignment.objects.filter(hit__campaign=small_campaign).counted().first()
    item = counted.hit.items.order_by("position").first()
    before = list(Response.objects.filter(assignment=counted).values_list("pk", "label_id", "answered_at"))
    with pytest.raises(SubmissionRefused):
        save_response(counted, item, label_name="Proud", method=Response.OTHER_LIST)
    assert list(Response.objects.filter(assignment=counted).values_list("pk", "label_id", "answered_at")) == before


TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')


def test_the_report_page_is_the_same_cached_or_not_and_its_forms_post(settings, small_campaign, admin_user):
    """The page is kept rendered with a placeholder for the CSRF token; each view gets its own."""
    url = reverse("labeling:campaign_report", args=[small_campaign.pk])
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)
    settings.REPORT_CACHE = False
    live = client.get(url).content.decode()
    settings.REPORT_CACHE = True
    cache.clear()
    client.get(url)
    cached = client.get(url).content.decode()
    assert CSRF_PLACEHOLDER not in cached and TOKEN.search(cached)
    assert TOKEN.sub("TOKEN", cached) == TOKEN.sub("TOKEN", live)
    worker = Assignment.objects.filter(hit__campaign=small_campaign).first().worker
    token = TOKEN.search(cached).group(0).split('value="')[1].rstrip('"')
    response = client.post(reverse("labeling:worker_block", args=[worker.pk]), {"csrfmiddlewaretoken": token})
    assert response.status_code == 302
    worker.refresh_from_db()
    assert worker.status == Worker.BLOCKED
