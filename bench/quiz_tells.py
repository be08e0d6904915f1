"""Can a worker tell quiz screens from work screens? Build HITs, walk them as annotators, and
train a logistic regression on everything a worker can observe to separate the two.

Two campaigns, each in its own scratch database:
- demo: the demo's own "Demo campaign", as `manage.py demo_setup` builds it with DEBUG=1 (its
  quiz pool imported from the generated corpus's truth, its HITs built from the ranked
  candidates), stopped before the simulated crowd (`--campaign-only`) so every seat is free;
- synthetic: random dialogues with a weak labeler's top 3, a pool of such dialogues with known
  labels, 40 HITs.

Features per screen: turn count, text lengths (all turns, the target turn, mean), the choice set
(one-hot over label names) and each choice's slot, the screen position, the page size, the HTML
structure (count of every tag and attribute name, turn markup removed) and the response time.
The figure is balanced accuracy, 5-fold cross-validated: 0.5 is chance; the goal is <= 0.60.

    .venv/bin/python bench/quiz_tells.py                   # both; the last line is the worse figure
    .venv/bin/python bench/quiz_tells.py --part synthetic  # one of them (or --part demo)
    .venv/bin/python bench/quiz_tells.py --part synthetic --demo-bank  # the old one-turn bank, for contrast

Runs on throwaway SQLite files (or --database-url, one part at a time). Ends with
`quiz_tell_accuracy=0.xx`.
"""

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

WORDS = [
    "you",
    "I",
    "we",
    "they",
    "it",
    "this",
    "that",
    "what",
    "why",
    "where",
    "when",
    "how",
    "never",
    "always",
    "maybe",
    "really",
    "just",
    "come",
    "go",
    "look",
    "know",
    "think",
    "want",
    "need",
    "tell",
    "said",
    "here",
    "there",
    "now",
    "then",
    "back",
    "home",
    "night",
    "money",
    "door",
    "car",
    "father",
    "mother",
    "brother",
    "friend",
    "money",
    "time",
    "work",
    "gun",
    "love",
    "life",
    "dead",
    "alive",
    "sorry",
    "please",
    "thanks",
    "okay",
    "right",
    "wrong",
    "fine",
    "good",
    "bad",
    "better",
    "worse",
    "great",
    "terrible",
    "wait",
    "stop",
    "listen",
    "believe",
    "trust",
]


def setup(database_url: str, debug: str = "0") -> None:
    # plain HTTP in the test client: the deploy-safe HTTPS redirect would answer every request with a 301
    os.environ.update(DATABASE_URL=database_url, SECRET_KEY="bench-quiz-tells", DEBUG=debug, SECURE_SSL_REDIRECT="0")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.ALLOWED_HOSTS = ["testserver"]
    call_command("migrate", verbosity=0)


def sentence(rng: random.Random) -> str:
    words = rng.choices(WORDS, k=rng.randint(2, 16))
    return " ".join(words).capitalize() + rng.choice([".", "?", "!", "..."])


def make_corpus(rng: random.Random, dialogues: int) -> list:
    """Dialogues of 2-6 turns with a weak labeler's top 3 on every last turn."""
    from annotation.models import Dialogue, Label, ModelVersion, Prediction, Turn

    labels = list(Label.objects.filter(is_active=True).exclude(kind=Label.PROPOSED).values_list("name", flat=True))
    weights = [rng.random() ** 2 for _ in labels]  # a skewed label distribution, like the real one
    weak = ModelVersion.objects.create(name="bench weak", kind=ModelVersion.WEAK)
    by_name = {label.name: label for label in Label.objects.filter(name__in=labels)}
    made = []
    for index in range(dialogues):
        count = rng.choice([2, 2, 3, 3, 3, 4, 4, 5, 6])
        dialogue = Dialogue.objects.create(position=index, content_hash=f"bench-{index}", turn_count=count)
        turns = Turn.objects.bulk_create(Turn(dialogue=dialogue, position=p, text=sentence(rng)) for p in range(count))
        top = []
        while len(top) < 3:
            name = rng.choices(labels, weights)[0]
            if name not in top:
                top.append(name)
        Prediction.objects.create(
            turn=turns[-1],
            model_version=weak,
            label=by_name[top[0]],
            confidence=0.95,
            top_k=[[name, p] for name, p in zip(top, (0.95, 0.03, 0.02), strict=True)],
        )
        made.append((dialogue, top))
    return made


