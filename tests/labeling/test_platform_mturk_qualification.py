"""The qualification step on MTurk, through a real boto3 `mturk` client under botocore's Stubber (its
service model checks every call's parameters): the campaign's qualification type is created, the
paid HIT type requires it, the quiz HIT has its own HIT type without it, and sync grants it to a
worker who passed only."""

from decimal import Decimal

import pytest
from botocore.stub import ANY

from labeling.models import HIT, Assignment, PlatformQualification, Publication, QualificationResult
from labeling.platforms import get_platform, hit_url, mturk, publish_campaign
from labeling.platforms.sync import sync_publication
from labeling.services import qualification
from tests.labeling.platform_helpers import draft_campaign, mturk_landing, slept, work_through_pages
from tests.labeling.test_platform_mturk import LOCALES, expect_list, listed, stub

__all__ = ["slept", "stub"]
pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("quiz_demo_bank"),
]  # HITs built with the built-in quiz bank
QUAL_TYPE, QUIZ_TYPE, PAID_TYPE = "3QUALTYPE", "3QUIZHITTYPE", "3PAIDHITTYPE"
SITE = "https://site.example"


def requirements(*extra: dict) -> list[dict]:
    paper = [
        {
            "QualificationTypeId": "00000000000000000071",
            "Comparator": "In",
            "LocaleValues": LOCALES,
            "ActionsGuarded": "DiscoverPreviewAndAccept",
        },
        {
            "QualificationTypeId": "000000000000000000L0",
            "Comparator": "GreaterThanOrEqualTo",
            "IntegerValues": [95],
            "ActionsGuarded": "DiscoverPreviewAndAccept",
        },
    ]
    return paper + list(extra)


def ours(comparator: str) -> dict:
    return {"QualificationTypeId": QUAL_TYPE, "Comparator": comparator, "ActionsGuarded": "DiscoverPreviewAndAccept"}


def quiz_campaign():
    """One paid HIT and a two-seat qualification HIT of two quiz items, both right to pass; the
    quiz pays what the paid HIT pays per screen, above MTurk's minimum."""
    campaign = draft_campaign(
        hits=1,
        qualification_required=True,
        qualification_items=2,
        qualification_mark=2,
        qualification_reward=Decimal("2.70"),
    )
    qualification.build_qualification_hit(campaign, 2, seed=5)
    return campaign


def expect_publish(stub, campaign) -> dict[str, str]:
    stub.add_response(
        "create_qualification_type",
        {"QualificationType": {"QualificationTypeId": QUAL_TYPE, "Name": "x"}},
        {
            "Name": f"Dialogue emotion quiz passed: campaign {campaign.pk}.{campaign.created_at:%Y%m%d%H%M%S}",
            "Keywords": "emotion, dialogue, labeling, movies",
            "Description": ANY,
            "QualificationTypeStatus": "Active",
        },
    )
    common = {
        "Description": ANY,
        "Keywords": "emotion, dialogue, labeling, movies",
        "AssignmentDurationInSeconds": 3600,
        "AutoApprovalDelayInSeconds": 72 * 3600,
    }
    quiz_type = {
        **common,
        "Title": f"Qualification quiz: label the emotion of short movie dialogues ({campaign.name})",
        "Reward": "2.70",
        "QualificationRequirements": requirements(ours("DoesNotExist")),
    }
    stub.add_response("create_hit_type", {"HITTypeId": QUIZ_TYPE}, quiz_type)
    paid_type = {
        **common,
        "Title": f"Label the emotion of short movie dialogues ({campaign.name})",
        "Reward": "2.70",
        "QualificationRequirements": requirements(ours("Exists")),
    }
    stub.add_response("create_hit_type", {"HITTypeId": PAID_TYPE}, paid_type)
    ids = {}
    for hit in campaign.hits.order_by("position"):
        kind_type = QUIZ_TYPE if hit.kind == HIT.QUALIFICATION else PAID_TYPE
        ids[hit.kind] = f"3HIT{hit.position:026d}"
        stub.add_response(
            "create_hit_with_hit_type",
            {"HIT": {"HITId": ids[hit.kind], "HITTypeId": kind_type}},
            {
                "HITTypeId": kind_type,
                "MaxAssignments": hit.required_workers,
                "LifetimeInSeconds": 7 * 24 * 3600,
                "Question": mturk.external_question(hit_url(SITE, hit)),
                "RequesterAnnotation": f"campaign {campaign.pk} hit {hit.pk}",
                "UniqueRequestToken": ANY,
            },
        )
    return ids


