"""docker-compose.yml cannot run here (no Docker engine), so its shape is checked by parsing it."""

import yaml

from tests.conftest import REPO_ROOT


def _compose() -> dict:
    return yaml.safe_load((REPO_ROOT / "docker-compose.yml").read_text())


def test_it_defines_the_five_services():
    assert set(_compose()["services"]) == {"postgres", "redis", "web", "worker", "beat"}


def test_beat_queues_scheduled_jobs_with_the_apps_image_and_environment():
    services = _compose()["services"]
    assert "celery -A config beat" in services["beat"]["command"]
    assert services["beat"]["image"] == services["worker"]["image"]
    assert services["beat"]["environment"] == services["worker"]["environment"]


def test_web_and_worker_share_one_image_built_from_the_dockerfile():
    services = _compose()["services"]
    assert services["web"]["build"] == "."
    assert services["web"]["image"] == services["worker"]["image"]
    assert (REPO_ROOT / "Dockerfile").exists()
    assert services["postgres"]["image"].startswith("postgres:")
    assert services["redis"]["image"].startswith("redis:")


def test_web_and_worker_share_the_environment_and_point_at_postgres_and_redis():
    services = _compose()["services"]
    assert services["web"]["environment"] == services["worker"]["environment"]
    environment = services["web"]["environment"]
    assert environment["DATABASE_URL"].startswith("postgres://") and "@postgres:" in environment["DATABASE_URL"]
    assert environment["CELERY_BROKER_URL"].startswith("redis://redis:")
    assert "SECRET_KEY" in environment


def test_every_service_has_a_health_check_and_apps_wait_for_healthy_backends():
    services = _compose()["services"]
    for name, service in services.items():
        assert service.get("healthcheck", {}).get("test"), f"{name} has no health check"
    for name in ("web", "worker"):
        for backend in ("postgres", "redis"):
            assert services[name]["depends_on"][backend]["condition"] == "service_healthy"


def test_web_serves_with_gunicorn_and_the_worker_runs_celery_on_both_queues():
    services = _compose()["services"]
    assert "gunicorn config.wsgi:application" in services["web"]["command"]
    assert "celery -A config worker" in services["worker"]["command"]
    assert "ml" in services["worker"]["command"].split("--queues")[1]


def test_the_gpu_override_reserves_a_gpu_for_the_worker_only():
    override = yaml.safe_load((REPO_ROOT / "docker-compose.gpu.yml").read_text())
    assert set(override["services"]) == {"worker"}
    devices = override["services"]["worker"]["deploy"]["resources"]["reservations"]["devices"]
    assert devices[0]["capabilities"] == ["gpu"]


def test_whitenoise_serves_static_files():
    from django.conf import settings

    assert "whitenoise.middleware.WhiteNoiseMiddleware" in settings.MIDDLEWARE
