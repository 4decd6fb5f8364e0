"""Settings: everything from environment variables, with working embedded defaults.

Embedded mode (no variables set): data in ./var, ClickHouse through chDB in ./var/clickhouse,
Django DB in SQLite, Celery in-process. Production sets CLICKHOUSE_URL, DATABASE_URL and
CELERY_BROKER_URL (see README and docker/).
"""
import os
import secrets
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from latency_obs.env import env_bool, env_choice, env_float, env_int, env_int_list, env_json_object, env_str, env_url

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
    "slos",
    "alerts",
    "reports",
    "simulator",
    "dashboard",
]

MIDDLEWARE = [
    "latency_obs.server_timing.ServerTimingMiddleware",  # first: its time covers every middleware below
    # outermost but one: its headers go on every answer, static files and those JsonErrorsMiddleware rewrites included
    "latency_obs.security_headers.SecurityHeadersMiddleware",
    "latency_obs.api_errors.JsonErrorsMiddleware",  # around Django's: JSON errors on /api/ and /v1/ (see the module)
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
# Reads (pages, API, alerts) stop after this long (ClickHouse max_execution_time; 0 = no limit), so one heavy
# page cannot hold the store for everyone; the spool writer's INSERTs and migrations have no such limit.
CLICKHOUSE_QUERY_TIMEOUT_SECONDS = env_int("CLICKHOUSE_QUERY_TIMEOUT_SECONDS", 30, minimum=0, maximum=86_400)
# Independent reads of one diagnosis or page run side by side on this many threads, each with a client of its own
# (store/concurrent.py); 1 runs them one after the other.
CLICKHOUSE_READ_THREADS = env_int("CLICKHOUSE_READ_THREADS", 3, minimum=1, maximum=32)

# Ingest: limits and the durable spool (a 2xx means the spans are on disk or in ClickHouse).
OTLP_GRPC_PORT = env_int("OTLP_GRPC_PORT", 4317, minimum=0, maximum=65535)
INGEST_MAX_BODY_BYTES = env_int("INGEST_MAX_BODY_BYTES", 64 * 1024 * 1024, minimum=1024)
# Gunzipping one body may take this long (a ~64 MiB body inflates in well under a second); past it, 413.
INGEST_MAX_INFLATE_SECONDS = env_float("INGEST_MAX_INFLATE_SECONDS", 5.0, minimum=0.1, maximum=600)
INGEST_MAX_ATTRIBUTES = env_int("INGEST_MAX_ATTRIBUTES", 128, minimum=1)
INGEST_MAX_ATTRIBUTE_LENGTH = env_int("INGEST_MAX_ATTRIBUTE_LENGTH", 4096, minimum=16)
INGEST_SPOOL_DIR = Path(env_str("INGEST_SPOOL_DIR", str(DATA_DIR / "spool"))).resolve()
INGEST_SPOOL_MAX_BYTES = env_int("INGEST_SPOOL_MAX_BYTES", 1024 * 1024 * 1024, minimum=1024 * 1024)
INGEST_SPOOL_FSYNC = env_bool("INGEST_SPOOL_FSYNC", True)
INGEST_SEGMENT_SPANS = env_int("INGEST_SEGMENT_SPANS", 20_000, minimum=1)
# Segments inserted by one INSERT, up to this many bytes (~90k spans): the per-INSERT cost is high.
INGEST_BATCH_BYTES = env_int("INGEST_BATCH_BYTES", 64 * 1024 * 1024, minimum=1024)
# Spans per block (and part) an INSERT writes: its memory while it sorts and writes them (docs/ingest-performance.md)
INGEST_BLOCK_ROWS = env_int("INGEST_BLOCK_ROWS", 8192, minimum=1)
# A segment this old is closed and inserted even if not full. TRICKY: every INSERT pays ~0.13 s of CPU to analyse the
# mapping whatever it holds (ingest/inserts.py; ~0.16 s before its plan optimizations were turned off), so under a
# trickle the writer's cost is one INSERT per interval: at 1 s it was a third of a running `up`'s CPU in the as-run
# incidents test (py-spy: 52 of 171 CPU-s, a burst of 12 services at 1-2 requests/s); at 3 s that test's CPU fell
# 183 -> 152 s, for spans visible ~2 s later
INGEST_FLUSH_INTERVAL_MS = env_int("INGEST_FLUSH_INTERVAL_MS", 3000, minimum=10)
# Batches inserted at once by each receiving process (an INSERT runs on one core): more drain faster, and each
# holds its INSERT's memory (~100 MiB in blocks of INGEST_BLOCK_ROWS) while it runs.
INGEST_WRITER_THREADS = env_int("INGEST_WRITER_THREADS", 2, minimum=1, maximum=16)
# how much lower than the web threads the background threads run (nice values: the spool writers, the embedded minute
# jobs, the freshness refresh; store/priority.py); 0 leaves them equal
BACKGROUND_NICE = env_int("BACKGROUND_NICE", 10, minimum=0, maximum=19)
# off: this process only receives (authenticates, validates, spools) and never opens ClickHouse; a separate
# `manage.py serve_writer` sharing the spool inserts its segments (the receive tier of docs/operations.md).
INGEST_WRITER = env_bool("INGEST_WRITER", True)
INGEST_RETRY_AFTER_SECONDS = env_int("INGEST_RETRY_AFTER_SECONDS", 5, minimum=1)
# Fair ingest, per project (overrides in the admin): spans per second (0 = unlimited) with a burst of
# rate x INGEST_PROJECT_BURST_SECONDS, enforced per receiving process, and the share of INGEST_SPOOL_MAX_BYTES
# one project may fill (1.0 = no per-project limit). Over either: 429 with Retry-After.
INGEST_PROJECT_SPANS_PER_SECOND = env_int("INGEST_PROJECT_SPANS_PER_SECOND", 50_000, minimum=0)
INGEST_PROJECT_BURST_SECONDS = env_float("INGEST_PROJECT_BURST_SECONDS", 2.0, minimum=0.1, maximum=3600)
INGEST_PROJECT_SPOOL_SHARE = env_float("INGEST_PROJECT_SPOOL_SHARE", 0.5, minimum=0.01, maximum=1.0)
# Cardinality guards, per project and hour (overrides in the admin; 0 = no limit): distinct values past
# these are stored as __other__ (ingest/cardinality.py).
INGEST_MAX_SERVICES_PER_HOUR = env_int("INGEST_MAX_SERVICES_PER_HOUR", 200, minimum=0, maximum=1_000_000)
INGEST_MAX_ROUTES_PER_HOUR = env_int("INGEST_MAX_ROUTES_PER_HOUR", 1000, minimum=0, maximum=1_000_000)
INGEST_MAX_TENANTS_PER_HOUR = env_int("INGEST_MAX_TENANTS_PER_HOUR", 10_000, minimum=0, maximum=1_000_000)
INGEST_MAX_INSTANCES_PER_HOUR = env_int("INGEST_MAX_INSTANCES_PER_HOUR", 1000, minimum=0, maximum=1_000_000)
# Spans ending further in the future than this (sender clock ahead) are refused: timestamp_out_of_range.
# A batch ClickHouse refuses for its data is bisected for at most this long; what is still refused then is
# quarantined whole (replayable), so the writer moves on.
INGEST_BISECT_BUDGET_SECONDS = env_int("INGEST_BISECT_BUDGET_SECONDS", 20, minimum=1, maximum=3600)
INGEST_MAX_FUTURE_SKEW_SECONDS = env_int("INGEST_MAX_FUTURE_SKEW_SECONDS", 900, minimum=0, maximum=7 * 86_400)

# Analysis: thresholds of the diagnosis flowchart (names in analysis/diagnosis/thresholds.py) and the API's window limit.
ANALYSIS_THRESHOLDS = env_json_object("ANALYSIS_THRESHOLDS")
ANALYSIS_MAX_WINDOW_DAYS = env_int("ANALYSIS_MAX_WINDOW_DAYS", 31, minimum=1, maximum=3650)
# prompt-length segments: cuts in input tokens (default <1k, 1-4k, 4-16k, >16k)
ANALYSIS_SEGMENT_EDGES = env_int_list("ANALYSIS_SEGMENT_EDGES", (1000, 4000, 16000))
# Incidents: a minute's baseline is the same hour of the previous day, else up to this many preceding hours.
ANALYSIS_BASELINE_HOURS = env_int("ANALYSIS_BASELINE_HOURS", 3, minimum=1, maximum=24)
# Freshness (analysis/rollups/freshness.py): before a page or the diagnosis API reads a window, the hours of its last
# ANALYSIS_FRESH_HOURS hours holding spans newer than their buckets are materialized, within this budget.
ANALYSIS_FRESH_HOURS = env_int("ANALYSIS_FRESH_HOURS", 2, minimum=0, maximum=48)
ANALYSIS_FRESH_BUDGET_SECONDS = env_float("ANALYSIS_FRESH_BUDGET_SECONDS", 5, minimum=0.1, maximum=60)
# Time budgets (s) of the minute pipeline's steps (latency_obs/pipeline.py): a step starts no unit (a dirty
# hour, a service, a budget, a rule) that would not fit, and the next minute begins with what it left. Their
# sum stays under the run's 55 s expiry, so one worker thread runs every step every minute.
PIPELINE_STEP_BUDGET_SECONDS = {
    "materialize": env_float("PIPELINE_MATERIALIZE_SECONDS", 8, minimum=0.1, maximum=50),
    "diagnose": env_float("PIPELINE_DIAGNOSE_SECONDS", 15, minimum=0.1, maximum=50),
    # every minute with traffic is judged (analysis/incidents/jobs.py): a burst of a fleet's hours waits here
    "incidents": env_float("PIPELINE_INCIDENTS_SECONDS", 15, minimum=0.1, maximum=50),
    "budgets": env_float("PIPELINE_BUDGETS_SECONDS", 4, minimum=0.1, maximum=50),
    "alert_rules": env_float("PIPELINE_ALERT_RULES_SECONDS", 8, minimum=0.1, maximum=50),
}
if sum(PIPELINE_STEP_BUDGET_SECONDS.values()) > 50:
    raise ImproperlyConfigured("PIPELINE_MATERIALIZE_SECONDS + PIPELINE_DIAGNOSE_SECONDS + PIPELINE_INCIDENTS_SECONDS"
                               " + PIPELINE_BUDGETS_SECONDS + PIPELINE_ALERT_RULES_SECONDS must be <= 50"
                               " (the minute pipeline runs every 60 s)")
# Each rollup run (every 5 minutes) diagnoses the last full hour's services for at most this long.
ROLLUP_BUDGET_SECONDS = env_float("ROLLUP_BUDGET_SECONDS", 15, minimum=1, maximum=240)
# Lists that grow with cardinality stop at a fixed size: the evidence keeps the N busiest tenants, instances and
# noisy neighbours plus one "__others__" entry; the pickers offer N values (search for the rest); the Tenants
# table N rows plus others.
ANALYSIS_TOP_N = env_int("ANALYSIS_TOP_N", 20, minimum=1, maximum=1000)
# A verdict needs this many runs (logical requests) in the window; fewer gives insufficient_data ("4 runs; a verdict
# needs 30"), in the API, CLI, pages, stored diagnoses, alerts and incidents: never confident on a handful.
ANALYSIS_MIN_RUNS = env_int("ANALYSIS_MIN_RUNS", 30, minimum=1, maximum=1_000_000)
# The capacity worksheet's cost per 1,000 requests: what one GPU-hour costs, in USD; unset, that cost is null
GPU_HOUR_PRICE_USD = env_float("GPU_HOUR_PRICE_USD", None, minimum=0)
DASHBOARD_PICKER_LIMIT = env_int("DASHBOARD_PICKER_LIMIT", 50, minimum=1, maximum=1000)
DASHBOARD_TABLE_ROWS = env_int("DASHBOARD_TABLE_ROWS", 100, minimum=1, maximum=1000)
# A thread of each web process reads again, once their window's data changes or their window moves on, the answers
# its pages asked for in the last 5 minutes, so that the next view finds them kept (analysis/reads/ahead.py)
DASHBOARD_READ_AHEAD = env_bool("DASHBOARD_READ_AHEAD", True)

# Where people open the dashboard: links in Slack messages, webhooks and weekly reviews start with it. Unset, it is
# the address `up` serves on this data dir (it writes UP_URL_FILE at start), so commands print links to its port.
UP_URL_FILE = DATA_DIR / "up_url"
try:
    _served = UP_URL_FILE.read_text().strip().rstrip("/")
except OSError:
    _served = ""
PUBLIC_BASE_URL = env_url("PUBLIC_BASE_URL", _served or "http://127.0.0.1:8000", ("http", "https"))

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

# Security (README: Security). Web server limits, applied by latency_obs/web_server.py in `up` and `serve_web`.
WEB_CONNECTION_LIMIT = env_int("WEB_CONNECTION_LIMIT", 1000, minimum=10, maximum=100_000)
WEB_CHANNEL_TIMEOUT_SECONDS = env_int("WEB_CHANNEL_TIMEOUT_SECONDS", 60, minimum=1, maximum=86_400)
WEB_REQUEST_DEADLINE_SECONDS = env_int("WEB_REQUEST_DEADLINE_SECONDS", 120, minimum=1, maximum=86_400)
WEB_CLEANUP_INTERVAL_SECONDS = env_int("WEB_CLEANUP_INTERVAL_SECONDS", 5, minimum=1, maximum=3600)
WEB_TRUSTED_PROXY = env_str("WEB_TRUSTED_PROXY", "").strip()  # the reverse proxy's address, or *

# Failed logins per account and per client address (latency_obs/login_throttle.py): over the limit within the
# window, logins are refused for the lockout, by a backend in front of ModelBackend.
LOGIN_MAX_FAILURES_PER_USER = env_int("LOGIN_MAX_FAILURES_PER_USER", 5, minimum=1)
LOGIN_MAX_FAILURES_PER_ADDRESS = env_int("LOGIN_MAX_FAILURES_PER_ADDRESS", 20, minimum=1)
LOGIN_FAILURE_WINDOW_SECONDS = env_int("LOGIN_FAILURE_WINDOW_SECONDS", 900, minimum=1, maximum=86_400)
LOGIN_LOCKOUT_SECONDS = env_int("LOGIN_LOCKOUT_SECONDS", 900, minimum=1, maximum=86_400)
AUTHENTICATION_BACKENDS = ["latency_obs.login_throttle.LoginThrottle", "django.contrib.auth.backends.ModelBackend"]
# The counters live in the cache. Process memory is exact while one process serves the web (`up`; docker's one
# `web`); several web processes must share a Redis (CACHE_URL=redis://host:6379/1). Redis is not the default,
# even when Celery uses one: logins would then fail whenever Redis is down.
CACHE_URL = env_url("CACHE_URL", "locmem://", ("locmem", "redis", "rediss"))
if CACHE_URL.startswith("locmem://"):
    # MAX_ENTRIES: a spray of made-up usernames must not cull real counters out of the default 300.
    # "answers": the pages' kept answers (analysis/reads/versions.py), in a cache of their own: process memory forgets
    # an expired entry only when it is asked for again or culled, and a window ending now is a new key every minute;
    # there the least recently used are culled past 1,000 entries (a page's answer is 2-73 KB pickled), never the counters.
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                          "OPTIONS": {"MAX_ENTRIES": 100_000}},
              "answers": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "answers",
                          "OPTIONS": {"MAX_ENTRIES": 1_000}}}
