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

import codecs
import csv
import io
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from benchmarks.base import STRATA_KEYS, Preset
from core import jobs
from core.errors import DomainError
from core.values import MAX_DEPTH, loads, value_problem

from .assets import (
    CheckedImage,
    FolderImages,
    ImageProblem,
    ImageSource,
    NoImages,
    ZipImages,
    check_image,
    media_path,
    safe_relative,
    write_atomic,
)
from .assigning import assign_new_items, uses_default_assignment
from .bulk import insert_rows, reserve_ids
from .item_schema import CheckedRecord, check_record
from .models import Asset, ImportJob, Item, Project
from .staging import Progress, Ticker, run_staged, stage_upload, start_staged

MAX_REPORTED_ERRORS = 200
BATCH = 2000
#: how the bar of an import is shared between its two passes (checking takes the images)
CHECK_SHARE = 0.6
#: an image named by URL (``https://``, ``s3://``, ``gs://``...) or inline as a ``data:`` URI, as
#: another tool's export names it; two letters at least before ``://`` so ``C:/x.png`` stays a path
IMAGE_URL = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]+://|data:)")
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


def read_jsonl(stream: io.TextIOBase) -> Iterator[tuple[int, Any, str | None]]:
    """(line number, record, problem) per non-blank line; a record holding a NUL character or
    nested deeper than ``core.values.MAX_DEPTH`` is a problem of its line."""
    for line_no, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        try:
            record = loads(line)
        except json.JSONDecodeError as exc:
            yield line_no, None, f"invalid JSON ({exc.msg}: column {exc.colno})"
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
                    record[key] = loads(cell)
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
    before_commit: Callable[[ImportReport], None] | None = None,
    progress: Progress | None = None,
) -> ImportReport:
    """Import items from JSONL or CSV (plus images from a folder or zip), all or nothing.

    With ``revisions`` the records are new versions of items already in the project (see the
    module docstring). The report says what was written, or every problem by line number.
    ``before_commit(report)`` runs inside the write transaction (a job records "done" there, so
    rows and outcome commit together; it raises to roll the rows back). ``progress(fraction,
    phase)`` is told how far the import is: the share of the file checked, then of the rows
    written (:data:`CHECK_SHARE`); it must be cheap, it is called from the loops.

    A file (``data`` as a Path) is streamed, never held in memory: a first pass checks every
    line and keeps only ids and line numbers; once nothing is wrong, a second pass reads the
    file again and streams the rows into the database."""
    if data_format not in ("jsonl", "csv"):
        raise DomainError(f"unsupported format {data_format!r}: use jsonl or csv")
    try:
        source = images_source(images)
    except (DomainError, ImageProblem) as exc:
        return ImportReport(ok=False, errors=[str(getattr(exc, "message", exc))])

    opened: list[io.TextIOBase] = []

    def records() -> Iterator[tuple[int, Any, str | None]]:
        with _open_text(data) as stream:
            opened[:] = [stream]
            yield from read_jsonl(stream) if data_format == "jsonl" else read_csv(stream, project.preset)

    ticker = Ticker(progress)
    size = _size_of(data)
    batch = _Batch(project=project, revisions=revisions, records=records, ticker=ticker)
    try:
        for line_no, record, problem in records():
            batch.report.lines_read += 1
            if ticker.due():
                ticker.report(CHECK_SHARE * _read_fraction(opened[0], size), "checking")
            if problem:
                batch.fail(line_no, problem)
                continue
            batch.check(line_no, record, source)
    except UnicodeDecodeError:
        return ImportReport(ok=False, errors=[f"the file is not UTF-8 text (byte {_first_bad_byte(data)})"])
    batch.check_against_project()
    if batch.errors:
        batch.report.ok, batch.report.errors = False, batch.errors
        return batch.report
    batch.write(before_commit)
    return batch.report


def _open_text(data: bytes | str | Path) -> io.TextIOBase:
    """The text of ``data`` as a stream: a file is decoded as it is read (UTF-8, an optional
    BOM dropped); line endings are kept as they are (``newline=""``), for the CSV reader."""
    if isinstance(data, str):
        return io.StringIO(data, newline="")
    raw = open(data, "rb") if isinstance(data, Path) else io.BytesIO(data)  # noqa: SIM115 - closed with the wrapper
    return io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")


def _first_bad_byte(data: bytes | str | Path) -> int:
    """Offset of the first byte that is not UTF-8 (a second, streaming pass: only on refusal)."""
    if isinstance(data, str):
        return 0
    decoder = codecs.getincrementaldecoder("utf-8")()
    consumed = 0
    with open(data, "rb") if isinstance(data, Path) else io.BytesIO(data) as fh:
        while chunk := fh.read(1 << 20):
            pending = len(decoder.getstate()[0])
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                return consumed - pending + exc.start
            consumed += len(chunk)
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError as exc:
            return consumed - len(exc.object) + exc.start
    return consumed


