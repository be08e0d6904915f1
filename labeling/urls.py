"""One namespace, three owners: the annotator's pages, the researcher's pages, the platform landings."""

from labeling import annotator_urls, platform_urls, researcher_urls

app_name = "labeling"
urlpatterns = annotator_urls.urlpatterns + researcher_urls.urlpatterns + platform_urls.urlpatterns
