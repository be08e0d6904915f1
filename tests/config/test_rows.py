"""config.rows: a row read by SQL built once becomes the same instance the ORM builds."""

from decimal import Decimal

import pytest

from config import rows
from labeling import hot_reads
from labeling.actions.claim import claim_next_hit
from labeling.hits import build_hits
from labeling.models import Assignment, Campaign, Worker
from labeling.workers import worker_for_user
from tests.labeling.hit_factory import make_dialogues, open_campaign

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("quiz_demo_bank"),
]  # HITs built with the built-in quiz bank


def _values(instance) -> dict:
    return {field.attname: getattr(instance, field.attname) for field in instance._meta.concrete_fields}


def test_a_row_read_once_equals_the_orm_instance_json_decimals_and_dates_included():
    campaign = open_campaign(task_config={"questions": ["a", "b"]}, reward=Decimal("0.55"))
    read = rows.fetch_one(Campaign, "t.id = %s", [campaign.pk])
    assert _values(read) == _values(Campaign.objects.get(pk=campaign.pk))
    assert read.fallback_choices == ["Neutral", "Joyful", "Sad"] and read.reward == Decimal("0.55")
    assert not read._state.adding  # saved like any instance the ORM loads
    assert rows.fetch_one(Campaign, "t.id = %s", [campaign.pk + 1000]) is None


def test_an_assignment_is_read_only_with_its_owner(annotators):
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=1)
    build_hits(campaign, make_dialogues(2), seed=1)
    owner, other = annotators[0], annotators[1]
    assignment = claim_next_hit(worker_for_user(owner))
    read = hot_reads.own_assignment(assignment.pk, owner.pk)
    assert _values(read) == _values(Assignment.objects.get(pk=assignment.pk))
    assert read.hit.campaign.pk == campaign.pk and read.hit.pk == assignment.hit_id
    assert hot_reads.own_assignment(assignment.pk, other.pk) is None
    assert Worker.objects.count() == 1
