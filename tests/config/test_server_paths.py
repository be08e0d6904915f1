"""No page shows where the server keeps its files."""

import sys

import pytest
from django.conf import settings
from django.urls import reverse

from config.web.server_paths import hide_server_paths


def test_the_longest_root_is_replaced_first():
    roots = [("/srv/app", "<project>"), ("/srv/app/media", "MEDIA_ROOT")]
    text = "No such file: /srv/app/media/exports/gold.csv (from /srv/app/mlworkers/data/seed.csv)"
    assert hide_server_paths(text, roots) == (
        "No such file: MEDIA_ROOT/exports/gold.csv (from <project>/mlworkers/data/seed.csv)"
    )


def test_the_filesystem_root_and_empty_roots_are_left_alone():
    assert hide_server_paths("/etc/passwd", [("/", "ROOT"), ("", "EMPTY")]) == "/etc/passwd"


@pytest.mark.django_db
def test_a_failed_jobs_page_shows_no_absolute_server_path(client, researcher):
    from jobs.models import JobRun

    secret = f"{settings.MEDIA_ROOT}/models/7/model.safetensors"
    job = JobRun.objects.create(
        kind="weak_train",
        status=JobRun.FAILED,
        parameters={"data": f"{settings.BASE_DIR}/mlworkers/data/weak_seed.csv"},
        result={"python": f"{sys.prefix}/lib"},
        error=f"FileNotFoundError: {secret}",
    )
    client.force_login(researcher)
    html = client.get(reverse("jobs:job_detail", args=[job.pk])).content.decode()
    assert "MEDIA_ROOT/models/7/model.safetensors" in html and "&lt;project&gt;/mlworkers/data" in html
    for root in (str(settings.MEDIA_ROOT), str(settings.BASE_DIR), sys.prefix):
        assert root not in html
