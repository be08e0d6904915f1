"""python manage.py botstalk [--pools FILE ...] [--contexts FILE] [--alpha 6.0] [--turns 6] [--candidates corpus|pool]
[--pairs-file FILE] [...] [--no-wait]

Queues the `botstalk` job (queue `ml`) and follows it: one machine-made multi-skill dialogue per
line of the contexts file goes into the corpus with source `botstalk`, its turns the responses of the
corpus's interaction-response pairs (the pool's lines when it has none); prints the run's
diagnostics (refusals per context type, KL between consecutive turns).
"""

import json

from django.core.management.base import BaseCommand

from jobs.commands import queue_and_follow


class Command(BaseCommand):
    help = "Generate multi-skill dialogues with BotsTalk's skill agents, moderator and pass-the-mic rule."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--pools", nargs="+", help="JSONL files or folders of {text, skill}; default the example")
        parser.add_argument("--contexts", help="JSONL, one dialogue's skill contexts a line; default the example")
        parser.add_argument("--skill-model-version", type=int, help="skill classifier id; default the newest")
        parser.add_argument("--nli-model", help="hub name or local path, e.g. roberta-large-mnli")
        parser.add_argument("--nli-model-version", type=int, help="NLI model version id; default the newest")
        parser.add_argument("--encoder", help="bi-encoder of the rankers; default ENCODER_MODEL")
        parser.add_argument("--alpha", type=float, default=6.0, help="pass the mic when KL < alpha (nats)")
        parser.add_argument("--turns", type=int, default=6, help="turns per dialogue at most")
        parser.add_argument("--top-k", type=int, default=5, help="candidates each agent proposes per turn")
        parser.add_argument(
            "--nli-threshold",
            type=float,
            default=0.5,
            help="the moderator refuses a candidate that contradicts a premise with at least this probability",
        )
        parser.add_argument("--seed", type=int, default=13, help="seed of the dialogue generation")
        parser.add_argument(
            "--candidates", choices=["corpus", "pool"], default="corpus", help="agents speak from (default corpus)"
        )
        parser.add_argument("--pairs-file", help="an extract_pairs JSONL file; default the ingested corpus's pairs")
        parser.add_argument("--max-pairs", type=int, default=50_000, help="corpus pairs read at most")
        parser.add_argument("--dialogue-model-version", type=int, help="the emotion agent's classifier; default newest")
        parser.add_argument("--no-wait", action="store_true", help="queue the job and return")

    def handle(self, *args, **options) -> None:
        parameters = {
            "pools": ",".join(options["pools"]) if options["pools"] else None,
            "contexts": options["contexts"],
            "skill_model_version_id": options["skill_model_version"],
            "nli_model": options["nli_model"],
            "nli_model_version_id": options["nli_model_version"],
            "encoder": options["encoder"],
            "alpha": options["alpha"],
            "turns": options["turns"],
            "top_k": options["top_k"],
            "nli_threshold": options["nli_threshold"],
            "seed": options["seed"],
            "candidates": options["candidates"],
            "pairs_file": options["pairs_file"],
            "max_pairs": options["max_pairs"],
            "dialogue_model_version_id": options["dialogue_model_version"],
        }
        job = queue_and_follow("botstalk", parameters, self.stdout, wait=not options["no_wait"])
        if job.is_finished:
            result = job.result
            self.stdout.write(self.style.SUCCESS(f"{result['dialogues_stored']} dialogues stored (source botstalk)"))
            self.stdout.write(f"agents spoke from the {result['candidates']} ({result['pairs']} pairs)")
            self.stdout.write(json.dumps(result["diagnostics"], indent=2))
