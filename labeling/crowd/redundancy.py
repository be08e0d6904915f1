"""Redundancy policies: how many answers an item needs before its gold label is settled.

Pure functions, no Django. The paper buys a fixed three answers per dialogue; on its own crowd data
the first two workers already agree on about half the dialogues, so a third answer there cannot
change the 2-of-3 label. The policies here decide, from the answers given so far (in the order they
arrived) and the suggestion model's calibrated top label, whether an item is done:

- `fixed`: n answers, whatever they say (the paper; today's campaigns);
- `until_agreement`: two answers, then one more at a time while no label has a strict majority of
  the answers so far, up to a cap; with `posterior_below` set, also one more while the item's
  Dawid-Skene posterior (over the campaign's answers so far, labeling.crowd.dawid_skene) has its
  maximum below that setting, majority or not (a majority of two careless workers is doubtful);
- `model_informed`: one answer first where the model's top probability reaches a threshold; an answer
  equal to the model's top label settles the item (worker and model agree); otherwise the item goes
  on as `until_agreement`.

`replay` runs a policy over a recorded answer sequence (e.g. the EDOS workers' answers in order)
and reports the answers it would have bought and the gold it would have given.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from labeling.crowd.majority import majority_vote

FIXED = "fixed"
UNTIL_AGREEMENT = "until_agreement"
MODEL_INFORMED = "model_informed"
POLICIES = (FIXED, UNTIL_AGREEMENT, MODEL_INFORMED)

FIRST_SEATS_UNTIL_AGREEMENT = 2  # two answers before a majority can exist at all
# the form's suggestion for model_informed: at 0.9 a calibrated model is wrong about one time in
# ten, so one agreeing worker settles only items the model is rarely wrong about (the EDOS bench
# picked 0.54 for its own data: a campaign's threshold is worth checking with bench/adaptive_replay)
SUGGESTED_THRESHOLD = 0.9


def setting_errors(
    name: str, cap: int | None, threshold: float | None, posterior_below: float | None = None
) -> dict[str, str]:
    """What is wrong with a campaign's redundancy settings, by field name (empty: nothing)."""
    errors = {}
    if posterior_below is not None and not 0.0 <= posterior_below <= 1.0:
        errors["posterior_below"] = "a probability between 0 and 1"
    elif posterior_below is not None and name == FIXED:
        errors["posterior_below"] = "the posterior asks for more answers under until_agreement or model_informed only"
    if name not in POLICIES:
        errors["redundancy_policy"] = f"unknown policy {name!r}: choose one of {', '.join(POLICIES)}"
    if cap is not None and cap < FIRST_SEATS_UNTIL_AGREEMENT:
        errors["redundancy_cap"] = "the cap must be at least 2 answers"
    if threshold is not None and not 0.0 <= threshold <= 1.0:
        errors["model_threshold"] = "a probability between 0 and 1"
    elif name == MODEL_INFORMED and threshold is None:
        errors["model_threshold"] = "model_informed needs the model's top probability threshold (e.g. 0.9)"
    return errors


def first_seats(policy: "RedundancyPolicy", model_confidence: float | None = None) -> int:
    """Answers an item is given before any follow-up: n, 2, or 1 where the model is trusted."""
    return settle(policy, [], None, model_confidence).seats_wanted


@dataclass(frozen=True)
class RedundancyPolicy:
    name: str = FIXED
    workers: int = 3  # `fixed`: answers per item
    cap: int = 3  # `until_agreement` / `model_informed`: most answers an item may get
    threshold: float | None = None  # `model_informed`: the model's top probability for a single seat
    # until_agreement (and model_informed past its first seat): one more seat while the item's
    # Dawid-Skene posterior maximum is below this, within the cap; None: off
    posterior_below: float | None = None

    def __post_init__(self) -> None:
        if self.name not in POLICIES:
            raise ValueError(f"unknown redundancy policy {self.name!r}: choose one of {', '.join(POLICIES)}")
        if self.workers < 1 or self.cap < FIRST_SEATS_UNTIL_AGREEMENT:
            raise ValueError("workers must be at least 1 and cap at least 2")
        if self.name == MODEL_INFORMED and (self.threshold is None or not 0.0 <= self.threshold <= 1.0):
            raise ValueError("model_informed needs a threshold between 0 and 1")
        if self.posterior_below is not None and not 0.0 <= self.posterior_below <= 1.0:
            raise ValueError("posterior_below must be a probability between 0 and 1")


