"""The export API: streamed exports, export jobs and their status; staff only."""

import csv
import io
import json

import pytest
from django.http import StreamingHttpResponse
from django.urls import reverse
from rest_framework.test import APIClient

from jobs.models import JobRun
from tests.annotation.export_helpers import GOLD, add_labels


@pytest.fixture
def labeled(tiny_corpus):
    return tiny_corpus, add_labels(tiny_corpus)


@pytest.fixture
def api():
    return APIClient()


def body(response) -> str:
    return b"".join(response.streaming_content).decode()


def test_every_endpoint_is_staff_only(labeled, api, researcher, annotators, outsider):
    job = JobRun.objects.create(kind="export_dataset", parameters={"kind": "gold", "format": "csv"})
    calls = [
        ("get", reverse("api-export-stream") + "?kind=gold"),
        ("post", reverse("api-export-create")),
        ("get", reverse("api-export-detail", args=[job.pk])),
    ]
    for user in (None, annotators[0], outsider):
        api.force_authenticate(user)
        for method, url in calls:
            response = getattr(api, method)(url, {"kind": "gold", "file_format": "csv"} if method == "post" else None)
            assert response.status_code in (401, 403) if user is None else response.status_code == 403, (user, url)
    assert JobRun.objects.count() == 1  # nobody but staff queued anything
    api.force_authenticate(researcher)
    assert api.get(calls[0][1]).status_code == 200
    assert api.get(calls[2][1]).status_code == 200


def test_the_stream_endpoint_streams_csv_with_filters(labeled, api, researcher):
    api.force_authenticate(researcher)
    response = api.get(reverse("api-export-stream"), {"kind": "gold", "file_format": "csv", "label": "proud"})
    assert isinstance(response, StreamingHttpResponse)
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(body(response))))
    assert [(r["label"], r["text"]) for r in rows] == [("Proud", "I knew you could do it.")]


def test_the_stream_endpoint_streams_jsonl(labeled, api, researcher):
    api.force_authenticate(researcher)
    response = api.get(reverse("api-export-stream"), {"kind": "gold", "file_format": "jsonl"})
    rows = [json.loads(line) for line in body(response).splitlines()]
    assert [r["label"] for r in rows] == [name for names in GOLD.values() for name in names]
    assert rows[0]["votes"] == {"Anxious": 2, "Neutral": 1}


def test_the_stream_endpoint_refuses_bad_parameters(labeled, api, researcher):
    api.force_authenticate(researcher)
    assert api.get(reverse("api-export-stream"), {"kind": "golden"}).status_code == 400
    assert api.get(reverse("api-export-stream"), {"kind": "gold", "file_format": "hf"}).status_code == 400
    response = api.get(reverse("api-export-stream"), {"kind": "silver", "model_version": 999})
    assert response.status_code == 400 and "does not exist" in response.json()["detail"]


def test_a_job_starts_and_its_status_is_readable(
    labeled, api, researcher, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path
    api.force_authenticate(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            reverse("api-export-create"),
            {"kind": "silver", "file_format": "jsonl", "min_confidence": 0.9},
            format="json",
        )
    assert response.status_code == 202
    job_id = response.json()["id"]
    status = api.get(reverse("api-export-detail", args=[job_id])).json()
    assert status["status"] == "succeeded" and status["result"]["rows"] == 3
    assert status["progress_done"] == status["progress_total"] == 3
    assert status["download_url"].endswith(reverse("annotation:analysis_export_download", args=[job_id]))
    job = JobRun.objects.get(pk=job_id)
    assert job.created_by == researcher and job.parameters["model_version"] == labeled[1].pk


def test_a_bad_job_request_is_refused_before_queueing(labeled, api, researcher):
    api.force_authenticate(researcher)
    response = api.post(
        reverse("api-export-create"), {"kind": "gold", "file_format": "csv", "source": "self"}, format="json"
    )
    assert response.status_code == 400 and "not part of gold" in response.json()["detail"]
    assert api.post(reverse("api-export-create"), {"kind": "gold"}, format="json").status_code == 400
    assert not JobRun.objects.exists()


def test_an_unknown_job_is_404(db, api, researcher):
    api.force_authenticate(researcher)
    other = JobRun.objects.create(kind="train_classifier")
    assert api.get(reverse("api-export-detail", args=[other.pk])).status_code == 404
