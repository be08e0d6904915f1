"""A pairwise campaign's screens: pairs from two sources (or a CSV of pairs), each side placed
left or right by the campaign's seed, bundled into HITs with quiz pairs (a real dialogue against a
degenerate copy of it, whose better side is obvious)."""

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import Q

from annotation.models import Dialogue, Prediction, TurnLabel
from labeling.crowd import pairing
from labeling.models import HITItem, QuizQuestion
from labeling.task_types.base import ConfigRefused, ScreenPlan
from labeling.task_types.pairwise.config import DEFAULT_PAIR_COUNT, DEFAULT_QUESTIONS, PAIRWISE
from labeling.task_types.pairwise.items import side_turns

QUIZ_TEXT = "A pair in which one dialogue repeats itself or makes no sense"
QUIZ_EXPLANATION = (
    "One of the two dialogues repeats the same line or is word salad: the other is better on every question."
)

_SOURCE = re.compile(r"^(subtitles|movie:\d+|source:[\w-]{1,32}|model:\d+|ids:\d+(,\d+)*)$")


@dataclass(frozen=True)
class PairSource:
    """What a pairwise campaign's screens are planned from: its pairs, and the dialogues its quiz
    pairs are made of."""

    pairs: list[pairing.Pair]
    quiz_base: list[int]


def prepare_campaign(arguments: dict, language: str) -> tuple[dict, PairSource]:
    """(task_config, source) from the pairwise arguments taken out of `arguments`: pairs from two
    sources (source_a, source_b: `count` pairs drawn with `seed`) or from `pairs_csv` (named
    `csv_name`), and the questions. Raises ConfigRefused naming the argument at fault."""
    source_a, source_b = arguments.pop("source_a", ""), arguments.pop("source_b", "")
    pairs_csv, csv_name = arguments.pop("pairs_csv", ""), arguments.pop("csv_name", "pairs.csv")
    count, seed = arguments.pop("count", DEFAULT_PAIR_COUNT), arguments.pop("seed", 0)
    questions = arguments.pop("questions", None)
    if pairs_csv:
        pairs = pairs_from_csv(pairs_csv, csv_name, language)
        described = {"a": f"{csv_name}, column 1", "b": f"{csv_name}, column 2"}
        quiz_base = sorted({d for pair in pairs for d in (pair.a, pair.b)})
    else:
        a_ids = select_dialogue_ids(source_a, language, "source_a")
        b_ids = select_dialogue_ids(source_b, language, "source_b")
        if count < 1:
            raise ConfigRefused("count", "at least one pair")
        pairs = pairing.zip_sources(a_ids, b_ids, count, seed)
        if not pairs:
            raise ConfigRefused("source_b", "the two sources hold the same dialogues: nothing to compare")
        described = {"a": source_a.strip(), "b": source_b.strip()}
        quiz_base = a_ids + b_ids
    config = {"questions": list(questions or DEFAULT_QUESTIONS), "sources": described, "seed": seed}
    return config, PairSource(list(pairs), list(quiz_base))


def plan_screens(campaign, source: PairSource) -> ScreenPlan:
    """HITs of `campaign.dialogues_per_hit` pairs plus `campaign.quiz_per_hit` quiz pairs (a real
    dialogue from the quiz base against a degenerate copy), in an order drawn with the campaign's
    own seed (task_config), so the same campaign settings give the same HITs."""
    seed = campaign.task_config.get("seed", 0)
    rng = random.Random(f"pairwise-hits:{seed}")
    placed = pairing.place(source.pairs, seed)
    size = campaign.dialogues_per_hit
    bundles = [placed[start : start + size] for start in range(0, len(placed), size)]
    screens = []
    for bundle in bundles:
        used = {d for p in bundle for d in (p.pair.a, p.pair.b)}
        items = [_work_item(p) for p in bundle]
        items += [_quiz_item(rng, source.quiz_base, used) for _ in range(campaign.quiz_per_hit)]
        rng.shuffle(items)
        screens.append(items)
    return ScreenPlan([(None, screens)])


