"""Settings. Every deployment knob comes from an environment variable; defaults give the
embedded demo stack (SQLite + a Celery broker on the filesystem, no servers needed)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("HV_VAR_DIR", BASE_DIR / "var"))


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return raw.strip().lower() in {"1", "true", "yes", "on"}


SQLITE_SYNCHRONOUS = {"full": "FULL", "normal": "NORMAL"}[
    os.environ.get("HV_SQLITE_SYNCHRONOUS", "normal").strip().lower()
]


def database_from_url(url: str) -> dict:
    """DATABASE_URL: sqlite:///path or postgres://user:pass@host:port/name."""
    parsed = urlparse(url)
    if parsed.scheme == "sqlite":
        path = unquote(parsed.path)
        # sqlite:////abs/path is absolute; sqlite:///rel/path is relative to the project.
        path = path[1:] if path.startswith("//") else str(BASE_DIR / path.lstrip("/")) if path else ""
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": path or str(VAR_DIR / "db.sqlite3"),
            # WAL: readers no longer wait for the writer (nor it for them), and a commit is an
            # append to the log, fsynced at checkpoints (synchronous=NORMAL: an application crash
            # loses nothing, a power cut may lose the last commits) or at every commit
            # (HV_SQLITE_SYNCHRONOUS=full: measured 112 against 155 annotations/s, docs/benchmarks.md).
            # Each web thread keeps its connection (and its prepared statements) between requests.
            "OPTIONS": {
                "timeout": 20,
                "transaction_mode": "IMMEDIATE",
                "init_command": f"PRAGMA journal_mode=WAL;PRAGMA synchronous={SQLITE_SYNCHRONOUS}",
            },
            "CONN_MAX_AGE": int(os.environ.get("DB_CONN_MAX_AGE", "60")),
        }
    if parsed.scheme in {"postgres", "postgresql"}:
        # dj-database-url: user, password, host, port, name, and the query string as connection
        # OPTIONS (?sslmode=require&sslrootcert=..., ?options=-c%20search_path%3Dhv)
        return dj_database_url.parse(url, conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "60")))
    raise ValueError(f"DATABASE_URL scheme not supported: {parsed.scheme!r}")


DEMO_SECRET_KEY = "dev-only-insecure-key-change-me"
SECRET_KEY = os.environ.get("SECRET_KEY", DEMO_SECRET_KEY)
DEBUG = env_bool("DEBUG", False)
# HV_DEMO=1: the embedded demo (`make run` sets it when no SECRET_KEY is given): the
# development key is allowed with DEBUG off, and `make run` seeds the demo accounts.
HV_DEMO = env_bool("HV_DEMO", False)
if SECRET_KEY == DEMO_SECRET_KEY and not DEBUG and not HV_DEMO and "pytest" not in sys.modules:
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured(
        "\n\n*** REFUSING TO START: SECRET_KEY is the built-in development key and DEBUG is off. ***\n"
        "Set SECRET_KEY to a long random value (python -c 'import secrets; print(secrets.token_urlsafe(50))'),\n"
        "or run the local demo with `make run` / HV_DEMO=1, or set DEBUG=true for development.\n"
    )
ALLOWED_HOSTS = [h for h in os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",") if h]
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o]

