"""pairwise: which of two whole dialogues is better, on a few fixed questions (ACUTE-Eval).

An item holds two sides (HITItem.payload = {"left": side, "right": side, "left_is": "a"|"b"},
a side being {"dialogue": id} or, for a quiz item's degenerate side, {"turns": [...]}); which
source goes left is drawn per item with the campaign's seed and recorded in `left_is`. The
screen (labeling/task_types/pairwise.html) shows both dialogues in full, turn texts only: no
skill contexts, source names or ids. An answer is {question key: "left" | "right"} for every
configured question. Aggregation un-shuffles each pick to its source and gives per question the
win rate of source a with a Wilson 95 % interval, the position bias and the judges' agreement
(labeling.crowd.win_rates). The export is one row per judgment.

Sources: `subtitles` (the subtitle corpus, ingested or imported: `Dialogue.source` empty where the
table has that field, else every dialogue), `movie:<id>`, `source:<name>` (dialogues whose
turns carry TurnLabels of that source, e.g. `botstalk`, or whose own `source` is that name where
the Dialogue table has such a field), `model:<id>` (dialogues with turns labeled or predicted by
that ModelVersion), `ids:<id>,<id>,...`; or a CSV of `dialogue_a,dialogue_b` pairs.
"""

import random
import re
from collections.abc import Mapping, Sequence

from django.db import transaction
from django.db.models import Q

from annotation.models import Dialogue, Prediction, Turn, TurnLabel
from labeling.crowd import pairing, win_rates
from labeling.hits import write_hits
from labeling.models import Campaign, HITItem, QuizQuestion, Response, Worker, counted_assignment_q
from labeling.task_types.base import AnswerRefused, ConfigRefused, Export, TaskType, export_records

PAIRWISE = "pairwise"
SIDES = ("left", "right")

# ACUTE-Eval's questions (Li et al. 2019, as quoted by BotsTalk): title and the fixed wording
DEFAULT_QUESTIONS = (
    {
        "key": "engagingness",
        "title": "Engagingness",
        "wording": "Who would you prefer to talk to? Which version is more likely to hold your attention "
        "and make you want to hear more?",
    },
    {
        "key": "interestingness",
        "title": "Interestingness",
        "wording": "If you had to say one of these speakers is interesting and one is boring, who would you "
        "say is more interesting?",
    },
    {
        "key": "humanness",
        "title": "Humanness",
        "wording": "Who would you say sounds more human? Which version is more natural and personable?",
    },
)
DEFAULT_PAIR_COUNT = 100  # BotsTalk compares 100 dialogues from each dataset
MAX_QUESTIONS = 6
QUIZ_TEXT = "A pair in which one dialogue repeats itself or makes no sense"
QUIZ_EXPLANATION = (
    "One of the two dialogues repeats the same line or is word salad: the other is better on every question."
)

_SOURCE = re.compile(r"^(subtitles|movie:\d+|source:[\w-]{1,32}|model:\d+|ids:\d+(,\d+)*)$")


