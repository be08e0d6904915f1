"""The `ingest` job: the same ingestion, chunked, with progress, through the job registry."""

import threading

import pytest
from django.db import connection

from annotation.models import Dialogue, SubtitleFile
from jobs.models import JobRun
from jobs.registry import get as job_spec
from jobs.runtime import run_job, start_job

SCENES = [
    [(1.0, 2.0, "Don't go."), (2.5, 3.0, "I have to.")],
    [(1.0, 2.0, "We won!"), (2.5, 3.0, "I knew we would.")],
    [(1.0, 2.0, "Who is there?"), (2.5, 3.0, "Only the wind.")],
]


def test_the_job_is_registered_on_the_default_queue():
    queue = job_spec("ingest").queue
    assert queue == "default"


@pytest.mark.django_db
def test_the_job_ingests_in_chunks_and_reports_progress(write_srt, tmp_path, django_capture_on_commit_callbacks):
    for number, scene in enumerate(SCENES):
        write_srt(f"corpus/film{number}.srt", scene)
    write_srt("corpus/bad.srt", SCENES[0]).write_text("1\n00:00:01,000 -> 00:00:02,000\nBroken.\n")
    with django_capture_on_commit_callbacks(execute=True):
        job = start_job("ingest", {"paths": [str(tmp_path / "corpus")], "chunk_size": 2, "genres": ["Drama"]})
    job.refresh_from_db()
    assert job.status == JobRun.SUCCEEDED
    assert (job.progress_done, job.progress_total) == (4, 4)
    assert job.result["files"] == 3 and job.result["failed_files"] == 1 and job.result["dialogues"] == 3
    assert "bad.srt, line 2" in job.result["errors"][0]
    assert SubtitleFile.objects.count() == 3


@pytest.mark.django_db
def test_a_rerun_of_the_job_skips_what_is_done(write_srt, tmp_path):
    for number, scene in enumerate(SCENES):
        write_srt(f"corpus/film{number}.srt", scene)
    first = JobRun.objects.create(kind="ingest", parameters={"paths": [str(tmp_path / "corpus")]})
    run_job(first.pk)
    second = JobRun.objects.create(kind="ingest", parameters={"paths": [str(tmp_path / "corpus")]})
    result = run_job(second.pk)
    assert (result["files"], result["skipped_files"]) == (0, 3)
    assert Dialogue.objects.count() == 3


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_processes_ingesting_the_same_dialogues_store_them_once(write_srt):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: SQLite serialises writers, so nothing runs concurrently")
    from annotation.ingestion import IngestOptions, ingest_file

    shared = [(1.0, 2.0, f"Line {i} of the shared scene.") for i in range(40)]
    paths = [
        write_srt(f"copy{n}.srt", shared + [(100.0, 101.0, f"Own line {n}."), (101.5, 102.0, "Bye.")]) for n in range(2)
    ]
    outcomes = []
    barrier = threading.Barrier(2)

    def worker(path):
        barrier.wait()
        try:
            outcomes.append(ingest_file(path, IngestOptions()))
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(path,)) for path in paths]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(o.status for o in outcomes) == ["imported", "imported"]
    assert sorted(o.dialogues for o in outcomes) == [1, 2]
    assert sum(o.duplicates_dropped for o in outcomes) == 1
    assert Dialogue.objects.count() == 3


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("parameters", "field"),
    [
        ({"paths": []}, "paths"),
        ({"paths": ["x"], "chunk_size": 0}, "chunk_size"),
        ({"paths": ["x"], "disabled_rules": ["no_such_rule"]}, "disabled_rules"),
        ({"paths": ["x"], "gap_seconds": -5}, "gap_seconds"),
        ({"paths": ["x"], "speling": 1}, "speling"),
    ],
)
def test_bad_ingest_parameters_are_refused_naming_the_field(parameters, field):
    from jobs.registry import InvalidParameters

    with pytest.raises(InvalidParameters) as refused:
        start_job("ingest", parameters)
    assert field in refused.value.errors
    assert not JobRun.objects.exists()


@pytest.mark.django_db
def test_a_large_folder_is_ingested_as_shards_cut_between_movie_folders(
    write_srt, tmp_path, django_capture_on_commit_callbacks
):
    from annotation.jobs import shard_files

    for movie in range(3):  # three movie folders of three files each
        for number, scene in enumerate(SCENES):
            write_srt(f"corpus/movie{movie}/part{number}.srt", [(start + movie * 10, end + movie * 10, f"{text} {movie}")
                      for start, end, text in scene])  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        job = start_job("ingest", {"paths": [str(tmp_path / "corpus")], "files_per_shard": 4, "chunk_size": 2})
    job.refresh_from_db()
    shards = list(job.shards.order_by("pk"))
    # batches of 4 would split movie1; the cut moves back to the folder change
    assert [len(shard.parameters["paths"]) for shard in shards] == [3, 3, 3]
    assert [{path.split("/")[-2] for path in shard.parameters["paths"]} for shard in shards] == [
        {"movie0"}, {"movie1"}, {"movie2"}
    ]  # fmt: skip
    assert job.status == JobRun.SUCCEEDED and job.result["files"] == 9 and job.result["shards"] == 3
    assert len(job.result["per_file"]) == 9 and (job.progress_done, job.progress_total) == (9, 9)
    assert SubtitleFile.objects.count() == 9 and Dialogue.objects.count() == 9
    # a folder change in the first half of a batch is not used
    files = [tmp_path / "a" / "1.srt", *[tmp_path / "b" / f"{n}.srt" for n in range(7)]]
    assert [len(batch) for batch in shard_files(files, 4)] == [4, 4]
