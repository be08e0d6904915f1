"""Skill labels per corpus: what share of turns each skill gets, from TurnSkill rows. Pure: no Django.

A row is (corpus, record source, skill, distribution, passed_mic): corpus is the dialogue's
source ("" subtitles, "botstalk"), record source "classifier" (the skill_label job) or
"botstalk" (the agent that said the turn). For a BotsTalk agent row `skill` is the agent and the
distribution the classifier's, so their agreement says how recognisable each agent's skill is.
"""

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

CORPUS_NAMES = {"": "subtitles", "botstalk": "botstalk"}


@dataclass
class SkillSummary:
    corpus: str
    source: str
    turns: int = 0
    top_skill: Counter = field(default_factory=Counter)
    mass: Counter = field(default_factory=Counter)
    agent_turns: Counter = field(default_factory=Counter)
    passed_mic: int = 0
    agreeing: int = 0

    def mean_distribution(self, skills: list[str]) -> dict[str, float]:
        return {skill: self.mass[skill] / self.turns if self.turns else 0.0 for skill in skills}

    def top_shares(self, skills: list[str]) -> dict[str, float]:
        return {skill: self.top_skill[skill] / self.turns if self.turns else 0.0 for skill in skills}

    @property
    def name(self) -> str:
        corpus = CORPUS_NAMES.get(self.corpus, self.corpus)
        return f"{corpus} (agents)" if self.source == "botstalk" else corpus

    @property
    def passed_mic_share(self) -> float:
        return self.passed_mic / self.turns if self.turns else 0.0

    @property
    def agreement(self) -> float:
        return self.agreeing / self.turns if self.turns else 0.0


def summarise(rows: Iterable[tuple[str, str, str, dict, bool | None]]) -> tuple[list[str], list[SkillSummary]]:
    """(skills in first-seen order, one summary per (corpus, record source))."""
    groups: dict[tuple[str, str], SkillSummary] = {}
    skills: dict[str, None] = {}
    for corpus, source, skill, distribution, passed_mic in rows:
        group = groups.setdefault((corpus, source), SkillSummary(corpus, source))
        skills.update(dict.fromkeys(distribution))
        top = max(distribution, key=distribution.get) if distribution else skill
        group.turns += 1
        group.top_skill[top] += 1
        group.mass.update(distribution)
        if source == "botstalk":
            group.agent_turns[skill] += 1
            group.passed_mic += bool(passed_mic)
            group.agreeing += top == skill
    return list(skills), [groups[key] for key in sorted(groups)]