@dataclass(frozen=True)
class Settled:
    """What a policy says of an item after the answers so far."""

    done: bool
    gold: str | None  # the settled label (None while open, or when settled without a majority)
    seats_wanted: int  # answers the item should have now (== len(answers) when done)
    reason: str  # "fixed", "majority", "model_agrees", "cap", or "open"


def settle(
    policy: RedundancyPolicy,
    answers: Sequence[str],
    model_top: str | None = None,
    model_confidence: float | None = None,
    posterior_max: float | None = None,
) -> Settled:
    """Whether an item with `answers` (in arrival order, normalised) is done under `policy`.
    posterior_max: the largest probability of the item's Dawid-Skene posterior (None: unknown,
    the posterior rule then asks for nothing)."""
    if policy.name == FIXED:
        return _fixed(policy, answers)
    if policy.name == MODEL_INFORMED and _model_trusted(policy, model_confidence):
        if not answers:
            return Settled(False, None, 1, "open")
        if len(answers) == 1 and model_top is not None and answers[0] == model_top:
            return Settled(True, answers[0], 1, "model_agrees")
    return _until_agreement(policy, answers, posterior_max)


def _model_trusted(policy: RedundancyPolicy, confidence: float | None) -> bool:
    return confidence is not None and policy.threshold is not None and confidence >= policy.threshold


def _doubtful(policy: RedundancyPolicy, posterior_max: float | None) -> bool:
    """The posterior rule: its maximum strictly below the setting (exactly at it is enough)."""
    return policy.posterior_below is not None and posterior_max is not None and posterior_max < policy.posterior_below


def _fixed(policy: RedundancyPolicy, answers: Sequence[str]) -> Settled:
    if len(answers) < policy.workers:
        return Settled(False, None, policy.workers, "open")
    return Settled(True, majority_vote(list(answers)).label, len(answers), "fixed")


def _until_agreement(policy: RedundancyPolicy, answers: Sequence[str], posterior_max: float | None = None) -> Settled:
    if len(answers) < FIRST_SEATS_UNTIL_AGREEMENT:
        return Settled(False, None, FIRST_SEATS_UNTIL_AGREEMENT, "open")
    winner = majority_vote(list(answers)).label
    if winner is not None and _doubtful(policy, posterior_max) and len(answers) < policy.cap:
        return Settled(False, None, len(answers) + 1, "open")
    if winner is not None:
        return Settled(True, winner, len(answers), "majority")
    if len(answers) >= policy.cap:
        return Settled(True, None, len(answers), "cap")
    return Settled(False, None, len(answers) + 1, "open")


@dataclass(frozen=True)
class ReplayOutcome:
    answers_used: int
    gold: str | None
    reason: str
    exhausted: bool  # the recorded answers ran out before the policy was done


def replay(
    policy: RedundancyPolicy,
    recorded: Sequence[str],
    model_top: str | None = None,
    model_confidence: float | None = None,
) -> ReplayOutcome:
    """Buy the recorded answers one at a time, in order, until the policy is done."""
    used = 0
    while True:
        state = settle(policy, recorded[:used], model_top, model_confidence)
        if state.done:
            return ReplayOutcome(used, state.gold, state.reason, exhausted=False)
        if state.seats_wanted > len(recorded):
            partial = majority_vote(list(recorded)).label if recorded else None
            return ReplayOutcome(len(recorded), partial, "exhausted", exhausted=True)
        used = state.seats_wanted
