"""Issue 34's statistics rows, through the pages: statistics are kept per proven person.

- "too fast" for platform workers: a platform worker answering 20 screens in 0.3 s was never
  flagged and had no quiz accuracy or agreement (the worker table keyed rows by landing identity,
  the answers by the proven worker). Now their row shows all three once the platform confirmed.
- the measured-median pay check: made-up ids submitting 3 HITs in under 0.5 s made the publish
  page a 500 (median 0.0), and made-up slow work refused publishing. Now only confirmed work is
  measured, per person, and the page answers 200 either way.
"""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from labeling.actions.submit import confirm_platform_submission
from labeling.models import Assignment, Worker
from labeling.platforms import get_platform
from labeling.platforms.checks import measured_minutes
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import make_dialogues, open_campaign
from tests.labeling.page_walk import claim, landed, submit, walk, worker_rows
from tests.labeling.platform_helpers import mturk_landing, prolific_landing, prolific_sessions

# the dashboard's Aggregate button queues a job: it runs at once here (tests/conftest.py)
__all__ = ["prolific_sessions"]
# every Prolific landing is asked of Prolific at landing (labeling.platforms.landing): its stand-in knows the
# sessions these tests open, whose work stays unconfirmed until a test confirms it
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("run_jobs_at_once", "prolific_sessions")]

SCREENS = 20


@pytest.fixture
def campaign(settings):
    settings.QUIZ_DEMO_BANK = True  # quiz screens from the built-in one-turn bank
    campaign = open_campaign(dialogues_per_hit=SCREENS, quiz_per_hit=2, workers_per_hit=3, currency="GBP")
    build_hits(campaign, make_dialogues(SCREENS), seed=7)
    return campaign


def land(campaign, platform: str, worker: str, session: str, address: str) -> tuple[Client, Assignment]:
    browser = Client(REMOTE_ADDR=address)
    if platform == Worker.PROLIFIC:
        url = prolific_landing(campaign, worker=worker, session=session, study="S1")
    else:
        url = mturk_landing(campaign, worker=worker, assignment=session, hit_id="3HIT0001")
    return browser, landed(browser.get(url))


def careful_site_workers(campaign, annotators, clock, count: int = 2) -> None:
    """Site annotators who read each screen for 8 s and pick what the others pick."""
    for user in annotators[:count]:
        browser = Client()
        browser.force_login(user)
        assignment = claim(browser, campaign)
        walk(browser, assignment, seconds=8, clock=clock)
        submit(browser, assignment)


def report_rows(researcher, campaign, *, aggregate: bool = False) -> dict[int, str]:
    browser = Client()
    browser.force_login(researcher)
    if aggregate:  # the dashboard's button: the job runs here, and stores the Dawid-Skene labels
        assert browser.post(reverse("labeling:campaign_aggregate", args=[campaign.pk])).status_code == 302
    response = browser.get(reverse("labeling:campaign_report", args=[campaign.pk]))
    assert response.status_code == 200
    return worker_rows(response.content.decode())


@pytest.mark.parametrize("platform", [Worker.PROLIFIC, Worker.MTURK])
def test_a_platform_workers_fast_answers_show_in_the_worker_table_once_confirmed(
    platform, campaign, annotators, researcher, clock
):
    careful_site_workers(campaign, annotators, clock)
    browser, assignment = land(
        campaign, platform, "5fFAST0000000000000000a1", "64SESSIONFAST000000000a1", "198.51.100.7"
    )
    walk(browser, assignment, seconds=0.3)  # 22 screens, each answered in 0.3 s
    submit(browser, assignment)

    rows = report_rows(researcher, campaign)
    assert len(rows) == 2  # the platform's confirmation has not come: nothing of theirs counts yet
    assert all("too fast" not in row for row in rows.values())

    assert confirm_platform_submission(assignment) is True
    rows = report_rows(researcher, campaign, aggregate=True)
    proven = Worker.objects.get(platform=platform, external_id="5fFAST0000000000000000a1", landing_key="")
    assert len(rows) == 3 and proven.pk in rows  # one row per person, keyed by the proven worker
    row = rows[proven.pk]
    assert platform in row and "too fast" in row
    # quiz accuracy 2 of 2 right, agreement with the majority and with Dawid-Skene on all 20 work screens
    assert "1.000 1.000 1.000" in row
    careful = [text for pk, text in rows.items() if pk != proven.pk]
    assert all("too fast" not in text and "1.000 1.000 1.000" in text for text in careful)


def test_a_platform_workers_landings_are_one_row(campaign, annotators, researcher, clock, settings):
    """One MTurk worker's two confirmed HITs (two landings, two assignment ids of two MTurk HITs)
    are one person: one row, 2 HITs."""
    settings.PLATFORM_NEW_WORKERS_PER_IP_PER_HOUR = 10
    build_hits(campaign, make_dialogues(SCREENS, prefix="second"), seed=8)
    careful_site_workers(campaign, annotators, clock)
    for mturk_hit in ("3HITONE", "3HITTWO"):
        browser = Client(REMOTE_ADDR="198.51.100.8")
        url = mturk_landing(campaign, worker="A2TWICE", assignment=f"3ASSIGN{mturk_hit}", hit_id=mturk_hit)
        assignment = landed(browser.get(url))
        walk(browser, assignment, seconds=0.3)
        confirm_platform_submission(submit(browser, assignment))
    rows = report_rows(researcher, campaign)
    proven = Worker.objects.get(external_id="A2TWICE", landing_key="")
    assert Worker.objects.filter(external_id="A2TWICE").count() == 3  # two landings and the person
    assert [text for pk, text in rows.items() if "A2TWICE" in text] == [rows[proven.pk]]
    assert "mturk 2 " in rows[proven.pk] and "too fast" in rows[proven.pk]


