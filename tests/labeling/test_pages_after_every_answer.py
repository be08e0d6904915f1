"""Issue 33 item 6: a worker's normal answer never breaks a researcher's page.

One answer typed through "Other: new label" on a quiz screen made the campaign page a 500
(`int(None)`: a typed label's "right" value was NULL). Decided since (and used by every page):
a quiz answer is right only when it names the known answer, picked or typed in any spelling the
label rule folds (NFKC, case, spaces); any other typed text is wrong, never unknown
(labeling.crowd.qualification.answered_right).

A campaign shaped like the demo's (small: three work and two quiz screens a HIT, three seats,
a qualification quiz first) gets every kind of answer a worker can give, from a site annotator
and from a platform worker before and after the platform's confirmation; after each answer every
researcher and annotator page of the campaign is fetched: 200, or the status written beside it.
"""

from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from labeling.actions.submit import confirm_platform_submission
from labeling.models import AggregatedLabel, Assignment, QuizCheck, Response, Worker
from labeling.services.qualification import build_qualification_hit
from labeling.work.hits import build_hits
from tests.labeling.hit_factory import make_dialogues, open_campaign
from tests.labeling.page_walk import NEW_LABEL, answer_screen, claim, landed, screen_items, submit
from tests.labeling.platform_helpers import prolific_landing, prolific_sessions

# the dashboard's Aggregate button queues a job: it runs at once here (tests/conftest.py)
__all__ = ["prolific_sessions"]
# every Prolific landing is asked of Prolific at landing (labeling.platforms.landing): its stand-in knows the
# sessions these tests open, whose work stays unconfirmed until a test confirms it
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("run_jobs_at_once", "prolific_sessions")]

ANALYSIS = (
    "analysis",
    "analysis_flows",
    "analysis_gaps",
    "analysis_skills",
    "analysis_examples",
    "analysis_evaluation",
    "analysis_utility",
    "analysis_exports",
    "analysis_compare",
)


def researcher_pages(campaign) -> list[tuple[str, set[int]]]:
    """(URL, the statuses it may answer) for every researcher page of the campaign."""
    pk = campaign.pk
    pages = [
        (reverse("home"), {200}),
        (reverse("labeling:campaign_list"), {200}),
        (reverse("labeling:campaign_detail", args=[pk]), {200}),
        (reverse("labeling:campaign_report", args=[pk]), {200}),  # the dashboard's figures
        (reverse("labeling:campaign_export", args=[pk, "csv"]), {200}),
        (reverse("labeling:campaign_export", args=[pk, "jsonl"]), {200}),
        (reverse("labeling:campaign_labels_csv", args=[pk]), {200}),
        (reverse("labeling:campaign_publish", args=[pk]) + "?platform=prolific", {200}),
        (reverse("labeling:campaign_publish", args=[pk]) + "?platform=mturk", {200}),
        # a label campaign's results are on its dashboard: its results page is a documented 404
        (reverse("labeling:campaign_results", args=[pk]), {404}),
        (f"/api/campaigns/{pk}/report/", {200}),
        (f"/api/campaigns/{pk}/workers/", {200}),
        (f"/api/campaigns/{pk}/aggregated-labels/", {200}),
    ]
    return pages + [(reverse(f"annotation:{name}"), {200}) for name in ANALYSIS]


def annotator_pages(assignment: Assignment) -> list[tuple[str, set[int]]]:
    pk = assignment.pk
    if assignment.status == Assignment.EXPIRED:  # a HIT back in the pool: its pages say so, 410 Gone
        gone = {"assignment_detail": {410}, "assignment_review": {302}, "assignment_feedback": {302, 410}}
        pages = [(reverse(f"labeling:{name}", args=[pk]), allowed) for name, allowed in gone.items()]
        return [(reverse("labeling:worker_home"), {200}), *pages]
    pages = [(reverse("labeling:worker_home"), {200}), (reverse("labeling:assignment_detail", args=[pk]), {302})]
    if assignment.status == Assignment.ACCEPTED:
        pages += [(reverse("labeling:assignment_item", args=[pk, 1]), {200})]
        pages += [(reverse("labeling:assignment_review", args=[pk]), {200})]
    else:
        pages += [(reverse("labeling:assignment_feedback", args=[pk]), {200})]
    return pages


