"""One namespace, two owners: the annotator's pages and the researcher's pages."""

from labeling import annotator_urls, researcher_urls

app_name = "labeling"
urlpatterns = annotator_urls.urlpatterns + researcher_urls.urlpatterns