# --- The measured-median pay check ---------------------------------------------------------------


def publish_page(researcher, campaign):
    browser = Client()
    browser.force_login(researcher)
    return browser.get(reverse("labeling:campaign_publish", args=[campaign.pk]) + "?platform=prolific")


def made_up_work(campaign, count: int, *, clock=None, minutes: float = 0) -> list[Assignment]:
    """`count` made-up Prolific ids, each landing from its own address and submitting its HIT
    (at once, or after `minutes` on the clock)."""
    done = []
    for n in range(count):
        browser, assignment = land(campaign, Worker.PROLIFIC, f"5fMADEUP{n}", f"64MADEUP{n}", f"203.0.113.{n + 1}")
        walk(browser, assignment, seconds=0.01)
        if clock is not None:
            clock.advance(minutes * 60)
        done.append(submit(browser, assignment))
    return done


def test_made_up_fast_work_neither_breaks_nor_moves_the_pay_check(campaign, researcher):
    campaign.reward = Decimal("2.70")  # £8.10/h at the estimated 20 min
    campaign.save()
    fakes = made_up_work(campaign, 3)  # 3 HITs submitted in well under 0.5 s each
    response = publish_page(researcher, campaign)
    assert response.status_code == 200
    assert "Hourly rate at the measured median" not in response.content.decode() and measured_minutes(campaign) is None
    for assignment in fakes:  # had the platform confirmed them, they would be measured: 0.1 min
        confirm_platform_submission(assignment)
    assert measured_minutes(campaign) == Decimal("0.1")
    response = publish_page(researcher, campaign)
    assert response.status_code == 200 and "measured median 0.1 min" in response.content.decode()


def test_made_up_slow_work_does_not_refuse_publishing(campaign, researcher, clock):
    campaign.reward = Decimal("2.70")
    campaign.save()
    fakes = made_up_work(campaign, 3, clock=clock, minutes=50)  # £3.24/h, under Prolific's £6.00
    assert get_platform("prolific").cost_preview(campaign).refusals == ()
    html = publish_page(researcher, campaign).content.decode()
    assert 'id="publish-refused"' not in html
    for assignment in fakes:  # the same work, confirmed by the platform, is measured and refuses
        confirm_platform_submission(assignment)
    html = publish_page(researcher, campaign).content.decode()
    assert 'id="publish-refused"' in html and "measured median 50." in html  # 50 min and the real time the test took


def test_the_measured_minutes_weigh_each_person_once(campaign):
    """One person's 3 one-minute HITs against two people's 20 minutes: the median of people is 20
    (a median over HITs would be 1, set by one person)."""
    build_hits(campaign, make_dialogues(2 * SCREENS, prefix="more"), seed=9)
    hits = list(campaign.hits.all())
    fast = Worker.objects.create(platform=Worker.SITE, external_id="fast")
    slow = [Worker.objects.create(platform=Worker.SITE, external_id=f"slow{n}") for n in (1, 2)]
    for worker, hit, minutes in [(fast, hits[0], 1), (fast, hits[1], 1), (fast, hits[2], 1)] + [
        (worker, hits[0], 20) for worker in slow
    ]:
        done = Assignment.objects.create(
            hit=hit, worker=worker, status=Assignment.SUBMITTED, expires_at=timezone.now() + timedelta(hours=1)
        )
        Assignment.objects.filter(pk=done.pk).update(submitted_at=done.accepted_at + timedelta(minutes=minutes))
    assert measured_minutes(campaign) == Decimal("20.0")


def test_made_up_quiz_results_are_not_counted_on_the_campaign_page(campaign, researcher, settings):
    """The qualification's passed and failed counts are people with confirmed results."""
    from labeling.services.qualification import build_qualification_hit

    campaign.qualification_required, campaign.qualification_items, campaign.qualification_mark = True, 2, 2
    campaign.save()
    build_qualification_hit(campaign, seats=3, seed=4)
    browser, assignment = land(campaign, Worker.PROLIFIC, "5fQUIZ", "64QUIZ", "198.51.100.11")
    assert assignment.hit.kind == "qualify"

    def wrong(item):  # never the known answer
        return next(name for name in ("Sad", "Joyful") if name != item.quiz_question.gold_label.name), ""

    walk(browser, assignment, pick=wrong, seconds=0.3)
    submit(browser, assignment)
    staff = Client()
    staff.force_login(researcher)
    page = staff.get(reverse("labeling:campaign_detail", args=[campaign.pk])).content.decode()
    assert "passed <strong>0</strong> · failed <strong>0</strong>" in page
    confirm_platform_submission(assignment)
    page = staff.get(reverse("labeling:campaign_detail", args=[campaign.pk])).content.decode()
    assert "passed <strong>0</strong> · failed <strong>1</strong>" in page
