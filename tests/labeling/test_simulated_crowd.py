"""The demo's simulated crowd: answers through the annotator services, agreement that follows each
worker's reliability, HITs left open for people, and nothing added by a second run."""

import io
import random
from collections import defaultdict

import pytest
from django.core.management import CommandError, call_command

from labeling.platforms.simulated_crowd import DEFAULT_CROWD, Profile, Truth, choose_answer

# the campaigns here take their quiz screens from the built-in one-turn bank
pytestmark = pytest.mark.usefixtures("quiz_demo_bank")

LABELS = ["Sad", "Lonely", "Joyful", "Angry", "Neutral"]


def test_a_fully_reliable_worker_gives_the_truth_and_the_spammer_the_first_choice():
    rng = random.Random(1)
    careful, spammer = Profile("c", 1.0, (1, 2)), Profile("s", 0.0, (1, 2), spammer=True)
    choices = ["Joyful", "Sad", "Neutral"]
    assert {choose_answer(careful, Truth("Sad"), choices, LABELS, rng) for _ in range(50)} == {"Sad"}
    assert {choose_answer(spammer, Truth("Sad"), choices, LABELS, rng) for _ in range(50)} == {"Joyful"}


def test_a_two_label_line_splits_even_reliable_workers():
    rng = random.Random(2)
    careful = Profile("c", 1.0, (1, 2))
    given = [
        choose_answer(careful, Truth("Sad", "Lonely"), ["Sad", "Lonely", "Joyful"], LABELS, rng) for _ in range(400)
    ]
    assert 0.5 < given.count("Sad") / 400 < 0.7 and given.count("Sad") + given.count("Lonely") == 400


def test_a_wrong_answer_is_never_the_truth():
    rng = random.Random(3)
    sloppy = Profile("n", 0.0, (1, 2))
    given = {choose_answer(sloppy, Truth("Sad"), ["Sad", "Joyful", "Neutral"], LABELS, rng) for _ in range(200)}
    assert "Sad" not in given and len(given) > 2


@pytest.fixture
def demo_campaign(db, tmp_path):
    from annotation.demo_corpus.generator import TRUTH_FILE, generate, write_corpus
    from annotation.ingestion import IngestOptions, ingest_paths
    from annotation.models import Dialogue
    from labeling.services.campaigns import create_campaign, set_campaign_status
    from labeling.work.hits import build_hits

    write_corpus(generate(200, seed=4), tmp_path)
    ingest_paths([tmp_path], IngestOptions())
    campaign = create_campaign("Simulated", dialogues_per_hit=10, quiz_per_hit=5)
    build_hits(campaign, Dialogue.objects.filter(language="en").order_by("pk")[:100], seed=1)
    set_campaign_status(campaign, "open")
    return campaign, tmp_path / TRUTH_FILE


# Each screen's choice order is drawn from the assignment's and the item's ids (the label task
# type's screen.choices_shown) and the spammer clicks the first choice, so its quiz score follows the ids: the ids
# start afresh here, or the score would depend on which tests ran before in this database (under
# pytest-xdist, a different set each run).
@pytest.mark.django_db(transaction=True, reset_sequences=True)
def test_the_crowd_answers_through_the_services_and_agreement_follows_reliability(demo_campaign, monkeypatch):
    from labeling.models import HIT, AggregatedLabel, Assignment, Response
    from labeling.platforms import simulated_crowd
    from labeling.task_types.last_turn_label.aggregation import aggregate_campaign

    campaign, truth_path = demo_campaign
    saved = []
    real_save = simulated_crowd.save_response
    monkeypatch.setattr(simulated_crowd, "save_response", lambda *a, **k: saved.append(real_save(*a, **k)))

    report = simulated_crowd.simulate_campaign(campaign, simulated_crowd.read_truth(truth_path), leave_open=2)

    hits = list(HIT.objects.filter(campaign=campaign).order_by("position", "pk"))
    assert report.hits == len(hits) - 2 and report.assignments == 3 * report.hits
    assert len(saved) == Response.objects.count() == report.responses  # every answer through save_response
    assert all(hit.assignments.count() == 0 for hit in hits[-2:])  # left open for people
    assert all(Assignment.objects.done().filter(hit=hit).count() == 3 for hit in hits[:-2])

    quiz = report.quiz_correct
    careful = [score for name, scores in quiz.items() if "careful" in name for score in scores]
    assert sum(careful) / len(careful) >= 4  # of 5
    assert sum(quiz["sim-spammer"]) / len(quiz["sim-spammer"]) <= 2.5

    aggregate_campaign(campaign)
    majority = {row.turn_id: row.label_id for row in AggregatedLabel.objects.filter(campaign=campaign)}
    agree = defaultdict(list)
    for response in Response.objects.filter(item__quiz_question__isnull=True).select_related(
        "assignment__worker__user"
    ):
        if majority.get(response.item.target_turn_id):
            agree[response.assignment.worker.user.username].append(
                response.label_id == majority[response.item.target_turn_id]
            )
    rate = {name: sum(values) / len(values) for name, values in agree.items()}
    assert min(rate[p.username] for p in DEFAULT_CROWD if "careful" in p.username) > 0.8
    assert rate["sim-spammer"] < 0.4
    assert rate["sim-spammer"] < rate["sim-noisy-2"] < rate["sim-careful-1"]

    # each screen took the seconds its worker's profile says, not the milliseconds the simulation
    # took in real time: the worker table flags the spammer as too fast, and only the spammer
    from labeling.task_types.last_turn_label.report import label_report

    table = {row["worker"]: row for row in label_report(campaign)["workers"]}
    assert {name for name, row in table.items() if row["too_fast"]} == {"sim-spammer"}
    assert 0.6 <= table["sim-spammer"]["median_seconds"] <= 1.4
    assert all(5.0 <= table[p.username]["median_seconds"] <= 16.0 for p in DEFAULT_CROWD if "careful" in p.username)
    for assignment in Assignment.objects.done().filter(hit__campaign=campaign):
        answers = Response.objects.filter(assignment=assignment)
        spent = sum(answers.values_list("seconds_spent", flat=True))
        # the answers fit the time the seat was held, which is the time they took
        assert abs((assignment.submitted_at - assignment.accepted_at).total_seconds() - spent) < 5


