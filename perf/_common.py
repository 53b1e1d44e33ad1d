"""Shared plumbing for the perf scripts: a fresh, migrated database (PostgreSQL or SQLite),
temporary media folders, Django setup, percentiles and a machine description.

Nothing here touches the app's code; the scripts call the app's services, selectors and
views exactly as production does.

Database choice (``--database-url`` or the ``DATABASE_URL`` environment variable):
  * ``postgres://...``  a NEW database ``hv_perf_<random>`` is created on that server (the URL's
    database is only used to connect), migrated, used, and dropped at exit (``--keep`` keeps it);
  * ``sqlite`` / ``sqlite:///path`` / unset  a new SQLite file in a temporary folder.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import platform
import resource
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlparse, urlunparse

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def add_db_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL", ""),
        help="postgres://user@host:port/db (a fresh database is created beside it) or 'sqlite'; "
        "default: $DATABASE_URL, else SQLite",
    )
    parser.add_argument("--keep", action="store_true", help="keep the fresh database and temp folders")


def _is_postgres(url: str) -> bool:
    return urlparse(url).scheme in ("postgres", "postgresql")


def setup_django(database_url: str, *, keep: bool = False) -> dict:
    """Create a fresh database + temp media folder, point the settings at them, django.setup(),
    migrate. Returns a dict describing what was set up. Call before importing app modules."""
    tmp = Path(tempfile.mkdtemp(prefix="hv-perf-"))
    info: dict = {"tmp": str(tmp)}
    os.environ["HV_VAR_DIR"] = str(tmp / "var")
    os.environ["MEDIA_ROOT"] = str(tmp / "media")
    os.environ["STATIC_ROOT"] = str(tmp / "static")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.pop("DEBUG", None)  # DEBUG off: no query log, production-like
    # a throwaway key: settings refuse the built-in development key with DEBUG off
    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
    # measure the platform, not the API rate limit (a load test is one user hammering it)
    os.environ.setdefault("HV_API_RATE_USER", "off")
    os.environ.setdefault("HV_API_RATE_ANON", "off")
    for sub in ("var/broker/queue", "var/broker/processed", "media", "static"):
        (tmp / sub).mkdir(parents=True, exist_ok=True)

    drop = None
    if _is_postgres(database_url):
        import psycopg

        parsed = urlparse(database_url)
        name = f"hv_perf_{secrets.token_hex(4)}"
        admin_url = urlunparse(parsed._replace(scheme="postgresql"))
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
            info["server_version"] = conn.execute("SHOW server_version").fetchone()[0]
        os.environ["DATABASE_URL"] = urlunparse(parsed._replace(path="/" + name))
        info.update(backend="postgresql", database=name)

        def drop() -> None:
            from django.db import connections

            connections.close_all()
            with psycopg.connect(admin_url, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    else:
        path = tmp / "perf.sqlite3"
        os.environ["DATABASE_URL"] = f"sqlite:///{path}"
        info.update(backend="sqlite", database=str(path))
        import sqlite3

        info["server_version"] = sqlite3.sqlite_version

    def cleanup() -> None:
        if keep:
            print(f"[perf] kept database {info['database']} and {tmp}", file=sys.stderr)
            return
        try:
            if drop is not None:
                drop()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    atexit.register(cleanup)

    import django

    django.setup()
    from django.core.management import call_command

    t0 = time.perf_counter()
    call_command("migrate", verbosity=0, interactive=False)
    info["migrate_s"] = round(time.perf_counter() - t0, 2)
    return info


def percentile(sorted_values: list[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..100) of an already sorted list."""
    if not sorted_values:
        return float("nan")
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = (len(sorted_values) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summary_ms(samples_s: list[float]) -> dict[str, float]:
    s = sorted(x * 1000 for x in samples_s)
    return {
        "n": len(s),
        "p50": percentile(s, 50),
        "p95": percentile(s, 95),
        "p99": percentile(s, 99),
        "mean": statistics.fmean(s) if s else float("nan"),
        "max": s[-1] if s else float("nan"),
    }


def format_row(label: str, st: dict[str, float]) -> str:
    return (
        f"{label:<38} n={st['n']:>5}  p50={st['p50']:7.2f}  p95={st['p95']:7.2f}  "
        f"p99={st['p99']:7.2f}  mean={st['mean']:7.2f}  max={st['max']:8.2f}  (ms)"
    )


def machine() -> dict[str, str]:
    mem_gib = ""
    with contextlib.suppress(OSError):  # not Linux: leave it blank
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_gib = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    cpu = ""
    with contextlib.suppress(OSError):
        cpu = next(
            (
                ln.split(":", 1)[1].strip()
                for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")
            ),
            "",
        )
    import django

    return {
        "nproc": str(os.cpu_count()),
        "cpu": cpu,
        "memory": mem_gib,
        "python": platform.python_version(),
        "django": django.get_version(),
        "kernel": platform.release(),
    }


def max_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_child(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *argv], check=False, cwd=ROOT, text=True, capture_output=True)
