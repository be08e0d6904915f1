"""The researcher's job pages: staff only, starting a job only queues it, htmx polling stops when
the job is finished, the model version page shows its evaluation. And the same through the API."""

from unittest import mock

import pytest
from django.urls import reverse

from annotation.models import ModelVersion
from jobs.models import JobRun
from jobs.tasks import run_job_task

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client, researcher):
    client.force_login(researcher)
    return client


def assert_refused(response, who: str) -> None:
    """Anonymous: the site's login; signed in without staff: the refusal page."""
    if who == "anonymous":
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next=")
    else:
        assert response.status_code == 403 and 'id="refusal"' in response.content.decode()


@pytest.mark.parametrize("who", ["anonymous", "outsider", "annotator"])
def test_only_staff_see_the_jobs_pages_or_start_a_job(client, who, outsider, annotators):
    if who == "outsider":
        client.force_login(outsider)
    elif who == "annotator":
        client.force_login(annotators[0])
    job = JobRun.objects.create(kind="weak_apply")
    version = ModelVersion.objects.create(kind=ModelVersion.WEAK, name="w", base_model="minilm")
    for url in (
        reverse("jobs:job_list"),
        reverse("jobs:job_detail", args=[job.pk]),
        reverse("jobs:job_status", args=[job.pk]),
        reverse("mlworkers:model_version_list"),
        reverse("mlworkers:model_version_detail", args=[version.pk]),
    ):
        assert_refused(client.get(url), who)
    with mock.patch.object(run_job_task, "apply_async") as queued:
        response = client.post(reverse("jobs:job_start"), {"kind": "weak_apply"})
    assert_refused(response, who)
    assert JobRun.objects.count() == 1 and not queued.called


def test_starting_a_job_records_it_and_queues_it_after_commit_without_running_it(
    staff_client, researcher, django_capture_on_commit_callbacks
):
    queued_patch = mock.patch.object(run_job_task, "apply_async")
    with queued_patch as queued, django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = staff_client.post(
            reverse("jobs:job_start"),
            {
                "kind": "rank_candidates",
                "rank_candidates-per_label": "50",
                "rank_candidates-min_confidence": "0.9",
                "rank_candidates-seed": "13",
            },
        )
    job = JobRun.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("jobs:job_detail", args=[job.pk])
    assert (job.kind, job.status, job.created_by) == ("rank_candidates", JobRun.QUEUED, researcher)
    assert job.parameters["per_label"] == 50 and job.parameters["min_confidence"] == 0.9  # defaults filled in
    assert len(callbacks) == 1
    queued.assert_called_once_with(args=[job.pk], queue="default")


def test_torch_jobs_go_to_the_ml_queue(staff_client, django_capture_on_commit_callbacks):
    queued_patch = mock.patch.object(run_job_task, "apply_async")
    with queued_patch as queued, django_capture_on_commit_callbacks(execute=True):
        staff_client.post(reverse("jobs:job_start"), {"kind": "weak_train"})
    assert queued.call_args.kwargs["queue"] == "ml"


@pytest.mark.parametrize(
    ("kind", "fields", "message"),
    [
        ("drop_tables", {}, "is not a job you can start here"),
        ("labeling.aggregate_campaign", {}, "is not a job you can start here"),  # internal jobs are not startable
        ("weak_apply", {"weak_apply-chunk_size": "0"}, "greater than or equal to 1"),
        ("self_label_rounds", {"self_label_rounds-epochs": "100000000"}, "less than or equal to 50"),
        ("rank_candidates", {"rank_candidates-min_confidence": "-5"}, "greater than or equal to 0"),
        ("sbert_expand", {"sbert_expand-method": "psychic"}, "Select a valid choice"),
    ],
)
def test_a_bad_start_request_is_a_400_naming_the_field_and_queues_nothing(staff_client, kind, fields, message):
    with mock.patch.object(run_job_task, "apply_async") as queued:
        response = staff_client.post(reverse("jobs:job_start"), {"kind": kind, **fields})
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not JobRun.objects.exists() and not queued.called


