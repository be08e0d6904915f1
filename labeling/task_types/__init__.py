"""The registry of task types: a campaign's `task_type` names one of these.

Adding a type: write its module (a TaskType subclass), its template, and one line below.
"""

from labeling.models import LAST_TURN_LABEL
from labeling.task_types.base import AnswerRefused, ConfigRefused, Export, TaskType, export_records

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
    "TaskType",
    "UnknownTaskType",
    "export_records",
]

# --- the registered types: one line each -------------------------------------------------------
from labeling.task_types.last_turn_label import LastTurnLabel  # noqa: E402
from labeling.task_types.pairwise import Pairwise  # noqa: E402

register(LastTurnLabel())
register(Pairwise())
