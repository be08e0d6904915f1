"""The annotator's fast path (`ANNOTATOR_FAST_PATH`): every hand-written SQL statement of labeling
and the reads compiled once that the annotator's actions run, one module per action, each reading
top to bottom in the order its action runs them: `claim` (the probe, the worker's lock, the HIT they
hold, the search, the seat), `screen` (a HIT's screens, cached per process, and their frame), `pick`
(an autosave's or a Next's pick, one statement each), `submit` (the assignment's lock, the screens
left unanswered). `reads` holds the pages' reads (the home page, one's own assignment, the stored
answers), each the ORM or its twin in `compiled`, which also holds the machinery every module here
compiles with (`Compiled`, `exist`, the stand-ins, per-process routes).

Each entry runs its statement with the setting on and its ORM twin with it off (nothing of the fast
path runs then); the bottom of labeling's layers above the models: it imports no other group.
"""
