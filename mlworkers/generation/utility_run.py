"""The torch side of the `dataset_utility` job (mlworkers.generation.dataset_utility): datasets, stages, scores, storage."""

from __future__ import annotations

import hashlib
import json
import pickle
import shutil
import types
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch
from django.conf import settings

from annotation import splits
from annotation.models import Dialogue, Label, ModelVersion, Prediction, Turn, TurnLabel
from jobs.models import JobRun
from jobs.runtime import JobCannotRun, report_progress
from mlworkers.generation.parameters import names, reproduce_command
from mlworkers.ml.generation import response_model as rm
from mlworkers.ml.generation.decoding import BeamSettings
from mlworkers.ml.loading import pick_device
from mlworkers.registry import register_model_version

WORK_SUBDIR = "dataset_utility"
PRETRAINED = "pretrained"
Splits = dict[str, list[rm.Pair]]


# --- datasets ----------------------------------------------------------------------------------------


def dataset_pairs(name: str, max_pairs: int | None = None) -> Splits:
    """{train, validation, test: pairs} of a named dataset; JobCannotRun names a bad one."""
    if name.startswith("pairs:"):
        found = read_pairs_file(Path(name.removeprefix("pairs:")))
    else:
        found = _dialogue_pairs(_dialogues_of(name))
    return {split: found[split][:max_pairs] if max_pairs else found[split] for split in splits.SPLITS}


def _dialogues_of(name: str):
    subtitles = Dialogue.objects.filter(source=Dialogue.SUBTITLES)
    if name == "raw":
        return subtitles
    if name == "gold":
        return subtitles.filter(pk__in=TurnLabel.objects.filter(source=TurnLabel.CROWD).values("turn__dialogue_id"))
    if name == "gold_silver":
        labeled = subtitles.filter(pk__in=TurnLabel.objects.values("turn__dialogue_id"))
        return labeled | subtitles.filter(pk__in=Prediction.objects.values("turn__dialogue_id"))
    if name.startswith("label:"):
        labels = Label.objects.named(name.removeprefix("label:"))
        if not labels.exists():
            raise JobCannotRun(f"dataset {name!r}: no label called {name.removeprefix('label:')!r}")
        return subtitles.filter(pk__in=TurnLabel.objects.filter(label__in=labels).values("turn__dialogue_id"))
    raise JobCannotRun(f"dataset {name!r}: not one of raw, gold, gold_silver, label:<name>, pairs:<path>")


def _dialogue_pairs(dialogues) -> Splits:
    found: Splits = {split: [] for split in splits.SPLITS}
    split_of = dict(dialogues.values_list("pk", "split"))
    rows = Turn.objects.filter(dialogue_id__in=list(split_of)).order_by("dialogue_id", "position")
    turns: dict[int, list[str]] = {}
    for dialogue_id, text in rows.values_list("dialogue_id", "text").iterator(chunk_size=5000):
        turns.setdefault(dialogue_id, []).append(text)
    for dialogue_id, texts in turns.items():
        found[split_of[dialogue_id] or splits.TRAIN].extend(rm.pairs_of_dialogue(texts))
    return found


def read_pairs_file(path: Path) -> Splits:
    """SubTle pairs (JSON lines with interaction, response, file), split by film."""
    if not path.is_file():
        raise JobCannotRun(f"{path}: no such pairs file")
    found: Splits = {split: [] for split in splits.SPLITS}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                row = _pair_row(path, number, line)
                found[splits.split_for(f"film:{row['file']}")].append(rm.Pair((row["interaction"],), row["response"]))
    return found


def _pair_row(path: Path, number: int, line: str) -> dict:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as error:
        raise JobCannotRun(f"{path}, line {number}: not JSON ({error.msg})") from None
    missing = [key for key in ("interaction", "response", "file") if not isinstance(row, dict) or key not in row]
    if missing:
        raise JobCannotRun(f"{path}, line {number}: missing {', '.join(missing)}")
    return row


def split_summary(found: Splits) -> dict[str, Any]:
    digest = hashlib.sha256("\n".join(f"{p.context}|{p.response}" for p in found["test"]).encode()).hexdigest()
    return {**{split: len(found[split]) for split in splits.SPLITS}, "test_digest": digest[:16]}


# --- the job -----------------------------------------------------------------------------------------


