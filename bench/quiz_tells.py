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


def walk(campaign, compare_hits: int) -> tuple[list[dict], list[int], list[tuple[int, int]]]:
    """One seat of every HIT: an annotator claims it (the claim action, this HIT first) and opens
    each screen, as a browser would; the screens of one seat per HIT feed the classifier (every
    seat of a HIT sees the same screens, and copies across folds would flatter it). On the first
    `compare_hits` HITs a second annotator takes another seat and diffs the pages screen by screen
    (a worker holding two made-up seats): (differs, is quiz) per position."""
    rows, kinds, compared = [], [], []
    for index, hit in enumerate(campaign.hits.order_by("position")):
        first = seat_screens(campaign, hit, f"bench-{hit.pk}-a")
        rows += [row for row, _, _ in first]
        kinds += [kind for _, kind, _ in first]
        if index < compare_hits:
            second = seat_screens(campaign, hit, f"bench-{hit.pk}-b")
            compared += [(int(a[2] != b[2]), a[1]) for a, b in zip(first, second, strict=True)]
    return rows, kinds, compared


def seat_screens(campaign, hit, username: str) -> list[tuple[dict, int, tuple]]:
    """A fresh annotator's seat on `hit`: per screen, its features, whether it is quiz, and what
    it shows (turns, the set of choices) for the two-seat diff."""
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.urls import reverse

    from labeling.actions.claim import claim_next_hit
    from labeling.services.workers import worker_for_user

    user = get_user_model().objects.create_user(username)
    client = Client()
    client.force_login(user)
    assignment = claim_next_hit(worker_for_user(user), campaign, prefer_hit_id=hit.pk)
    assert assignment.hit_id == hit.pk, "the bench's seat went to another HIT"
    items = assignment.hit.items.filter(seat__in=(0, assignment.seat)).values_list("position", "quiz_question_id")
    screens = []
    for position, quiz_id in sorted(items):
        started = time.perf_counter()
        html = client.get(reverse("labeling:assignment_item", args=[assignment.pk, position])).content.decode()
        screens.append((features(html, position, time.perf_counter() - started), int(quiz_id is not None), shown(html)))
    return screens


def shown(html: str) -> tuple:
    """What a screen shows a worker, the choices as a set (their order is drawn per seat)."""
    body = html[html.index('<section id="hit-item"') :]
    turns = tuple(re.findall(r'<li class="turn[^"]*">(.*?)</li>', body, re.S))
    return turns, tuple(sorted(re.findall(r'name="answer" value="([^"]+)" data-key', body)))


def seat_compare_accuracy(compared: list[tuple[int, int]]) -> float:
    """Balanced accuracy of "the screens that differ between two seats are the quiz"."""
    quiz = [differs for differs, kind in compared if kind]
    work = [differs for differs, kind in compared if not kind]
    if not quiz or not work:
        return 0.5
    return 0.5 * (sum(quiz) / len(quiz) + (len(work) - sum(work)) / len(work))


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


def synthetic(args, folder: str) -> tuple[float, float]:
    setup(args.database_url or f"sqlite:///{folder}/quiz_tells.sqlite3")
    contrasts(args)
    from django.conf import settings

    from labeling.services.campaigns import create_campaign
    from labeling.work.hits import build_hits

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
    print(f"quiz_source={'demo_bank' if args.demo_bank else 'pool'}")
    return measured(campaign, args)


