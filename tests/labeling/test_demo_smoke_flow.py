"""CI's demo smoke test (.ci/demo_smoke.py) walks the demo campaign's study flow over HTTP as a
newcomer would: consent, instructions, the practice (a retry with what its feedback taught), then
the first work screen. Run here against a live server with a demo-like campaign, so the smoke's
reading of the flow's pages is checked whenever they change."""

import importlib.util

import pytest

from labeling.models import Assignment, StudyStep
from labeling.study_flow.config import clean_flow
from labeling.study_flow.demo import DEMO_FLOW
from labeling.work.hits import build_hits
from tests.conftest import REPO_ROOT
from tests.labeling.hit_factory import make_dialogues, open_campaign


def smoke_module():
    spec = importlib.util.spec_from_file_location("demo_smoke", REPO_ROOT / ".ci" / "demo_smoke.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.usefixtures("quiz_demo_bank")
def test_the_demo_smoke_walks_the_study_flow_to_the_work(live_server, django_user_model, capsys, settings):
    # the demo serves plain HTTP with DEBUG=1 (make demo): its cookies are not Secure-only
    settings.CSRF_COOKIE_SECURE = settings.SESSION_COOKIE_SECURE = False
    settings.SECURE_SSL_REDIRECT = False
    smoke = smoke_module()
    django_user_model.objects.create_user(smoke.USERNAME, password=smoke.PASSWORD)
    campaign = open_campaign(
        name=smoke.DEMO_CAMPAIGN, dialogues_per_hit=3, quiz_per_hit=1, study_flow=clean_flow(DEMO_FLOW)
    )
    build_hits(campaign, make_dialogues(3), seed=2)
    smoke.run(live_server.url)
    printed = capsys.readouterr().out
    assert "study flow: consent done" in printed and "practice passed" in printed
    assert "practice retried" in printed  # the first choices fall short: the feedback is what passes
    steps = set(StudyStep.objects.filter(worker__user__username=smoke.USERNAME).values_list("step", flat=True))
    assert {"consented", "instructions_read", "practice_passed", "work"} <= steps
    assert Assignment.objects.filter(worker__user__username=smoke.USERNAME).count() == 1
