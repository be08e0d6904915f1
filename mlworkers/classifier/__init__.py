"""The jobs of the labeling models (mlworkers.ml.classifier): the weak labeler trained and applied
(`weak_labeler`, with `measured`: how every model is measured), the suggestion model
(`suggestions`) and bulk annotation, sharded (`bulk`)."""
