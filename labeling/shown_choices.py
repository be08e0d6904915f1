"""The order in which an assignment's screen shows its three choices, shared by the annotator pages
and the demo's simulated workers (whose spammer clicks the first one shown)."""

import hashlib
import hmac

from django.conf import settings

from labeling.crowd.bundling import choice_order
from labeling.models import Assignment, HITItem


def choices_shown(assignment: Assignment, item: HITItem) -> list[str]:
    """The three choices in this assignment's own order (drawn from a secret per assignment and
    item), the same rule for quiz and work screens: neither rank nor answer sets the order, and
    workers who compare notes see different orders."""
    key = hmac.new(settings.SECRET_KEY.encode(), f"choices:{assignment.pk}:{item.pk}".encode(), hashlib.sha256)
    return choice_order(item.choices, key.digest())
