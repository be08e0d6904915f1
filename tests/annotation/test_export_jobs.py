"""The "export_dataset" job: progress, a file under MEDIA_ROOT/exports/, a staff-only download."""

import csv
import io
import zipfile

import pytest
from django.urls import reverse

from annotation.export.jobs import export_dataset_job
from jobs.models import JobRun
from jobs.registry import get as job_spec
from jobs.runtime import start_job
from tests.annotation.export_helpers import add_labels


@pytest.fixture
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def test_the_job_is_registered():
    assert job_spec("export_dataset").function is export_dataset_job


def run_export(django_capture_on_commit_callbacks, **parameters) -> JobRun:
    with django_capture_on_commit_callbacks(execute=True):
        job = start_job("export_dataset", parameters)
    job.refresh_from_db()
    return job


def test_a_csv_job_reports_progress_and_writes_under_exports(
    tiny_corpus, media, researcher, django_capture_on_commit_callbacks
):
    add_labels(tiny_corpus)
    job = run_export(django_capture_on_commit_callbacks, kind="gold", format="csv", label="Anxious")
    assert job.status == JobRun.SUCCEEDED, job.error
    assert (job.progress_done, job.progress_total, job.result["rows"]) == (1, 1, 1)
    path = media / "exports" / job.result["file"]
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    assert [r["label"] for r in rows] == ["Anxious"]


def test_an_hf_job_leaves_one_zip(tiny_corpus, media, client, researcher, django_capture_on_commit_callbacks):
    add_labels(tiny_corpus)
    job = run_export(django_capture_on_commit_callbacks, kind="silver", format="hf")
    assert job.status == JobRun.SUCCEEDED, job.error
    assert [p.name for p in (media / "exports").iterdir()] == [job.result["file"]]
    client.force_login(researcher)
    response = client.get(reverse("annotation:analysis_export_download", args=[job.pk]))
    assert response.status_code == 200
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    assert {"README.md", "dataset_info.json"} <= set(archive.namelist())


def test_a_bad_request_fails_the_job_with_the_reason(tiny_corpus, media, django_capture_on_commit_callbacks):
    with pytest.raises(Exception, match="no dialogue classifier version"):
        run_export(django_capture_on_commit_callbacks, kind="silver", format="csv")
    job = JobRun.objects.get(kind="export_dataset")
    assert job.status == JobRun.FAILED and "no dialogue classifier version" in job.error


def test_the_download_is_staff_only(
    tiny_corpus, media, client, annotators, outsider, django_capture_on_commit_callbacks
):
    add_labels(tiny_corpus)
    job = run_export(django_capture_on_commit_callbacks, kind="gold", format="jsonl")
    urls = [
        reverse("annotation:analysis_export_download", args=[job.pk]),
        reverse("annotation:analysis_export_status", args=[job.pk]),
    ]
    for url in urls:
        assert client.get(url).status_code == 302
        for user in (annotators[0], outsider):
            client.force_login(user)
            response = client.get(url)
            assert response.status_code == 403
            client.logout()
    assert not str(job.result["file"]).startswith("/") and "media/" not in reverse(
        "annotation:analysis_export_download", args=[job.pk]
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("parameters", "field"),
    [
        ({"kind": "platinum", "format": "csv"}, "kind"),
        ({"kind": "gold", "format": "xlsx"}, "format"),
        ({"kind": "gold", "format": "csv", "min_confidence": 2}, "min_confidence"),
        ({"kind": "gold", "format": "csv", "split": "dev"}, "split"),
    ],
)
def test_bad_export_parameters_are_refused_naming_the_field(parameters, field):
    from jobs.registry import InvalidParameters

    with pytest.raises(InvalidParameters) as refused:
        start_job("export_dataset", parameters)
    assert field in refused.value.errors
    assert not JobRun.objects.exists()