class Pairwise(TaskType):
    name = PAIRWISE
    title = "Compare two dialogues (ACUTE-Eval)"
    template = "labeling/task_types/pairwise.html"
    results_template = "labeling/researcher/pairwise_results.html"

    def clean_config(self, config: Mapping) -> dict:
        config = dict(config or {})
        questions = clean_questions(config.get("questions") or DEFAULT_QUESTIONS)
        sources = config.get("sources") or {}
        if not isinstance(sources, Mapping):
            raise ConfigRefused("sources", "give a description of source a and of source b")
        seed = config.get("seed", 0)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise ConfigRefused("seed", "a whole number")
        return {
            "questions": questions,
            "sources": {"a": str(sources.get("a", "source a"))[:200], "b": str(sources.get("b", "source b"))[:200]},
            "seed": seed,
        }

    def screen_context(self, campaign, item, saved: Mapping) -> dict:
        payload = item.payload
        questions = [
            {**question, "saved": saved.get(question["key"], "")} for question in campaign.task_config["questions"]
        ]
        return {
            "left_turns": side_turns(payload["left"]),
            "right_turns": side_turns(payload["right"]),
            "questions": questions,
        }

    def clean_answer(self, campaign, item, posted: Mapping[str, str]) -> dict:
        questions = campaign.task_config["questions"]
        answer = {}
        for question in questions:
            side = posted.get(f"q_{question['key']}", "")
            if side not in SIDES:
                raise AnswerRefused(f"Answer every question (still open: {question['title']}).")
            answer[question["key"]] = side
        return answer

    def quiz_correct(self, campaign, item, answer: Mapping) -> bool:
        better = item.quiz_question.gold.get("better")
        left_is = item.payload["left_is"]
        keys = [q["key"] for q in campaign.task_config["questions"]]
        return all(_source_of(answer.get(key), left_is) == better for key in keys)

    def describe_answer(self, campaign, item, answer: Mapping) -> str:
        return ", ".join(f"{key}: {side}" for key, side in answer.items()) or "(no answer)"

    def describe_gold(self, campaign, item) -> str:
        better = item.quiz_question.gold.get("better")
        side = "left" if item.payload["left_is"] == better else "right"
        return f"the {side} dialogue on every question"

    def aggregate(self, campaign) -> dict:
        """Nothing to store: the results are computed from the answers whenever they are read."""
        return self.summary(campaign)

    def summary(self, campaign) -> dict:
        results = self._results(campaign)
        summary = {"judgments": results.position_bias.total}
        for axis in results.axes:
            summary[f"{axis.question}_win_rate_a"] = _round(axis.win_rate_a)
            summary[f"{axis.question}_interval_a"] = _bounds(axis.interval_a)
            summary[f"{axis.question}_judgments"] = axis.total
        summary["left_win_rate"] = _round(results.position_bias.rate)
        summary["left_win_interval"] = _bounds(results.position_bias.interval)
        summary["pairwise_agreement"] = _round(results.pairwise_agreement)
        return summary

    def results(self, campaign) -> dict:
        results = self._results(campaign)
        names = dict(
            Worker.objects.filter(pk__in=[w.worker_id for w in results.workers]).values_list("pk", "external_id")
        )
        titles = {q["key"]: q for q in campaign.task_config["questions"]}
        return {
            "sources": campaign.task_config["sources"],
            "axes": [(titles[axis.question], axis) for axis in results.axes],
            "bias": results.position_bias,
            "workers": [(names.get(w.worker_id, w.worker_id), w) for w in results.workers],
            "agreement": results.pairwise_agreement,
        }

    def _results(self, campaign) -> win_rates.PairwiseResults:
        keys = [q["key"] for q in campaign.task_config["questions"]]
        return win_rates.pairwise_results(load_judgments(campaign), keys)

    def export(self, campaign, fmt: str) -> Export:
        return export_records(campaign, "judgments", judgment_records(campaign), EXPORT_FIELDS, fmt)


# --- items --------------------------------------------------------------------------------------


def clean_questions(questions) -> list[dict]:
    """Questions as [{"key", "title", "wording"}]; keys are short identifiers, unique."""
    if not isinstance(questions, list | tuple) or not 1 <= len(questions) <= MAX_QUESTIONS:
        raise ConfigRefused("questions", f"give 1 to {MAX_QUESTIONS} questions")
    cleaned, keys = [], set()
    for number, question in enumerate(questions, start=1):
        if not isinstance(question, Mapping):
            raise ConfigRefused("questions", f"question {number}: give its key, title and wording")
        key = str(question.get("key", "")).strip()
        wording = " ".join(str(question.get("wording", "")).split())
        if not re.fullmatch(r"[a-z][a-z0-9_]{0,31}", key) or key in keys:
            raise ConfigRefused("questions", f"question {number}: key {key!r} must be a unique lower-case identifier")
        if not wording or len(wording) > 500:
            raise ConfigRefused("questions", f"question {number} ({key}): wording must be 1 to 500 characters")
        keys.add(key)
        title = " ".join(str(question.get("title") or key.capitalize()).split())[:80]
        cleaned.append({"key": key, "title": title, "wording": wording})
    return cleaned


def side_turns(side: Mapping) -> list[str]:
    if "turns" in side:
        return list(side["turns"])
    return list(Turn.objects.filter(dialogue_id=side["dialogue"]).order_by("position").values_list("text", flat=True))


def dialogue_of(payload: Mapping, source: str) -> int | None:
    """The dialogue id of source `source` ("a"/"b") in an item's payload (None: a made-up side)."""
    side = payload["left"] if payload["left_is"] == source else payload["right"]
    return side.get("dialogue")


