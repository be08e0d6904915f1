"""The staff-only analysis pages: what each shows on a known corpus, and who may see them."""

import math

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.analysis.kl import kl_divergence
from annotation.models import Label, Movie, SubtitleFile, TurnLabel
from jobs.models import JobRun
from tests.annotation.export_helpers import add_labels

PAGES = [
    ("annotation:analysis", []),
    ("annotation:analysis_compare", []),
    ("annotation:analysis_flows", []),
    ("annotation:analysis_flows_html", []),
    ("annotation:analysis_gaps", []),
    ("annotation:analysis_examples", []),
    ("annotation:analysis_evaluation", []),
    ("annotation:analysis_utility", []),
    ("annotation:analysis_exports", []),
]


@pytest.fixture
def labeled(tiny_corpus):
    return tiny_corpus, add_labels(tiny_corpus)


@pytest.fixture
def staff_client(client, researcher):
    client.force_login(researcher)
    return client


def test_every_page_is_staff_only(labeled, client, researcher, annotators, outsider):
    # one test for all pages: the cast's password hashing dominates the setup time
    urls = [reverse(name, args=args) for name, args in PAGES]
    for user in (None, annotators[0], outsider):
        client.logout()
        if user:
            client.force_login(user)
        for url in urls:
            response = client.get(url)
            if user:  # signed in but not staff: the refusal page, not a login
                assert response.status_code == 403, (user, url)
            else:
                assert response.status_code == 302 and response["Location"].startswith("/accounts/login/"), url
    client.force_login(researcher)
    assert all(client.get(url).status_code == 200 for url in urls)


def test_every_page_renders_for_a_researcher_on_an_empty_corpus(db, staff_client):
    for name, args in PAGES:
        if name != "annotation:analysis_flows_html":
            assert staff_client.get(reverse(name, args=args)).status_code == 200, name


def test_the_statistics_page_shows_table_3_and_table_9(labeled, staff_client, django_assert_max_num_queries):
    with django_assert_max_num_queries(14):
        response = staff_client.get(reverse("annotation:analysis"))
    columns = response.context["columns"]
    assert list(columns) == ["corpus", "gold", "extended", "silver"]
    corpus = columns["corpus"].sizes
    assert (corpus.dialogues, corpus.turns, corpus.tokens) == (4, 10, 51)
    gold = columns["gold"].sizes
    assert (gold.dialogues, gold.turns, gold.tokens) == (3, 8, 40)
    assert columns["extended"].sizes.turns == 3
    assert dict(columns["gold"].dialogues_by_first_label) == {"Anxious": 1, "Excited": 1, "Apprehensive": 1}
    silver_rows = {row.label: row for row in response.context["tables"]["silver"]}
    assert silver_rows["Sad"].turns == 1 and silver_rows["Nostalgic"].dialogues == 1
    body = response.content.decode()
    assert "vendor/plotly/plotly.min.js" in body and "cdn" not in body.lower()
    assert 'id="chart-figure"' in body and "12.75" in body  # tokens per dialogue of the corpus: 51 / 4


def test_the_comparison_shows_both_distributions_and_the_kl(labeled, staff_client):
    reference = SimpleUploadedFile("ed.csv", b"label,count\nanxious,30\nexcited,10\n", content_type="text/csv")
    response = staff_client.post(
        reverse("annotation:analysis_compare"),
        {"kind": "gold", "reference": reference, "smoothing": "1", "support": "reference"},
    )
    assert response.status_code == 200
    comparison = response.context["comparison"]
    assert [(row.label, row.ours, row.reference) for row in comparison.rows] == [("Anxious", 1, 30), ("Excited", 1, 10)]
    assert comparison.kl_divergence == pytest.approx(kl_divergence([1, 1], [30, 10], smoothing=1))
    assert f"{comparison.kl_divergence:.4f}" in response.content.decode()
    assert "D<sub>KL</sub>(ours ‖ reference)" in response.content.decode()


def test_a_bad_reference_file_names_the_line(labeled, staff_client):
    reference = SimpleUploadedFile("ed.csv", b"label,count\nanxious,30\nexcited,lots\n")
    response = staff_client.post(
        reverse("annotation:analysis_compare"),
        {"kind": "gold", "reference": reference, "smoothing": "1", "support": "union"},
    )
    assert response.status_code == 400
    assert "ed.csv line 3: count &#x27;lots&#x27; is not a whole number" in response.content.decode()


def test_the_flows_page_and_its_filter(labeled, staff_client):
    response = staff_client.get(reverse("annotation:analysis_flows"), {"kind": "silver"})
    flows = response.context["flows"]
    assert flows.dialogues == 4 and len(flows.nodes) == 10 and len(flows.links) == 6
    assert response.context["chart"]["data"][0]["type"] == "sankey"
    filtered = staff_client.get(reverse("annotation:analysis_flows"), {"kind": "silver", "start_label": "Excited"})
    assert filtered.context["flows"].nodes == [(1, "Excited"), (2, "Proud")]


def test_flows_one_turn_long_show_bars_instead_of_an_empty_sankey(tiny_corpus, staff_client):
    # plotly throws "Invalid array length" for a Sankey without links: no chart is sent then
    for dialogue, name in zip(tiny_corpus, ["Sad", "Sad", "Joyful", "Angry"], strict=True):
        last = dialogue.turns.order_by("-position").first()
        TurnLabel.objects.create(turn=last, label=Label.objects.get(name=name), source=TurnLabel.CROWD)
    response = staff_client.get(reverse("annotation:analysis_flows"), {"kind": "gold"})
    assert response.context["flows"].links == [] and response.context["chart"] is None
    assert [(bar.label, bar.text) for bar in response.context["single_turn"].bars] == [
        ("Sad", "2"), ("Angry", "1"), ("Joyful", "1")
    ]  # fmt: skip
    html = response.content.decode()
    assert 'id="no-flows"' in html and "data-figure" not in html and "plotly.min.js" not in html


