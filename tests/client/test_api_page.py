"""docs/api.md's examples, run as printed: its ```python blocks in order, as one script, in a fresh
Python process that imports the client from client/, against a running site (tests/client/server.py)
with only the site and the account in the environment. They must end with the campaign they create
published (open) and aggregated. Real processes: `slow` and `alone`, PostgreSQL only."""

import re
import subprocess
import sys

import pytest
from django.db import connection

from jobs.models import JobRun
from labeling.models import Campaign
from tests.client.server import PASSWORD
from tests.conftest import REPO_ROOT

PAGE = REPO_ROOT / "docs" / "api.md"
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```$", flags=re.S | re.M)


def python_blocks(text: str) -> list[str]:
    return [block.rstrip("\n") for block in PYTHON_BLOCK.findall(text)]


def test_it_reads_every_python_block_in_order():
    page = "intro\n```python\na = 1\n```\n\n```sh\nmake demo\n```\ntext\n```python\nprint(a)\n\nb = 2\n```\n"
    assert python_blocks(page) == ["a = 1", "print(a)\n\nb = 2"]


def test_the_page_shows_each_step_of_a_study():
    script = "\n".join(python_blocks(PAGE.read_text()))
    for call in ("Client.sign_in(", ".create_campaign(", ".publish(", ".wait_for_job(", ".progress(",
                 ".study_report(", ".export_labels(", "except BadRequest"):  # fmt: skip
        assert call in script, call


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.alone
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("quiz_demo_bank")
@pytest.mark.skipif(connection.vendor != "postgresql", reason="the server shares the test database (PostgreSQL)")
def test_the_examples_run_as_printed(site, tmp_path):
    script = tmp_path / "examples.py"
    script.write_text("\n\n".join(python_blocks(PAGE.read_text())) + "\n")
    account = {"CURATION_URL": site.url, "CURATION_USER": "researcher", "CURATION_PASSWORD": PASSWORD}
    run = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=site.env | account, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stdout + run.stderr
    campaign = Campaign.objects.get(name="Pilot from a script")
    assert campaign.status == Campaign.OPEN and campaign.hits.count() == 2
    jobs = JobRun.objects.filter(parameters__campaign_id=campaign.pk, status=JobRun.SUCCEEDED)
    assert set(jobs.values_list("kind", flat=True)) == {"labeling.platform_publish", "labeling.aggregate_campaign"}
    lines = run.stdout.splitlines()
    assert lines[0] == f"{campaign.pk} draft 2" and lines[1] == "2 open", run.stdout
    assert lines[-1] == "{'fallback_choices': ['not labels: Sda']}", run.stdout
    assert not Campaign.objects.filter(name="A typo").exists()
