"""Importing items: one pipeline for new items and for revised versions of existing ones.

    read (JSONL / CSV, line numbers kept)
      -> check (each record against the preset's item schema, ids, images with Pillow)
      -> check against the project (ids taken / ids to revise, stored images)
      -> store assets (content-addressed files, Asset rows)
      -> insert items (COPY on PostgreSQL)
      -> assign (the default strategy, unless a study design owns the project; never QC items)

All or nothing: any problem on any line means nothing is written, and the report lists the
problems by line number. A revision import (``revisions=True``, used by curation's revision
loop) differs only where it must: every record names the item it revises, the new row is
version = latest + 1 with ``parent`` = the latest version, and an image field may reuse an
image already stored in this project as ``sha256:<hex>``."""

from __future__ import annotations

import csv
import io
import json
import secrets
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from benchmarks.base import STRATA_KEYS, Preset
from core import jobs
from core.errors import DomainError
from core.values import MAX_DEPTH, value_problem

from .assets import (
    CheckedImage,
    FolderImages,
    ImageProblem,
    ImageSource,
    NoImages,
    ZipImages,
    check_image,
    media_path,
    write_atomic,
)
from .assigning import assign_new_items, uses_default_assignment
from .bulk import insert_rows, reserve_ids
from .item_schema import CheckedRecord, check_record
from .models import Asset, ImportJob, Item, Project

MAX_REPORTED_ERRORS = 200
BATCH = 2000
#: an image field of a revised item may name an image already stored in the project
SHA_PREFIX = "sha256:"
#: keys of the revision export that a re-import ignores
REVISION_EXPORT_KEYS = ("_revision", "version")


@dataclass
class ImportReport:
    ok: bool
    items_created: int = 0
    images_stored: int = 0
    images_reused: int = 0
    assignments_created: int = 0
    lines_read: int = 0
    errors: list[str] = field(default_factory=list)
    errors_truncated: int = 0

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


#: file name endings the importers recognise
FORMAT_BY_SUFFIX = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}


def format_of(file_name: str) -> str | None:
    """``jsonl`` or ``csv`` from a file's name, None when the name does not tell."""
    return FORMAT_BY_SUFFIX.get(Path(file_name).suffix.lower())


def read_jsonl(stream: io.TextIOBase) -> Iterator[tuple[int, Any, str | None]]:
    """(line number, record, problem) per non-blank line; a record holding a NUL character or
    nested deeper than ``core.values.MAX_DEPTH`` is a problem of its line."""
    for line_no, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            yield line_no, None, f"invalid JSON ({exc.msg} at column {exc.colno})"
            continue
        except RecursionError:
            yield line_no, None, f"the JSON is nested too deeply (more than {MAX_DEPTH} levels of lists / objects)"
            continue
        problem = value_problem(record)
        yield line_no, None if problem else record, problem


def read_csv(stream: io.TextIOBase, preset: Preset) -> Iterator[tuple[int, Any, str | None]]:
    reader = csv.DictReader(stream)
    if not reader.fieldnames:
        yield 1, None, "the CSV file has no header row"
        return
    structured = {f["name"]: f["type"] for f in preset.item_fields if f["type"] in ("list", "object", "number")}
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield reader.line_num, None, f"malformed CSV ({exc})"
            return
        line_no = reader.line_num
        if None in row:
            yield line_no, None, "the row has more cells than the header"
            continue
        record: dict[str, Any] = {}
        problem = None
        for key, cell in row.items():
            if cell is None or cell == "":
                continue
            if key.startswith("meta."):
                record.setdefault("meta", {})[key[5:]] = cell
            elif structured.get(key) in ("list", "object"):
                try:
                    record[key] = json.loads(cell)
                except json.JSONDecodeError:
                    problem = f"column '{key}' must hold JSON (a list or an object)"
                except RecursionError:
                    problem = f"column '{key}' is nested too deeply (more than {MAX_DEPTH} levels of lists / objects)"
            elif structured.get(key) == "number":
                try:
                    record[key] = float(cell) if any(c in cell for c in ".eE") else int(cell)
                except ValueError:
                    problem = f"column '{key}' must be a number"
            else:
                record[key] = cell
        yield line_no, record, problem or value_problem(record)


