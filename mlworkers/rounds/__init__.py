"""The `self_label_rounds` job (mlworkers.ml.rounds) and its learners, in `self_labeling`."""