class Pages:
    """Fetches every page after each answer, as the researcher and as the worker who gave it."""

    def __init__(self, researcher, campaign) -> None:
        self.researcher = Client()
        self.researcher.force_login(researcher)
        self.campaign = campaign
        self.fetched = 0

    def check(self, what: str, worker: Client | None = None, assignment: Assignment | None = None) -> None:
        # what the researcher does on the dashboard between answers: aggregate (the job runs here)
        aggregated = self.researcher.post(reverse("labeling:campaign_aggregate", args=[self.campaign.pk]))
        assert aggregated.status_code == 302, what
        for url, allowed in researcher_pages(self.campaign):
            self._fetch(self.researcher, url, allowed, what)
        if worker is not None:
            assignment.refresh_from_db()
            for url, allowed in annotator_pages(assignment):
                self._fetch(worker, url, allowed, what)

    def _fetch(self, client: Client, url: str, allowed: set[int], what: str) -> None:
        response = client.get(url)
        self.fetched += 1
        assert response.status_code in allowed, f"after {what}: {url} answered {response.status_code}"


def positions(assignment: Assignment) -> tuple[list[int], list[int]]:
    """(work screen positions, quiz screen positions) of the assignment's seat."""
    items = screen_items(assignment)
    work = [p for p, item in sorted(items.items()) if not item.is_quiz]
    quiz = [p for p, item in sorted(items.items()) if item.is_quiz]
    return work, quiz


def gold_of(assignment: Assignment, position: int) -> str:
    return screen_items(assignment)[position].quiz_question.gold_label.name


def other_from_the_list(assignment: Assignment, position: int) -> str:
    """A label of the taxonomy that is not one of the screen's three choices."""
    choices = set(screen_items(assignment)[position].choices)
    return next(name for name in ("Nostalgic", "Lonely", "Grateful", "Proud") if name not in choices)


@pytest.fixture
def campaign(settings):
    settings.QUIZ_DEMO_BANK = True  # quiz screens from the built-in one-turn bank, as the demo's
    settings.PLATFORM_MEASURED_MIN_HITS = 1
    campaign = open_campaign(
        name="Demo-like", dialogues_per_hit=3, quiz_per_hit=2, workers_per_hit=3, currency="GBP", reward=Decimal("2.70")
    )
    build_hits(campaign, make_dialogues(6), seed=11)
    return campaign


# the demo's campaigns: fixed seats with tie-breaks, until agreement, model-informed
POLICIES = [
    {"redundancy_policy": "fixed", "tie_breaking": True},
    {"redundancy_policy": "until_agreement"},
    {"redundancy_policy": "model_informed", "model_threshold": 0.5},
]


@pytest.mark.parametrize("policy", POLICIES, ids=[p["redundancy_policy"] for p in POLICIES])
def test_every_answer_a_site_annotator_gives_leaves_every_page_working(policy, campaign, annotators, researcher, clock):
    for field, value in policy.items():
        setattr(campaign, field, value)
    campaign.save()
    pages = Pages(researcher, campaign)
    pages.check("nothing answered")
    worker = Client()
    worker.force_login(annotators[0])
    assignment = claim(worker, campaign)
    work, quiz = positions(assignment)

    def answer(what: str, position: int, value: str, typed: str = "") -> None:
        clock.advance(5)
        response = answer_screen(worker, assignment, position, value, typed, seconds=5)
        assert response.status_code in (200, 302), (what, response.content.decode()[:300])
        pages.check(what, worker, assignment)

    answer("a top-3 pick", work[0], screen_items(assignment)[work[0]].choices[0])
    answer("Other from the list", work[1], other_from_the_list(assignment, work[1]))
    answer("Other: a typed new label", work[2], NEW_LABEL, "Mildly amused")
    answer("a quiz screen: a typed new label", quiz[0], NEW_LABEL, "Quietly furious")
    answer("a quiz screen: the known answer typed", quiz[1], NEW_LABEL, f"  {gold_of(assignment, quiz[1]).upper()} ")
    answer("an answer changed before submit", work[0], screen_items(assignment)[work[0]].choices[1])
    answer("a typed label equal to an existing one", work[1], NEW_LABEL, " nOSTALGIC ")
    submit(worker, assignment)
    pages.check("the submission", worker, assignment)

    # what the pages now say of the quiz: the typed new label wrong, the typed known answer right
    typed_quiz = Response.objects.get(assignment=assignment, item=screen_items(assignment)[quiz[0]])
    assert (typed_quiz.label, typed_quiz.method) == (None, Response.OTHER_NEW)
    assert assignment.quiz_correct == 1
    report = pages.researcher.get(f"/api/campaigns/{campaign.pk}/report/").json()
    (row,) = report["workers"]
    assert row["quiz_accuracy"] == 0.5 and row["hits"] == 1
    assert AggregatedLabel.objects.filter(campaign=campaign).count() == 3  # the pages read aggregated work too
    assert pages.fetched > 150