def _size_of(data: bytes | str | Path) -> int:
    if isinstance(data, Path):
        return data.stat().st_size
    return len(data)


def _read_fraction(stream: io.TextIOBase, size: int) -> float:
    """How much of the data the stream has read: its byte position (read ahead by a buffer, which
    is fine for a bar) over the size."""
    if size <= 0:
        return 1.0
    position = stream.buffer.tell() if isinstance(stream, io.TextIOWrapper) else stream.tell()
    return min(position / size, 1.0)


@dataclass(slots=True)
class _Pending:
    """What the write needs of a checked line besides its content (read again from the file)."""

    line_no: int
    external_id: str
    qc: bool
    image_refs: dict[str, str] | None  # field name -> reference; None when the item has no images


@dataclass
class _Batch:
    """The records of one import on their way through the pipeline."""

    project: Project
    revisions: bool
    #: reads the file again (line number, record, problem), for the second pass that writes
    records: Callable[[], Iterator[tuple[int, Any, str | None]]]
    report: ImportReport = field(default_factory=lambda: ImportReport(ok=True))
    errors: list[str] = field(default_factory=list)
    pending: list[_Pending] = field(default_factory=list)
    seen_ids: dict[str, int] = field(default_factory=dict)
    checked_images: dict[str, CheckedImage] = field(default_factory=dict)
    reused: dict[str, tuple[str, int]] = field(default_factory=dict)  # "sha256:<hex>" -> (hex, first line)
    stored: dict[str, int] = field(default_factory=dict)  # reused hex -> Asset id
    latest: dict[str, tuple[int, int]] = field(default_factory=dict)  # revised id -> (version, item pk)
    ticker: Ticker = field(default_factory=lambda: Ticker(None))

    def fail(self, line: int, message: str) -> None:
        if len(self.errors) < MAX_REPORTED_ERRORS:
            self.errors.append(f"line {line}: {message}")
        else:
            self.report.errors_truncated += 1

    # ---------------------------------------------------------------- check each record
    def _checked(self, record: Any) -> CheckedRecord:
        if self.revisions and isinstance(record, dict):
            record = {k: v for k, v in record.items() if k not in REVISION_EXPORT_KEYS}
        return check_record(self.project.preset, record)

    def check(self, line_no: int, record: Any, source: ImageSource) -> None:
        checked = self._checked(record)
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
            elif IMAGE_URL.match(ref):
                # a Label Studio export's tasks name their images by URL: say why, and what to do instead
                self.fail(
                    line_no,
                    f"field '{field_name}': {ref[:200]!r} is a URL: image URLs are not supported; download the "
                    "images and upload them as a .zip with the items file, each named as the file names it",
                )
            elif ref not in self.checked_images:
                try:
                    self.checked_images[ref] = check_image(source.read(ref), name=f"image {ref!r}")
                except ImageProblem as exc:
                    self.fail(line_no, f"field '{field_name}': {exc}")
        qc = bool((checked.meta or {}).get("qc"))
        self.pending.append(_Pending(line_no, ext_id, qc, dict(checked.image_refs) or None))

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
    def write(self, before_commit: Callable[[ImportReport], None] | None = None) -> None:
        written: list[Path] = []
        try:
            with transaction.atomic():
                asset_ids = store_assets(self.checked_images, self.report, written, project=self.project)
                asset_ids.update(self.stored)
                item_ids = self._insert_items(asset_ids)
                self.report.items_created = len(item_ids)
                if uses_default_assignment(self.project):
                    # Attention / gold items (meta.qc) are injected by quality control, never handed out.
                    regular = [i for i, p in zip(item_ids, self.pending, strict=True) if not p.qc]
                    self.report.assignments_created = assign_new_items(project=self.project, item_ids=regular)
                if before_commit is not None:
                    before_commit(self.report)
        except Exception:
            for path in written:
                path.unlink(missing_ok=True)
            raise

    def _sha(self, ref: str) -> str:
        return self.reused[ref][0] if ref in self.reused else self.checked_images[ref].sha256

    def _parent_image_names(self) -> dict[str, dict[str, str]]:
        """Revised item id -> {sha256: original file name} of the version it revises, for the
        images a revision reuses as ``sha256:<hex>`` (they keep the name they were imported under)."""
        parents = {self.latest[p.external_id][1]: p.external_id for p in self.pending if self._reuses(p)}
        out: dict[str, dict[str, str]] = {}
        pks = list(parents)
        for start in range(0, len(pks), 5000):
            for pk, data, names in Item.objects.filter(id__in=pks[start : start + 5000]).values_list(
                "id", "data", "image_names"
            ):
                out[parents[pk]] = {(data or {}).get(f): n for f, n in (names or {}).items() if (data or {}).get(f)}
        return out

    def _reuses(self, p: _Pending) -> bool:
        return self.revisions and any(ref in self.reused for ref in (p.image_refs or {}).values())

    def _image_names(self, p: _Pending, inherited: dict[str, dict[str, str]]) -> str | None:
        """The ``image_names`` cell of a pending item: field -> the path its data file gave
        (normalised as it was read: forward slashes), or the name a reused image had."""
        names = {}
        for field_name, ref in (p.image_refs or {}).items():
            if ref in self.reused:
                name = inherited.get(p.external_id, {}).get(self.reused[ref][0])
            else:
                name = str(safe_relative(ref))
            if name:
                names[field_name] = name
        return json.dumps(names) if names else None

    def _insert_items(self, asset_ids: dict[str, int]) -> list[int]:
        item_ids = reserve_ids(Item, len(self.pending))
        now = timezone.now()
        dumps = json.dumps

        def version_and_parent(p: _Pending) -> tuple[int, int | None]:
            if not self.revisions:
                return 1, None
            version, parent_id = self.latest[p.external_id]
            return version + 1, parent_id

        def checked_again() -> Iterator[tuple[_Pending, CheckedRecord]]:
            """The second pass: every line passed the first, so each lines up with its pending entry."""
            pending = iter(self.pending)
            total = max(len(self.pending), 1)
            for done, (line_no, record, problem) in enumerate(self.records()):
                if self.ticker.due():
                    self.ticker.report(CHECK_SHARE + (1 - CHECK_SHARE) * done / total, "writing")
                p = next(pending, None)
                checked = self._checked(record)
                if p is None or problem or checked.errors or p.line_no != line_no:  # the file changed under us
                    raise DomainError(f"line {line_no} changed while it was imported; nothing was written")
                yield p, checked

        inherited = self._parent_image_names()
        insert_rows(
            Item,
            [
                "id",
                "project",
                "external_id",
                "version",
                "parent",
                "data",
                "meta",
                *STRATA_KEYS,
                "image_names",
                "created_at",
            ],
            (
                (
                    item_id,
                    self.project.id,
                    p.external_id,
                    *version_and_parent(p),
                    dumps({**checked.data, **{f: self._sha(ref) for f, ref in (p.image_refs or {}).items()}}),
                    dumps(checked.meta),
                    *(checked.strata.get(k, "") for k in STRATA_KEYS),
                    self._image_names(p, inherited),
                    now,
                )
                for item_id, (p, checked) in zip(item_ids, checked_again(), strict=True)
            ),
        )
        if asset_ids:
            insert_rows(
                Item.assets.through,
                ["item", "asset"],
                (
                    (item_id, asset_ids[sha])
                    for item_id, p in zip(item_ids, self.pending, strict=True)
                    for sha in {self._sha(ref) for ref in (p.image_refs or {}).values()}
                ),
            )
        return item_ids