def images_source(images: Path | None) -> ImageSource:
    if images is None:
        return NoImages()
    images = Path(images)
    if images.is_dir():
        return FolderImages(images)
    if images.is_file():
        return ZipImages(images)
    raise DomainError(f"images path {str(images)!r} is neither a folder nor a zip file")


def import_items(
    *,
    project: Project,
    data: bytes | str | Path,
    data_format: str,
    images: Path | None = None,
    revisions: bool = False,
) -> ImportReport:
    """Import items from JSONL or CSV (plus images from a folder or zip), all or nothing.

    With ``revisions`` the records are new versions of items already in the project (see the
    module docstring). The report says what was written, or every problem by line number."""
    if data_format not in ("jsonl", "csv"):
        raise DomainError(f"unsupported format {data_format!r}: use jsonl or csv")
    text, problem = _decode(data)
    if problem:
        return ImportReport(ok=False, errors=[problem])
    try:
        source = images_source(images)
    except (DomainError, ImageProblem) as exc:
        return ImportReport(ok=False, errors=[str(getattr(exc, "message", exc))])

    batch = _Batch(project=project, revisions=revisions)
    stream = io.StringIO(text, newline="")
    rows = read_jsonl(stream) if data_format == "jsonl" else read_csv(stream, project.preset)
    for line_no, record, problem in rows:
        batch.report.lines_read += 1
        if problem:
            batch.fail(line_no, problem)
            continue
        batch.check(line_no, record, source)
    batch.check_against_project()
    if batch.errors:
        batch.report.ok, batch.report.errors = False, batch.errors
        return batch.report
    batch.write()
    return batch.report


def _decode(data: bytes | str | Path) -> tuple[str, str | None]:
    raw = Path(data).read_bytes() if isinstance(data, Path) else data
    if isinstance(raw, str):
        return raw, None
    try:
        return raw.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        return "", f"the file is not UTF-8 text (byte {exc.start})"


@dataclass
class _Pending:
    line_no: int
    checked: CheckedRecord
    external_id: str


