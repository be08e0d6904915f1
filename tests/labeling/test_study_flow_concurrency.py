"""The study flow's records under races, for real: threads, each with its own PostgreSQL
connection. A step, a consent decision, a practice answer and a survey are recorded once whatever
arrives together (a double click, two tabs): the unique rows decide, never a read before a write."""

import pytest
from django.db import connection

from annotation.models import AuditEntry
from labeling.models import ConsentDecision, PracticeAnswer, StudyStep, SurveyResponse
from labeling.services.workers import worker_for_user
from labeling.study_flow import progress
from labeling.study_flow.config import clean_flow
from labeling.study_flow.demo import DEMO_FLOW
from tests.labeling.hit_factory import open_campaign
from tests.threads import run_together

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL (set DATABASE_URL)"),
    pytest.mark.django_db(transaction=True),
]


def test_racing_requests_record_each_step_decision_answer_and_survey_once(annotators):
    campaign = open_campaign(study_flow=clean_flow(DEMO_FLOW))
    worker = worker_for_user(annotators[0])
    item = DEMO_FLOW["practice"]["items"][0]

    def act(index: int):
        progress.record(worker.pk, campaign.pk, "arrived", "consent")
        progress.decide_consent(worker, campaign, index % 2 == 0)  # agree and decline pressed at once
        progress.answer_practice(worker, campaign, 0, item["choices"][index % 3])
        return progress.save_survey(worker, campaign, {"difficulty": index % 5 + 1})

    results = run_together(8, act)
    assert not [r for r in results if isinstance(r, Exception)], results
    assert StudyStep.objects.filter(step="arrived").count() == 1
    assert ConsentDecision.objects.count() == 1
    decision = ConsentDecision.objects.get()
    assert StudyStep.objects.filter(step="consented" if decision.consented else "declined").count() == 1
    assert not StudyStep.objects.filter(step="declined" if decision.consented else "consented").exists()
    assert AuditEntry.objects.filter(kind__startswith="consent.").count() == 1
    assert PracticeAnswer.objects.count() == 1
    assert SurveyResponse.objects.count() == 1 and results.count(True) == 1