def _source_of(side: str | None, left_is: str) -> str | None:
    return win_rates.unshuffle(side, left_is) if side in SIDES else None


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


def create_pairwise_campaign(
    name: str,
    *,
    source_a: str = "",
    source_b: str = "",
    pairs_csv: str = "",
    csv_name: str = "pairs.csv",
    count: int = DEFAULT_PAIR_COUNT,
    seed: int = 0,
    questions: Sequence[Mapping] | None = None,
    created_by=None,
    **settings,
):
    """Create a pairwise campaign and its HITs in one transaction: pairs from two sources (drawn
    with `seed`) or from `pairs_csv`. Returns (campaign, hits). Raises CampaignRefused naming the
    field (source_a, source_b, pairs_csv, questions, count, ...); nothing is saved then."""
    from labeling.campaigns import CampaignRefused, create_campaign

    language = settings.get("language", "en")
    try:
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
    except ConfigRefused as refused:
        raise CampaignRefused(refused.field, refused.message) from refused
    config = {"questions": list(questions or DEFAULT_QUESTIONS), "sources": described, "seed": seed}
    with transaction.atomic():
        campaign = create_campaign(name, task_type=PAIRWISE, task_config=config, created_by=created_by, **settings)
        hits = build_pairwise_hits(campaign, pairs, quiz_base)
    return campaign, hits


def build_pairwise_hits(campaign: Campaign, pairs: Sequence[pairing.Pair], quiz_base: Sequence[int]) -> list:
    """HITs of `campaign.dialogues_per_hit` pairs plus `campaign.quiz_per_hit` quiz pairs (a real
    dialogue from `quiz_base` against a degenerate copy), in a seeded order; written by write_hits."""
    seed = campaign.task_config.get("seed", 0)
    rng = random.Random(f"pairwise-hits:{seed}")
    placed = pairing.place(pairs, seed)
    size = campaign.dialogues_per_hit
    bundles = [placed[start : start + size] for start in range(0, len(placed), size)]
    screens = []
    with transaction.atomic():
        for bundle in bundles:
            used = {d for p in bundle for d in (p.pair.a, p.pair.b)}
            items = [_work_item(p) for p in bundle]
            items += [_quiz_item(rng, quiz_base, used) for _ in range(campaign.quiz_per_hit)]
            rng.shuffle(items)
            screens.append(items)
        return write_hits(campaign, screens)


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


# --- answers ------------------------------------------------------------------------------------

EXPORT_FIELDS = ["item", "hit", "worker", "question", "picked_side", "left_is", "winner", "dialogue_a", "dialogue_b"]


def _counted_responses(campaign: Campaign):
    return (
        Response.objects.filter(
            counted_assignment_q("assignment__"),
            item__hit__campaign=campaign,
            item__quiz_question__isnull=True,
            method=Response.STRUCTURED,
        )
        .order_by("pk")
        .values_list("item_id", "item__hit_id", "assignment__worker_id", "data", "item__payload")
    )


def load_judgments(campaign: Campaign) -> list[win_rates.Judgment]:
    """Every counted pick of a work item (not quiz), un-shuffled to its source."""
    judgments = []
    for item_id, _hit, worker_id, data, payload in _counted_responses(campaign).iterator(chunk_size=5000):
        left_is = payload["left_is"]
        for question, side in data.items():
            winner = win_rates.unshuffle(side, left_is)
            judgments.append(win_rates.Judgment(item_id, worker_id, question, winner, left_is))
    return judgments


def judgment_records(campaign: Campaign) -> list[dict]:
    records = []
    for item_id, hit_id, worker_id, data, payload in _counted_responses(campaign).iterator(chunk_size=5000):
        for question, side in data.items():
            records.append(
                {
                    "item": item_id,
                    "hit": hit_id,
                    "worker": worker_id,
                    "question": question,
                    "picked_side": side,
                    "left_is": payload["left_is"],
                    "winner": win_rates.unshuffle(side, payload["left_is"]),
                    "dialogue_a": dialogue_of(payload, "a"),
                    "dialogue_b": dialogue_of(payload, "b"),
                }
            )
    return records


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _bounds(interval: win_rates.Interval | None) -> list[float] | None:
    return None if interval is None else [_round(interval.low), _round(interval.high)]
