"""The researcher's reports: `campaign` (the campaign report), `cache` (its stored figures, stale
while revalidate), `plots`, `answer_export`, `dataset_figures` (the dataset card's) and `study/`
(the study report). They read what the layers below wrote; none writes a row of the crowd's work."""