def test_the_flows_download_is_a_standalone_html_file(labeled, staff_client):
    response = staff_client.get(reverse("annotation:analysis_flows_html"), {"kind": "gold"})
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="flows-gold.html"'
    html = response.content.decode()
    assert "Plotly.newPlot" in html and "T1 Anxious" in html and len(html) > 1_000_000


def test_the_gap_histogram_sums_the_files(db, staff_client, settings):
    settings.DIALOGUE_GAP_SECONDS = 2.0
    movie = Movie.objects.create(title="Harbour")
    for i, counts in enumerate([[4, 2, 1, 0], [2, 0, 0, 1]]):
        SubtitleFile.objects.create(
            movie=movie,
            name=f"f{i}.srt",
            format="srt",
            sha256=f"s{i}",
            cue_gaps={"bin_seconds": 1.0, "max_seconds": 4, "counts": counts, "over_max": 0},
        )
    SubtitleFile.objects.create(movie=movie, name="old.srt", format="srt", sha256="s9")
    response = staff_client.get(reverse("annotation:analysis_gaps"))
    histogram = response.context["histogram"]
    assert histogram.counts == [6, 2, 1, 1] and histogram.files_without_histogram == 1
    assert response.context["share_below"] == pytest.approx(0.8)
    assert response.context["chart"]["layout"]["shapes"][0]["x0"] == 2.0


def test_the_examples_filter_by_label_and_confidence(labeled, staff_client, django_assert_max_num_queries):
    url = reverse("annotation:analysis_examples")
    with django_assert_max_num_queries(8):
        response = staff_client.get(url, {"kind": "silver", "label": "Agreeing", "min_confidence": "0.9"})
    examples = response.context["examples"]
    assert len(examples) == 1 and [t.label for t in examples[0].turns] == ["Afraid", "Suggesting", "Agreeing"]
    assert examples[0].matching_positions == frozenset({2})
    assert "turn-match" in response.content.decode()
    none = staff_client.get(url, {"kind": "silver", "label": "Agreeing", "max_confidence": "0.5"})
    assert none.context["examples"] == []
    gold = staff_client.get(url, {"kind": "gold"})
    assert len(gold.context["examples"]) == 3


def test_the_evaluation_page_shows_metrics_per_label_and_confusion(labeled, staff_client):
    _, model = labeled
    model.label_names = ["Sad", "Joyful"]
    model.metrics = {
        "accuracy": 0.75,
        "macro_f1": 0.7,
        "precision": 0.72,
        "recall": 0.69,
        "per_label": {"Sad": {"precision": 0.8, "recall": 0.6, "f1": 0.686, "support": 5}},
        "confusion": [[3, 2], [0, 4]],
    }
    model.save()
    response = staff_client.get(reverse("annotation:analysis_evaluation"))
    report = response.context["report"]
    assert report.summary["macro_f1"] == 0.7 and report.confusion_labels == ["Sad", "Joyful"]
    body = response.content.decode()
    assert "0.686" in body and "macro_f1" in body and response.context["chart"]["data"][0]["z"] == [[3, 2], [0, 4]]


def test_the_export_page_starts_a_job(labeled, staff_client, settings, tmp_path, django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = tmp_path
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(
            reverse("annotation:analysis_exports"), {"kind": "gold", "format": "csv", "split": ""}
        )
    assert response.status_code == 302
    job = JobRun.objects.get(kind="export_dataset")
    assert job.status == JobRun.SUCCEEDED and job.parameters["kind"] == "gold"
    page = staff_client.get(reverse("annotation:analysis_exports")).content.decode()
    assert reverse("annotation:analysis_export_download", args=[job.pk]) in page
    partial = staff_client.get(reverse("annotation:analysis_export_status", args=[job.pk]))
    assert "Download" in partial.content.decode()


def test_the_export_page_refuses_a_bad_request(labeled, staff_client):
    response = staff_client.post(
        reverse("annotation:analysis_exports"), {"kind": "gold", "format": "csv", "source": "self"}
    )
    assert response.status_code == 400 and "not part of gold" in response.content.decode()
    assert not JobRun.objects.exists()


def test_kl_of_a_label_missing_in_the_reference_is_finite_with_smoothing(labeled, staff_client):
    reference = SimpleUploadedFile("ed.csv", b"anxious,3\n")
    response = staff_client.post(
        reverse("annotation:analysis_compare"),
        {"kind": "gold", "reference": reference, "smoothing": "1", "support": "union"},
    )
    assert math.isfinite(response.context["comparison"].kl_divergence)
    assert len(response.context["comparison"].rows) == 8


def test_statistics_are_cached_until_the_labels_change(labeled, staff_client, django_assert_max_num_queries):
    dialogues, _ = labeled
    url = reverse("annotation:analysis")
    first = staff_client.get(url).context["columns"]["gold"].sizes.turns
    with django_assert_max_num_queries(9):  # session, user, versions, fingerprint: no row streaming
        assert staff_client.get(url).context["columns"]["gold"].sizes.turns == first
    TurnLabel.objects.create(turn=dialogues[3].turns.first(), label=Label.objects.get(name="Sad"), source="crowd")
    assert staff_client.get(url).context["columns"]["gold"].sizes.turns == first + 1
