"""Benchmark: BotsTalk's diagnostics at several alphas, and the coherence of its dialogues spoken
from a corpus against the corpus's own dialogues and random pairs of its turns.

    .venv/bin/python bench/botstalk.py                        # alphas 0, 6, 1000 (pool), coherence on the demo corpus
    .venv/bin/python bench/botstalk.py --alpha 6 --edos       # and on EDOS dialogues (read in place)
    .venv/bin/python bench/botstalk.py --alpha 0 --alpha 3.5 --turns 8 --dialogues 60
    .venv/bin/python bench/botstalk.py --coherence-only --corpus-size 600 --dialogues 20   # coherence alone
    .venv/bin/python bench/botstalk.py --database-url postgres://postgres@127.0.0.1:5432/bench_botstalk

Everything runs in this process through `jobs.runtime.run_job`, in a dedicated bench database (a
fresh SQLite file by default, never the project's) with models in a temporary MEDIA_ROOT:

1. the example skill classifier and small NLI (jobs skill_train, nli_train);
2. per alpha, the botstalk job on the example pool and contexts (`candidates: pool`): the paper's
   diagnostics (refusals per context type, mic passes, KL quantiles);
3. coherence: the demo corpus (`annotation.demo_corpus`, `--corpus-size` dialogues) is ingested,
   then botstalk runs on `--dialogues` skill contexts recombined from the example ones, once
   speaking from the corpus's pairs and once from the hand-written pool. For each of those, the
   corpus's English dialogues (`--corpus-sample` of them at most) and random pairs of its turns
   (as many as BotsTalk's consecutive pairs, at least 300), it prints the mean SBERT similarity of
   consecutive turns (the packaged MiniLM) and the share the moderator's NLI finds contradicting
   (`mlworkers.ml.botstalk.coherence`);
4. with `--edos`, the same with EDOS's dialogues (the crowd file, read in place, `--edos-dialogues`
   of them) as the corpus: their consecutive-turn pairs go to a pairs file in the temporary folder.

The last line: `coherence_botstalk= coherence_corpus= coherence_random= contradiction_botstalk=` for
the demo corpus, and `coherence_pool=` (the hand-written pool's dialogues).
"""

import argparse
import csv
import json
import os
import random
import sys
import tempfile
import time
from itertools import groupby
from operator import itemgetter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT_ALPHA = 6.0
EDOS_CSV = ROOT.parent / "shared" / "data" / "edos" / "MTurk_groundtruth_labels_9K.csv"
EXAMPLE_CONTEXTS = ROOT / "mlworkers" / "data" / "botstalk" / "contexts.jsonl"
MIN_RANDOM_PAIRS = 300


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--alpha", type=float, action="append", help="repeatable; default 0, 6 and 1000")
    parser.add_argument("--coherence-only", action="store_true", help="skip the pool runs at each alpha")
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--top-k", type=int, default=5, help="candidates per agent the moderator judges")
    parser.add_argument("--corpus-sample", type=int, default=1000, help="corpus dialogues measured at most")
    parser.add_argument("--dialogues", type=int, default=30, help="BotsTalk dialogues for the coherence figures")
    parser.add_argument("--corpus-size", type=int, default=2400, help="demo corpus dialogues (the demo's own size)")
    parser.add_argument("--edos", action="store_true", help="coherence on EDOS dialogues too")
    parser.add_argument("--edos-csv", type=Path, default=EDOS_CSV)
    parser.add_argument("--edos-dialogues", type=int, default=3000)
    parser.add_argument("--database-url", help="a dedicated bench database (default: a new SQLite file in /tmp)")
    return parser.parse_args()


