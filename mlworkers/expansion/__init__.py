"""The jobs of SBERT expansion (mlworkers.ml.expansion): turn embeddings and `sbert_expand`, the
one writer of SBERT and self labels (`sbert`), and the thresholds that follow the encoder
(`calibration`: `calibrate_expansion`)."""
