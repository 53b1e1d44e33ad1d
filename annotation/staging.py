"""The staged-upload job every import of a file shares: items (``importing``), revised items
(``curation.services.import_revision_upload``), human annotations made elsewhere
(``annotation_import``) and a judge's outputs made elsewhere (``judges.imported``).

    stage      an upload is written chunk by chunk to its own folder under ``MEDIA_ROOT/imports``
               (:func:`stage_upload` for a data file and its images, :func:`stage_file` for one
               file kept for its uploader until confirmed), refused whole over
               ``HV_MAX_UPLOAD_BYTES`` with nothing left behind
    start      :func:`start_staged`: the job runs at once below ``HV_INLINE_IMPORT_BYTES``, else it
               is handed to the broker on commit through the sender its ``tasks`` module registers (the one place
               each job type names its task); a broker that refuses fails the job (``core.jobs``)
               and its upload is discarded, since nothing will read it
    run        :func:`run_staged`: ``core.jobs.run`` with the progress written beside the work
               (:class:`Ticker` says when a loop should report, ``ProgressWriter`` writes it), and
               the upload discarded once the job has ended
    import     :func:`run_checked_import`: the run of an import of ratings made elsewhere (people's
               or a judge's): check the file, fail with its report, end as a duplicate, or write
               and end done in one commit
    claim      :func:`claim_file`: the import that writes a file into its project claims the file's
               SHA-256 first thing in its writing transaction (a unique constraint per project on
               the job's ``written_sha256``), so of imports of one file running at once (a double
               click, two API posts) one writes and the others end as its duplicates
    discard    :func:`discard_job_upload`: the job's staging folder, never anything outside the root
    reap       a job whose worker died is re-queued from its staged file while that is there, else
               failed and its upload discarded (``StagedImportJob.resume_blocker``, read by
               ``core.reaper``, and the cleanup the job's ``tasks`` module registers with its
               sender: ``annotation.tasks``, ``judges.tasks``); uploads no unfinished job reads
               are swept once stale (:func:`sweep_staged_uploads`, beat)"""

from __future__ import annotations

import json
import re
import secrets
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from django.apps import apps
from django.conf import settings
from django.db import IntegrityError, transaction

from core import jobs
from core.errors import DomainError
from core.progress import ProgressWriter

from .models import StagedImportJob

#: progress is reported at most this often (seconds): a clock read per line, a report per tick
PROGRESS_TICK = 0.1
#: ``progress(fraction, phase)``: fraction done (0..1) and "checking" or "writing"
Progress = Callable[[float, str], None]
#: file name endings the importers recognise
FORMAT_BY_SUFFIX = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}
#: a staged file's token (its folder's name), as :func:`stage_file` makes it
TOKEN = re.compile(r"[0-9a-f]{24}")
#: the file beside a staged upload that says whose it is
OWNER_FILE = "staged.json"
GONE = "this upload is gone: upload the file again"

J = TypeVar("J", bound=StagedImportJob)


def format_of(file_name: str) -> str | None:
    """``jsonl`` or ``csv`` from a file's name, None when the name does not tell."""
    return FORMAT_BY_SUFFIX.get(Path(file_name).suffix.lower())


# ---------------------------------------------------------------------------------- stage
def staging_root() -> Path:
    return Path(settings.MEDIA_ROOT) / "imports"