@dataclass
class _Batch:
    """The records of one import on their way through the pipeline."""

    project: Project
    revisions: bool
    report: ImportReport = field(default_factory=lambda: ImportReport(ok=True))
    errors: list[str] = field(default_factory=list)
    pending: list[_Pending] = field(default_factory=list)
    seen_ids: dict[str, int] = field(default_factory=dict)
    checked_images: dict[str, CheckedImage] = field(default_factory=dict)
    reused: dict[str, tuple[str, int]] = field(default_factory=dict)  # "sha256:<hex>" -> (hex, first line)
    stored: dict[str, int] = field(default_factory=dict)  # reused hex -> Asset id
    latest: dict[str, tuple[int, int]] = field(default_factory=dict)  # revised id -> (version, item pk)

    def fail(self, line: int, message: str) -> None:
        if len(self.errors) < MAX_REPORTED_ERRORS:
            self.errors.append(f"line {line}: {message}")
        else:
            self.report.errors_truncated += 1

    # ---------------------------------------------------------------- check each record
    def check(self, line_no: int, record: Any, source: ImageSource) -> None:
        if self.revisions and isinstance(record, dict):
            record = {k: v for k, v in record.items() if k not in REVISION_EXPORT_KEYS}
        checked = check_record(self.project.preset, record)
        for message in checked.errors:
            self.fail(line_no, message)
        if checked.errors:
            return
        if self.revisions and not checked.external_id:
            self.fail(line_no, "a revised item needs the 'id' of the item it revises")
            return
        ext_id = checked.external_id or f"line-{line_no}"
        if ext_id in self.seen_ids:
            self.fail(line_no, f"duplicate id {ext_id!r} (first on line {self.seen_ids[ext_id]})")
            return
        self.seen_ids[ext_id] = line_no
        for field_name, ref in checked.image_refs.items():
            if self.revisions and ref.startswith(SHA_PREFIX):
                self.reused.setdefault(ref, (ref[len(SHA_PREFIX) :], line_no))
            elif ref not in self.checked_images:
                try:
                    self.checked_images[ref] = check_image(source.read(ref), name=f"image {ref!r}")
                except ImageProblem as exc:
                    self.fail(line_no, f"field '{field_name}': {exc}")
        self.pending.append(_Pending(line_no, checked, ext_id))

    # ---------------------------------------------------------------- check against the project
    def check_against_project(self) -> None:
        if self.report.lines_read == 0:
            self.fail(1, "the file holds no records")
        ids = list(self.seen_ids)
        existing: dict[str, tuple[int, int]] = {}
        if ids and Item.objects.filter(project=self.project).exists():
            for start in range(0, len(ids), 5000):
                for ext, version, pk in Item.objects.filter(
                    project=self.project, external_id__in=ids[start : start + 5000]
                ).values_list("external_id", "version", "id"):
                    if ext not in existing or version > existing[ext][0]:
                        existing[ext] = (version, pk)
        if self.revisions:
            for ext, line_no in self.seen_ids.items():
                if ext not in existing:
                    self.fail(line_no, f"no item with id {ext!r} in this project to revise")
            self.latest = existing
            # Only images of this project's own items can be reused: a hash of another
            # project's image is answered exactly like a hash that does not exist.
            hexes = list({sha for sha, _line in self.reused.values()})
            self.stored = dict(
                Asset.objects.filter(sha256__in=hexes, items__project=self.project)
                .values_list("sha256", "id")
                .distinct()
            )
            for ref, (sha, line_no) in self.reused.items():
                if sha not in self.stored:
                    self.fail(line_no, f"no stored image {ref!r} in this project")
        else:
            # A revised item is imported as a new version (the revision loop), never under a taken id.
            for ext_id in sorted(existing, key=self.seen_ids.get):
                self.fail(self.seen_ids[ext_id], f"an item with id {ext_id!r} already exists in this project")

    # ---------------------------------------------------------------- write
    def write(self) -> None:
        written: list[Path] = []
        try:
            with transaction.atomic():
                asset_ids = store_assets(self.checked_images, self.report, written)
                asset_ids.update(self.stored)
                item_ids = self._insert_items(asset_ids)
                self.report.items_created = len(item_ids)
                if uses_default_assignment(self.project):
                    # Attention / gold items (meta.qc) are injected by quality control, never handed out.
                    regular = [
                        i for i, p in zip(item_ids, self.pending, strict=True) if not (p.checked.meta or {}).get("qc")
                    ]
                    self.report.assignments_created = assign_new_items(project=self.project, item_ids=regular)
        except Exception:
            for path in written:
                path.unlink(missing_ok=True)
            raise

    def _sha(self, ref: str) -> str:
        return self.reused[ref][0] if ref in self.reused else self.checked_images[ref].sha256

    def _insert_items(self, asset_ids: dict[str, int]) -> list[int]:
        item_ids = reserve_ids(Item, len(self.pending))
        now = timezone.now()
        dumps = json.dumps

        def version_and_parent(p: _Pending) -> tuple[int, int | None]:
            if not self.revisions:
                return 1, None
            version, parent_id = self.latest[p.external_id]
            return version + 1, parent_id

        insert_rows(
            Item,
            ["id", "project", "external_id", "version", "parent", "data", "meta", *STRATA_KEYS, "created_at"],
            (
                (
                    item_id,
                    self.project.id,
                    p.external_id,
                    *version_and_parent(p),
                    dumps({**p.checked.data, **{f: self._sha(ref) for f, ref in p.checked.image_refs.items()}}),
                    dumps(p.checked.meta),
                    *(p.checked.strata.get(k, "") for k in STRATA_KEYS),
                    now,
                )
                for item_id, p in zip(item_ids, self.pending, strict=True)
            ),
        )
        if asset_ids:
            insert_rows(
                Item.assets.through,
                ["item", "asset"],
                (
                    (item_id, asset_ids[sha])
                    for item_id, p in zip(item_ids, self.pending, strict=True)
                    for sha in {self._sha(ref) for ref in p.checked.image_refs.values()}
                ),
            )
        return item_ids