def test_a_second_run_adds_nothing(demo_campaign):
    from labeling.models import Response
    from labeling.platforms.simulated_crowd import read_truth, simulate_campaign

    campaign, truth_path = demo_campaign
    simulate_campaign(campaign, read_truth(truth_path), leave_open=1)
    answers = Response.objects.count()
    again = simulate_campaign(campaign, read_truth(truth_path), leave_open=1)
    assert again.assignments == 0 and Response.objects.count() == answers


def test_the_command_refuses_a_closed_campaign_and_a_missing_truth_file(demo_campaign, tmp_path):
    from labeling.services.campaigns import set_campaign_status

    campaign, truth_path = demo_campaign
    with pytest.raises(CommandError, match="no such file"):
        call_command("simulate_crowd", str(campaign.pk), "--truth", str(tmp_path / "nope.jsonl"))
    out = io.StringIO()
    call_command("simulate_crowd", str(campaign.pk), "--truth", str(truth_path), "--leave-open", "8", stdout=out)
    assert "sim-spammer" in out.getvalue()
    set_campaign_status(campaign, "closed")
    with pytest.raises(CommandError, match="closed"):
        call_command("simulate_crowd", str(campaign.pk), "--truth", str(truth_path))


@pytest.fixture
def policy_campaign(db, tmp_path):
    from annotation.demo_corpus.generator import TRUTH_FILE, generate, write_corpus
    from annotation.ingestion import IngestOptions, ingest_paths
    from annotation.models import Dialogue
    from labeling.services.campaigns import create_campaign, set_campaign_status
    from labeling.work.hits import build_hits

    write_corpus(generate(60, seed=4), tmp_path)
    ingest_paths([tmp_path], IngestOptions())
    campaign = create_campaign("Until", dialogues_per_hit=3, quiz_per_hit=1, redundancy_policy="until_agreement")
    build_hits(campaign, Dialogue.objects.filter(language="en").order_by("pk")[:30], seed=1)
    set_campaign_status(campaign, "open")
    return campaign, tmp_path / TRUTH_FILE


def test_the_crowd_answers_a_policy_campaign_until_every_item_is_settled(policy_campaign):
    from django.db.models import Count

    from labeling.models import HIT, Response
    from labeling.platforms.simulated_crowd import read_truth, simulate_until_settled
    from labeling.task_types.last_turn_label.follow_up import create_follow_up_hits, turn_seats
    from labeling.work.policy import answers_bought

    campaign, truth_path = policy_campaign
    simulate_until_settled(campaign, read_truth(truth_path))
    assert HIT.objects.filter(campaign=campaign, kind=HIT.FOLLOW_UP).exists()
    assert create_follow_up_hits(campaign) == []  # nothing left to settle
    assert all(2 <= held.seats <= campaign.redundancy_cap and not held.open for held in turn_seats(campaign).values())
    twice = (
        Response.objects.filter(item__hit__campaign=campaign, item__target_turn__isnull=False)
        .values("item__target_turn", "assignment__worker")
        .annotate(n=Count("pk"))
        .filter(n__gt=1)
    )
    assert not twice.exists()  # no worker answered an item twice
    bought = answers_bought(campaign)
    assert bought["items"] * 2 <= bought["answers"] < bought["fixed_answers"]


def test_a_crowd_too_small_for_the_claim_rules_grows_and_every_seat_comes_from_the_claim(demo_campaign, monkeypatch):
    """Two workers cannot fill a HIT of three seats (no HIT twice), so workers join until every
    seat is taken; each seat comes from claim_next_hit."""
    from annotation.models import Dialogue
    from labeling.models import HIT, Assignment
    from labeling.platforms import simulated_crowd
    from labeling.services.campaigns import create_campaign, set_campaign_status
    from labeling.work.hits import build_hits

    _, truth_path = demo_campaign
    campaign = create_campaign("Per seat", dialogues_per_hit=2, quiz_per_hit=5)
    build_hits(campaign, Dialogue.objects.filter(language="en").order_by("-pk")[:8], seed=2)
    set_campaign_status(campaign, "open")
    claims = []
    real_claim = simulated_crowd.claim_next_hit
    monkeypatch.setattr(
        simulated_crowd, "claim_next_hit", lambda *a, **k: claims.append(real_claim(*a, **k)) or claims[-1]
    )

    truth = simulated_crowd.read_truth(truth_path)
    report = simulated_crowd.simulate_campaign(campaign, truth, crowd=DEFAULT_CROWD[:2], leave_open=0)

    hits = HIT.objects.filter(campaign=campaign)
    assert all(Assignment.objects.done().filter(hit=hit).count() == hit.required_workers for hit in hits)
    assert report.assignments == len(claims) == 3 * hits.count()
    workers = Assignment.objects.filter(hit__campaign=campaign).values("worker").distinct().count()
    assert workers >= 3  # the two could not take a third seat of any HIT: more joined