def save_upload(chunks: Iterable[bytes], path: Path, *, limit: int | None = None) -> int:
    """Write ``chunks`` to ``path``; over ``limit`` (default ``HV_MAX_UPLOAD_BYTES``) the file is
    removed and the upload refused."""
    limit = settings.HV_MAX_UPLOAD_BYTES if limit is None else limit
    total = 0
    try:
        with open(path, "wb") as fh:
            for chunk in chunks:
                total += len(chunk)
                if total > limit:
                    raise DomainError(f"upload larger than {settings.HV_MAX_UPLOAD_BYTES} bytes")
                fh.write(chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return total


def _new_folder() -> tuple[str, Path]:
    token = secrets.token_hex(12)
    folder = staging_root() / token
    folder.mkdir(parents=True)
    return token, folder


@dataclass
class StagedUpload:
    """Uploaded files written to their own folder under ``MEDIA_ROOT/imports``."""

    folder: Path
    data_path: Path
    data_format: str
    images_path: Path | None
    size: int

    def discard(self) -> None:
        discard_staged(self.folder)


def stage_upload(
    *,
    data_name: str,
    data_stream: Iterable[bytes],
    images_name: str | None = None,
    images_stream: Iterable[bytes] | None = None,
) -> StagedUpload:
    """Write an import's files to a fresh staging folder, chunk by chunk, refusing (with nothing
    left behind) a name that does not tell the format, images not sent as a zip, or files
    together larger than ``HV_MAX_UPLOAD_BYTES``. The one door for item and revision imports."""
    data_format = format_of(data_name)
    if data_format is None:
        raise DomainError(f"cannot tell the format of {data_name!r}: name it .jsonl or .csv")
    if images_stream is not None and not (images_name or "").lower().endswith(".zip"):
        raise DomainError("images must be uploaded as a .zip file")
    _token, folder = _new_folder()
    try:
        data_path = folder / f"data.{data_format}"
        size = save_upload(data_stream, data_path)
        images_path = None
        if images_stream is not None:
            images_path = folder / "images.zip"
            size += save_upload(images_stream, images_path, limit=settings.HV_MAX_UPLOAD_BYTES - size)
    except BaseException:
        discard_staged(folder)
        raise
    return StagedUpload(folder, data_path, data_format, images_path, size)


@dataclass
class StagedFile:
    """One uploaded file in its own folder, named by ``token`` until it is imported or dropped."""

    token: str
    path: Path
    size: int

    def discard(self) -> None:
        discard_staged(self.path.parent)


def stage_file(*, name: str, chunks: Iterable[bytes], stem: str, suffix: str, owner: dict[str, Any]) -> StagedFile:
    """Write one upload as ``<stem><suffix>`` to a fresh staging folder, beside ``owner`` (who
    and what it was uploaded for, and its original ``name``), so that a later request can find
    it by token for the same owner only (:func:`staged_file`)."""
    token, folder = _new_folder()
    try:
        path = folder / f"{stem}{suffix}"
        size = save_upload(chunks, path)
        (folder / OWNER_FILE).write_text(json.dumps({**owner, "name": Path(name).name[:255]}))
    except BaseException:
        discard_staged(folder)
        raise
    return StagedFile(token, path, size)


def staged_file(*, token: str, stem: str, owner: dict[str, Any]) -> tuple[Path, str]:
    """(path, original name) of a file staged by :func:`stage_file` for this ``owner``;
    DomainError (not found) for any other token, owner or a folder swept meanwhile."""
    if not TOKEN.fullmatch(token or ""):
        raise DomainError(GONE, code="not_found")
    folder = staging_root() / token
    try:
        meta = json.loads((folder / OWNER_FILE).read_text())
    except (OSError, ValueError):
        raise DomainError(GONE, code="not_found") from None
    if any(meta.get(k) != v for k, v in owner.items()):
        raise DomainError(GONE, code="not_found")
    data = next((p for p in folder.iterdir() if p.name.startswith(f"{stem}.")), None)
    if data is None:
        raise DomainError(GONE, code="not_found")
    return data, str(meta.get("name") or data.name)


def discard_token(token: str) -> None:
    """Drop a file staged by :func:`stage_file` (a preview that will not be imported)."""
    if TOKEN.fullmatch(token or ""):
        discard_staged(staging_root() / token)


# ---------------------------------------------------------------------------------- claim
class AlreadyWritten(Exception):
    """The file was written into the project by another import first (its ``written_sha256``
    holds the same hash): this one must write nothing. Raised inside the writing transaction,
    which it rolls back."""


def claim_file(job: StagedImportJob, sha256: str) -> None:
    """Mark ``job`` (a model with ``written_sha256`` unique per project where set) as the import
    that writes the file ``sha256`` into its project, inside the writing transaction and before
    any row. On PostgreSQL a second writer waits here until the holder's transaction ends (then
    fails if it committed, goes on if it rolled back); on SQLite writers are serialised, so the
    second finds the first's commit. A check made before the transaction cannot see an import
    still writing, this can (issue 37, H1)."""
    try:
        with transaction.atomic():  # a savepoint: the failed UPDATE must not end the caller's transaction
            type(job).objects.filter(pk=job.pk).update(written_sha256=sha256)
    except IntegrityError as exc:
        raise AlreadyWritten(sha256) from exc


# ---------------------------------------------------------------------------------- discard
def discard_staged(folder: Path) -> None:
    """Delete a staging folder (only ever one under ``MEDIA_ROOT/imports``)."""
    folder = Path(folder)
    root = staging_root().resolve()
    if folder.resolve().parent == root:
        shutil.rmtree(folder, ignore_errors=True)


def discard_job_upload(job: StagedImportJob) -> None:
    """Delete a job's staged files (its staging folder). Safe to call twice, and for jobs whose
    file lives elsewhere (a path given on the command line: left alone)."""
    if job.data_file:
        discard_staged(Path(job.data_file).parent)


# ---------------------------------------------------------------------------------- progress
class Ticker:
    """Says when progress is due (at most every :data:`PROGRESS_TICK` seconds), so that the
    fraction, which may cost a system call, is computed only then."""

    def __init__(self, progress: Progress | None) -> None:
        self.progress = progress
        self.last = 0.0

    def due(self) -> bool:
        if self.progress is None:
            return False
        now = time.monotonic()
        if now - self.last < PROGRESS_TICK:
            return False
        self.last = now
        return True

    def report(self, fraction: float, phase: str) -> None:
        if self.progress is not None:
            self.progress(fraction, phase)


def progress_report(fraction: float, phase: str) -> dict[str, Any]:
    """The columns of a running import that say how far it is (its report until it ends)."""
    return {"report": {"progress": round(fraction, 4), "phase": phase}}


# ---------------------------------------------------------------------------------- run, start
def run_staged(job: J, work: Callable[[J, Progress], dict[str, Any]], *, discard_upload: bool = True) -> J:
    """Run a staged import's ``work(job, progress)`` as a ``core.jobs`` job (from a request, the
    command or a worker): while it runs its report is its progress (the page's bar), written
    beside the work; its outcome replaces it. Once the job has ended (done or failed) its
    staged upload is deleted: nothing reads it again (unless ``discard_upload`` is false: a
    preview's upload, which a later import reads)."""

    def with_progress(job: J) -> dict[str, Any]:
        with ProgressWriter(type(job), job.pk, attempt=job.attempts, fields=progress_report) as writer:
            return work(job, writer.set)

    try:
        jobs.run(job, with_progress)
    finally:
        if discard_upload and job.status in jobs.TERMINAL:
            discard_job_upload(job)
    return job


#: why a stored import cannot run: its staged upload is gone
UPLOAD_GONE = "the uploaded file is gone (imported or dropped already): upload it again"


class CheckedPlan(Protocol):
    """What an import's check returns: its report (``ok``, ``duplicate_of``, ``as_dict()``), the
    file's SHA-256, and whatever its writer needs."""

    report: Any

    @property
    def sha256(self) -> str: ...


P = TypeVar("P", bound=CheckedPlan)


def run_checked_import(
    job: J,
    *,
    check: Callable[[J, Progress], P],
    write: Callable[[P, J, Progress], object],
    as_duplicate: Callable[[Any, J], object],
    before: Callable[[J], None] | None = None,
) -> J:
    """Run a stored import of ratings made elsewhere, people's or a judge's (``run_staged``:
    progress while it runs, the upload deleted once it has ended): ``check`` reads the staged
    file into a plan (nothing written); a refused file fails the job with its report; a file
    already imported ends done as a duplicate; else ``write`` writes the plan and ends the job
    done in the same commit (``core.jobs.finish_claimed``), claiming the file first
    (:func:`claim_file`). When another import of the same file committed between this one's
    check and its write (a double click, two API posts), the claim refuses (AlreadyWritten)
    and the job ends done as that import's duplicate (``as_duplicate(report, earlier)``),
    having written nothing. ``before`` runs first (the annotation import drops what a killed
    attempt committed on SQLite)."""

    def work(job: J, progress: Progress) -> dict[str, Any]:
        if not Path(job.data_file).is_file():  # e.g. a second confirm of an upload the first job consumed
            raise DomainError(UPLOAD_GONE)
        if before is not None:
            before(job)
        plan = check(job, progress)
        report = plan.report
        if not report.ok:
            raise jobs.Refused("the file was refused", fields={"report": report.as_dict(), "sha256": plan.sha256})
        if report.duplicate_of is None:
            try:
                write(plan, job, progress)  # ends the job done in its commit
                return {}
            except AlreadyWritten:
                earlier = type(job).objects.get(project=job.project, written_sha256=plan.sha256)
                as_duplicate(report, earlier)
        return {"report": report.as_dict(), "sha256": plan.sha256}

    return run_staged(job, work)


def start_staged(job: J, *, size: int, run: Callable[[J], J], inline: bool | None = None) -> J:
    """Run a new job's ``run(job)`` at once when its upload is small (``size`` up to
    ``HV_INLINE_IMPORT_BYTES``, or ``inline``), else hand it to a worker once the request's
    transaction commits, through the sender its app's ``tasks`` module registered; if the broker
    refuses, the job fails and the registered cleanup discards its upload (nothing will read it)."""
    if inline if inline is not None else size <= settings.HV_INLINE_IMPORT_BYTES:
        return run(job)
    jobs.enqueue_on_commit(job)
    return job


# ---------------------------------------------------------------------------------- reap
def staged_job_models() -> list[type[StagedImportJob]]:
    """Every concrete job model that reads a staged upload."""
    return [m for m in apps.get_models() if issubclass(m, StagedImportJob)]


def sweep_staged_uploads(*, max_age_s: float | None = None, now: float | None = None) -> int:
    """Delete staging folders left behind (a page preview never confirmed, a process killed
    between upload and job): those untouched for ``max_age_s`` (``HV_STAGED_UPLOAD_TTL_SECONDS``)
    that no unfinished staged import reads. Returns how many were deleted. Run by beat
    (``annotation.sweep_staged_uploads``); a file given on the command line is never under the
    staging root, so never touched."""
    root = staging_root()
    if not root.is_dir():
        return 0
    max_age_s = settings.HV_STAGED_UPLOAD_TTL_SECONDS if max_age_s is None else max_age_s
    cutoff = (time.time() if now is None else now) - max_age_s
    unfinished = {
        Path(f).parent.name
        for model in staged_job_models()
        for f in model.objects.exclude(status__in=jobs.TERMINAL).values_list("data_file", flat=True)
        if f
    }
    deleted = 0
    for folder in root.iterdir():
        try:
            stale = folder.is_dir() and folder.stat().st_mtime < cutoff
        except OSError:  # deleted meanwhile
            continue
        if stale and folder.name not in unfinished:
            discard_staged(folder)
            deleted += 1
    return deleted


__all__ = [
    "AlreadyWritten",
    "Progress",
    "StagedFile",
    "StagedUpload",
    "Ticker",
    "claim_file",
    "discard_job_upload",
    "discard_staged",
    "discard_token",
    "format_of",
    "progress_report",
    "run_staged",
    "save_upload",
    "stage_file",
    "stage_upload",
    "staged_file",
    "staging_root",
    "start_staged",
    "sweep_staged_uploads",
]