def test_the_start_page_only_accepts_post(staff_client):
    assert staff_client.get(reverse("jobs:job_start")).status_code == 405


def test_a_running_job_polls_its_status_partial_every_two_seconds(staff_client):
    job = JobRun.objects.create(kind="weak_apply", status=JobRun.RUNNING, progress_done=30, progress_total=120,
                                message="labeled 30 of 120 turns")  # fmt: skip
    html = staff_client.get(reverse("jobs:job_status", args=[job.pk])).content.decode()
    assert f'hx-get="{reverse("jobs:job_status", args=[job.pk])}"' in html
    assert 'hx-trigger="every 2s"' in html
    assert "width: 25%" in html and "labeled 30 of 120 turns" in html
    page = staff_client.get(reverse("jobs:job_list")).content.decode()
    assert 'hx-trigger="every 2s"' in page


@pytest.mark.parametrize("status", [JobRun.SUCCEEDED, JobRun.FAILED])
def test_a_finished_job_stops_polling(staff_client, status):
    job = JobRun.objects.create(
        kind="weak_apply", status=status, progress_done=5, progress_total=5, error="boom" if status == "failed" else ""
    )
    html = staff_client.get(reverse("jobs:job_status", args=[job.pk])).content.decode()
    assert "hx-get" not in html and "hx-trigger" not in html
    assert f'data-status="{status}"' in html


def test_the_job_page_shows_the_rounds_table(staff_client):
    row = {"round": 2, "name": "+SBERT", "training_size": 140, "dialogue_macro_f1": 0.4321, "dialogue_accuracy": 0.5,
           "fasttext_macro_f1": 0.25, "fasttext_accuracy": 0.3}  # fmt: skip
    job = JobRun.objects.create(kind="self_label_rounds", status=JobRun.SUCCEEDED, result={"table": [row]})
    html = staff_client.get(reverse("jobs:job_detail", args=[job.pk])).content.decode()
    assert "+SBERT" in html and "140" in html and "0.432" in html


