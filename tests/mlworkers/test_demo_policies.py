"""The demo's two policy campaigns: answered by the simulated crowd until their policy settles
every item, each buying fewer answers than `fixed`, their pages showing the answers saved, and a
second run adding nothing."""

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(tmp_path):
    from annotation.demo_corpus.generator import TRUTH_FILE, generate, write_corpus
    from annotation.ingestion import IngestOptions, ingest_paths

    write_corpus(generate(60, seed=4), tmp_path)
    ingest_paths([tmp_path], IngestOptions())
    return tmp_path / TRUTH_FILE


def test_the_demo_runs_both_policies_until_settled_and_shows_the_answers_saved(corpus, client, researcher):
    from labeling.models import HIT, Campaign, Response
    from labeling.task_types.last_turn_label.follow_up import create_follow_up_hits
    from mlworkers.chain.demo import POLICY_CAMPAIGNS, _policy_campaigns

    done = _policy_campaigns(corpus)
    assert set(done) == {name for name, _ in POLICY_CAMPAIGNS}
    client.force_login(researcher)
    for name, figures in done.items():
        campaign = Campaign.objects.get(name=name)
        assert figures["items"] > 0 and figures["answers"] < figures["fixed_answers"]
        assert create_follow_up_hits(campaign) == []
        page = client.get(reverse("labeling:campaign_detail", args=[campaign.pk])).content.decode()
        assert f"answers saved <strong>{figures['answers']}</strong>" in page
    assert HIT.objects.filter(kind=HIT.FOLLOW_UP).exists()
    answers = Response.objects.count()
    assert _policy_campaigns(corpus) == done and Response.objects.count() == answers
