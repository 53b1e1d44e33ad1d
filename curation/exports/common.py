"""What every export writer shares: the export's folder, rater pseudonyms, cells as text formats
write them, file entries (name, size, rows, sha256) and the provenance record written beside the
data. (How a table is written in each format: :mod:`curation.exports.tables`.)"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
from django.conf import settings
from django.utils import timezone

from annotation.models import Project
from core import csvsafe

from ..models import Export
from ..selectors import decision_counts
from ..services import current_policy
from .provenance import study_provenance

PLATFORM_NAME = "hv-human-validation"


def platform_version() -> str:
    return str(
        getattr(settings, "HV_PLATFORM_VERSION", None)
        or getattr(settings, "SPECTACULAR_SETTINGS", {}).get("VERSION", "0")
    )


def export_root(export: Export) -> Path:
    return Path(settings.MEDIA_ROOT) / export.relative_dir()


#: how every writer names what it has not finished (``<dir>/.tmp-<hex>-<name>``, renamed into place)
PARTIAL_PREFIX = ".tmp-"


def remove_partial_files(export: Export) -> int:
    """Delete the unfinished files and folders (``.tmp-*``) an earlier run of ``export`` left in
    its folder, and return how many. A writer removes its own when it fails, but a worker killed
    mid-export (``kill -9``, the out-of-memory killer) leaves them (issue 37): the re-queued run
    starts with this, and an export the reaper fails runs it as its cleanup."""
    root = export_root(export)
    if not root.is_dir():
        return 0
    removed = 0
    for path in root.glob(f"{PARTIAL_PREFIX}*"):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed += 1
    return removed


class Pseudonyms:
    """HMAC-SHA256(salt, rater id) -> ``r_<12 hex>``; the salt lives only in this object."""

    def __init__(self, salt: bytes | None = None) -> None:
        self._salt = salt or secrets.token_bytes(32)
        self._cache: dict[int, str] = {}

    def __call__(self, rater_id: int) -> str:
        p = self._cache.get(rater_id)
        if p is None:
            digest = hmac.new(self._salt, str(rater_id).encode(), hashlib.sha256).hexdigest()
            p = self._cache[rater_id] = "r_" + digest[:12]
        return p


# ------------------------------------------------------------------------------ cells
def plain_value(v: Any, *, nested: bool) -> Any:
    """A cell as JSONL (``nested``) or CSV writes it: datetimes as ISO text; lists and objects
    kept for JSONL, JSON text for CSV."""
    if isinstance(v, datetime):
        return v.isoformat()
    if not nested and isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False, sort_keys=True)
    return v


def csv_cell(v: Any) -> Any:
    """A cell as CSV writes it: :func:`plain_value` (None as ""), formulas defused
    (:mod:`core.csvsafe`, the one rule for every CSV the platform writes)."""
    if v is None:
        return ""
    return csvsafe.defuse(plain_value(v, nested=False))


def json_field(name: str) -> pa.Field:
    """A column of nested values: JSON text in CSV / Parquet, native JSON in JSONL."""
    return pa.field(name, pa.string(), metadata={"json": "1"})


def file_entry(path: Path, name: str, rows: int | None) -> dict[str, Any]:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return {"name": name, "size": path.stat().st_size, "rows": rows, "sha256": digest.hexdigest()}


def write_json_atomic(path: Path, obj: Any) -> dict[str, Any]:
    tmp = path.parent / f".tmp-{secrets.token_hex(6)}-{path.name}"
    tmp.write_text(json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=True, default=str), encoding="utf-8")
    os.replace(tmp, path)
    return file_entry(path, path.name, None)


# ------------------------------------------------------------------------------ provenance
def provenance(export: Export) -> dict[str, Any]:
    project = export.project
    rv = project.rubric_version
    return {
        "platform": PLATFORM_NAME,
        "platform_version": platform_version(),
        "export": {
            "id": export.id,
            "content": export.content,
            "format": export.format,
            "scope": export.scope,
            "exported_at": timezone.now().isoformat(),
            "exported_by": export.created_by.get_username() if export.created_by else None,
        },
        "project": {"id": project.id, "name": project.name, "preset": project.preset_key},
        "protocol": project.preset.protocol,
        "rubric": {"key": rv.rubric_key, "version": rv.version, "schema_sha256": rv.schema_hash},
        "acceptance_policy": current_policy(project),
        "decisions": decision_counts(project),
        "pseudonyms": "rater = 'r_' + HMAC-SHA256(per-export random salt, rater id)[:12]; the salt is not kept, "
        "so pseudonyms are consistent within this export only",
        # the study behind the ratings: design samples, plans, judges, the annotators as a group
        **study_provenance(project),
        **demo_note(project),
    }


DEMO_NOTE = (
    "DEMO DATA: this project was made by the demo seeder (manage.py seed_demo); its answers are simulated "
    "or illustrative, not the data of any study or paper (docs/demo.md)"
)


def demo_note(project: Project) -> dict[str, Any]:
    """``{"demo": note}`` for a demo project (``options["demo"]``), so every export says so."""
    return {"demo": DEMO_NOTE} if (project.options or {}).get("demo") else {}
