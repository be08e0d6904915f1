"""The task types this site offers: one line each. The labeling app imports this module when
Django starts (labeling.apps), so every process knows them before it serves a request or runs a job.
"""

from labeling.task_types import register
from labeling.task_types.last_turn_label import LastTurnLabel
from labeling.task_types.pairwise import Pairwise

register(LastTurnLabel())
register(Pairwise())