def store_assets(checked: dict[str, CheckedImage], report: ImportReport, written: list[Path]) -> dict[str, int]:
    """Write each image once by content hash (files first, then Asset rows); ``written`` lists
    the files this call created, for the caller to remove if its transaction fails."""
    by_sha = {img.sha256: img for img in checked.values()}
    if not by_sha:
        return {}
    existing = dict(Asset.objects.filter(sha256__in=list(by_sha)).values_list("sha256", "id"))
    new = [
        Asset(sha256=sha, format=img.format, width=img.width, height=img.height, size_bytes=len(img.content))
        for sha, img in by_sha.items()
        if sha not in existing
    ]
    for asset in new:
        path = media_path(asset.relative_path())
        if write_atomic(path, by_sha[asset.sha256].content):
            written.append(path)
    Asset.objects.bulk_create(new, batch_size=BATCH, ignore_conflicts=True)
    report.images_stored = len(new)
    report.images_reused = len(by_sha) - len(new)
    return dict(Asset.objects.filter(sha256__in=list(by_sha)).values_list("sha256", "id"))


def run_import_job(*, job: ImportJob) -> ImportJob:
    """Run a stored import request (from the web, the API or a worker) and keep its report."""

    def work(job: ImportJob) -> dict[str, Any]:
        report = import_items(
            project=job.project,
            data=Path(job.data_file),
            data_format=job.data_format,
            images=Path(job.images_path) if job.images_path else None,
        )
        if not report.ok:
            raise jobs.Refused("the file was refused", fields={"report": report.as_dict()})
        return {"report": report.as_dict()}

    return jobs.run(job, work)


def start_import(
    *,
    project: Project,
    user: AbstractBaseUser | None,
    data_name: str,
    data_stream: Iterable[bytes],
    images_name: str | None = None,
    images_stream: Iterable[bytes] | None = None,
) -> ImportJob:
    """Stage the uploaded files and create the job. Small files run at once; large ones go to
    a worker (``annotation.tasks.run_import``)."""
    suffix = Path(data_name).suffix.lower().lstrip(".")
    data_format = {"jsonl": "jsonl", "ndjson": "jsonl", "csv": "csv"}.get(suffix)
    if data_format is None:
        raise DomainError(f"cannot tell the format of {data_name!r}: name it .jsonl or .csv")
    staging = Path(settings.MEDIA_ROOT) / "imports" / secrets.token_hex(12)
    staging.mkdir(parents=True)
    data_path = staging / f"data.{data_format}"
    size = save_upload(data_stream, data_path)
    images_path = ""
    if images_stream is not None:
        if not (images_name or "").lower().endswith(".zip"):
            raise DomainError("images must be uploaded as a .zip file")
        images_path = str(staging / "images.zip")
        size += save_upload(images_stream, Path(images_path))
    job = ImportJob.objects.create(
        project=project,
        created_by=user,
        data_file=str(data_path),
        data_format=data_format,
        images_path=images_path,
        original_name=Path(data_name).name[:255],
    )
    if size <= settings.HV_INLINE_IMPORT_BYTES:
        return run_import_job(job=job)
    from .tasks import run_import  # the task module imports this one (the Celery pair)

    jobs.enqueue_on_commit(job, lambda: run_import.delay(job.id))
    return job


def save_upload(chunks: Iterable[bytes], path: Path) -> int:
    total = 0
    with open(path, "wb") as fh:
        for chunk in chunks:
            total += len(chunk)
            if total > settings.HV_MAX_UPLOAD_BYTES:
                fh.close()
                path.unlink(missing_ok=True)
                raise DomainError(f"upload larger than {settings.HV_MAX_UPLOAD_BYTES} bytes")
            fh.write(chunk)
    return total
