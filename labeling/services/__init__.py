"""The services the pages, actions and jobs call, one writer each: campaigns, workers,
qualification, payments, adjudication, entry tokens, liveness; `importers/` and `raters/`.
Below the actions and the platforms; above the task types and the work (labeling/work/)."""