def store_assets(
    checked: dict[str, CheckedImage], report: ImportReport, written: list[Path], *, project: Project
) -> dict[str, int]:
    """Write each image once by content hash (files first, then Asset rows); ``written`` lists
    the files this call created, for the caller to remove if its transaction fails. The report
    counts as reused only the images this project's items already show: one stored for another
    project only is counted as stored, so the counts do not tell an uploader which images other
    projects hold (issue 37)."""
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
    ours = set(Asset.objects.filter(sha256__in=list(existing), items__project=project).values_list("sha256", flat=True))
    report.images_reused = len(ours)
    report.images_stored = len(by_sha) - len(ours)
    return dict(Asset.objects.filter(sha256__in=list(by_sha)).values_list("sha256", "id"))


def run_import_job(*, job: ImportJob) -> ImportJob:
    """Run a stored import request (from the web, the API or a worker) and keep its report
    (``staging.run_staged``: progress while it runs, the staged upload deleted once it ended;
    images are copied into content-addressed files, the report is in the row)."""

    def work(job: ImportJob, progress: Progress) -> dict[str, Any]:
        report = import_items(
            project=job.project,
            data=Path(job.data_file),
            data_format=job.data_format,
            images=Path(job.images_path) if job.images_path else None,
            # rows and "done" in one commit: a worker killed before it wrote nothing (the reaper
            # runs the job again from the staged file), one whose job was handed on writes nothing
            before_commit=lambda report: jobs.finish_claimed(job, report=report.as_dict()),
            progress=progress,
        )
        if not report.ok:
            raise jobs.Refused("the file was refused", fields={"report": report.as_dict()})
        return {"report": report.as_dict()}

    return run_staged(job, work)


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
    a worker (``annotation.tasks.run_import``), ``staging.start_staged``."""
    staged = stage_upload(
        data_name=data_name, data_stream=data_stream, images_name=images_name, images_stream=images_stream
    )
    try:
        job = ImportJob.objects.create(
            project=project,
            created_by=user,
            data_file=str(staged.data_path),
            data_format=staged.data_format,
            images_path=str(staged.images_path or ""),
            original_name=Path(data_name).name[:255],
        )
    except BaseException:
        staged.discard()
        raise
    return start_staged(job, size=staged.size, run=lambda job: run_import_job(job=job))
