"""The progress dashboard's tables as CSV (``/projects/<id>/dashboard/<table>.csv``): per annotator,
per stratum of each plan, and submissions per hour over 30 days.

Written by the platform's one CSV writer (:func:`core.csvsafe.writer`: every cell through
:func:`core.csvsafe.csv_cell`, rows ending in ``\\r\\n``, values with line breaks quoted)."""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from typing import Any

from annotation.models import Project
from core import csvsafe

from . import dashboard, selectors

ANNOTATOR_COLUMNS = (
    "name",
    "attributes",
    "assigned",
    "in_progress",
    "submitted",
    "skipped",
    "expired",
    "attention_answered",
    "attention_failed",
    "gold_answered",
    "gold_accuracy",
    "repeats",
    "consistency",
    "paused",
    "at_risk",
)
STRATUM_COLUMNS = (
    "plan",
    "stratum",
    "items",
    "places",
    "assigned",
    "in_progress",
    "submitted",
    "skipped",
    "expired",
    "open_in_pool",
    "percent",
)
THROUGHPUT_COLUMNS = ("hour", "submitted")
#: the throughput table's span: 30 days of hours (the page shows the last day)
THROUGHPUT_HOURS = 24 * 30


def write_csv(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """CSV text of ``header`` and ``rows``, each cell through :func:`core.csvsafe.csv_cell`."""
    buf = io.StringIO()
    writer = csvsafe.writer(buf)  # the one writer: formulas defused in every cell, line breaks quoted
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()


def annotator_rows(project: Project) -> list[list[Any]]:
    rows = []
    for row in dashboard.progress_by_annotator(project):
        row["attributes"] = ";".join(f"{k}={v}" for k, v in sorted(row["attributes"].items()))
        rows.append([row[c] for c in ANNOTATOR_COLUMNS])
    return rows


def stratum_rows(project: Project) -> list[list[Any]]:
    return [
        [plan.name] + [row[c] for c in STRATUM_COLUMNS[1:]]
        for plan, progress in selectors.plans_with_progress(project)
        for row in progress
    ]


def throughput_rows(project: Project) -> list[list[Any]]:
    return [
        [row["hour"].isoformat(), row["submitted"]] for row in dashboard.throughput(project, hours=THROUGHPUT_HOURS)
    ]


def dashboard_table(project: Project, table: str) -> str | None:
    """The dashboard table ``table`` (``annotators``, ``strata`` or ``throughput``) as CSV text;
    None for any other name."""
    if table == "annotators":
        return write_csv(ANNOTATOR_COLUMNS, annotator_rows(project))
    if table == "strata":
        return write_csv(STRATUM_COLUMNS, stratum_rows(project))
    if table == "throughput":
        return write_csv(THROUGHPUT_COLUMNS, throughput_rows(project))
    return None
