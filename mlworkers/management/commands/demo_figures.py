"""`python manage.py demo_figures [--write PAGE | --check PAGE]`: what the demo as built holds, in
figures that follow from its seeds (the corpus, the campaign, the simulated crowd's answers and
their agreement, the gold split, the rounds), written as the block between the markers of the
manual's demo page (docs/benchmarks/demo.md). CI builds the demo as `make demo` does and runs
`--check` on that page (`make demo-check`), so the page says what the demo builds. Timings are not
among them: they belong to a machine, and the page gives them with theirs.
"""

from pathlib import Path

from django.core.management import BaseCommand, CommandError
from django.db.models import Count

START, END = "<!-- demo-figures:start -->", "<!-- demo-figures:end -->"


class Command(BaseCommand):
    help = "Print the built demo's figures, or write or check them on the manual's demo page."

    def add_arguments(self, parser) -> None:
        group = parser.add_mutually_exclusive_group()
        group.add_argument("--write", metavar="PAGE", help="replace the page's figures block with these")
        group.add_argument("--check", metavar="PAGE", help="fail when the page's figures block differs")

    def handle(self, *args, **options) -> None:
        block = figures_block()
        if options["write"]:
            page = Path(options["write"])
            page.write_text(_replaced(page, block), encoding="utf-8")
            self.stdout.write(f"{page}: the demo's figures written")
        elif options["check"]:
            page = Path(options["check"])
            if _replaced(page, block) != page.read_text(encoding="utf-8"):
                raise CommandError(
                    f"{page}: its demo figures are not the demo's as built. The demo's:\n{block}\n"
                    f"(write them with: python manage.py demo_figures --write {page})"
                )
            self.stdout.write(f"{page}: the demo's figures match the demo as built")
        else:
            self.stdout.write(block)


def _replaced(page: Path, block: str) -> str:
    text = page.read_text(encoding="utf-8")
    if START not in text or END not in text:
        raise CommandError(f"{page}: no {START} ... {END} block to hold the demo's figures")
    before, rest = text.split(START, 1)
    after = rest.split(END, 1)[1]
    return f"{before}{START}\n{block}\n{END}{after}"


def figures_block() -> str:
    from annotation.models import Dialogue
    from labeling.models import HIT, Assignment, Campaign, Response
    from labeling.task_types.last_turn_label.report import label_report
    from mlworkers.chain.demo import DEMO_CAMPAIGN

    campaign = Campaign.objects.filter(name=DEMO_CAMPAIGN).order_by("pk").first()
    if campaign is None:
        raise CommandError("no demo campaign: build the demo first (python manage.py demo_setup)")
    # the subtitles ingested (BotsTalk's generated dialogues are not among them: how many it keeps
    # depends on its models' scores, which depend on the machine's precision)
    subtitles = Dialogue.objects.filter(source="")
    languages = dict(subtitles.values_list("language").annotate(n=Count("pk")).order_by("-n", "language"))
    hits = HIT.objects.filter(campaign=campaign)
    done = Assignment.objects.done().filter(hit__campaign=campaign)
    answered = hits.filter(pk__in=done.values("hit_id")).count()
    report = label_report(campaign)
    agreement = report["agreement"]
    lines = [
        f"- Corpus: {sum(languages.values()):,} subtitle dialogues "
        f"({', '.join(f'{n:,} {code}' for code, n in languages.items())}).",
        f"- Demo campaign: {hits.count()} HITs, {answered} answered by the simulated crowd and "
        f"{hits.count() - answered} left open for people; {done.count()} submitted seats, "
        f"{Response.objects.filter(assignment__in=done).count():,} answers.",
        f"- Agreement: majority on {agreement['majority']} of {agreement['items']} items "
        f"({agreement['majority_rate']:.1%}), Fleiss' kappa {agreement['fleiss_kappa']:.2f}.",
        "- Workers (simulated): " + "; ".join(_worker(row) for row in _simulated(report["workers"])) + ".",
        f"- Flagged too fast: {', '.join(row['worker'] for row in report['workers'] if row['too_fast']) or 'none'}.",
        *_gold_and_rounds(),
    ]
    return "\n".join(lines)


def _simulated(rows: list[dict]) -> list[dict]:
    return sorted((row for row in rows if row["worker"].startswith("sim-")), key=lambda row: row["worker"])


def _worker(row: dict) -> str:
    quiz = f"quiz {row['quiz_mark']:.1f}" if row["quiz_mark"] is not None else "no quiz"
    median = f"{row['median_seconds']:.1f} s a screen" if row["median_seconds"] is not None else "no screens"
    return f"{row['worker']} {row['hits']} HITs, {quiz}, {median}"


def _gold_and_rounds() -> list[str]:
    from jobs.models import JobRun

    split = JobRun.objects.filter(kind="gold_split", status=JobRun.SUCCEEDED).order_by("-pk").first()
    rounds = JobRun.objects.filter(kind="self_label_rounds", status=JobRun.SUCCEEDED).order_by("-pk").first()
    lines = []
    if split is not None:
        gold = split.result.get("gold_dialogues", {})
        lines.append(
            f"- Gold split: {gold.get('train', 0)} / {gold.get('validation', 0)} / {gold.get('test', 0)} "
            "dialogues (train / validation / test)."
        )
    if rounds is not None:
        steps = " → ".join(
            f"{row['name']} {row['dialogue_macro_f1']:.2f} ({row['training_size']})" for row in rounds.result["table"]
        )
        lines.append(f"- Rounds (dialogue classifier macro-F1 on the test gold, training size): {steps}.")
        lines += [f"  - {note}" for note in rounds.result.get("why_no_gain", [])]
    return lines