def sources(args, folder: str) -> tuple[float, float]:
    """Work and pool from different sources: the work from one run of the demo corpus generator,
    the pool from another (other films) whose dialogues are longer (more lead-in turns, longer
    lines) and whose label mix is skewed, so a random draw is easy to tell apart."""
    setup(args.database_url or f"sqlite:///{folder}/quiz_tells_sources.sqlite3")
    contrasts(args)
    from annotation.demo_corpus.generator import generate
    from labeling.services.campaigns import create_campaign
    from labeling.work.hits import build_hits

    rng = random.Random(args.seed)
    work_count, pool_count = args.hits * 15, args.hits * 5 * args.pool_factor
    films_a = [d for d in generate(work_count * 2, seed=args.seed).dialogues if d.label][:work_count]
    films_b = [d for d in generate(pool_count * 3, seed=args.seed + 1000).dialogues if d.label]
    favoured = set(rng.sample(sorted({d.label for d in films_b}), 12))  # other films, other feelings
    weights = [4.0 if d.label in favoured else 1.0 for d in films_b]
    pool_source = [longer(d, rng) for d in rng.choices(films_b, weights, k=pool_count)]
    weak = weak_labeler()
    work = [store_dialogue(i, d.turns, suggested(d.label, rng), weak) for i, d in enumerate(films_a)]
    pool = [
        (store_dialogue(work_count + i, turns, suggested(label, rng), weak), label)
        for i, (turns, label) in enumerate(pool_source)
    ]
    fill_pool_with_truth(pool)
    campaign = create_campaign("bench sources", fallback_choices=["Neutral", "Sad", "Joyful"])
    build_hits(campaign, work, seed=args.seed)
    print(f"work_dialogues={len(work)} pool_items={len(pool)} mean_turns_work={mean_turns(films_a):.2f} "
          f"mean_turns_pool={sum(len(t) for t, _ in pool_source) / len(pool_source):.2f}")  # fmt: skip
    return measured(campaign, args)


def longer(dialogue, rng: random.Random) -> tuple[tuple[str, ...], str]:
    """Another film's style: up to three more lead-in turns, and longer lines."""
    from annotation.demo_corpus import scenes

    slots = {"name": rng.choice(scenes.NAMES), "place": rng.choice(scenes.PLACES)}
    extra = [line.format(**slots) for line in rng.sample(scenes.GENERIC_OPENERS, rng.choice((0, 1, 2, 2, 3, 3)))]
    turns = [*extra, *dialogue.turns]
    turns = [f"{rng.choice(scenes.LEAD_INS)}{t[0].lower()}{t[1:]}" if rng.random() < 0.5 else t for t in turns]
    return tuple(turns), dialogue.label


def mean_turns(dialogues) -> float:
    return sum(len(d.turns) for d in dialogues) / len(dialogues)


def weak_labeler():
    from annotation.models import ModelVersion

    return ModelVersion.objects.create(name="bench weak", kind=ModelVersion.WEAK)


def suggested(label: str, rng: random.Random) -> list[str]:
    """A weak labeler's top 3: the true label first most of the time, the rest at random."""
    from annotation.taxonomy import LABEL_NAMES

    top = [label] if rng.random() < 0.7 else []
    while len(top) < 3:
        name = rng.choice(LABEL_NAMES)
        if name not in top:
            top.append(name)
    return top


def store_dialogue(index: int, turns, top: list[str], weak):
    """A dialogue with its turns and the weak labeler's top 3 on its last turn."""
    from annotation.models import Dialogue, Label, Prediction, Turn

    dialogue = Dialogue.objects.create(position=index, content_hash=f"bench-{index}", turn_count=len(turns))
    made = Turn.objects.bulk_create(Turn(dialogue=dialogue, position=p, text=text) for p, text in enumerate(turns))
    Prediction.objects.create(
        turn=made[-1],
        model_version=weak,
        label=Label.objects.get(name=top[0]),
        confidence=0.9,
        top_k=[[name, p] for name, p in zip(top, (0.9, 0.06, 0.04), strict=True)],
    )
    return dialogue


def fill_pool_with_truth(pool: list) -> None:
    from annotation.models import Label
    from labeling.models import QuizQuestion

    labels = {label.name: label for label in Label.objects.all()}
    QuizQuestion.objects.bulk_create(
        QuizQuestion(dialogue=d, text=d.turns.last().text, gold_label=labels[label], source="imported")
        for d, label in pool
    )


