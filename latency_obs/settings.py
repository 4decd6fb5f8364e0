"""Settings: everything from environment variables, with working embedded defaults.

Embedded mode (no variables set): data in ./var, ClickHouse through chDB in ./var/clickhouse,
Django DB in SQLite, Celery in-process. Production sets CLICKHOUSE_URL, DATABASE_URL and
CELERY_BROKER_URL (see README and docker/).
"""
import secrets
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from latency_obs.env import env_bool, env_choice, env_int, env_int_list, env_json_object, env_str, env_url

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("LATENCY_OBS_DATA_DIR", str(BASE_DIR / "var"))).resolve()
try:
    DATA_DIR.mkdir(parents=True, exist_ok=True)
except OSError as exc:
    raise ImproperlyConfigured(f"LATENCY_OBS_DATA_DIR={DATA_DIR} cannot be created: {exc}") from None


def _secret_key() -> str:
    """SECRET_KEY from the environment, else one generated once and kept in the data dir."""
    key = env_str("SECRET_KEY", "")
    if key:
        return key
    path = DATA_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = [h.strip() for h in env_str("ALLOWED_HOSTS", "*").split(",") if h.strip()]
CSRF_TRUSTED_ORIGINS = [o.strip() for o in env_str("CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "latency_obs",
    "projects",
    "ingest",
    "analysis",
    "budgets",
    "alerts",
    "reports",
    "simulator",
    "dashboard",
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

ROOT_URLCONF = "latency_obs.urls"
WSGI_APPLICATION = "latency_obs.wsgi.application"
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
            ]
        },
    }
]

DATABASE_URL = env_url(
    "DATABASE_URL", f"sqlite:///{DATA_DIR / 'latency_obs.sqlite3'}", ("sqlite", "postgres", "postgresql")
)
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60)}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Embedded mode writes from web, worker and beat threads at once: take the write lock at BEGIN and
    # wait for it, instead of failing with "database is locked" when a read transaction upgrades.
    DATABASES["default"]["OPTIONS"] = {"transaction_mode": "IMMEDIATE", "timeout": 20,
                                       "init_command": "PRAGMA journal_mode=WAL;"}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# ClickHouse: chdb:///path (embedded, in-process) or http(s)://user:pass@host:port/db (server).
CLICKHOUSE_URL = env_url("CLICKHOUSE_URL", f"chdb://{DATA_DIR / 'clickhouse'}", ("chdb", "http", "https"))
# TTL on stored spans; DateTime ends in 2106, hence the upper bound.
CLICKHOUSE_RETENTION_DAYS = env_int("CLICKHOUSE_RETENTION_DAYS", 30, minimum=1, maximum=10_000)

# Ingest: limits and the durable spool (a 2xx means the spans are on disk or in ClickHouse).
OTLP_GRPC_PORT = env_int("OTLP_GRPC_PORT", 4317, minimum=0, maximum=65535)
INGEST_MAX_BODY_BYTES = env_int("INGEST_MAX_BODY_BYTES", 64 * 1024 * 1024, minimum=1024)
INGEST_MAX_ATTRIBUTES = env_int("INGEST_MAX_ATTRIBUTES", 128, minimum=1)
INGEST_MAX_ATTRIBUTE_LENGTH = env_int("INGEST_MAX_ATTRIBUTE_LENGTH", 4096, minimum=16)
INGEST_SPOOL_DIR = Path(env_str("INGEST_SPOOL_DIR", str(DATA_DIR / "spool"))).resolve()
INGEST_SPOOL_MAX_BYTES = env_int("INGEST_SPOOL_MAX_BYTES", 1024 * 1024 * 1024, minimum=1024 * 1024)
INGEST_SPOOL_FSYNC = env_bool("INGEST_SPOOL_FSYNC", True)
INGEST_SEGMENT_SPANS = env_int("INGEST_SEGMENT_SPANS", 20_000, minimum=1)
# Segments inserted by one INSERT, up to this many bytes (~90k spans): the per-INSERT cost is high.
INGEST_BATCH_BYTES = env_int("INGEST_BATCH_BYTES", 64 * 1024 * 1024, minimum=1024)
INGEST_FLUSH_INTERVAL_MS = env_int("INGEST_FLUSH_INTERVAL_MS", 1000, minimum=10)
INGEST_RETRY_AFTER_SECONDS = env_int("INGEST_RETRY_AFTER_SECONDS", 5, minimum=1)

# Analysis: thresholds of the diagnosis flowchart (names in analysis/thresholds.py) and the API's window limit.
ANALYSIS_THRESHOLDS = env_json_object("ANALYSIS_THRESHOLDS")
ANALYSIS_MAX_WINDOW_DAYS = env_int("ANALYSIS_MAX_WINDOW_DAYS", 31, minimum=1, maximum=3650)
# prompt-length segments: cuts in input tokens (default <1k, 1-4k, 4-16k, >16k)
ANALYSIS_SEGMENT_EDGES = env_int_list("ANALYSIS_SEGMENT_EDGES", (1000, 4000, 16000))

# Where people open the dashboard: links in Slack messages, webhooks and weekly reviews start with it.
PUBLIC_BASE_URL = env_url("PUBLIC_BASE_URL", "http://127.0.0.1:8000", ("http", "https"))

# Webhooks (alerts/): https to public addresses only; http:// to loopback receivers when allowed (tests).
WEBHOOK_ALLOW_LOOPBACK = env_bool("WEBHOOK_ALLOW_LOOPBACK", False)
WEBHOOK_TIMEOUT_SECONDS = env_int("WEBHOOK_TIMEOUT_SECONDS", 10, minimum=1, maximum=300)
WEBHOOK_MAX_ATTEMPTS = env_int("WEBHOOK_MAX_ATTEMPTS", 6, minimum=1, maximum=50)
WEBHOOK_BACKOFF_BASE_MS = env_int("WEBHOOK_BACKOFF_BASE_MS", 2000, minimum=1, maximum=300_000)

# Celery: Redis in production; in-process (memory transport, worker and beat threads) when unset.
CELERY_BROKER_URL = env_url("CELERY_BROKER_URL", "memory://", ("memory", "redis", "rediss"))
CELERY_EMBEDDED = CELERY_BROKER_URL.startswith("memory://")
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TIMEZONE = "UTC"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True
STATIC_URL = "static/"
# Served by WhiteNoise in every mode (no CDN, no separate web server); collectstatic fills
# STATIC_ROOT in images, and without it files are served straight from the apps' static dirs.
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(DATA_DIR / "static")))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"]
WHITENOISE_USE_FINDERS = True
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "dashboard.finders.PlotlyFinder",  # plotly.js from the plotly package itself
]
LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_choice("LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR"))},
    "loggers": {"waitress.queue": {"level": "ERROR"}},
}