@pytest.fixture
def published(stub):
    campaign = quiz_campaign()
    ids = expect_publish(stub, campaign)
    publish_campaign(campaign, get_platform("mturk"), SITE)
    return campaign, ids


def test_the_qualification_type_is_made_once_and_the_paid_hit_type_requires_it(published, stub):
    campaign, ids = published
    setup = PlatformQualification.objects.get(campaign=campaign)
    assert (setup.platform, setup.external_id, setup.quiz_external_id) == ("mturk", QUAL_TYPE, QUIZ_TYPE)
    assert Publication.objects.get(campaign=campaign).external_id == PAID_TYPE
    quiz = qualification.qualification_hits(campaign).get()
    assert quiz.external_id == ids[HIT.QUALIFICATION] and quiz.required_workers == 2
    assert publish_campaign(campaign, get_platform("mturk"), SITE) == 0  # nothing is made twice


def test_sync_grants_the_qualification_to_the_worker_who_passed_only(published, client, stub, slept):
    campaign, ids = published
    quiz_hit = ids[HIT.QUALIFICATION]
    passed = work_through_pages(client, mturk_landing(campaign, worker="A1PASS", assignment="3AQ1", hit_id=quiz_hit))
    failed = work_through_pages(
        client, mturk_landing(campaign, worker="A1FAIL", assignment="3AQ2", hit_id=quiz_hit), wrong_quiz=2
    )
    assert passed.hit.kind == failed.hit.kind == HIT.QUALIFICATION and passed.seat != failed.seat
    results = {r.worker.external_id: r.passed for r in QualificationResult.objects.select_related("worker")}
    assert results == {"A1PASS": True, "A1FAIL": False}
    # not confirmed yet: a landing on a paid HIT is not offered one
    paid_hit = ids[HIT.REGULAR]
    client.logout()
    early = client.get(mturk_landing(campaign, worker="A1PASS", assignment="3AP0", hit_id=paid_hit))
    assert early.status_code == 409

    publication = Publication.objects.get(campaign=campaign)
    expect_list(stub, paid_hit, listed(paid_hit))
    expect_list(stub, quiz_hit, listed(quiz_hit, passed, failed))
    stub.add_response("approve_assignment", {}, {"AssignmentId": "3AQ1", "RequesterFeedback": ANY})
    stub.add_response(
        "associate_qualification_with_worker",
        {},
        {"QualificationTypeId": QUAL_TYPE, "WorkerId": "A1PASS", "IntegerValue": 2, "SendNotification": True},
    )
    counts = sync_publication(publication)
    assert counts["qualified"] == 1 and counts["approved"] == 1 and counts["flagged"] == 1
    assert QualificationResult.objects.get(worker__external_id="A1PASS").granted_at is not None
    assert list(passed.payments.values_list("kind", "amount")) == [("reward", Decimal("2.70"))]

    # the pass counts from now on: the worker's next landing (a new identity) gets the paid HIT
    paid = work_through_pages(client, mturk_landing(campaign, worker="A1PASS", assignment="3AP1", hit_id=paid_hit))
    assert paid.hit.kind == HIT.REGULAR
    client.logout()
    refused = client.get(mturk_landing(campaign, worker="A1FAIL", assignment="3AP2", hit_id=paid_hit))
    assert refused.status_code == 409 and not Assignment.objects.filter(platform_assignment_id="3AP2").exists()


def test_a_qualification_type_whose_creation_answer_was_lost_is_found_by_its_name(stub):
    campaign = quiz_campaign()
    name = f"Dialogue emotion quiz passed: campaign {campaign.pk}.{campaign.created_at:%Y%m%d%H%M%S}"
    stub.add_client_error(
        "create_qualification_type",
        "RequestError",
        "You have already created a QualificationType with this name.",
    )
    stub.add_response(
        "list_qualification_types",
        {"NumResults": 1, "QualificationTypes": [{"QualificationTypeId": QUAL_TYPE, "Name": name}]},
        {"Query": name, "MustBeRequestable": False, "MustBeOwnedByCaller": True, "MaxResults": 100},
    )
    platform = get_platform("mturk")
    assert platform._create_qualification_type(campaign) == QUAL_TYPE


def test_the_quiz_below_mturks_minimum_pay_refuses_publishing(stub):
    campaign = quiz_campaign()
    campaign.qualification_reward = Decimal("0.05")
    campaign.save(update_fields=["qualification_reward"])
    refusals = get_platform("mturk").cost_preview(campaign, SITE).refusals
    assert any(reason.startswith("the qualification quiz: the reward of $0.05") for reason in refusals)