def test_a_platform_workers_answers_leave_every_page_working_before_and_after_confirmation(campaign, researcher, clock):
    pages = Pages(researcher, campaign)
    browser = Client(REMOTE_ADDR="198.51.100.9")
    assignment = landed(browser.get(prolific_landing(campaign, worker="5fPAGES", session="64PAGES", study="S1")))
    work, quiz = positions(assignment)
    for what, position, value, typed in [
        ("a top-3 pick", work[0], screen_items(assignment)[work[0]].choices[0], ""),
        ("Other: a typed new label", work[1], NEW_LABEL, "Wistful"),
        ("a quiz screen: a typed new label", quiz[0], NEW_LABEL, "Not sure"),
        ("a quiz screen: Other from the list", quiz[1], other_from_the_list(assignment, quiz[1]), ""),
        ("a typed label equal to an existing one", work[2], NEW_LABEL, "sad"),
    ]:
        clock.advance(5)
        assert answer_screen(browser, assignment, position, value, typed, seconds=5).status_code in (200, 302)
        pages.check(f"platform worker, {what}", browser, assignment)
    submit(browser, assignment)
    pages.check("the platform worker's submission, unconfirmed", browser, assignment)
    confirm_platform_submission(assignment)
    pages.check("the platform's confirmation", browser, assignment)
    proven = Worker.objects.get(external_id="5fPAGES", landing_key="")
    rows = {row["id"]: row for row in pages.researcher.get(f"/api/campaigns/{campaign.pk}/report/").json()["workers"]}
    assert rows[proven.pk]["quiz_accuracy"] in (0.0, 0.5)  # "Not sure" wrong; the list pick right if it is the gold


def test_a_returned_or_expired_hit_leaves_every_page_working(campaign, annotators, researcher, clock):
    pages = Pages(researcher, campaign)
    worker = Client()
    worker.force_login(annotators[1])
    assignment = claim(worker, campaign)
    work, quiz = positions(assignment)
    clock.advance(5)
    answer_screen(worker, assignment, quiz[0], NEW_LABEL, "Typed then left", seconds=5)
    clock.advance(campaign.time_limit_minutes * 60 + 60)  # the time limit passes: the HIT is back
    worker.post(reverse("labeling:claim"), {"campaign": campaign.pk})  # a claim expires lapsed seats
    assignment.refresh_from_db()
    assert assignment.status == Assignment.EXPIRED
    pages.check("an expired HIT", worker, assignment)


def test_a_typed_label_on_a_qualification_screen_is_checked_wrong_and_the_pages_work(
    campaign, annotators, researcher, settings, clock
):
    """The qualification quiz shows its verdict after each screen: a typed label there is checked
    (wrong unless it names the known answer) and every page still answers."""
    campaign.qualification_required = True
    campaign.qualification_items = 2
    campaign.qualification_mark = 1
    campaign.save()
    build_qualification_hit(campaign, seats=2, seed=4)
    pages = Pages(researcher, campaign)
    worker = Client()
    worker.force_login(annotators[2])
    assignment = claim(worker, campaign)
    assert assignment.hit.kind == "qualify"
    first, second = sorted(screen_items(assignment))
    clock.advance(5)
    assert answer_screen(worker, assignment, first, NEW_LABEL, "Made up", seconds=5).status_code in (200, 302)
    clock.advance(5)
    known = gold_of(assignment, second).lower()
    assert answer_screen(worker, assignment, second, NEW_LABEL, known, seconds=5).status_code in (200, 302)
    checks = dict(QuizCheck.objects.filter(assignment=assignment).values_list("item__position", "correct"))
    assert checks == {screen_items(assignment)[first].position: False, screen_items(assignment)[second].position: True}
    submit(worker, assignment)
    pages.check("a qualification quiz with typed labels", worker, assignment)
    walk_paid = claim(worker, campaign)  # passed (1 of 2, mark 1): paid work is offered
    assert walk_paid.hit.kind != "qualify"