def run(job: JobRun, parameters: dict[str, Any]) -> dict[str, Any]:
    run = UtilityRun(job, parameters)
    data = run.datasets()
    tokenizer = run.tokenizer(data)
    models = {PRETRAINED: run.stage(PRETRAINED, data[parameters["pretrain"]], tokenizer, None)}
    for name in names(parameters["finetune"]):
        models[f"finetuned_{name}"] = run.stage(f"finetuned_{name}", data[name], tokenizer, models[PRETRAINED])
    table = run.table(models, data, tokenizer)
    version = run.store(models, tokenizer, table, data)
    return {"model_version": version.pk, "table": table, "command": reproduce_command(parameters)}


class UtilityRun:
    """One job's stages, sharing its parameters, its work folder and its progress count."""

    def __init__(self, job: JobRun, parameters: dict[str, Any]):
        self.job, self.p = job, parameters
        self.folder = Path(settings.MEDIA_ROOT) / WORK_SUBDIR / f"job-{job.pk}"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.train_settings = rm.TrainSettings(
            max_epochs=parameters["max_epochs"], patience=parameters["patience"], lr=parameters["lr"],
            batch_size=parameters["batch_size"], seed=parameters["seed"],
        )  # fmt: skip
        self.finetune, self.extra_tests = names(parameters["finetune"]), names(parameters["test_sets"])
        self.stages = 1 + len(self.finetune)
        self.total = self.stages * parameters["max_epochs"] + 1
        self.epochs_done = 0
        self.device = pick_device(settings.ML_DEVICE)
        torch.manual_seed(parameters["seed"])

    def test_sets(self) -> list[str]:
        return list(dict.fromkeys([*self.finetune, *self.extra_tests]))

    def datasets(self) -> dict[str, Splits]:
        wanted = dict.fromkeys([self.p["pretrain"], *self.finetune, *self.extra_tests])
        data = {name: dataset_pairs(name, self.p["max_pairs"]) for name in wanted}
        for name in [*self.finetune, self.p["pretrain"]]:  # a curated set is the one likelier to be missing
            train, validation = len(data[name]["train"]), len(data[name]["validation"])
            if not train or not validation:
                raise JobCannotRun(
                    f"dataset {name!r} has {train} train and {validation} validation pairs: it needs both"
                )
        for name in self.test_sets():
            if not data[name]["test"]:
                raise JobCannotRun(f"dataset {name!r} has no test pairs")
        return data

    def tokenizer(self, data: dict[str, Splits]):
        from tokenizers import Tokenizer

        path = self.folder / rm.TOKENIZER_FILE
        if path.exists():
            return Tokenizer.from_file(str(path))
        texts = (t for name in (self.p["pretrain"], *self.finetune) for pair in data[name]["train"] for t in (*pair.context[-1:], pair.response))  # fmt: skip
        tokenizer = rm.train_tokenizer(texts, self.p["vocab_size"])
        tokenizer.save(str(path))
        return tokenizer

    def config(self, tokenizer) -> rm.ModelConfig:
        keys = ("layers", "heads", "hidden", "ffn", "dropout", "max_context_tokens", "max_response_tokens")
        return rm.ModelConfig(vocab_size=tokenizer.get_vocab_size(), **{key: self.p[key] for key in keys})

    def stage(self, name: str, data: Splits, tokenizer, start_from: rm.ResponseTransformer | None):
        """Train (or resume, or read back) one row's model."""
        stage_dir = self.folder / name
        if (stage_dir / rm.WEIGHTS_FILE).exists():
            self.epochs_done += self.p["max_epochs"]
            return rm.load_model(stage_dir, self.device)[0]
        model = rm.ResponseTransformer(self.config(tokenizer)).to(self.device)
        if start_from is not None:
            model.load_state_dict(start_from.state_dict())
        checkpoint = self.folder / f"{name}.checkpoint.pt"
        state = load_checkpoint(checkpoint) if checkpoint.exists() else None
        encoded = {split: rm.encode_pairs(data[split], tokenizer, model.config) for split in ("train", "validation")}

        def on_epoch(state: rm.TrainState) -> None:
            _save_atomically(state, checkpoint)
            self.progress(
                f"{name}: epoch {state.epoch}, validation loss {state.history[-1]['validation_loss']}", state.epoch
            )

        state = rm.fit(model, encoded["train"], encoded["validation"], self.train_settings, state, on_epoch)
        rm.save_model(model, tokenizer, stage_dir)
        (stage_dir / "history.json").write_text(json.dumps(state.history))
        checkpoint.unlink(missing_ok=True)
        self.epochs_done += self.p["max_epochs"]
        return model.eval()

    def progress(self, message: str, epoch: int = 0) -> None:
        report_progress(self.job, min(self.epochs_done + epoch, self.total - 1), self.total, message)

    def table(self, models: dict[str, rm.ResponseTransformer], data: dict[str, Splits], tokenizer) -> list[dict]:
        scored_path = self.folder / "scores.json"
        rows = json.loads(scored_path.read_text()) if scored_path.exists() else []
        done = {(row["row"], row["test"]) for row in rows}
        encode = sentence_encoder(self.p["encoder"] or settings.ENCODER_MODEL)
        beam = BeamSettings(beam_size=self.p["beam_size"], max_length=self.p["max_response_tokens"], block_ngram=self.p["block_ngram"])  # fmt: skip
        for row, model in models.items():
            for test in self.test_sets():
                if (row, test) in done:
                    continue
                self.progress(f"scoring {row} on {test}")
                scores = rm.score(model, tokenizer, data[test]["test"], encode, beam, self.p["generate_limit"])
                rows.append({"row": row, "test": test, **scores.rounded()})
                scored_path.write_text(json.dumps(rows))
        return rows

    def store(self, models, tokenizer, table: list[dict], data: dict[str, Splits]) -> ModelVersion:
        bundle = ModelBundle(models, tokenizer)
        version = register_model_version(
            ModelVersion.RESPONSE,
            self.p["name"] or f"Dialogue models: {self.p['pretrain']} -> {', '.join(self.finetune)}",
            bundle,
            base_model="from scratch (encoder-decoder Transformer)",
            label_names=list(models),
            training_data={"job": self.job.pk, "splits": {name: split_summary(found) for name, found in data.items()}},
            hyperparameters={**self.p, "model": asdict(next(iter(models.values())).config)},
            metrics={"table7": table, "test_sets": self.test_sets(), "command": reproduce_command(self.p),
                     "history": bundle.histories(self.folder)},
        )  # fmt: skip
        shutil.rmtree(self.folder, ignore_errors=True)
        report_progress(self.job, self.total, self.total, f"stored as model version {version.pk}")
        return version


