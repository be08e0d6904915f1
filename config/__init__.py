import os

# Every process of the project (web, worker, commands, beat) starts here, before anything imports
# torch: its OpenMP threads then sleep while they wait instead of spinning. Spinning threads took
# the CPU from everything else on a shared machine (the demo's BotsTalk step took 1,020 s instead of
# 15 s beside another job). OpenMP reads the variable once, as torch loads; set it in the
# environment to choose otherwise.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from config.celery import app as celery_app  # after the environment above

__all__ = ["celery_app"]
