"""The annotator's fast path (`ANNOTATOR_FAST_PATH`): every hand-written statement of labeling and
its compiled reads, one module per action: `claim`, `screen`, `pick`, `submit`; `compiled` (reads
compiled once per process, `exist`) and `reads` (the annotator's reads: the ORM, or the fast path's
twins) are what they share. The bottom of labeling's layers above the models: it imports no other
group of labeling."""
