"""The export job: one :class:`~curation.models.Export` row -> its files under
``MEDIA_ROOT/exports/<project>/<id>/``, written by the writer of its content (items, long
annotations, revisions) in its format (the registry, ``curation.export_formats``), plus
``provenance.json``; and the lookups the download views use."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from core import jobs
from core.progress import ProgressWriter

from ..export_formats import FORMATS
from ..models import Export
from .annotations import export_annotations
from .common import export_root, provenance, remove_partial_files, write_json_atomic
from .items import export_items
from .revisions import export_revisions

logger = logging.getLogger(__name__)


def progress_fields(fraction: float, phase: str) -> dict[str, Any]:
    """The export row's progress column for a fraction done (the phase is not shown)."""
    return {"progress": round(fraction, 3)}


def run_export_job(*, export: Export) -> Export:
    """Write the export's files under MEDIA_ROOT/exports/<project>/<id>/, recording progress,
    the file list (name, size, rows, sha256) and the provenance on the row.

    The common job lifecycle (``core.jobs.run``): a claim, a heartbeat while writing, the end
    recorded only while the claim holds. A worker killed mid-export leaves partial files that
    the re-queued job (``core.reaper``) rewrites whole: every file is written atomically."""

    def work(export: Export) -> dict[str, Any]:
        root = export_root(export)
        root.mkdir(parents=True, exist_ok=True)
        remove_partial_files(export)  # what a killed earlier attempt left
        prov = provenance(export)
        # one writer per content; each writes its table(s) in the export's format through the
        # registry (curation.export_formats), the Hugging Face folder included
        run = {"items": export_items, "annotations": export_annotations, "revisions": export_revisions}[export.content]
        # Progress goes to the row from a thread of its own (own connection), never from this
        # one: the export reads through an open cursor, which on SQLite (WAL) is a read
        # transaction on a snapshot, and a write from that connection after the heartbeat's
        # thread committed fails at once with "database is locked" (SQLITE_BUSY_SNAPSHOT, no
        # busy timeout helps): every export of 50,000 annotations failed so (issue 37, H3).
        with ProgressWriter(Export, export.pk, attempt=export.attempts, fields=progress_fields) as progress:
            files = run(export, root, prov, progress.set)
        files.append({**write_json_atomic(root / "provenance.json", prov)})
        return {"files": files, "provenance": prov, "progress": 1.0, "message": ""}

    return jobs.run(export, work)


def file_path(export: Export, name: str) -> Path | None:
    """The path of one listed file of a finished export (None for anything not listed)."""
    listed = {f["name"] for f in export.files if f.get("sha256")}
    if name not in listed:
        return None
    path = (export_root(export) / name).resolve()
    return path if path.is_relative_to(export_root(export).resolve()) and path.is_file() else None


def main_file(export: Export) -> str | None:
    files: Iterable[dict] = export.files or []
    return next((f["name"] for f in files if f["name"] != "provenance.json" and f.get("sha256")), None)


def content_type(export: Export, name: str) -> str | None:
    """The Content-Type a listed file is downloaded with: its format's (the registry's) for a
    file with the format's extension, else None (guessed from the name)."""
    fmt = FORMATS.get(export.format)
    return fmt.content_type if fmt is not None and name.endswith(f".{fmt.extension}") else None
