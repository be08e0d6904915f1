"""Command 1's main job: the demo corpus goes through the whole pipeline that exists."""

import io

import pytest
from django.core.management import call_command

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def test_demo_setup_builds_an_open_campaign_from_the_demo_subtitles_and_is_idempotent(
    django_user_model, run_jobs_at_once
):
    from annotation.models import Dialogue, Prediction, SubtitleFile
    from labeling.models import HIT, Campaign

    call_command("demo_setup", stdout=io.StringIO())

    assert SubtitleFile.objects.count() == 4
    assert Dialogue.objects.count() > 20
    assert Prediction.objects.filter(model_version__kind="weak").count() > 0
    campaign = Campaign.objects.get(name="Demo campaign")
    assert campaign.status == Campaign.OPEN
    assert HIT.objects.filter(campaign=campaign).exists()
    researcher = django_user_model.objects.get(username="demo")
    assert researcher.is_staff and researcher.check_password("demo-researcher")
    assert not django_user_model.objects.get(username="annotator1").is_staff

    counts = (Dialogue.objects.count(), Prediction.objects.count(), HIT.objects.count())
    output = io.StringIO()
    call_command("demo_setup", stdout=output)
    assert (Dialogue.objects.count(), Prediction.objects.count(), HIT.objects.count()) == counts
    assert "pipeline not run again" in output.getvalue()