# Deployment security (see the README): all off by default, for the embedded HTTP demo.
SECURE_HSTS_SECONDS = int(os.environ.get("HV_SECURE_HSTS_SECONDS", "0") or 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("HV_SECURE_HSTS_INCLUDE_SUBDOMAINS", SECURE_HSTS_SECONDS > 0)
SECURE_HSTS_PRELOAD = env_bool("HV_SECURE_HSTS_PRELOAD", False)
SECURE_SSL_REDIRECT = env_bool("HV_SECURE_SSL_REDIRECT", False)
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # load balancers probe over plain HTTP
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("HV_SECURE_COOKIES", False)
SESSION_COOKIE_HTTPONLY = True
# The language cookie (the switcher's and the one set at log-in) as the session's: over HTTPS only
# where those are, not sent on cross-site posts, and out of scripts' reach (none reads it) (issue 37)
LANGUAGE_COOKIE_SECURE = SESSION_COOKIE_SECURE
LANGUAGE_COOKIE_SAMESITE = "Lax"
LANGUAGE_COOKIE_HTTPONLY = True
# Proxies (IPs or networks, comma-separated) whose X-Forwarded-For / X-Forwarded-Proto are
# believed: the client address for login throttling, and https for SECURE_SSL_REDIRECT.
HV_TRUSTED_PROXIES = [p.strip() for p in os.environ.get("HV_TRUSTED_PROXIES", "").split(",") if p.strip()]
if HV_TRUSTED_PROXIES:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Content-Security-Policy of every response ("" for none). Pages load only same-origin
# scripts (htmx from static/); style attributes and htmx's indicator style need inline styles.
HV_CSP = os.environ.get(
    "HV_CSP",
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
    "font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; "
    "form-action 'self'; frame-ancestors 'none'",
).strip()

# Failed log-ins (login form and HTTP Basic), counted in the cache per address and user name.
HV_LOGIN_FAILURES_PER_IP = int(os.environ.get("HV_LOGIN_FAILURES_PER_IP", 30))
HV_LOGIN_FAILURES_PER_USER = int(os.environ.get("HV_LOGIN_FAILURES_PER_USER", 10))
HV_LOGIN_WINDOW_SECONDS = int(os.environ.get("HV_LOGIN_WINDOW_SECONDS", 300))

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI served from static files, no CDN
    "annotation",
    "studies",
    "benchmarks",
    "agreement",
    "judges",
    "curation",
    "accounts",
    "annotate",
    "demo",
]

MIDDLEWARE = [
    # first: a body over HV_MAX_BODY_BYTES is refused with 413 before anything reads it
    "core.bodylimit.BodyLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # the language: the set_language cookie (restored from the profile at log-in), else the
    # browser's Accept-Language, else LANGUAGE_CODE
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "core.security.ContentSecurityPolicyMiddleware",
    # innermost: the annotate loop's two API requests on the lean path (annotate/hot_api.py)
    "annotate.hot_api.HotPathMiddleware",
]
# Off: the annotate loop's API requests go through the DRF views and the annotate page the
# ordinary way (the reference: same answers, slower).
HV_LEAN_API = env_bool("HV_LEAN_API", True)

ROOT_URLCONF = "config.urls"

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
                "annotation.context_processors.header",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"

DATABASES = {"default": database_from_url(os.environ.get("DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}"))}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en"
# The UI's languages (issue 14: the papers recruit annotators in China and Germany among others).
# Catalogs in locale/ (compiled .mo files are committed, so running needs no gettext); a rubric
# carries its own translations as data (annotation/rubric.py).
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文"), ("de", "Deutsch")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
WHITENOISE_USE_FINDERS = True  # serve static/ without collectstatic in the embedded default
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", VAR_DIR / "staticfiles"))
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", VAR_DIR / "media"))
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# Uploads: the whole request, and each image inside an import.
DATA_UPLOAD_MAX_MEMORY_SIZE = int(os.environ.get("HV_MAX_REQUEST_BYTES", 10 * 1024 * 1024))
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
HV_MAX_UPLOAD_BYTES = int(os.environ.get("HV_MAX_UPLOAD_BYTES", 512 * 1024 * 1024))
# Any request body (every route, signed in or not): over this, 413 before the body is read
# (core/bodylimit.py). Default: the upload limit plus 16 MiB for the multipart envelope and the
# form's other fields; set the reverse proxy's limit (nginx client_max_body_size) to match.
HV_MAX_BODY_BYTES = int(os.environ.get("HV_MAX_BODY_BYTES", HV_MAX_UPLOAD_BYTES + 16 * 1024 * 1024))
# A body sent without a length (Transfer-Encoding: chunked) is held in memory, so it has its own,
# smaller limit (issue 37, M8); uploads from browsers and the usual clients come with a length.
HV_MAX_CHUNKED_BODY_BYTES = int(os.environ.get("HV_MAX_CHUNKED_BODY_BYTES", DATA_UPLOAD_MAX_MEMORY_SIZE))
# Imports whose files total at most this many bytes run inside the request; larger ones on a worker.
HV_INLINE_IMPORT_BYTES = int(os.environ.get("HV_INLINE_IMPORT_BYTES", 4 * 1024 * 1024))
# Agreement reports over more annotations than this run on a worker with progress.
HV_AGREEMENT_INLINE_MAX = int(os.environ.get("HV_AGREEMENT_INLINE_MAX", 20_000))
HV_MAX_IMAGE_BYTES = int(os.environ.get("HV_MAX_IMAGE_BYTES", 20 * 1024 * 1024))
HV_MAX_IMAGE_PIXELS = int(os.environ.get("HV_MAX_IMAGE_PIXELS", 40_000_000))
HV_ALLOWED_IMAGE_FORMATS = ("PNG", "JPEG", "WEBP", "GIF")
HV_THUMBNAIL_SIZE = (320, 320)


