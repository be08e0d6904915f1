"""Redundancy policies as campaigns, end to end on the demo's generated corpus and simulated crowd.

    .venv/bin/python bench/policy_campaigns.py [--dialogues 60] [--database-url postgres://...]

What it does: (re)creates the PostgreSQL database `bench_policy` (override with --database-url),
migrates it, generates and ingests the demo corpus, then runs one campaign per policy on its own
`--dialogues` dialogues (disjoint sets: a worker never meets a dialogue twice, across campaigns
too), through build_hits, the simulated crowd (labeling.platforms.simulated_crowd.simulate_until_settled:
answers through the annotator services, follow-up HITs round after round) and aggregation. The
corpus has no suggestion model's predictions, so `model_informed` is left out: it would run as
`until_agreement` (bench/adaptive_replay.py measures it with a real model on the EDOS votes).

Per policy: `answers_ratio` (work answers saved over what `fixed` buys), `accuracy` (gold equal to
the corpus's truth, over the dialogues with a gold), `coverage` (share of dialogues with a gold),
`follow_up_hits`. Ends with one line:
    dialogues=N fixed_accuracy= until_agreement_answers_ratio= until_agreement_accuracy=
"""

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.labeling_load import recreate_database, setup_django

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_policy"
POLICIES = ("fixed", "until_agreement")


def run_policy(policy: str, dialogues: list, truth_path: Path) -> dict:
    from labeling.models import HIT
    from labeling.platforms.simulated_crowd import read_truth, simulate_until_settled
    from labeling.services.campaigns import create_campaign, set_campaign_status
    from labeling.task_types.last_turn_label.aggregation import aggregate_campaign
    from labeling.work.hits import build_hits
    from labeling.work.policy import answers_bought

    campaign = create_campaign(policy, dialogues_per_hit=3, quiz_per_hit=0, redundancy_policy=policy)
    build_hits(campaign, dialogues, seed=15)
    set_campaign_status(campaign, "open")
    truth = read_truth(truth_path)
    simulate_until_settled(campaign, truth)
    aggregate_campaign(campaign)
    bought = answers_bought(campaign)
    right, gold = _accuracy(campaign, truth)
    return {
        "answers_ratio": bought["answers"] / bought["fixed_answers"],
        "accuracy": right / gold if gold else 0.0,
        "coverage": gold / len(dialogues),
        "follow_up_hits": HIT.objects.filter(campaign=campaign, kind=HIT.FOLLOW_UP).count(),
    }


def _accuracy(campaign, truth) -> tuple[int, int]:
    from annotation.demo_corpus.generator import normalised
    from labeling.models import AggregatedLabel

    right = gold = 0
    for row in AggregatedLabel.objects.filter(campaign=campaign, label__isnull=False).select_related("turn", "label"):
        known = truth.get(normalised(row.turn.text))
        if known is None:
            continue
        gold += 1
        right += row.label.name in (known.label, known.alt)
    return right, gold


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dialogues", type=int, default=60, help="dialogues per policy campaign")
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    args = parser.parse_args()
    recreate_database(args.database_url)
    setup_django(args.database_url, "bench-policy-campaigns")
    from django.core.management import call_command

    from annotation.demo_corpus.generator import TRUTH_FILE, generate, write_corpus
    from annotation.ingestion import IngestOptions, ingest_paths
    from annotation.models import Dialogue

    call_command("migrate", verbosity=0)
    folder = Path(tempfile.mkdtemp(prefix="bench-policy-"))
    write_corpus(generate(args.dialogues * len(POLICIES) * 2, seed=4), folder)
    ingest_paths([folder], IngestOptions())
    pool = list(Dialogue.objects.filter(language="en").order_by("pk"))
    results = {}
    for index, policy in enumerate(POLICIES):
        chosen = pool[index * args.dialogues : (index + 1) * args.dialogues]
        results[policy] = run_policy(policy, chosen, folder / TRUTH_FILE)
        figures = " ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in results[policy].items())
        print(f"policy={policy} {figures}")
    print(
        f"dialogues={args.dialogues} fixed_accuracy={results['fixed']['accuracy']:.3f} "
        f"until_agreement_answers_ratio={results['until_agreement']['answers_ratio']:.3f} "
        f"until_agreement_accuracy={results['until_agreement']['accuracy']:.3f}"
    )


if __name__ == "__main__":
    main()
