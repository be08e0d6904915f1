"""The suggestion model learned from the EDOS crowd gold, trained exactly as the pipeline does.

    nice -n 19 .venv/bin/python bench/suggestions_edos.py [--file PATH] [--dialogue-epochs N]

On a throw-away SQLite database and media folder (migrated first, not timed): the EDOS crowd file
is imported with the crowd import (labeling.services.importers.edos, one crowd TurnLabel per majority
dialogue, each dialogue in its stored train/validation/test split, annotation.splits), then the
pipeline's own jobs run as JobRuns: `weak_train` (the seed weak labeler, the cold start, measured
on the gold) and `suggest_train` (light heads over frozen MiniLM embeddings of the last turn and
its context trained on the gold train split, chosen on validation, temperature fitted on
validation). With `--dialogue-epochs N` a dialogue classifier is first trained on the gold train
split as the rounds train it (the measured recipe, the workers' votes; validation for the epoch) and
registered, so `suggest_train` weighs it too (slow on a CPU: about 45 minutes for 3 epochs).

Prints each candidate's validation figures and the chosen model's test figures, then one line:
`top1=… top3=… macro_f1=… ece=… precision_at_0.9=… share_at_0.9=… top3_at_0.9=… weak_top1=… weak_top3=… wall_s=…`
(top1/top3 on the gold TEST split; top3_at_0.9 among the test dialogues whose confidence reaches the
prefilter's 0.9, the ones the crowd would see, as the paper's crowd did; weak_* are the seed weak labeler's on the same split, trained
after the timed part; wall_s runs from the import to the suggestion model's predictions).
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT_FILE = ROOT.parent / "shared" / "data" / "edos" / "MTurk_groundtruth_labels_9K.csv"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--dialogue-epochs", type=int, default=0, help="also train a dialogue classifier candidate")
    parser.add_argument("--no-weak", action="store_true", help="skip the seed weak labeler's comparison figures")
    args = parser.parse_args()
    if not args.file.exists():
        sys.exit(f"no crowd file at {args.file}")
    workdir = tempfile.mkdtemp(prefix="suggest-bench-")
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir}/bench.sqlite3"
    os.environ["MEDIA_ROOT"] = f"{workdir}/media"
    os.environ.setdefault("ML_DEVICE", "cpu")
    os.environ.setdefault("SECRET_KEY", "bench-only")
    os.environ.setdefault("SECURE_SSL_REDIRECT", "0")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from annotation.models import TurnLabel
    from labeling.services.importers.edos import import_edos_mturk

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    imported = import_edos_mturk(args.file)
    seconds_import = time.perf_counter() - started
    gold = Counter(TurnLabel.objects.filter(source=TurnLabel.CROWD).values_list("turn__dialogue__split", flat=True))
    print(
        f"imported in {seconds_import:.0f} s: {json.dumps(imported['stored'])}; gold per split {dict(gold)}", flush=True
    )
    if args.dialogue_epochs:
        _train_dialogue_classifier(args.dialogue_epochs)
    suggest = _run("suggest_train", {})
    wall = time.perf_counter() - started
    # the cold start on the same test split, for comparison (not part of the suggestion model's time)
    weak = _run("weak_train", {}) if not args.no_weak else {"top1": float("nan"), "top3": float("nan")}
    print("candidates on the validation split:", json.dumps(suggest["candidates"], indent=1))
    print(f"chosen: {suggest['chosen']} (model version {suggest['model_version']})")
    _print_result(suggest, weak, wall)


def _run(kind: str, parameters: dict) -> dict:
    from jobs.models import JobRun
    from jobs.registry import get
    from jobs.runtime import run_job

    started = time.perf_counter()
    job = JobRun.objects.create(kind=kind, parameters=get(kind).validate(parameters))
    run_job(job.pk)
    job.refresh_from_db()
    if job.status != JobRun.SUCCEEDED:
        sys.exit(f"{kind} {job.status}: {job.error}")
    print(f"{kind}: {time.perf_counter() - started:.0f} s, {json.dumps(_short(job.result))}", flush=True)
    return job.result


def _short(result: dict) -> dict:
    return {k: v for k, v in result.items() if isinstance(v, int | float | str)}


def _train_dialogue_classifier(epochs: int) -> None:
    """A dialogue classifier trained as the rounds' first round trains it (the measured recipe: the
    workers' votes as soft targets, the no-majority training dialogues included) on the gold train
    split, validation choosing the epoch; registered like the rounds register theirs."""
    from annotation.models import ModelVersion, TurnLabel
    from mlworkers.gold import crowd_votes, dialogue_items, gold_labels, no_majority_items
    from mlworkers.registry import register_model_version
    from mlworkers.rounds.self_labeling import dialogue_classifier_learner

    started = time.perf_counter()
    train, validation = gold_labels([TurnLabel.TRAIN]), gold_labels([TurnLabel.VALIDATION])
    votes = crowd_votes([TurnLabel.TRAIN])
    learner = dialogue_classifier_learner(
        epochs, dialogue_items(list(validation), validation), votes=votes, no_majority=no_majority_items(votes)
    )
    clf = learner.train(dialogue_items(list(train), train))
    register_model_version(ModelVersion.DIALOGUE, f"dialogue classifier ({epochs} epochs on gold train)", clf)
    print(f"dialogue classifier: {time.perf_counter() - started:.0f} s")


def _print_result(suggest: dict, weak: dict, wall: float) -> None:
    metrics = suggest["metrics"]  # as a suggester (a chosen dialogue classifier keeps its own row's)
    test = metrics["test"]
    at = test["calibration"]["at_threshold"]
    print(
        f"test n={test['n']} temperature={metrics['temperature']} ece_before={metrics['uncalibrated']['ece']:.4f} "
        f"precision_at_0.9_before={metrics['uncalibrated']['at_threshold']['precision']}"
    )
    print(
        f"top1={test['top1']:.4f} top3={test['top3']:.4f} macro_f1={test['macro_f1']:.4f} "
        f"ece={test['calibration']['ece']:.4f} precision_at_0.9={_fmt(at['precision'])} share_at_0.9={at['share']:.4f} "
        f"top3_at_0.9={_fmt(at.get('top3'))} "
        f"weak_top1={weak['top1']:.4f} weak_top3={weak['top3']:.4f} wall_s={wall:.0f}"
    )


def _fmt(value) -> str:
    return "none" if value is None else f"{value:.4f}"


if __name__ == "__main__":
    main()
