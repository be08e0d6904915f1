"""The client package lives in client/ (its own pyproject.toml; `make install` installs it
editable); the tests import it from there too, so a venv made before it existed still runs them."""

import sys

import pytest

from labeling.models import Campaign
from labeling.task_types.last_turn_label.aggregation import aggregate_campaign
from tests.client.server import CLIENT_DIR, PASSWORD, running_site, server_hash
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues, make_workers

if str(CLIENT_DIR) not in sys.path:
    sys.path.insert(0, str(CLIENT_DIR))


@pytest.fixture
def study(django_user_model) -> Campaign:
    """A researcher and an annotator (passwords hashed as the server hashes them), dialogues not in
    any HIT yet, and a campaign answered by three workers and aggregated (its gold labels)."""
    for username, staff in (("researcher", True), ("annotator1", False)):
        user = django_user_model.objects.create(username=username, is_staff=staff)
        django_user_model.objects.filter(pk=user.pk).update(password=server_hash(PASSWORD))
    answered = Campaign.objects.create(name="Answered")
    d = make_dialogues(2, prefix="answered")
    make_answered_hit(answered, make_workers(3), {d[0]: ["Angry", "Angry", "Sad"], d[1]: ["Sad", "Sad", "Joyful"]})
    aggregate_campaign(answered)
    make_dialogues(4, prefix="fresh")
    return answered


@pytest.fixture
def site(study, tmp_path):
    with running_site(tmp_path) as running:
        yield running