def fill_pool(rng: random.Random, pool: list) -> None:
    """Pool items: corpus dialogues whose crowd answer is known (mostly the weak top 1, as gold
    from unanimous workers usually is, sometimes another label)."""
    from annotation.models import Label
    from labeling.models import QuizQuestion

    labels = {label.name: label for label in Label.objects.filter(is_active=True).exclude(kind=Label.PROPOSED)}
    for dialogue, top in pool:
        roll = rng.random()
        gold = top[0] if roll < 0.6 else top[1] if roll < 0.8 else rng.choice(list(labels))
        QuizQuestion.objects.create(
            dialogue=dialogue, text=dialogue.turns.last().text, gold_label=labels[gold], source="imported"
        )


def walk(campaign) -> tuple[list[dict], list[int]]:
    """Every seat of every HIT: an annotator claims a HIT and opens each screen, as a browser would."""
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.urls import reverse

    from labeling.models import Assignment

    rows, kinds = [], []
    seats = sum(campaign.hits.values_list("required_workers", flat=True))
    for seat in range(seats):
        user = get_user_model().objects.create_user(f"bench-{seat}")
        client = Client()
        client.force_login(user)
        client.post(reverse("labeling:claim"), {"campaign": campaign.pk})
        assignment = Assignment.objects.select_related("hit").get(worker__user=user)
        items = assignment.hit.items.filter(seat__in=(0, assignment.seat)).values_list("position", "quiz_question_id")
        for position, quiz_id in sorted(items):
            started = time.perf_counter()
            html = client.get(reverse("labeling:assignment_item", args=[assignment.pk, position])).content.decode()
            rows.append(features(html, position, time.perf_counter() - started))
            kinds.append(int(quiz_id is not None))
    return rows, kinds


def features(html: str, position: int, seconds: float) -> dict:
    body = html[html.index('<section id="hit-item"') :]
    turns = [re.sub(r"<[^>]+>", "", t) for t in re.findall(r'<li class="turn[^"]*">(.*?)</li>', body, re.S)]
    target = re.findall(r'<li class="turn target">(.*?)</li>', body, re.S)
    skeleton = re.sub(r'<li class="turn.*?</li>', "", body, flags=re.S)
    choices = re.findall(r'name="answer" value="([^"]+)" data-key', body)
    row: dict = {
        "turns": len(turns),
        "chars": sum(len(t) for t in turns),
        "target_chars": len(target[0]) if target else 0,
        "mean_chars": sum(len(t) for t in turns) / max(len(turns), 1),
        "position": position,
        "page_bytes": len(html),
        "ms": seconds * 1000,
    }
    row.update({f"tag:{tag}": n for tag, n in Counter(re.findall(r"<([a-z0-9]+)", skeleton)).items()})
    row.update({f"attr:{name}": n for name, n in Counter(re.findall(r"\s([a-z-]+)=", skeleton)).items()})
    for slot, name in enumerate(choices):
        row[f"choice:{name}"] = 1
        row[f"slot{slot}:{name}"] = 1
    return row


def tell_accuracy(rows: list[dict], kinds: list[int], seed: int) -> float:
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    model = make_pipeline(
        DictVectorizer(sparse=False),
        StandardScaler(),
        LogisticRegression(max_iter=5000, class_weight="balanced", C=0.5),
    )
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=seed)
    return float(cross_val_score(model, rows, kinds, cv=folds, scoring="balanced_accuracy").mean())


