"""The stored campaign figures (labeling.reports.cache: computed by the refresh job, shown by every
page) are the figures computed per view (REPORT_CACHE=0: labeling.reports.campaign.campaign_report and
labeling.work.policy.answers_bought), on seeded random campaigns and after every kind of change: a new
answered HIT, a submission, an aggregation, a block, an unblock, a platform's confirmation, an
approval, a rejection, a merge of identities. The fingerprint leaves the answers out because an
answer is written only to a live assignment, whose answers the report does not count: a test
below holds the answer action to that. Tests run the refresh job in this process (Celery eager
mode), so a view after a change shows fresh figures; what a page shows while the job runs in a
worker (stale, labelled) is tested with the job held back."""

import contextlib
import re
from datetime import timedelta
from itertools import count
from unittest import mock

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from labeling import task_types
from labeling.actions import SubmissionRefused
from labeling.actions.answer import save_response
from labeling.actions.submit import confirm_platform_submission, submit_assignment
from labeling.models import Assignment, Campaign, CampaignFigures, Response, Worker
from labeling.reports.cache import (
    CSRF_PLACEHOLDER,
    as_json,
    cached_campaign_report,
    refresh_figures,
    report_fingerprint,
    shown_figures,
)
from labeling.reports.campaign import campaign_report
from labeling.services import workers
from labeling.services.payments import ReviewRefused, reject_assignment
from labeling.work.policy import answers_bought
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("quiz_demo_bank")]

LABELS = ["Angry", "Sad", "Joyful", "Furious", "Proud", "Forgetful", ""]  # "" leaves an item unanswered
CHANGES = ("answer", "submit", "aggregate", "block", "unblock", "confirm", "approve", "reject", "merge")
_serial = count()


def _workers(platform: str, n: int) -> list[Worker]:
    prefix = next(_serial)
    return [Worker.objects.create(platform=platform, external_id=f"c{prefix}-{i}") for i in range(n)]


def _add_hit(
    campaign: Campaign, draw_answers: list[list[str]], platform: str, status: str = Assignment.SUBMITTED, people=None
):
    people = people or _workers(platform, len(draw_answers[0]))
    dialogues = make_dialogues(len(draw_answers), prefix=f"rc{next(_serial)}")
    return make_answered_hit(
        campaign,
        people,
        dict(zip(dialogues, draw_answers, strict=True)),
        quiz_answers=[["Sad"] * len(people)],
        status=status,
    )


def _apply(change: str, campaign: Campaign, rng_index: int, answers: list[list[str]]) -> None:
    if change == "answer":
        _add_hit(campaign, answers, Worker.SITE)
        return
    if change == "submit":  # live work, then one of its seats submitted through the action
        hit = _add_hit(campaign, answers, Worker.SITE, status=Assignment.ACCEPTED)
        live = list(hit.assignments.order_by("pk"))
        with contextlib.suppress(SubmissionRefused):  # an item left unanswered: nothing changes
            submit_assignment(live[rng_index % len(live)])
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
    elif change == "reject":
        with contextlib.suppress(ReviewRefused):  # paid already: nothing changes
            reject_assignment(assignment)
    elif change == "merge":  # a new landing of a worker's platform id, its work confirmed: merged
        _merge_a_landing(campaign, assignment.worker, answers)


def _merge_a_landing(campaign: Campaign, worker: Worker, answers: list[list[str]]) -> None:
    landing = Worker.objects.create(
        platform=Worker.PROLIFIC, external_id=worker.external_id, landing_key=f"k{next(_serial)}"
    )
    hit = _add_hit(campaign, [row[:1] for row in answers], Worker.PROLIFIC, people=[landing])
    Assignment.objects.filter(hit=hit).update(platform_confirmed_at=timezone.now() - timedelta(seconds=1))
    workers.merge_proven_identity(landing)


def _same_figures(campaign: Campaign) -> None:
    """What every page shows (the stored figures) is what a view computes with REPORT_CACHE=0."""
    fresh = Campaign.objects.get(pk=campaign.pk)
    assert cached_campaign_report(fresh) == as_json(campaign_report(fresh))
    bought = shown_figures(fresh, "bought")
    assert bought.current and bought.value == answers_bought(fresh)


answers_of_a_hit = st.integers(min_value=2, max_value=4).flatmap(
    lambda workers_per_hit: st.lists(
        st.lists(st.sampled_from(LABELS), min_size=workers_per_hit, max_size=workers_per_hit), min_size=1, max_size=4
    )
)


@hypothesis_settings(
    max_examples=15, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    first=answers_of_a_hit,
    platform_first=st.booleans(),
    changes=st.lists(st.tuples(st.sampled_from(CHANGES), st.integers(0, 50), answers_of_a_hit), max_size=6),
)
def test_stored_figures_equal_the_ones_computed_per_view_after_every_change(settings, first, platform_first, changes):
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
    monkeypatch.setattr("labeling.reports.cache.campaign_report", lambda c: calls.append(c) or {})
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


# --- stale while revalidate: what a page shows while the job runs in a worker ----------------------


@pytest.fixture
def held_back_job():
    """The refresh job queued but not run (as in production until a worker takes it)."""
    cache.clear()
    with mock.patch("labeling.reports.cache.refresh_report.delay") as delay:
        yield delay


