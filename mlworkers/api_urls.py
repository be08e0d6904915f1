from rest_framework.routers import DefaultRouter

from mlworkers.api import ModelVersionViewSet

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("model-versions", ModelVersionViewSet, basename="modelversion")

urlpatterns = router.urls