class ModelBundle:
    """The row models of one run, saved side by side (what register_model_version writes)."""

    def __init__(self, models: dict[str, rm.ResponseTransformer], tokenizer):
        self.models, self.tokenizer = models, tokenizer

    def save(self, directory: Path) -> None:
        for name, model in self.models.items():
            rm.save_model(model, self.tokenizer, Path(directory) / name)

    def histories(self, folder: Path) -> dict[str, list]:
        found = {name: folder / name / "history.json" for name in self.models}
        return {name: json.loads(path.read_text()) for name, path in found.items() if path.exists()}


# A checkpoint names its TrainState's class by the module it had when written. One written before
# response_model moved into mlworkers/ml/generation/ (issue 49) still loads, so a job queued again
# across that upgrade goes on at its last epoch rather than failing.
MOVED_MODULES = {"mlworkers.ml.response_model": rm.__name__}


class _CheckpointUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        return super().find_class(MOVED_MODULES.get(module, module), name)


_CHECKPOINT_PICKLE = types.SimpleNamespace(
    __name__="pickle", Unpickler=_CheckpointUnpickler, load=lambda f, **kw: _CheckpointUnpickler(f, **kw).load()
)


def load_checkpoint(path: Path) -> rm.TrainState:
    """A stage's checkpoint (our own file, written by `_save_atomically`: a full pickle, not weights only)."""
    return torch.load(path, weights_only=False, pickle_module=_CHECKPOINT_PICKLE)


def _save_atomically(state: rm.TrainState, path: Path) -> None:
    partial = path.with_suffix(".partial")
    torch.save(state, partial)
    partial.replace(path)


def sentence_encoder(name: str):
    """MiniLM (or the named sentence encoder) as texts -> normalised vectors, for SES."""
    from mlworkers.ml.loading import load_sentence_transformer

    encoder = load_sentence_transformer(name, device=pick_device(settings.ML_DEVICE))
    return lambda texts: encoder.encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