def synthetic(args, folder: str) -> float:
    setup(args.database_url or f"sqlite:///{folder}/quiz_tells.sqlite3")
    from django.conf import settings

    from labeling.campaigns import create_campaign, set_campaign_status
    from labeling.hits import build_hits
    from labeling.models import Campaign

    rng = random.Random(args.seed)
    work_count = args.hits * 15
    # with QUIZ_ITEMS_PER_SEAT each of a HIT's three seats draws its own five quiz items
    quiz_needed = args.hits * 5 * (3 if settings.QUIZ_ITEMS_PER_SEAT else 1)
    corpus = make_corpus(rng, work_count + (0 if args.demo_bank else quiz_needed + 20))
    settings.QUIZ_DEMO_BANK = args.demo_bank
    if not args.demo_bank:
        fill_pool(rng, corpus[work_count:])
    campaign = create_campaign("bench", fallback_choices=["Neutral", "Sad", "Joyful"])
    build_hits(campaign, [dialogue for dialogue, _ in corpus[:work_count]], seed=args.seed)
    set_campaign_status(campaign, Campaign.OPEN)
    print(f"quiz_source={'demo_bank' if args.demo_bank else 'pool'}")
    return measured(campaign, args.seed)


def demo(args, folder: str) -> float:
    """The demo's own campaign: `demo_setup --campaign-only` with DEBUG=1, as `make demo` runs it
    (the bank left at its default), its jobs run in this process."""
    os.environ.pop("QUIZ_DEMO_BANK", None)
    os.environ["MEDIA_ROOT"] = f"{folder}/media"
    setup(args.database_url or f"sqlite:///{folder}/quiz_tells_demo.sqlite3", debug="1")
    from django.core.management import call_command

    from jobs import runtime
    from jobs.tasks import run_job_task
    from labeling.models import Campaign, QuizQuestion

    runtime._queue = lambda job_id, queue: run_job_task.apply(args=[job_id])  # no broker, no worker
    started = time.perf_counter()
    options = ["--campaign-only", "--size", str(args.demo_size), "--per-label", str(args.demo_per_label)]
    call_command("demo_setup", *options, stdout=open(os.devnull, "w"))  # noqa: SIM115
    campaign = Campaign.objects.get(name="Demo campaign")
    pool = QuizQuestion.objects.filter(dialogue__isnull=False).count()
    bank = campaign.hits.filter(items__quiz_question__dialogue__isnull=True, items__quiz_question__isnull=False)
    print(f"demo_setup_s={time.perf_counter() - started:.0f} quiz_pool={pool} one_turn_bank_screens={bank.count()}")
    return measured(campaign, args.seed)


def measured(campaign, seed: int) -> float:
    started = time.perf_counter()
    rows, kinds = walk(campaign)
    hits = campaign.hits.count()
    print(f"hits={hits} screens={len(rows)} quiz_screens={sum(kinds)} walk_s={time.perf_counter() - started:.1f}")
    return tell_accuracy(rows, kinds, seed)


def both(args) -> None:
    """Each part in a process of its own (Django is set up once per process, on one database)."""
    figures = {}
    for part in ("demo", "synthetic"):
        command = [sys.executable, __file__, "--part", part, "--hits", str(args.hits), "--seed", str(args.seed)]
        command += ["--demo-size", str(args.demo_size), "--demo-per-label", str(args.demo_per_label)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        sys.stdout.write(done.stdout)
        if done.returncode != 0:
            sys.stderr.write(done.stderr)
            raise SystemExit(f"the {part} part failed ({done.returncode})")
        figures[part] = float(re.findall(r"^quiz_tell_accuracy=([0-9.]+)$", done.stdout, re.M)[-1])
    print(" ".join(f"{part}_quiz_tell_accuracy={value:.2f}" for part, value in figures.items()))
    print(f"quiz_tell_accuracy={max(figures.values()):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["demo", "synthetic"], help="one campaign only (default: both)")
    parser.add_argument("--hits", type=int, default=40, help="synthetic HITs (40)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--demo-size", type=int, default=2400, help="dialogues demo_setup generates (2400)")
    parser.add_argument("--demo-per-label", type=int, default=9, help="demo_setup --per-label (9)")
    parser.add_argument("--database-url", default="", help="with --part: a scratch database to use")
    parser.add_argument("--demo-bank", action="store_true", help="synthetic quiz from the old one-turn built-in bank")
    args = parser.parse_args()
    if args.part is None:
        both(args)
        return
    folder = tempfile.TemporaryDirectory()
    accuracy = (demo if args.part == "demo" else synthetic)(args, folder.name)
    print(f"part={args.part}")
    print(f"quiz_tell_accuracy={accuracy:.2f}")


if __name__ == "__main__":
    main()
