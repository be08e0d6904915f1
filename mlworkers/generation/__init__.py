"""The `dataset_utility` job (mlworkers.ml.generation): its parameters and entry
(`dataset_utility`), and the run itself, resumable at epoch boundaries (`utility_run`)."""
