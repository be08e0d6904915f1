"""The registry of task types: a campaign's `task_type` names one of these.

A type is one package here (a TaskType subclass and its screen template) and one line in
labeling/task_types/installed.py, which the labeling app imports when Django starts. Services,
views, jobs and commands reach a type only through `of(campaign)` (or `get(name)`); a type imports
none of them: it returns what is to be stored, and they store it.
"""

from labeling.models import LAST_TURN_LABEL
from labeling.task_types.base import (
    AnswerRefused,
    ConfigRefused,
    Export,
    LabelPick,
    QuizScore,
    ScreenPlan,
    TaskType,
    WrongQuizAnswer,
    export_records,
)

_REGISTRY: dict[str, TaskType] = {}


class UnknownTaskType(ValueError):
    pass


def register(task_type: TaskType) -> TaskType:
    if not task_type.name or task_type.name in _REGISTRY:
        raise ValueError(f"task type {task_type.name!r} is unnamed or registered twice")
    _REGISTRY[task_type.name] = task_type
    return task_type


def unregister(name: str) -> None:
    """For tests that register a type of their own."""
    _REGISTRY.pop(name, None)


def get(name: str) -> TaskType:
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise UnknownTaskType(f"unknown task type {name!r}; known: {known}") from None


def find(name: str) -> TaskType | None:
    """The registered type of that name, or None (a name read from a process cache may outlive
    its type, as in a test that registered a type of its own)."""
    return _REGISTRY.get(name)


def of(campaign) -> TaskType:
    """The task type of a campaign."""
    return get(campaign.task_type)


def choices() -> list[tuple[str, str]]:
    return [(task_type.name, task_type.title) for task_type in _REGISTRY.values()]


__all__ = [
    "LAST_TURN_LABEL",
    "AnswerRefused",
    "ConfigRefused",
    "Export",
    "LabelPick",
    "QuizScore",
    "ScreenPlan",
    "TaskType",
    "UnknownTaskType",
    "WrongQuizAnswer",
    "choices",
    "export_records",
    "get",
    "of",
    "register",
    "unregister",
]
