from rest_framework.routers import DefaultRouter

from jobs.api import JobRunViewSet

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("jobs", JobRunViewSet, basename="jobrun")

urlpatterns = router.urls