def api_rate(name: str, default: str) -> str | None:
    """A DRF rate such as 10000/min; "off" (or empty) for none."""
    raw = os.environ.get(name, default).strip()
    return None if raw.lower() in {"", "off", "none", "0"} else raw


REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "core.security.SessionAuthentication",
        "accounts.authentication.TokenAuthentication",
        "core.security.BasicAuthentication",
    ],
    "DEFAULT_THROTTLE_CLASSES": [
        "core.security.AnonRateThrottle",
        "core.security.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": api_rate("HV_API_RATE_ANON", "600/min"),
        "user": api_rate("HV_API_RATE_USER", "10000/min"),
    },
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # DRF's JSON parser refusing lone UTF-16 surrogates (issue 37, H2); forms decode invalid
    # bytes as U+FFFD, so they cannot carry one
    "DEFAULT_PARSER_CLASSES": [
        "core.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "core.schema.AutoSchema",
    "EXCEPTION_HANDLER": "core.api.exception_handler",
    "DEFAULT_PAGINATION_CLASS": "core.api.Pagination",
    "PAGE_SIZE": 100,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Human validation platform API",
    "DESCRIPTION": "Projects, items, imports, assignments and answers.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI from drf-spectacular-sidecar's static files (no CDN, no inline script: CSP)
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # two different "status" choice sets: a job's and a curation decision's
    "ENUM_NAME_OVERRIDES": {
        "JobStatusEnum": "core.jobs.JobStatus",
        "DecisionStatusEnum": "curation.models.STATUS_CHOICES",
    },
}

# Celery. Default: a broker on the filesystem (no server). Production: redis://...
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "filesystem://")
_BROKER_DIR = Path(os.environ.get("HV_BROKER_DIR", VAR_DIR / "broker"))
CELERY_BROKER_TRANSPORT_OPTIONS = (
    {
        "data_folder_in": str(_BROKER_DIR / "queue"),
        "data_folder_out": str(_BROKER_DIR / "queue"),
        "processed_folder": str(_BROKER_DIR / "processed"),
        "control_folder": str(_BROKER_DIR / "control"),
        "store_processed": False,
    }
    if CELERY_BROKER_URL.startswith("filesystem")
    # Redis: a task taken by a worker that died is handed out again after this many seconds
    # (tasks are idempotent: judge chunks write by (run, item, pass), imports by job state).
    else {"visibility_timeout": int(os.environ.get("HV_BROKER_VISIBILITY_TIMEOUT", 900))}
)
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND") or None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = True
# A task is acknowledged when it ends, and one whose worker process was lost is given back to
# the broker: on Redis it is handed out again (after visibility_timeout when the whole worker
# was killed). The filesystem broker has no acknowledgements (a message is gone once read), so
# there a killed worker's task is lost; core.reaper (below) covers both, by the job's lease.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_IMPORTS = ("core.tasks",)  # core is no app, so autodiscovery does not find its tasks
# Job leases (core/heartbeat.py, core/reaper.py): a running job beats every lease/8 seconds; one
# with no beat for HV_JOB_LEASE_SECONDS is re-queued (resumable work, while fewer than
# HV_JOB_MAX_ATTEMPTS starts were made) or failed with "the worker stopped: ...".
HV_JOB_LEASE_SECONDS = float(os.environ.get("HV_JOB_LEASE_SECONDS", 120))
HV_JOB_MAX_ATTEMPTS = int(os.environ.get("HV_JOB_MAX_ATTEMPTS", 3))
HV_JOB_REAP_SECONDS = float(os.environ.get("HV_JOB_REAP_SECONDS", 30))
# a queued job no worker has claimed for this long has its task sent again (see core/reaper.py)
HV_JOB_RESEND_SECONDS = float(os.environ.get("HV_JOB_RESEND_SECONDS", 900))
# Periodic work (run by `celery beat`, which `make run` starts beside the worker).
CELERY_BEAT_SCHEDULE = {
    "expire-leases": {"task": "studies.expire_leases", "schedule": 60.0},
    "reap-jobs": {"task": "core.reap_jobs", "schedule": HV_JOB_REAP_SECONDS},
    "sweep-staged-uploads": {"task": "annotation.sweep_staged_uploads", "schedule": 3600.0},
}
# An uploaded file waiting in MEDIA_ROOT/imports for a confirmation that never came (a preview
# left open) is deleted after this long (annotation/importing.py: sweep_staged_uploads).
HV_STAGED_UPLOAD_TTL_SECONDS = float(os.environ.get("HV_STAGED_UPLOAD_TTL_SECONDS", 24 * 3600))

