"""The model versions API (staff only): list and read trained model versions and their metrics."""

from rest_framework import serializers, viewsets
from rest_framework.permissions import IsAdminUser

from annotation.models import ModelVersion


class ModelVersionSerializer(serializers.ModelSerializer):
    class Meta:
        model = ModelVersion
        fields = ["id", "kind", "name", "base_model", "label_names", "training_data", "hyperparameters", "metrics",
                  "artifact_dir", "suggests_since", "created_at"]  # fmt: skip


class ModelVersionViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = ModelVersion.objects.all()
    serializer_class = ModelVersionSerializer
    permission_classes = [IsAdminUser]
