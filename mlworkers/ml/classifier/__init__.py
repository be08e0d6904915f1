"""Models that label turns, and how they run: the dialogue classifier (EB+: what one is in `model`,
its input `inputs`, training and loading in `dialogue_classifier`, one optimisation step
`training_step`, batched `inference`), numeric
`precision`, int8 `quantize` and `cpu_precision` (fp32 or int8 for "auto" on a CPU); the weak
labeler (`sentence_classifier`), the suggestion model (`suggester`) and `calibration` (how good
a model's probabilities are; temperature scaling). Pure: no Django."""
