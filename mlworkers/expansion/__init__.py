"""The jobs of SBERT expansion (mlworkers.ml.expansion): the turn embeddings every later step
reads (`vectors`), `sbert_expand` and the one writer of SBERT and self labels (`sbert`), and the
thresholds that follow the encoder (`calibration`: `calibrate_expansion`)."""
