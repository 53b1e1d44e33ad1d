"""The embedded stack (SQLite in WAL mode, as `make run` has it) in a child process, for the
tests of what only a real SQLite file shows: locks between connections (issue 37, H3 and M5)
and a worker's memory under a cap (M3). The test database of a run is PostgreSQL or an
in-memory SQLite without WAL, neither of which locks as a deployment's file does.

A migrated SQLite file is made once per session (``embedded_sqlite_template`` in
tests/conftest.py) and copied for each test; :func:`run_child` runs Python code against a copy
with Django set up as a worker has it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child_env(db: Path, folder: Path, **extra: str) -> dict[str, str]:
    """The environment of a worker of the embedded stack on ``db``, with its files in ``folder``."""
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "DEBUG"}}
    for sub in ("var/broker/queue", "var/broker/processed", "media", "static"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=f"sqlite:///{db.resolve()}",
        HV_VAR_DIR=str(folder / "var"),
        MEDIA_ROOT=str(folder / "media"),
        STATIC_ROOT=str(folder / "static"),
        SECRET_KEY=os.environ.get("SECRET_KEY", "hv-embedded-test-key-" + "x" * 40),
        PYTHONPATH=str(ROOT),
        **extra,
    )
    return env


def migrate(db: Path, folder: Path) -> None:
    """A migrated SQLite file at ``db`` (the whole schema, no rows)."""
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v0"],
        cwd=ROOT,
        env=child_env(db, folder),
        check=True,
        timeout=600,
    )


def fresh_copy(template: Path, folder: Path) -> Path:
    """A copy of the migrated template for one test."""
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "db.sqlite3"
    shutil.copyfile(template, db)
    return db


def run_child(
    db: Path, folder: Path, code: str, *, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess:
    """Run ``code`` (after ``django.setup()``) in a child process on ``db``; its result (stdout,
    stderr, return code), never raised."""
    script = "import django\ndjango.setup()\n" + textwrap.dedent(code)
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=child_env(db, folder, **(env or {})),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
