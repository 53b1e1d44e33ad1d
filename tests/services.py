"""Helpers behind the fixtures in tests/conftest.py: which external services the run
must have, a real Celery worker subprocess, and pointing the in-process Celery app at
Redis. Kept free of pytest fixtures so it can be reused (and read) on its own."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import quote, urlparse, urlunparse

ROOT = Path(__file__).resolve().parent.parent
WORKER_QUEUES = "default,api,gpu"


# ---------------------------------------------------------------------------- services
def services_required() -> bool:
    """True in CI (CI set) and under scripts/test (HV_TEST_SERVICES=1): PostgreSQL and
    Redis must be there, and a test needing them fails instead of skipping."""
    ci = os.environ.get("CI", "").strip().lower() not in {"", "0", "false", "no"}
    return ci or os.environ.get("HV_TEST_SERVICES", "") == "1"


def embedded_pass() -> bool:
    """True in the second pass of scripts/test (HV_TEST_EMBEDDED=1): the suite on the embedded
    default `make run` uses (SQLite, no Redis), without the tests that need a server
    (``conftest.NEEDS_SERVERS``), which the first pass ran on PostgreSQL and Redis."""
    return os.environ.get("HV_TEST_EMBEDDED", "") == "1"


def services_problems() -> list[str]:
    """What is wrong with the service environment (empty list when fine)."""
    if embedded_pass():
        db = os.environ.get("DATABASE_URL", "")
        return [f"the embedded pass runs on SQLite: DATABASE_URL must be unset, got {db!r}"] if db else []
    problems = []
    db = os.environ.get("DATABASE_URL", "")
    if urlparse(db).scheme not in {"postgres", "postgresql"}:
        problems.append(f"DATABASE_URL must point at PostgreSQL (postgres://...), got {db or '(unset)'!r}")
    if not os.environ.get("REDIS_URL"):
        problems.append("REDIS_URL is not set (redis://host:port/db)")
    return problems


def redis_url_for_db(url: str, db: int) -> str:
    """The same Redis server with another database number."""
    p = urlparse(url)
    return urlunparse(p._replace(path=f"/{db}"))


def xdist_index() -> int:
    """0 without xdist; 1 + N for pytest-xdist worker gwN."""
    wid = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(wid[2:]) + 1 if wid.startswith("gw") and wid[2:].isdigit() else 0


def database_url_from_settings(settings_dict: dict) -> str:
    """DATABASE_URL (the syntax config/settings.py reads) for a Django DATABASES entry,
    e.g. the test database pytest-django created (test_<name>[_gwN])."""
    engine = settings_dict["ENGINE"]
    if engine.endswith("postgresql"):
        user = quote(settings_dict.get("USER") or "", safe="")
        password = quote(settings_dict.get("PASSWORD") or "", safe="")
        auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
        host = settings_dict.get("HOST") or "127.0.0.1"
        port = f":{settings_dict['PORT']}" if settings_dict.get("PORT") else ""
        return f"postgres://{auth}{host}{port}/{quote(settings_dict['NAME'], safe='')}"
    if engine.endswith("sqlite3"):
        return f"sqlite:///{Path(settings_dict['NAME']).resolve()}"
    raise ValueError(f"no DATABASE_URL form for engine {engine}")


# ------------------------------------------------------------------------ celery worker
class CeleryWorker:
    """A real `celery -A config worker` subprocess on the given broker."""

    def __init__(
        self,
        broker_url: str,
        database_url: str,
        log_path: Path,
        result_backend: str | None = None,
        queues: str = WORKER_QUEUES,
        pool: str = "threads",
        concurrency: int = 2,
        extra_env: dict | None = None,
        include: tuple[str, ...] = ("tests.services",),
        broker_options: dict | None = None,
    ):
        self.broker_url = broker_url
        self.result_backend = result_backend or broker_url
        self.database_url = database_url
        self.log_path = Path(log_path)
        self.queues = queues
        self.pool = pool
        self.concurrency = concurrency
        self.extra_env = extra_env or {}
        self.include = include
        self.broker_options = broker_options or {}  # e.g. the filesystem broker's folders, for the probe
        self.hostname = f"hvtest-{os.getpid()}-{uuid.uuid4().hex[:6]}@localhost"
        self.proc: subprocess.Popen | None = None
        self._log = None

    # -- lifecycle
    def start(self, timeout: float = 60.0) -> CeleryWorker:
        env = dict(os.environ)
        env.update(
            {
                "CELERY_BROKER_URL": self.broker_url,
                "CELERY_RESULT_BACKEND": self.result_backend,
                "CELERY_TASK_ALWAYS_EAGER": "0",
                "DATABASE_URL": self.database_url,
                "DB_CONN_MAX_AGE": "0",  # no idle connections holding the test DB
                "DJANGO_SETTINGS_MODULE": env.get("DJANGO_SETTINGS_MODULE", "config.settings"),
                "PYTHONUNBUFFERED": "1",
            }
        )
        env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        env.update(self.extra_env)
        cmd = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "-Q",
            self.queues,
            f"--pool={self.pool}",
            f"--concurrency={self.concurrency}",
            "-n",
            self.hostname,
            "-l",
            "info",
            "--without-mingle",
            "--without-gossip",
        ]
        if self.include:  # test-only task modules (e.g. db_probe below)
            cmd += ["--include", ",".join(self.include)]
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            cmd,
            cwd=ROOT,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            self.wait_ready(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Block until the worker answers a remote-control ping through the broker."""
        from celery import Celery

        # set_as_current=False: otherwise shared_task proxies (`run_import.delay`) in this
        # process would resolve to this bare app (queue "celery", nobody consumes it).
        probe = Celery("hv-test-probe", broker=self.broker_url, set_as_current=False)
        probe.conf.broker_transport_options = self.broker_options
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise RuntimeError(
                        f"celery worker exited with status {self.proc.returncode} before it was "
                        f"ready; log:\n{self.log_tail()}"
                    )
                try:
                    replies = probe.control.ping(destination=[self.hostname], timeout=1.0)
                except Exception:
                    replies = []
                    time.sleep(0.5)
                if any(self.hostname in r for r in replies or []):
                    return
            raise TimeoutError(f"celery worker {self.hostname} not ready after {timeout:.0f}s; log:\n{self.log_tail()}")
        finally:
            probe.close()

    def stop(self, timeout: float = 15.0) -> None:
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)  # warm shutdown
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        if self._log is not None:
            self._log.close()
            self._log = None

    # -- introspection
    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def wait_for_log(self, text: str, timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.log_text():
                return True
            time.sleep(0.1)
        return text in self.log_text()

    def log_tail(self, lines: int = 60) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])


