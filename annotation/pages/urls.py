from django.urls import path

from annotation.pages import analysis_urls
from annotation.pages import corpus as views

app_name = "annotation"
urlpatterns = [
    path("", views.corpus, name="corpus"),
    path("files/<int:pk>/", views.subtitle_file, name="subtitle_file"),
    path("dialogues/", views.dialogues, name="dialogues"),
    path("dialogues/<int:pk>/", views.dialogue, name="dialogue"),
    *analysis_urls.urlpatterns,
]