# Assignment leases and crowd entry.
HV_LEASE_SECONDS = int(os.environ.get("HV_LEASE_SECONDS", 1800))
# Key of the HMAC of crowd participant ids. Set it in any deployment; while empty, SECRET_KEY is
# used (what older deployments hashed with) and `check --deploy` warns (studies.W001): set it
# to the current SECRET_KEY before rotating that, or returning participants get new accounts.
HV_CROWD_PID_KEY = os.environ.get("HV_CROWD_PID_KEY", "")

# Model judges (judges/endpoints.py). A judge's params name its endpoint and the environment
# variable holding its key; only these are allowed (comma-separated; see the README).
HV_JUDGE_API_BASE = os.environ.get("HV_JUDGE_API_BASE", "")  # the default endpoint, always allowed
# environment variables a judge may use as its key (a trailing * is a prefix); HV_JUDGE_API_KEY always.
# NAME@host:port (or PREFIX*@host:port) binds a key to an endpoint (repeat the name for more), and a
# bound key goes only there; a name listed exactly without @ goes only to HV_JUDGE_API_BASE; a key
# matched only by a prefix without @ is sent nowhere (docs/security.md)
HV_JUDGE_API_KEYS = [
    n.strip() for n in os.environ.get("HV_JUDGE_API_KEYS", "HV_JUDGE_API_KEY,HV_JUDGE_KEY_*").split(",") if n.strip()
]
# endpoints a judge's base_url may name: host:port; host alone = the scheme's default port (80/443);
# host:* any port; .domain[:port] its subdomains; * any host and port (docs/security.md)
HV_JUDGE_ALLOWED_HOSTS = [
    h.strip()
    for h in os.environ.get("HV_JUDGE_ALLOWED_HOSTS", "127.0.0.1:8000,localhost:8000,[::1]:8000").split(",")
    if h.strip()
]

# Nobody stalls the shared worker (judges/share.py, docs/judges.md#bounds-and-the-shared-worker):
# judge chunks of one project at work at once (0: no limit); a chunk over it is sent again after
# about this many seconds; how often a working chunk reads whether its run was cancelled.
HV_JUDGE_PROJECT_SHARE = int(os.environ.get("HV_JUDGE_PROJECT_SHARE", 1))
HV_JUDGE_SHARE_RETRY_SECONDS = float(os.environ.get("HV_JUDGE_SHARE_RETRY_SECONDS", 3))
HV_JUDGE_CANCEL_POLL_SECONDS = float(os.environ.get("HV_JUDGE_CANCEL_POLL_SECONDS", 1))

# Cache: per-process memory by default; HV_CACHE_URL=redis://... shares it between processes.
_CACHE_URL = os.environ.get("HV_CACHE_URL", "")
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": _CACHE_URL}
        if _CACHE_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}
# Sessions are read from the cache and written through to the database: one query less per page.
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}