def select_dialogue_ids(spec: str, language: str, field: str) -> list[int]:
    """The dialogue ids a source spec names (see the module docstring), in id order."""
    spec = (spec or "").strip()
    if not _SOURCE.match(spec):
        raise ConfigRefused(
            field, f"{spec!r} is not a source: use subtitles, movie:<id>, source:<name>, model:<id> or ids:<id>,..."
        )
    kind, _, value = spec.partition(":")
    dialogues = Dialogue.objects.filter(turn_count__gt=0).in_language(language)
    has_source_field = "source" in {f.name for f in Dialogue._meta.get_fields()}
    if kind == "subtitles":  # the subtitle corpus, ingested or imported: not machine-made
        chosen = dialogues.filter(source="") if has_source_field else dialogues
    elif kind == "movie":
        chosen = dialogues.filter(movie_id=int(value))
    elif kind == "source":
        labeled = TurnLabel.objects.filter(source=value).values("turn__dialogue_id")
        own = Q(source=value) if has_source_field else Q(pk__in=[])
        chosen = dialogues.filter(Q(pk__in=labeled) | own)
    elif kind == "model":
        labeled = TurnLabel.objects.filter(model_version_id=int(value)).values("turn__dialogue_id")
        predicted = Prediction.objects.filter(model_version_id=int(value)).values("turn__dialogue_id")
        chosen = dialogues.filter(Q(pk__in=labeled) | Q(pk__in=predicted))
    else:
        wanted = [int(part) for part in value.split(",")]
        chosen = dialogues.filter(pk__in=wanted)
        missing = sorted(set(wanted) - set(chosen.values_list("pk", flat=True)))
        if missing:
            raise ConfigRefused(field, f"no usable dialogue with id {', '.join(map(str, missing[:10]))}")
    ids = list(chosen.order_by("pk").values_list("pk", flat=True).distinct())
    if not ids:
        raise ConfigRefused(field, f"{spec} holds no dialogue (in language {language})")
    return ids


def pairs_from_csv(text: str, name: str, language: str) -> list[pairing.Pair]:
    """The pairs of an uploaded CSV, every id checked against the corpus; ConfigRefused("pairs_csv")
    naming each bad line."""
    try:
        numbered = pairing.parse_pairs_csv(text, name)
    except pairing.PairsRefused as refused:
        raise ConfigRefused("pairs_csv", str(refused)) from refused
    wanted = {d for _, pair in numbered for d in (pair.a, pair.b)}
    usable = set(Dialogue.objects.filter(pk__in=wanted, turn_count__gt=0).values_list("pk", flat=True))
    errors = [
        f"{name} line {number}: no dialogue with id {d}"
        for number, pair in numbered
        for d in (pair.a, pair.b)
        if d not in usable
    ]
    if errors:
        raise ConfigRefused("pairs_csv", str(pairing.PairsRefused(errors)))
    return [pair for _, pair in numbered]


def _work_item(placed: pairing.PlacedPair) -> HITItem:
    a, b = {"dialogue": placed.pair.a}, {"dialogue": placed.pair.b}
    left, right = (a, b) if placed.left_is == "a" else (b, a)
    return HITItem(payload={"left": left, "right": right, "left_is": placed.left_is})


def _quiz_item(rng: random.Random, quiz_base: Sequence[int], used: set[int]) -> HITItem:
    """A quiz pair: a real dialogue (not one of this HIT's own when others exist) against a
    degenerate copy of it. Its gold lives in its QuizQuestion row, never in the page."""
    candidates = [d for d in quiz_base if d not in used] or list(quiz_base)
    dialogue_id = rng.choice(candidates)
    turns = side_turns({"dialogue": dialogue_id})
    question = QuizQuestion.objects.create(
        task_type=PAIRWISE,
        text=QUIZ_TEXT,
        gold={"better": "a"},
        explanation=QUIZ_EXPLANATION,
        source=QuizQuestion.GENERATED,
    )
    left_is = rng.choice("ab")
    real, bad = {"dialogue": dialogue_id}, {"turns": pairing.degenerate(turns, rng)}
    left, right = (real, bad) if left_is == "a" else (bad, real)
    return HITItem(quiz_question=question, payload={"left": left, "right": right, "left_is": left_is})
