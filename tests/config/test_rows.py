"""config.rows: a row read by SQL built once becomes the same instance the ORM builds."""

from decimal import Decimal

import pytest
from django.test.utils import isolate_apps

from config import rows
from labeling.actions.claim import claim_next_hit
from labeling.fast_path import reads as hot_reads
from labeling.models import Assignment, Campaign, Worker
from labeling.services.workers import worker_for_user
from labeling.work.hits import build_hits
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


def test_an_instance_built_from_a_row_has_exactly_what_the_orms_has(annotators):
    """rows.build fills a plain model's __dict__ in one update instead of Model.__init__: the
    instance must hold the same attributes (no more, no fewer), values and state as the ORM's."""
    campaign = open_campaign(dialogues_per_hit=2, quiz_per_hit=1, task_config={"questions": ["a"]})
    build_hits(campaign, make_dialogues(2), seed=1)
    assignment = claim_next_hit(worker_for_user(annotators[0]))
    for model, pk in [(Campaign, campaign.pk), (Assignment, assignment.pk), (Worker, assignment.worker_id)]:
        built = rows.fetch_one(model, "t.id = %s", [pk])
        loaded = model.objects.get(pk=pk)
        assert set(built.__dict__) == set(loaded.__dict__), model
        assert _values(built) == _values(loaded) and built == loaded
        assert (built._state.adding, built._state.db) == (False, "default")
    workers = Worker.objects.count()
    built.save()  # an update of its row, as for any instance the ORM loads
    assert Worker.objects.count() == workers


def test_a_model_with_init_receivers_is_built_by_its_own_init():
    """A post_init receiver (as an image field connects) must see every instance rows.build makes."""
    from django.db.models.signals import post_init

    campaign = open_campaign()
    seen = []

    def receiver(sender, instance, **kwargs):
        seen.append(instance.pk)

    post_init.connect(receiver, sender=Campaign)
    try:
        built = rows.fetch_one(Campaign, "t.id = %s", [campaign.pk])
    finally:
        post_init.disconnect(receiver, sender=Campaign)
    assert seen == [campaign.pk] and built.pk == campaign.pk


@isolate_apps("labeling")
def test_a_model_whose_fields_act_on_a_write_is_not_filled_directly():
    """A file field's descriptor wraps what is set: such a model goes through Model.from_db."""
    from django.db import models

    class Attachment(models.Model):  # noqa: DJ008
        upload = models.FileField()

        class Meta:
            app_label = "labeling"

    class Note(models.Model):  # noqa: DJ008
        campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE)
        text = models.TextField()

        class Meta:
            app_label = "labeling"

    assert not rows._plain(Attachment)
    assert rows._plain(Note) and rows._plain(Campaign)
