"""The self-labeling rounds of the papers' Table 5 over plain data (`self_labeling`: gold, +SBERT,
+self-labeled, +SBERT(self), any learner) and the fastText baseline learner
(`fasttext_baseline`). Pure: no Django."""
