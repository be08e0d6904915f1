"""One namespace, four owners: the annotator's pages, the study flow's pages, the researcher's pages,
the platform landings."""

from labeling.pages import annotator_urls, researcher_urls
from labeling.pages import landing_urls as platform_urls
from labeling.pages import study_urls as study_flow_urls

app_name = "labeling"
urlpatterns = (
    annotator_urls.urlpatterns + study_flow_urls.urlpatterns + researcher_urls.urlpatterns + platform_urls.urlpatterns
)