def demo(args, folder: str) -> tuple[float, float]:
    """The demo's own campaign: `demo_setup --campaign-only` with DEBUG=1, as `make demo` runs it
    (the bank left at its default), its jobs run in this process."""
    os.environ.pop("QUIZ_DEMO_BANK", None)
    os.environ["MEDIA_ROOT"] = f"{folder}/media"
    setup(args.database_url or f"sqlite:///{folder}/quiz_tells_demo.sqlite3", debug="1")
    contrasts(args)
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
    return measured(campaign, args)


def measured(campaign, args) -> tuple[float, float]:
    from labeling.models import Campaign
    from labeling.services.campaigns import set_campaign_status

    if campaign.status != Campaign.OPEN:
        set_campaign_status(campaign, Campaign.OPEN)
    started = time.perf_counter()
    rows, kinds, compared = walk(campaign, args.compare_hits)
    print(
        f"hits={campaign.hits.count()} screens={len(rows)} quiz_screens={sum(kinds)} "
        f"compared_screens={len(compared)} walk_s={time.perf_counter() - started:.1f}"
    )
    return tell_accuracy(rows, kinds, args.seed), seat_compare_accuracy(compared)


def contrasts(args) -> None:
    """The shipped behaviour switched off, for contrast (the bench's options, never a setting's
    default): quiz items per seat, or a random draw instead of the matched one."""
    from django.conf import settings

    from labeling.work import quiz_pool

    settings.QUIZ_ITEMS_PER_SEAT = settings.QUIZ_ITEMS_PER_SEAT or args.items_per_seat
    if args.unmatched:
        draw = quiz_pool.draw
        quiz_pool.draw = lambda *a, **k: draw(*a, **{**k, "match_to": None})


PARTS = {"demo": demo, "synthetic": synthetic, "sources": sources}
FIGURE = re.compile(r"^part=\S+ quiz_tell_accuracy=([0-9.]+) seat_compare_accuracy=([0-9.]+)$", re.M)


def both(args, passed: list[str]) -> None:
    """Each part in a process of its own (Django is set up once per process, on one database)."""
    tells, compares = {}, {}
    for part in PARTS:
        done = subprocess.run([sys.executable, __file__, *passed, "--part", part], capture_output=True, text=True)
        sys.stdout.write(done.stdout)
        if done.returncode != 0:
            sys.stderr.write(done.stderr)
            raise SystemExit(f"the {part} part failed ({done.returncode})")
        tell, compare = FIGURE.findall(done.stdout)[-1]
        tells[part], compares[part] = float(tell), float(compare)
    figures = " ".join(f"{part}_quiz_tell_accuracy={value:.2f}" for part, value in tells.items())
    print(f"{figures} quiz_tell_accuracy={max(tells.values()):.2f} seat_compare_accuracy={max(compares.values()):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=sorted(PARTS), help="one campaign only (default: all three)")
    parser.add_argument("--hits", type=int, default=40, help="synthetic and sources HITs (40)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--demo-size", type=int, default=2400, help="dialogues demo_setup generates (2400)")
    parser.add_argument("--demo-per-label", type=int, default=9, help="demo_setup --per-label (9)")
    parser.add_argument("--pool-factor", type=int, default=4, help="sources: pool items per quiz place (4)")
    parser.add_argument("--compare-hits", type=int, default=10, help="HITs whose second seat is diffed (10)")
    parser.add_argument("--database-url", default="", help="with --part: a scratch database to use")
    parser.add_argument("--demo-bank", action="store_true", help="synthetic quiz from the old one-turn built-in bank")
    parser.add_argument("--items-per-seat", action="store_true", help="contrast: QUIZ_ITEMS_PER_SEAT=1")
    parser.add_argument("--unmatched", action="store_true", help="contrast: quiz items drawn at random")
    args = parser.parse_args()
    if args.part is None:
        both(args, sys.argv[1:])
        return
    folder = tempfile.TemporaryDirectory()
    tell, compare = PARTS[args.part](args, folder.name)
    print(f"part={args.part} quiz_tell_accuracy={tell:.2f} seat_compare_accuracy={compare:.2f}")


if __name__ == "__main__":
    main()
