"""docker-compose.yml cannot run here (no Docker engine), so its shape is checked by parsing it."""

import yaml

from tests.conftest import REPO_ROOT


def _compose() -> dict:
    return yaml.safe_load((REPO_ROOT / "docker-compose.yml").read_text())


def test_it_defines_the_five_services():
    assert set(_compose()["services"]) == {"postgres", "redis", "web", "worker", "landing-worker", "beat"}


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


def test_the_landing_check_has_a_worker_of_its_own_that_no_other_queue_shares():
    services = _compose()["services"]
    landing = services["landing-worker"]
    assert landing["command"].split("--queues")[1].split()[0] == "landing"
    assert "landing" not in services["worker"]["command"].split("--queues")[1].split()[0].split(",")
    # the worker's settings, and a pool of connections its threads share (held by none while it waits)
    assert landing["environment"] == services["worker"]["environment"] | {"DB_POOL_MAX_SIZE": "16"}
    procfile = dict(
        line.split(":", 1) for line in (REPO_ROOT / "Procfile").read_text().splitlines() if line[:1].isalpha()
    )
    assert "--queues landing" in procfile["landing"] and "landing" not in procfile["worker"]
    # the Procfile and compose run it alike
    assert procfile["landing"].split()[0] == "DB_POOL_MAX_SIZE=16"
    concurrency = procfile["landing"].split("--concurrency")[1].split()[0]
    assert landing["command"].split("--concurrency")[1].split()[0] == concurrency


def test_the_gpu_override_reserves_a_gpu_for_the_worker_only():
    override = yaml.safe_load((REPO_ROOT / "docker-compose.gpu.yml").read_text())
    assert set(override["services"]) == {"worker"}
    devices = override["services"]["worker"]["deploy"]["resources"]["reservations"]["devices"]
    assert devices[0]["capabilities"] == ["gpu"]


def test_whitenoise_serves_static_files():
    from django.conf import settings

    assert "whitenoise.middleware.WhiteNoiseMiddleware" in settings.MIDDLEWARE


# --- .env: every setting of .env.example reaches the app services --------------------------------

APP_SERVICES = ("web", "worker", "beat")
# what docker-compose.yml provides itself (its own postgres, redis and media volume); the rest is .env's
COMPOSE_PROVIDED = {"DATABASE_URL", "CELERY_BROKER_URL", "REDIS_URL", "MEDIA_ROOT"}


def _example_names() -> set[str]:
    """Every NAME=value line of .env.example, the commented-out credentials (`# NAME=`) included."""
    names = set()
    for line in (REPO_ROOT / ".env.example").read_text().splitlines():
        candidate = line.lstrip("# ").split("=", 1)[0]
        if "=" in line and candidate.isupper() and candidate.replace("_", "").isalnum():
            names.add(candidate)
    return names


def _settings_reaching(service: dict, env_file: dict[str, str]) -> dict[str, str]:
    """What compose gives a container: the env_file's settings, then `environment:` over them."""
    assert service.get("env_file") in (".env", [".env"]), "an app service must read .env"
    return {**env_file, **{name: str(value) for name, value in service["environment"].items()}}


def test_every_env_example_setting_reaches_every_app_service():
    from config.dotenv import read_env_file

    example = read_env_file(REPO_ROOT / ".env.example")
    names = _example_names()
    assert {"PROLIFIC_PROJECT_ID", "PROLIFIC_API_TOKEN", "QUIZ_ITEMS_PER_SEAT"} <= names
    services = _compose()["services"]
    for name in APP_SERVICES:
        reaching = _settings_reaching(services[name], dict.fromkeys(names, "set") | example)
        assert names <= set(reaching), f"{name} misses {sorted(names - set(reaching))}"


def test_compose_overrides_only_what_it_provides_itself():
    """A setting of .env is never silently replaced: `environment:` names only compose's own
    services (SECRET_KEY is interpolated from .env itself, to fail loudly when missing)."""
    for name in APP_SERVICES:
        environment = _compose()["services"][name]["environment"]
        assert set(environment) == COMPOSE_PROVIDED | {"SECRET_KEY"}
        assert environment["SECRET_KEY"].startswith("${SECRET_KEY:?")


def test_the_image_never_holds_the_env_file():
    ignored = (REPO_ROOT / ".dockerignore").read_text().split()
    assert ".env" in ignored
