"""The papers' numbers, each once, with its source: the project's contract with its users.

A researcher who cites EDOS expects these rules; every default that applies one reads it from here
(model field defaults, settings defaults, job parameter schemas, the cleaning rules, the readability
ranking, the classifier's input building). `tests/annotation/test_papers.py` pins each value and
greps the source for a second copy of it; `docs/reference/papers-constants.md` is generated from
`PAPER_NUMBERS` (`python -m annotation.papers > docs/reference/papers-constants.md`).

Why here: `annotation` is the bottom app that `labeling` and `mlworkers` may both import, and
this module is pure (no Django import, like `taxonomy.py` beside it), so `config/settings.py` may
import it at module level as well: the import-direction test lists it among the pure exceptions.

The papers:
  EDOS  Welivita, Xie and Pu, "A Large-Scale Dataset for Empathetic Response Generation",
        EMNLP 2021 (the dataset this project reproduces).
  OSED  Welivita, Xie and Pu, "Fine-grained Emotion and Intent Learning in Movie Dialogues"
        (the earlier subtitle-dialogue paper the EDOS pipeline builds on).
"""

from dataclasses import dataclass

# --- Ingest: dialogues and turns from subtitles ---------------------------------------------------
# A new dialogue starts where the silence between two subtitles is OVER this (exactly 5.0 s does
# not split: "over 5 s"). Also the longest silence a turn or a sentence is joined across.
DIALOGUE_GAP_SECONDS = 5.0
# Turns shorter than 2 or longer than 100 characters are removed, with the rest of their dialogue.
TURN_MIN_CHARS = 2
TURN_MAX_CHARS = 100

# --- Model in the loop ----------------------------------------------------------------------------
# Weak-label prefilter: a turn is a crowd candidate at confidence >= 0.9 (0.9 itself kept).
PREFILTER_CONFIDENCE = 0.9
# Candidates sent to the crowd per label after the readability ranking.
CANDIDATES_PER_LABEL = 250
# Readability (Appendix A): score = f_sum / (87 + n_tokens) + 0.04 * distinct-token percentage.
READABILITY_LENGTH_DAMPING = 87.0
READABILITY_DIVERSITY_WEIGHT = 0.04
# SBERT expansion: an unlabeled dialogue at cosine similarity >= 0.92 to a gold dialogue takes
# its label (the paper's encoder; issue 29 calibrates a threshold per encoder from this one).
SBERT_EXPANSION_THRESHOLD = 0.92
# The rounds (Table 5): round 4 expands from the self-labeled dialogues at >= 0.9.
SBERT_SECOND_THRESHOLD = 0.9
# Round 3: per label, the 100 unlabeled dialogues the classifier labels most confidently, >= 0.9.
SELF_LABELS_PER_LABEL = 100
SELF_LABEL_MIN_CONFIDENCE = 0.9
# A turn k steps before the target weighs decay**k (the classifier's input, the SBERT dialogue
# vector): halving going back.
TURN_WEIGHT_DECAY = 0.5
# The dialogue classifier's learning rate (EmoBERT+ fine-tuning).
CLASSIFIER_LEARNING_RATE = 2e-5

# --- Crowd (MTurk HITs) ---------------------------------------------------------------------------
DIALOGUES_PER_HIT = 15
QUIZ_ITEMS_PER_HIT = 5
WORKERS_PER_HIT = 3
# The bonus is paid at 3 right answers of the 5 quiz items.
QUIZ_BONUS_MARK = 3


@dataclass(frozen=True)
class PaperNumber:
    name: str
    value: float | int
    source: str
    where: str  # where a user meets it