def setup_django(database_url: str, media_root: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ["MEDIA_ROOT"] = media_root
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def run(kind: str, parameters: dict) -> dict:
    from jobs.models import JobRun
    from jobs.runtime import run_job, start_job

    started = time.perf_counter()
    job = start_job(kind, parameters)
    run_job(job.pk, heartbeat=False)
    job.refresh_from_db()
    if job.status != JobRun.SUCCEEDED:
        sys.exit(f"{kind} {job.status}: {job.error}")
    shown = {key: value for key, value in parameters.items() if key != "contexts"}
    print(f"{kind} {json.dumps(shown)}: {time.perf_counter() - started:.1f} s")
    return job.result


def report(result: dict) -> dict:
    diagnostics = result["diagnostics"]
    figures = {key: diagnostics[key] for key in ("turns", "mic_passes", "mic_pass_share", "refused_share")}
    print(
        f"  stored {result['dialogues_stored']}, duplicates {result['duplicates_dropped']}, ranker {result['ranker']}"
    )
    print(f"  {json.dumps(figures)} turns_by_skill {json.dumps(diagnostics['turns_by_skill'])}")
    print(f"  refused_share_by_context {json.dumps(diagnostics['refused_share_by_context'])}")
    for name in ("kl_consecutive", "kl_offered"):
        summary = diagnostics[name]
        if summary["count"]:
            print(f"  {name} {json.dumps(summary['quantiles'])} histogram {summary['histogram']['counts']}")
    return figures


def alpha_runs(args) -> None:
    for alpha in args.alpha or [0.0, DEFAULT_ALPHA, 1000.0]:
        result = run("botstalk", {"alpha": alpha, "turns": args.turns, "seed": args.seed, "candidates": "pool"})
        figures = report(result)
        print(f"  alpha={alpha} mic_pass_share={figures['mic_pass_share']} refused_share={figures['refused_share']}")


# --- coherence ---------------------------------------------------------------------------------------------


def recombined_contexts(folder: str, count: int, seed: int) -> str:
    """`count` dialogues' skill contexts, each skill's context drawn from a different example line,
    the opening skill drawn too: more dialogues than the six example lines, same kind of text."""
    examples = [json.loads(line) for line in EXAMPLE_CONTEXTS.read_text().splitlines() if line.strip()]
    skills = sorted({skill for example in examples for skill in example["contexts"]})
    rng = random.Random(seed)
    path = Path(folder) / "contexts.jsonl"
    with path.open("w") as handle:
        for index in range(count):
            contexts = {skill: rng.choice(examples)["contexts"][skill] for skill in skills}
            record = {"id": f"mix-{index}", "contexts": contexts, "start_skill": rng.choice(skills)}
            handle.write(json.dumps(record) + "\n")
    return str(path)


def ingest_demo_corpus(folder: str, size: int) -> None:
    from django.core.management import call_command

    from annotation.demo_corpus.generator import generate, write_corpus

    started = time.perf_counter()
    corpus_folder = Path(folder) / "demo_corpus"
    write_corpus(generate(size), corpus_folder)
    with open(os.devnull, "w") as quiet:
        call_command("ingest", str(corpus_folder), "--genre", "Drama", stdout=quiet)
    print(f"ingested the demo corpus ({size} dialogues): {time.perf_counter() - started:.1f} s")


def stored_dialogues(ids=None) -> list[list[str]]:
    """The given dialogues' turns, else every English subtitle dialogue's (two turns or more)."""
    from annotation.models import Dialogue, Turn

    turns = (
        Turn.objects.filter(dialogue_id__in=ids)
        if ids is not None
        else Turn.objects.filter(dialogue__source=Dialogue.SUBTITLES, dialogue__language="en")
    )
    rows = turns.order_by("dialogue_id", "position").values_list("dialogue_id", "text")
    dialogues = [[text for _pk, text in group] for _dialogue, group in groupby(rows.iterator(), key=itemgetter(0))]
    return [turns for turns in dialogues if len(turns) >= 2]


class Measure:
    """Coherence figures with one bi-encoder and one NLI (the moderator's) for every set of dialogues."""

    def __init__(self):
        from django.conf import settings

        from mlworkers.botstalk import runs as botstalk_jobs
        from mlworkers.ml import loading

        self.encoder = loading.load_sentence_transformer(settings.ENCODER_MODEL)
        self.nli, self.nli_name = botstalk_jobs.load_moderator_nli(None, None)

    def __call__(self, name: str, dialogues: list[list[str]]) -> dict:
        from mlworkers.ml.botstalk.coherence import consecutive_pairs, contradiction_rate, mean_consecutive_similarity

        figures = {
            "dialogues": len(dialogues),
            "pairs": len(consecutive_pairs(dialogues)),
            "coherence": round(mean_consecutive_similarity(dialogues, self.encoder), 4),
            "contradiction": round(contradiction_rate(dialogues, self.nli), 4),
        }
        print(f"  {name:<22} {json.dumps(figures)}")
        return figures


def sample(dialogues: list[list[str]], count: int, seed: int) -> list[list[str]]:
    return dialogues if len(dialogues) <= count else random.Random(seed).sample(dialogues, count)


def random_pairs(dialogues: list[list[str]], botstalk: dict, seed: int) -> list[list[str]]:
    from mlworkers.ml.botstalk.coherence import random_turn_pairs

    return random_turn_pairs(dialogues, max(MIN_RANDOM_PAIRS, botstalk["pairs"]), seed=seed)


def generate(args, contexts: str, **parameters) -> list[list[str]]:
    chosen = {"contexts": contexts, "turns": args.turns, "seed": args.seed, "top_k": args.top_k}
    result = run("botstalk", {**chosen, **parameters})
    print(
        f"  candidates {result['candidates']} ({result['pairs']} pairs), stored {result['dialogues_stored']}, "
        f"too short {result['too_short']}, refused_share {result['diagnostics']['refused_share']}"
    )
    return stored_dialogues(result["dialogue_ids"])


def demo_coherence(args, folder: str, contexts: str, measure: Measure) -> dict:
    ingest_demo_corpus(folder, args.corpus_size)
    spoken = generate(args, contexts)
    pool = generate(args, contexts, candidates="pool")
    corpus = stored_dialogues()
    print(f"coherence on the demo corpus (NLI: {measure.nli_name}):")
    figures = {"botstalk": measure("botstalk (corpus)", spoken), "pool": measure("botstalk (pool)", pool)}
    figures["corpus"] = measure("corpus dialogues", sample(corpus, args.corpus_sample, args.seed))
    figures["random"] = measure("random turn pairs", random_pairs(corpus, figures["botstalk"], args.seed))
    for turns in spoken[:3]:
        print(f"  e.g. {json.dumps(turns)}")
    return figures


def read_edos_dialogues(path: Path, limit: int) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        rows = csv.DictReader(handle)
        dialogues = ([line.strip() for line in row["Dialog"].split("\n") if line.strip()] for row in rows)
        return [turns for turns in dialogues if len(turns) >= 2][:limit]


def edos_coherence(args, folder: str, contexts: str, measure: Measure) -> None:
    from annotation.ingest.pairs import turn_pairs

    if not args.edos_csv.is_file():
        print(f"EDOS: {args.edos_csv} not found, skipped")
        return
    dialogues = read_edos_dialogues(args.edos_csv, args.edos_dialogues)
    pairs_path = Path(folder) / "edos_pairs.jsonl"  # in the temporary folder, never the repository
    with pairs_path.open("w") as handle:
        for turns in dialogues:
            for interaction, response in turn_pairs((text, None, None) for text in turns):
                handle.write(json.dumps({"interaction": interaction, "response": response}) + "\n")
    spoken = generate(args, contexts, pairs_file=str(pairs_path), max_pairs=5_000_000)
    print(f"coherence on {len(dialogues)} EDOS dialogues:")
    botstalk = measure("botstalk (EDOS pairs)", spoken)
    measure("EDOS dialogues", sample(dialogues, args.corpus_sample, args.seed))
    measure("random EDOS turn pairs", random_pairs(dialogues, botstalk, args.seed))


def main() -> None:
    args = parse_args()
    folder = tempfile.mkdtemp(prefix="bench-botstalk-")
    setup_django(args.database_url or f"sqlite:///{folder}/bench.sqlite3", f"{folder}/media")
    run("skill_train", {})
    print(f"  training accuracy of the NLI: {run('nli_train', {})['training_accuracy']}")
    if not args.coherence_only:
        alpha_runs(args)
    contexts = recombined_contexts(folder, args.dialogues, args.seed)
    measure = Measure()
    figures = demo_coherence(args, folder, contexts, measure)
    if args.edos:
        edos_coherence(args, folder, contexts, measure)
    print(
        f"coherence_botstalk={figures['botstalk']['coherence']} coherence_corpus={figures['corpus']['coherence']} "
        f"coherence_random={figures['random']['coherence']} "
        f"contradiction_botstalk={figures['botstalk']['contradiction']} coherence_pool={figures['pool']['coherence']}"
    )


if __name__ == "__main__":
    main()
