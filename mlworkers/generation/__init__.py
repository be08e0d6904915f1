"""The `dataset_utility` job (mlworkers.ml.generation): its parameters (`parameters`), its entry
(`dataset_utility`, light enough for a web process) and the run itself, resumable at epoch
boundaries (`utility_run`, torch: a worker's)."""