# ------------------------------------------------------------------- test-only tasks
# Registered in the worker through `--include tests.services`; call them by name:
#   app.send_task(DB_PROBE, ignore_result=False).get(timeout=30)
DB_PROBE = "hv_tests.db_probe"


def _register_test_tasks() -> None:
    from celery import shared_task

    @shared_task(name=DB_PROBE)
    def db_probe(username: str | None = None) -> dict:
        """What the worker's database connection sees."""
        from django.contrib.auth import get_user_model
        from django.db import connection

        users = get_user_model().objects
        return {
            "vendor": connection.vendor,
            "name": connection.settings_dict["NAME"],
            "user_exists": users.filter(username=username).exists() if username else None,
        }


_register_test_tasks()


# ------------------------------------------------------------ in-process celery app
def _reset_celery_connections(app) -> None:
    # Only drop the app's references: kombu keeps one global pool per broker URL, shared
    # by later switches to the same URL, so it must not be force-closed here.
    app._pool = None
    amqp = app.__dict__.get("amqp")
    if amqp is not None:
        amqp._producer_pool = None
    app._backend_cache = None
    if getattr(app._local, "backend", None) is not None:
        app._local.backend = None


@contextlib.contextmanager
def celery_app_on_broker(app, broker_url: str, result_backend: str | None = None):
    """Point the in-process Celery app at `broker_url` (so `.delay()` goes through it, not
    eagerly, not to the filesystem broker) and at a result backend; restore afterwards."""
    keys = ("broker_url", "broker_transport_options", "result_backend", "task_always_eager")
    saved_conf = {k: app.conf.get(k) for k in keys}
    env_keys = ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND")  # these beat app.conf
    saved_env = {k: os.environ.get(k) for k in env_keys}
    try:
        os.environ["CELERY_BROKER_URL"] = broker_url
        os.environ["CELERY_RESULT_BACKEND"] = result_backend or broker_url
        app.conf.broker_url = broker_url
        app.conf.broker_transport_options = {}
        app.conf.result_backend = result_backend or broker_url
        app.conf.task_always_eager = False
        _reset_celery_connections(app)
        app.set_current()  # shared_task proxies resolve to the current app
        yield app
    finally:
        for k, v in saved_conf.items():
            app.conf[k] = v
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        _reset_celery_connections(app)
