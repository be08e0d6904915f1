"""The crowd's arithmetic, with no database: majority vote, agreement (Fleiss' kappa, Gwet's AC1),
Dawid-Skene, speed flags, pairwise win rates, HIT bundling, pairing, the quiz bank reader, the
redundancy policies, agreement with bootstrap intervals (intervals.py, Krippendorff's alpha by the
`krippendorff` package) and one rater against gold (rater_agreement.py).

Every module here imports only the standard library, numpy, `krippendorff` and annotation's pure modules
(`annotation.taxonomy`, `annotation.export.cells`); tests/jobs/test_import_directions.py keeps
Django out. The Django shell around them (the label task type's aggregation and report, quiz_pool.py, the task
types) reads the tables, calls these functions and stores what they return, as annotation/ingest/
sits inside annotation/ingestion.py.
"""
