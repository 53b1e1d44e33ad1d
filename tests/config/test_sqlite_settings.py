"""HV_SQLITE_TIMEOUT (issue 37, M5): how long a write on SQLite waits for the write lock, read
by ``config/settings.py`` into the SQLite connection options; a value that is not a number of
seconds in (0, 600] stops the settings with a message naming the variable."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

SETTINGS = Path(__file__).resolve().parents[2] / "config" / "settings.py"


def computed(monkeypatch, value: str | None) -> dict:
    if value is None:
        monkeypatch.delenv("HV_SQLITE_TIMEOUT", raising=False)
    else:
        monkeypatch.setenv("HV_SQLITE_TIMEOUT", value)
    monkeypatch.setenv("DATABASE_URL", "sqlite:////tmp/hv-settings-check.sqlite3")
    return runpy.run_path(str(SETTINGS))


@pytest.mark.parametrize(("value", "seconds"), [(None, 20.0), ("7.5", 7.5), ("600", 600.0)])
def test_the_sqlite_lock_timeout_reaches_the_connection_options(monkeypatch, value, seconds):
    assert computed(monkeypatch, value)["DATABASES"]["default"]["OPTIONS"]["timeout"] == seconds


@pytest.mark.parametrize("value", ["0", "-1", "601", "nan", "inf", "soon", ""])
def test_a_bad_sqlite_lock_timeout_is_refused_by_name(monkeypatch, value):
    with pytest.raises(ValueError, match="HV_SQLITE_TIMEOUT must be a number of seconds"):
        computed(monkeypatch, value)
