"""The dataset_utility job (Table 7) through the job runtime on a small corpus written here: the
stored table, resuming at an epoch boundary, refusals that name what is wrong, the command, and
the analysis page that shows the table (which only reads it)."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation.models import Dialogue, Label, ModelVersion, Turn, TurnLabel
from jobs.models import JobRun
from jobs.registry import InvalidParameters
from jobs.runtime import retry_job, start_job
from mlworkers.generation import utility_run
from mlworkers.ml.generation import response_model
from tests.mlworkers.tiny_models import one_torch_thread

pytestmark = pytest.mark.django_db

OPENINGS = ["where were you", "did you call", "is it late", "are you cold", "who is there", "can we go"]
REPLIES = ["at the harbour", "twice today", "almost midnight", "a little", "only me", "in a minute"]
TINY = {
    "layers": 1, "heads": 2, "hidden": 16, "ffn": 32, "vocab_size": 150, "max_context_tokens": 16,
    "max_response_tokens": 8, "max_epochs": 2, "patience": 5, "lr": 0.005, "batch_size": 16,
    "beam_size": 2, "generate_limit": 3,
}  # fmt: skip


@pytest.fixture(autouse=True)
def _one_thread():
    yield from one_torch_thread()


@pytest.fixture
def corpus(ml_settings, tiny_encoder, run_jobs_at_once):
    """40 three-turn dialogues (30 train, 5 validation, 5 test); every other one has a crowd label."""
    ml_settings.ENCODER_MODEL = str(tiny_encoder)
    label = Label.objects.order_by("pk").first()
    for index in range(40):
        split = "train" if index < 30 else "validation" if index < 35 else "test"
        dialogue = Dialogue.objects.create(content_hash=f"t7-{index}", split=split, turn_count=3)
        texts = [OPENINGS[index % 6], REPLIES[index % 6], f"{REPLIES[(index + 1) % 6]} then"]
        turns = [Turn.objects.create(dialogue=dialogue, position=p, text=t, token_count=3) for p, t in enumerate(texts)]
        if index % 2 == 0:
            TurnLabel.objects.create(turn=turns[-1], label=label, source=TurnLabel.CROWD)
    return ml_settings


def _start(**parameters):
    return start_job("dataset_utility", {**TINY, **parameters})


def test_the_job_stores_a_table_with_a_row_per_model_and_a_column_group_per_test_set(corpus):
    job = _start(finetune="gold", test_sets="raw")
    job.refresh_from_db()
    assert job.status == JobRun.SUCCEEDED, job.error
    version = ModelVersion.objects.get(pk=job.result["model_version"], kind=ModelVersion.RESPONSE)
    cells = {(row["row"], row["test"]): row for row in version.metrics["table7"]}
    assert set(cells) == {(row, test) for row in ("pretrained", "finetuned_gold") for test in ("gold", "raw")}
    for row in cells.values():
        assert 1.0 < row["ppl"] < 150 and 0.0 <= row["d1"] <= 1.0 and 0.0 <= row["d2"] <= 1.0
        assert -1.0 <= row["ses"] <= 1.0
    # raw test: dialogues 35-39 x 2 pairs; gold test: the labeled ones among them (36, 38) x 2
    assert cells[("pretrained", "raw")]["pairs"] == 10 and cells[("pretrained", "gold")]["pairs"] == 4
    assert version.training_data["splits"]["raw"]["train"] == 60
    assert version.metrics["command"].startswith("python manage.py dataset_utility --pretrain raw --finetune gold")
    folder = corpus.MEDIA_ROOT / version.artifact_dir
    assert (folder / "pretrained" / "model.pt").exists() and (folder / "finetuned_gold" / "tokenizer.json").exists()
    assert not (corpus.MEDIA_ROOT / "dataset_utility" / f"job-{job.pk}").exists()
    assert job.progress_done == job.progress_total > 0


def test_a_retried_job_resumes_at_the_last_epoch_boundary(corpus, monkeypatch):
    trained, lost = [], []
    real_epoch = response_model._train_epoch

    def counting_epoch(*args, **kwargs):
        trained.append(1)
        if len(trained) == 2 and not lost:
            lost.append(1)
            raise RuntimeError("worker lost")
        return real_epoch(*args, **kwargs)

    monkeypatch.setattr(response_model, "_train_epoch", counting_epoch)
    with pytest.raises(RuntimeError, match="worker lost"):
        _start(max_epochs=3)
    job = JobRun.objects.get(kind="dataset_utility")
    assert job.status == JobRun.FAILED and "worker lost" in job.error
    checkpoint = corpus.MEDIA_ROOT / "dataset_utility" / f"job-{job.pk}" / "pretrained.checkpoint.pt"
    assert checkpoint.exists()
    trained.clear()
    retry_job(job)
    job.refresh_from_db()
    assert job.status == JobRun.SUCCEEDED, job.error
    # epochs 2 and 3 of the pre-training (epoch 1 was kept) and 3 of the fine-tuning; 5, not 6
    assert len(trained) == 5
    history = ModelVersion.objects.get(pk=job.result["model_version"]).metrics["history"]
    assert [row["epoch"] for row in history["pretrained"]] == [1, 2, 3]


def test_it_refuses_a_hidden_size_the_heads_do_not_divide():
    with pytest.raises(InvalidParameters, match="multiple of the heads"):
        start_job("dataset_utility", {"hidden": 30, "heads": 4})


def test_it_fails_naming_an_unknown_dataset(corpus):
    job = _start(finetune="golden")
    job.refresh_from_db()
    assert job.status == JobRun.FAILED and "'golden'" in job.error and "gold_silver" in job.error


def test_it_fails_naming_the_line_of_a_bad_pairs_file(corpus, tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    good = {"interaction": "Hello.", "response": "Hi.", "file": "a.srt"}
    pairs.write_text(json.dumps(good) + "\n" + json.dumps({"interaction": "Hi."}) + "\n")
    job = _start(test_sets=f"pairs:{pairs}")
    job.refresh_from_db()
    assert job.status == JobRun.FAILED and "line 2: missing response, file" in job.error


def test_a_pairs_file_is_split_by_film(tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    rows = [{"interaction": f"Line {i}.", "response": "Yes.", "file": f"film-{i % 7}.srt"} for i in range(70)]
    pairs.write_text("\n".join(json.dumps(row) for row in rows))
    found = utility_run.read_pairs_file(pairs)
    films = {side: {pair.context[0].split()[1].rstrip(".") for pair in found[side]} for side in found}
    films = {side: {int(number) % 7 for number in numbers} for side, numbers in films.items()}
    assert sum(len(side) for side in found.values()) == 70
    assert not (films["train"] & films["test"]) and not (films["train"] & films["validation"])


def test_the_command_queues_the_job_and_prints_the_table_lines(corpus):
    out = io.StringIO()
    flags = [f"--{key.replace('_', '-')}={value}" for key, value in TINY.items()]
    call_command("dataset_utility", *flags, "--max-epochs=1", stdout=out)
    lines = [line for line in out.getvalue().splitlines() if line.startswith("row=")]
    assert [line.split(" ppl=")[0] for line in lines] == ["row=pretrained test=gold", "row=finetuned_gold test=gold"]


def test_the_command_names_a_bad_parameter(db):
    with pytest.raises(CommandError, match="beam_size"):
        call_command("dataset_utility", "--beam-size=0")


def _stored_table_metrics():
    return {
        "table7": [
            {"row": "pretrained", "test": "gold", "ppl": 81.25, "d1": 0.12, "d2": 0.3, "ses": 0.41, "pairs": 9},
            {"row": "finetuned_gold", "test": "gold", "ppl": 42.5, "d1": 0.2, "d2": 0.5, "ses": 0.52, "pairs": 9},
        ],
        "test_sets": ["gold", "pairs:/data/p.jsonl"],
        "command": "python manage.py dataset_utility --finetune gold",
    }


def _stored_table():
    return ModelVersion.objects.create(
        kind=ModelVersion.RESPONSE, name="table 7 run", base_model="from scratch", artifact_dir="models/99",
        metrics=_stored_table_metrics(),
    )  # fmt: skip


def test_the_analysis_page_shows_the_stored_table_and_its_command(client, researcher, django_assert_max_num_queries):
    _stored_table()
    client.force_login(researcher)
    with django_assert_max_num_queries(6):
        page = client.get(reverse("annotation:analysis_utility")).content.decode()
    assert "Test: gold" in page and "Test: pairs:/data/p.jsonl" in page
    assert "81.25" in page and "42.50" in page and "0.520" in page
    assert "python manage.py dataset_utility --finetune gold" in page


def test_the_analysis_page_is_staff_only_and_says_when_there_is_no_table(client, researcher, annotators):
    client.force_login(annotators[0])
    assert client.get(reverse("annotation:analysis_utility")).status_code == 403
    client.force_login(researcher)
    page = client.get(reverse("annotation:analysis_utility")).content.decode()
    assert 'id="no-table"' in page


def test_the_evaluation_page_leaves_the_response_models_out(client, researcher):
    _stored_table()
    client.force_login(researcher)
    page = client.get(reverse("annotation:analysis_evaluation")).content.decode()
    assert "table 7 run" not in page


def test_the_page_table_has_a_column_group_per_test_set_and_a_gap_where_a_cell_is_missing():
    from annotation.analysis.utility import utility_table

    table = utility_table(_stored_table_metrics())
    assert table.test_sets == ["gold", "pairs:/data/p.jsonl"]
    assert [row.name for row in table.rows] == ["pretrained", "finetuned_gold"]
    assert table.rows[0].cells[0] == {"ppl": 81.25, "d1": 0.12, "d2": 0.3, "ses": 0.41}
    assert table.rows[0].cells[1] is None
    assert utility_table({}) is None


def test_it_fails_naming_a_dataset_with_nothing_to_train_on(corpus):
    job = _start(finetune="label:Nostalgic")
    job.refresh_from_db()
    assert (job.status, job.error) == (
        JobRun.FAILED,
        "dataset 'label:Nostalgic' has 0 train and 0 validation pairs: it needs both",
    )


def test_a_checkpoint_written_before_response_model_moved_still_loads(tmp_path):
    """A checkpoint pickles TrainState by its module path; one written while the module was
    mlworkers.ml.response_model (before issue 49's regroup) loads as the same state."""
    import torch

    path = tmp_path / "pretrained.checkpoint.pt"
    torch.save(
        response_model.TrainState(epoch=3, history=[{"validation_loss": 1.5}]),
        path,
        _use_new_zipfile_serialization=False,
    )
    written_before = path.read_bytes().replace(response_model.__name__.encode(), b"mlworkers.ml.response_model")
    assert written_before != path.read_bytes()
    path.write_bytes(written_before)
    with pytest.raises(ModuleNotFoundError):
        torch.load(path, weights_only=False)
    state = utility_run.load_checkpoint(path)
    assert (type(state), state.epoch, state.history) == (response_model.TrainState, 3, [{"validation_loss": 1.5}])