else:
    # VERSION: cached answers are pickles of analysis classes; bump it when they move or change shape, so that an
    # upgraded process never unpickles an older layout's entries (2: analysis/ in packages). Redis expires the
    # answers' keys itself: one store for both.
    CACHES = {alias: {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL,
                      "KEY_PREFIX": "latency_obs", "VERSION": 2} for alias in ("default", "answers")}

# Headers: Content-Security-Policy and, where Django's middleware does not reach, these from
# latency_obs/security_headers.py; cookie flags.
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
# SECURE_SSL: browsers reach the site over HTTPS (a TLS proxy in front). Cookies are then sent over HTTPS
# only, and HSTS pins the site to it for a year. waitress marks requests https itself (web_server.py), which is
# why there is no SECURE_PROXY_SSL_HEADER.
SECURE_SSL = env_bool("SECURE_SSL", False)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = SECURE_SSL
SECURE_HSTS_SECONDS = 365 * 86_400 if SECURE_SSL else 0

LOG_LEVEL = env_choice("LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR"))
# The scheduler's and the worker's INFO lines (a task sent every 5 s, each one received and done) and the minute
# pipeline's summary drown the login and key `up` prints: WARNING unless LOG_LEVEL is set.
_JOBS_LEVEL = LOG_LEVEL if "LOG_LEVEL" in os.environ else "WARNING"
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {"waitress.queue": {"level": "ERROR"}, "celery": {"level": _JOBS_LEVEL},
                "kombu": {"level": _JOBS_LEVEL}, "latency_obs.pipeline": {"level": _JOBS_LEVEL}},
}
