import pytest
from labeling.models import *
from labeling.platforms import standin
from labeling.platforms.standin.crowd import StudyRun, GOOD
from tests.labeling.platform_study import platforms, study_campaign, BEHAVIOURS
pytestmark = pytest.mark.django_db
def test_dbg(platforms):
    s = standin.ProlificStandIn(); standin.install(s)
    run = StudyRun(study_campaign("prolific", qualified=False), s)
    run.publish()
    people=[f"p{i:02d}W" for i in range(len(BEHAVIOURS))]
    for p,b in zip(people,BEHAVIOURS): print(p,b,run.arrive(p,b), [x.status for x in s.studies.values()])
    print(run.sync()); print([x.status for x in s.studies.values()]); print(run.sync())
    for p in people: print(p, run.arrive(p, GOOD))
    print(run.sync())
    print([(x.participant_id, x.status) for x in s.submissions.values()])
    print(list(Assignment.objects.values_list("worker__external_id","status","hit_id")))