def test_a_page_after_a_change_shows_the_last_figures_labelled_and_polls(settings, admin_client, small_campaign):
    settings.REPORT_CACHE = True
    url = reverse("labeling:campaign_report", args=[small_campaign.pk])
    api = f"/api/campaigns/{small_campaign.pk}/workers/"
    assert admin_client.get(url).status_code == 200  # computed by the job (run at once in tests)
    before = admin_client.get(api).json()
    computed_at = CampaignFigures.objects.get(campaign=small_campaign).computed_at
    with mock.patch("labeling.reports.cache.refresh_report.delay") as delay:
        cache.clear()
        worker = Worker.objects.get(pk=before[0]["id"])
        workers.set_blocked(worker, True, reason="test")
        page = admin_client.get(url).content.decode()
        response = admin_client.get(api)
    assert delay.call_count == 1
    assert "Figures as of" in page and "updating…" in page and 'data-state="stale"' in page
    assert f'hx-get="{url}"' in page and 'hx-trigger="load delay:' in page
    assert response.json() == before  # the last figures, not blocking on the new ones
    assert response["X-Figures-Current"] == "0" and response["X-Figures-As-Of"] == computed_at.isoformat()
    refresh_figures(small_campaign.pk)  # the worker runs the job
    page = admin_client.get(url).content.decode()
    assert "updating…" not in page and 'hx-trigger="load delay:' not in page
    fresh = admin_client.get(api)
    assert fresh["X-Figures-Current"] == "1"
    assert {row["id"]: row["status"] for row in fresh.json()}[worker.pk] == Worker.BLOCKED


def test_a_first_view_with_nothing_stored_says_computing(settings, admin_client, small_campaign, held_back_job):
    settings.REPORT_CACHE = True
    page = admin_client.get(reverse("labeling:campaign_report", args=[small_campaign.pk])).content.decode()
    assert "Computing the figures…" in page and 'data-state="computing"' in page
    response = admin_client.get(f"/api/campaigns/{small_campaign.pk}/report/")
    assert response.status_code == 202 and response["Retry-After"]
    dashboard = admin_client.get(reverse("labeling:campaign_detail", args=[small_campaign.pk]))
    assert dashboard.status_code == 200 and b"being counted" in dashboard.content


def test_a_hundred_reloads_queue_one_job(settings, admin_client, small_campaign, held_back_job):
    settings.REPORT_CACHE = True
    url = reverse("labeling:campaign_report", args=[small_campaign.pk])
    for _ in range(100):
        admin_client.get(url)
    assert held_back_job.call_count == 1
    assert held_back_job.call_args == mock.call(small_campaign.pk)
    refresh_figures(small_campaign.pk)  # done: the next change queues the next one
    admin_client.get(url)
    assert held_back_job.call_count == 1  # nothing changed since
    workers.set_blocked(Assignment.objects.filter(hit__campaign=small_campaign).first().worker, True, reason="t")
    for _ in range(10):
        admin_client.get(url)
    assert held_back_job.call_count == 2


def test_a_second_copy_of_the_job_returns_at_once(settings, small_campaign):
    settings.REPORT_CACHE = True
    with mock.patch("labeling.reports.cache._lock_campaign", return_value=False):
        assert refresh_figures(small_campaign.pk) == {"campaign": small_campaign.pk, "busy": True, "computed": 0}
    assert not CampaignFigures.objects.filter(campaign=small_campaign).exists()
    assert refresh_figures(small_campaign.pk)["computed"] == 1
    assert refresh_figures(small_campaign.pk)["computed"] == 0  # current already


def test_the_job_computes_again_when_the_campaign_changed_under_it(settings, small_campaign):
    settings.REPORT_CACHE = True
    worker = Assignment.objects.filter(hit__campaign=small_campaign).counted().first().worker
    real = campaign_report
    calls = []

    def report_then_block(campaign):
        calls.append(campaign.pk)
        if len(calls) == 1:  # a block lands while the first round computes
            workers.set_blocked(worker, True, reason="test")
        return real(campaign)

    with mock.patch("labeling.reports.cache.campaign_report", side_effect=report_then_block):
        result = refresh_figures(small_campaign.pk)
    assert result["computed"] == 2
    stored = CampaignFigures.objects.get(campaign=small_campaign)
    assert stored.fingerprint == report_fingerprint(small_campaign)
    assert {row["id"]: row["status"] for row in stored.report["workers"]}[worker.pk] == Worker.BLOCKED


def test_a_broker_away_leaves_the_page_showing_what_it_has(settings, admin_client, small_campaign):
    from kombu.exceptions import OperationalError as BrokerUnavailable

    settings.REPORT_CACHE = True
    url = reverse("labeling:campaign_report", args=[small_campaign.pk])
    assert admin_client.get(url).status_code == 200
    workers.set_blocked(Assignment.objects.filter(hit__campaign=small_campaign).first().worker, True, reason="t")
    with mock.patch("labeling.reports.cache.refresh_report.delay", side_effect=BrokerUnavailable("away")) as delay:
        page = admin_client.get(url)
        again = admin_client.get(url)
    assert page.status_code == again.status_code == 200 and b"updating" in page.content
    assert delay.call_count == 2  # the key was freed: each view asks again