def test_the_model_version_page_shows_metrics_per_label_scores_and_the_confusion_matrix(staff_client):
    report = {
        "n": 3, "accuracy": 2 / 3, "macro_f1": 0.5555, "macro_precision": 0.75, "macro_recall": 0.75,
        "label_names": ["Joyful", "Sad", "Neutral"],
        "per_label": [
            {"label": "Joyful", "precision": 0.5, "recall": 1.0, "f1": 0.6667, "support": 1, "predicted": 2},
            {"label": "Sad", "precision": 1.0, "recall": 0.5, "f1": 0.6667, "support": 2, "predicted": 1},
            {"label": "Neutral", "precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 0, "predicted": 0},
        ],
        "confusion": [[1, 0, 0], [1, 1, 0], [0, 0, 0]],
    }  # fmt: skip
    version = ModelVersion.objects.create(kind=ModelVersion.DIALOGUE, name="EB+ round 4", base_model="minilm",
                                          metrics={"test": report, "rounds": []})  # fmt: skip
    html = staff_client.get(reverse("mlworkers:model_version_detail", args=[version.pk])).content.decode()
    assert "EB+ round 4" in html and "0.556" in html and "0.667" in html
    assert "Confusion matrix" in html
    assert "<th>Neutral</th>" not in html  # a label that never occurs is left out of the matrix
    listing = staff_client.get(reverse("mlworkers:model_version_list")).content.decode()
    assert "EB+ round 4" in listing and "0.556" in listing


def test_the_api_starts_a_job_with_202_for_staff_and_refuses_others(
    client, researcher, outsider, django_capture_on_commit_callbacks
):
    client.force_login(outsider)
    assert (
        client.post("/api/jobs/", {"kind": "gold_split", "parameters": {}}, content_type="application/json").status_code
        == 403
    )
    client.force_login(researcher)
    queued_patch = mock.patch.object(run_job_task, "apply_async")
    with queued_patch as queued, django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/jobs/", {"kind": "gold_split", "parameters": {}}, content_type="application/json")
    assert response.status_code == 202
    job = JobRun.objects.get(pk=response.json()["id"])
    assert job.status == JobRun.QUEUED and queued.called
    assert client.get(f"/api/jobs/{job.pk}/").json()["kind"] == "gold_split"
    bad = client.post("/api/jobs/", {"kind": "rm_rf", "parameters": {}}, content_type="application/json")
    assert bad.status_code == 400 and "kind" in bad.json()
    assert client.get("/api/model-versions/").status_code == 200


@pytest.mark.parametrize(
    ("kind", "parameters", "field"),
    [
        ("self_label_rounds", {"epochs": 100000000}, "epochs"),
        ("gold_split", {"test_fraction": 0.2}, "test_fraction"),  # the split is not a parameter any more
        ("weak_apply", {"chunk_size": "many"}, "chunk_size"),
        ("bulk_annotate", {"dialogue_ids": "all"}, "dialogue_ids"),
        ("rank_candidates", {"per_lable": 5}, "per_lable"),
    ],
)
def test_the_api_answers_bad_parameters_with_400_naming_the_field(staff_client, kind, parameters, field):
    with mock.patch.object(run_job_task, "apply_async") as queued:
        response = staff_client.post(
            "/api/jobs/", {"kind": kind, "parameters": parameters}, content_type="application/json"
        )
    assert response.status_code == 400
    assert field in response.json()["parameters"]
    assert not JobRun.objects.exists() and not queued.called


def test_cancel_and_retry_through_the_api_and_the_page(staff_client, django_capture_on_commit_callbacks):
    job = JobRun.objects.create(kind="gold_split", status=JobRun.RUNNING, attempts=1)
    assert staff_client.post(f"/api/jobs/{job.pk}/cancel/").json()["status"] == JobRun.CANCELLED
    assert staff_client.post(f"/api/jobs/{job.pk}/cancel/").status_code == 409
    with mock.patch.object(run_job_task, "apply_async") as queued, django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(f"/api/jobs/{job.pk}/retry/")
    assert response.status_code == 202 and response.json()["status"] == JobRun.QUEUED and queued.called
    assert staff_client.post(f"/api/jobs/{job.pk}/retry/").status_code == 409
    page = staff_client.post(
        reverse("jobs:job_cancel", args=[job.pk]), {"confirm": "yes"}, follow=True
    ).content.decode()
    assert f"Cancelled job #{job.pk}" in page and f'action="/jobs/{job.pk}/retry/"' in page
    JobRun.objects.filter(pk=job.pk).update(status=JobRun.SUCCEEDED)
    page = staff_client.post(reverse("jobs:job_retry", args=[job.pk]), follow=True).content.decode()
    assert "only failed or cancelled jobs can be retried" in page


def test_the_jobs_page_renders_a_real_form_per_job_from_its_schema(staff_client):
    html = staff_client.get(reverse("jobs:job_list")).content.decode()
    assert "<textarea" not in html  # no raw JSON boxes
    assert 'name="self_label_rounds-epochs"' in html and 'max="50"' in html and 'value="2"' in html
    assert 'name="sbert_expand-method"' in html and '<option value="brute"' in html
    assert "of the dialogue classifier per round" in html  # help text from the schema


def test_the_openapi_schema_shows_each_jobs_parameters(staff_client):
    schema = staff_client.get("/api/schema/", {"format": "json"}).json()
    body = schema["paths"]["/api/jobs/"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    kinds = {option["title"]: option["properties"]["parameters"] for option in body["oneOf"]}
    assert {"self_label_rounds", "bulk_annotate", "gold_split", "run_pipeline"} <= set(kinds)
    assert kinds["self_label_rounds"]["properties"]["epochs"]["maximum"] == 50
    assert kinds["rank_candidates"]["properties"]["min_confidence"]["minimum"] == 0
