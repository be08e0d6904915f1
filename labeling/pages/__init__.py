"""The pages and their URLs, by audience: the annotator's (`annotator`, `qualification`'s quiz
check, the study flow's `study`), the crowd platforms' landings (`landings`), the researcher's
(`researcher`, `study_report`, `forms`) and the reviewer's (`reviewer`). `urls` is the one
`labeling` namespace that config/urls.py includes. Top of labeling's layers: nothing imports a page."""
