"""What every export writer shares: the export's folder, rater pseudonyms, the streaming
:class:`TableWriter` (JSONL / CSV / Parquet), file entries (name, size, rows, sha256) and the
provenance record written beside the data."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
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


# ------------------------------------------------------------------------------ table writers
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


class TableWriter:
    """Rows (tuples in ``schema`` order) to one file, written to ``<dir>/.tmp-*`` and renamed on
    :meth:`close`. JSONL keeps nested values as JSON; CSV and Parquet columns of nested values
    hold JSON text (their schema type is string)."""

    def __init__(self, path: Path, fmt: str, schema: pa.Schema, *, row_group_size: int) -> None:
        self.path, self.fmt, self.schema, self.rows = path, fmt, schema, 0
        self.names = schema.names
        self.tmp = path.parent / f".tmp-{secrets.token_hex(6)}-{path.name}"
        self.tmp.parent.mkdir(parents=True, exist_ok=True)
        self.row_group_size = row_group_size
        self._json_cols = {i for i, f in enumerate(schema) if (f.metadata or {}).get(b"json") == b"1"}
        if fmt == "parquet":
            self._pq = pq.ParquetWriter(self.tmp, schema, compression="zstd")
        else:
            self._fh = open(self.tmp, "w", encoding="utf-8", newline="")  # noqa: SIM115 - closed in close()
            if fmt == "csv":
                self._csv = csvsafe.writer(self._fh)  # defuses every cell (header too); \r\n rows
                self._csv.writerow(self.names)

    def write(self, rows: Sequence[tuple]) -> None:
        if not rows:
            return
        self.rows += len(rows)
        if self.fmt == "parquet":
            cols = list(zip(*rows, strict=True))
            arrays = []
            for i, f in enumerate(self.schema):
                col = cols[i]
                if i in self._json_cols:
                    col = [None if v is None else json.dumps(v, ensure_ascii=False, sort_keys=True) for v in col]
                arrays.append(pa.array(col, type=f.type))
            self._pq.write_table(pa.Table.from_arrays(arrays, schema=self.schema), row_group_size=self.row_group_size)
        elif self.fmt == "csv":
            self._csv.writerows([[plain_value(v, nested=False) for v in r] for r in rows])
        else:
            names = self.names
            dumps = json.dumps
            self._fh.write(
                "".join(
                    dumps({n: plain_value(v, nested=True) for n, v in zip(names, r, strict=True)}, ensure_ascii=False)
                    + "\n"
                    for r in rows
                )
            )

    def write_text(self, text: str, rows: int) -> None:
        """Pre-serialised JSONL / CSV lines (``rows`` of them), e.g. from
        :func:`curation.exports.annotations.annotation_text`."""
        if self.fmt == "parquet":
            raise ValueError("write_text is for jsonl / csv")
        self._fh.write(text)
        self.rows += rows

    def close(self) -> dict[str, Any]:
        if self.fmt == "parquet":
            self._pq.close()
        else:
            self._fh.close()
        os.replace(self.tmp, self.path)
        return file_entry(self.path, self.path.name, self.rows)

    def abort(self) -> None:
        try:
            self._pq.close() if self.fmt == "parquet" else self._fh.close()
        finally:
            self.tmp.unlink(missing_ok=True)


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