PAPER_NUMBERS: tuple[PaperNumber, ...] = (
    PaperNumber(
        "DIALOGUE_GAP_SECONDS", DIALOGUE_GAP_SECONDS, "EDOS 3.1 (dialogue curation: a gap of over 5 s ends a dialogue)",
        "setting `DIALOGUE_GAP_SECONDS`; `manage.py ingest` without `--gap`; the ingest job's empty gap; "
        "`PipelineConfig`; the turn segmenters' longest join",
    ),
    PaperNumber(
        "TURN_MIN_CHARS", TURN_MIN_CHARS, "EDOS 3.1 (cleaning: turns of 2 to 100 characters)",
        "cleaning rule `too_short` (`CleaningRules.min_chars`)",
    ),
    PaperNumber(
        "TURN_MAX_CHARS", TURN_MAX_CHARS, "EDOS 3.1 (cleaning: turns of 2 to 100 characters)",
        "cleaning rule `too_long` (`CleaningRules.max_chars`): the turn and the rest of its dialogue go",
    ),
    PaperNumber(
        "PREFILTER_CONFIDENCE", PREFILTER_CONFIDENCE, "EDOS, weak labeling (suggestions kept at confidence >= 0.9)",
        "job `rank_candidates` / `run_pipeline` `min_confidence`; `manage.py run_pipeline`; the candidate "
        "query; `rank_candidates` in `annotation.readability`; `precision_at` in calibration reports; the "
        "prefilter line of the model page's reliability diagram",
    ),
    PaperNumber(
        "CANDIDATES_PER_LABEL", CANDIDATES_PER_LABEL, "EDOS, candidate selection (the most readable candidates per label)",
        "job `rank_candidates` / `run_pipeline` `per_label`",
    ),
    PaperNumber(
        "READABILITY_LENGTH_DAMPING", READABILITY_LENGTH_DAMPING, "EDOS Appendix A (readability formula)",
        "the readability score that orders crowd candidates",
    ),
    PaperNumber(
        "READABILITY_DIVERSITY_WEIGHT", READABILITY_DIVERSITY_WEIGHT, "EDOS Appendix A (readability formula)",
        "the readability score that orders crowd candidates",
    ),
    PaperNumber(
        "SBERT_EXPANSION_THRESHOLD", SBERT_EXPANSION_THRESHOLD, "EDOS, dataset expansion and Table 5 (SBERT, cosine >= 0.92)",
        "for the paper's encoder: job `self_label_rounds` with `recipe=paper` (round 2); an empty `threshold` of "
        "`sbert_expand` / `first_threshold` when the encoder in use has no calibration (`calibrate_expansion`)",
    ),
    PaperNumber(
        "SBERT_SECOND_THRESHOLD", SBERT_SECOND_THRESHOLD, "EDOS Table 5 (round 4: SBERT from the self-labeled)",
        "job `self_label_rounds` with `recipe=paper`; an empty `second_threshold` when the encoder has no calibration",
    ),
    PaperNumber(
        "SELF_LABELS_PER_LABEL", SELF_LABELS_PER_LABEL, "EDOS Table 5 (round 3: self-labeling)",
        "job `self_label_rounds` `self_per_label`",
    ),
    PaperNumber(
        "SELF_LABEL_MIN_CONFIDENCE", SELF_LABEL_MIN_CONFIDENCE, "EDOS Table 5 (round 3: self-labeling)",
        "job `self_label_rounds` `self_min_confidence`",
    ),
    PaperNumber(
        "TURN_WEIGHT_DECAY", TURN_WEIGHT_DECAY, "EDOS, dialogue embedding and classifier (turn weights halve going back)",
        "the dialogue classifier's input (`turn_weights`, `TrainConfig.turn_weight_decay`); the SBERT "
        "dialogue vector (`decay_weights`: 1/7, 2/7, 4/7 for three turns)",
    ),
    PaperNumber(
        "CLASSIFIER_LEARNING_RATE", CLASSIFIER_LEARNING_RATE, "EDOS, dialogue classifier (EmoBERT+ fine-tuned at lr 2e-5)",
        "`TrainConfig.lr`; job `self_label_rounds` with `recipe=paper`",
    ),
    PaperNumber(
        "DIALOGUES_PER_HIT", DIALOGUES_PER_HIT, "EDOS, crowd annotation (15 dialogues a HIT)",
        "a new campaign's `dialogues_per_hit`; the EDOS crowd-file import",
    ),
    PaperNumber(
        "QUIZ_ITEMS_PER_HIT", QUIZ_ITEMS_PER_HIT, "EDOS, crowd annotation (5 quiz dialogues a HIT)",
        "a new campaign's `quiz_per_hit`; its qualification quiz's `qualification_items`",
    ),
    PaperNumber(
        "WORKERS_PER_HIT", WORKERS_PER_HIT, "EDOS, crowd annotation (3 workers a dialogue, 2-of-3 majority)",
        "a new campaign's `workers_per_hit`",
    ),
    PaperNumber(
        "QUIZ_BONUS_MARK", QUIZ_BONUS_MARK, "EDOS, crowd annotation (bonus at 3 or more of the 5 quiz items right)",
        "a new campaign's `quiz_pass_mark`: the bonus in the payments ledger; its qualification quiz's "
        "`qualification_mark`",
    ),
)  # fmt: skip


def markdown() -> str:
    """The reference page `docs/reference/papers-constants.md`, generated from PAPER_NUMBERS."""
    lines = [
        "# The papers' numbers",
        "",
        "Every rule the project takes from the EDOS/OSED papers, its value, its source and where you",
        "meet it. Each is defined once, in `annotation/papers.py`; every default reads it from there and",
        "a test fails if a value changes or a second copy appears. Change a rule for your own run through",
        "the setting, command option or job parameter named here, never by editing the module.",
        "",
        "Generated by `python -m annotation.papers > docs/reference/papers-constants.md`",
        "(`tests/annotation/test_papers.py` checks that this page matches the module).",
        "",
        "| constant | value | source | where you meet it |",
        "| --- | --- | --- | --- |",
    ]
    lines += [f"| `{n.name}` | {n.value:g} | {n.source} | {n.where} |" for n in PAPER_NUMBERS]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
