"""Every write that matters on the human side. Keyword-only arguments, one transaction each,
one domain error type (:class:`ServiceError`) with a message a user can act on."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import random
import secrets
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Count, Max
from django.utils import timezone

from benchmarks.base import STRATA_KEYS, Preset
from benchmarks.registry import get_preset
from config.celery import send_or_fail

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
from .bulk import insert_rows, reserve_ids
from .item_schema import check_record
from .models import (
    Annotation,
    Asset,
    Assignment,
    ImportJob,
    Item,
    Membership,
    Project,
    Rater,
    RubricVersion,
)
from .rubric import AnswerError, Rubric

MAX_REPORTED_ERRORS = 200
BATCH = 2000


class ServiceError(Exception):
    """A request the domain refuses. ``errors`` carries per-field or per-line details."""

    def __init__(self, message: str, *, errors: list[str] | dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.errors = errors or []


# ------------------------------------------------------------------------- rubrics & projects
def rubric_version_for(*, rubric_key: str, schema: dict[str, Any]) -> RubricVersion:
    """The stored version of this exact schema, creating the next version number if it changed."""
    Rubric.from_schema(schema)  # refuse malformed schemas before storing them
    digest = hashlib.sha256(json.dumps(schema, sort_keys=True).encode()).hexdigest()
    with transaction.atomic():
        existing = RubricVersion.objects.filter(rubric_key=rubric_key, schema_hash=digest).first()
        if existing:
            return existing
        last = RubricVersion.objects.filter(rubric_key=rubric_key).aggregate(m=Max("version"))["m"] or 0
        return RubricVersion.objects.create(rubric_key=rubric_key, version=last + 1, schema=schema, schema_hash=digest)


def create_project(
    *, name: str, preset_key: str, created_by: AbstractBaseUser | None, k_per_item: int | None = None,
    show_model_hints: bool | None = None,
) -> Project:
    try:
        preset = get_preset(preset_key)
    except KeyError:
        raise ServiceError(f"unknown preset {preset_key!r}") from None
    name = (name or "").strip()
    if not name:
        raise ServiceError("a project needs a name")
    k = k_per_item if k_per_item is not None else int(preset.defaults.get("k", 3))
    if not 1 <= k <= 100:
        raise ServiceError("k (annotators per item) must be between 1 and 100")
    with transaction.atomic():
        project = Project.objects.create(
            name=name[:200],
            preset_key=preset.key,
            rubric_version=rubric_version_for(rubric_key=preset.key, schema=preset.rubric),
            k_per_item=k,
            show_model_hints=bool(
                show_model_hints if show_model_hints is not None else preset.defaults.get("show_model_hints", False)
            ),
            randomise_pair_order=bool(preset.defaults.get("randomise_pair_order", True)),
            created_by=created_by,
        )
        if created_by is not None:
            Membership.objects.create(project=project, user=created_by, role=Membership.Role.RESEARCHER)
    return project


def rater_for_user(user: AbstractBaseUser) -> Rater:
    rater = Rater.objects.filter(user=user).first()
    if rater is None:
        try:
            with transaction.atomic():
                rater = Rater.objects.create(kind=Rater.Kind.HUMAN, user=user, name=user.get_username())
        except IntegrityError:
            rater = Rater.objects.get(user=user)
    return rater


def add_member(*, project: Project, user: AbstractBaseUser, role: str) -> Membership:
    if role not in Membership.Role.values:
        raise ServiceError(f"unknown role {role!r}")
    with transaction.atomic():
        membership, _ = Membership.objects.get_or_create(project=project, user=user, role=role)
        if role == Membership.Role.ANNOTATOR:
            rater_for_user(user)
            if uses_default_assignment(project):
                assign_all_annotators(project=project)
    return membership


def set_project_status(*, project: Project, status: str) -> Project:
    if status not in Project.Status.values:
        raise ServiceError(f"unknown status {status!r}")
    project.status = status
    project.save(update_fields=["status"])
    return project


# ------------------------------------------------------------------------- assignment strategy
def uses_default_assignment(project: Project) -> bool:
    """False once assignment plans have taken the project over (``options["assignment"] ==
    "plans"``): then members and imports get no items automatically."""
    return project.options.get("assignment", "default") != "plans"


def _presentation(project: Project, rubric: Rubric, rng: random.Random) -> dict[str, Any]:
    order: dict[str, list[str]] = {}
    for q in rubric.questions:
        if q.type == "pairwise" and q.pair:
            pair = list(q.pair)
            if project.randomise_pair_order:
                rng.shuffle(pair)
            order[q.id] = pair
    return {"pair_order": order} if order else {}


def assign_all_annotators(*, project: Project, items: Iterable[Item] | None = None) -> int:
    """The minimal strategy: every annotator of the project gets items until each item has k
    annotators, spreading load by rotation. Idempotent (existing rows are kept). Returns the
    number of assignments created. Richer strategies (stratified samples, eligibility, QC)
    create the same rows."""
    raters = list(
        Rater.objects.filter(
            user__memberships__project=project, user__memberships__role=Membership.Role.ANNOTATOR
        ).order_by("id")
    )
    if not raters:
        return 0
    rubric = project.rubric_version.parsed()
    item_qs = Item.objects.filter(project=project) if items is None else None
    item_list = list(item_qs.order_by("id").only("id")) if item_qs is not None else list(items)
    existing: dict[int, set[int]] = {}
    ids = [it.id for it in item_list]
    for chunk_start in range(0, len(ids), 5000):
        chunk = ids[chunk_start : chunk_start + 5000]
        for item_id, rater_id in Assignment.objects.filter(
            item_id__in=chunk, purpose=Assignment.Purpose.REGULAR
        ).values_list("item_id", "rater_id"):
            existing.setdefault(item_id, set()).add(rater_id)
    load = dict(
        Assignment.objects.filter(project=project, rater__in=raters).values_list("rater_id").annotate(c=Count("id"))
    )
    next_position = {
        r: (p or 0) + 1
        for r, p in Assignment.objects.filter(project=project).values_list("rater_id").annotate(p=Max("position"))
    }
    rng = random.Random(secrets.randbits(64))
    k = min(project.k_per_item, len(raters))
    new_rows: list[Assignment] = []
    for item in item_list:
        have = existing.get(item.id, set())
        need = k - len(have)
        if need <= 0:
            continue
        candidates = sorted((r for r in raters if r.id not in have), key=lambda r: (load.get(r.id, 0), r.id))
        for rater in candidates[:need]:
            load[rater.id] = load.get(rater.id, 0) + 1
            position = next_position.get(rater.id, 1)
            next_position[rater.id] = position + 1
            new_rows.append(
                Assignment(
                    project=project, item_id=item.id, rater=rater, position=position,
                    presentation=_presentation(project, rubric, rng),
                )
            )
    Assignment.objects.bulk_create(new_rows, batch_size=BATCH, ignore_conflicts=True)
    return len(new_rows)


def assign_new_items(*, project: Project, item_ids: list[int]) -> int:
    """The same strategy as :func:`assign_all_annotators` for items that have no assignment yet
    (a fresh import): annotators take turns in order of their current load, so k-overlap is
    exact and the load stays balanced, written as plain rows in one pass."""
    raters = list(
        Rater.objects.filter(
            user__memberships__project=project, user__memberships__role=Membership.Role.ANNOTATOR
        ).order_by("id").values_list("id", flat=True)
    )
    if not raters or not item_ids:
        return 0
    load = dict(
        Assignment.objects.filter(project=project).values_list("rater_id").annotate(c=Count("id"))
    )
    next_position = {
        r: (p or 0) + 1
        for r, p in Assignment.objects.filter(project=project).values_list("rater_id").annotate(p=Max("position"))
    }
    raters.sort(key=lambda r: (load.get(r, 0), r))
    n, k = len(raters), min(project.k_per_item, len(raters))
    rubric = project.rubric_version.parsed()
    rng = random.Random(secrets.randbits(64))
    # A presentation is one of a few JSON texts (each pair question in one of its two orders):
    # build them once and draw per assignment.
    pairwise = [q for q in rubric.questions if q.type == "pairwise" and q.pair]
    variants = [{}]
    for q in pairwise:
        orders = [list(q.pair), list(reversed(q.pair))] if project.randomise_pair_order else [list(q.pair)]
        variants = [{**v, q.id: o} for v in variants for o in orders]
    texts = [json.dumps({"pair_order": v}) if v else "{}" for v in variants]
    now = timezone.now()

    def presentation() -> str:
        return texts[rng.randrange(len(texts))] if len(texts) > 1 else texts[0]

    def rows():
        turn = 0
        for item_id in item_ids:
            for _ in range(k):
                rater = raters[turn % n]
                turn += 1
                position = next_position.get(rater, 1)
                next_position[rater] = position + 1
                yield (project.id, item_id, rater, Assignment.Status.ASSIGNED, Assignment.Purpose.REGULAR,
                       position, presentation(), "", now)

    return insert_rows(
        Assignment,
        ["project", "item", "rater", "status", "purpose", "position", "presentation", "skip_reason", "created_at"],
        rows(),
    )


# ------------------------------------------------------------------------- import
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


def _read_jsonl(stream: io.TextIOBase) -> Iterator[tuple[int, Any, str | None]]:
    for line_no, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        try:
            yield line_no, json.loads(line), None
        except json.JSONDecodeError as exc:
            yield line_no, None, f"invalid JSON ({exc.msg} at column {exc.colno})"


def _read_csv(stream: io.TextIOBase, preset: Preset) -> Iterator[tuple[int, Any, str | None]]:
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
            elif structured.get(key) == "number":
                try:
                    record[key] = float(cell) if any(c in cell for c in ".eE") else int(cell)
                except ValueError:
                    problem = f"column '{key}' must be a number"
            else:
                record[key] = cell
        yield line_no, record, problem


def images_source(images: Path | None) -> ImageSource:
    if images is None:
        return NoImages()
    images = Path(images)
    if images.is_dir():
        return FolderImages(images)
    if images.is_file():
        return ZipImages(images)
    raise ServiceError(f"images path {str(images)!r} is neither a folder nor a zip file")


def import_items(
    *, project: Project, data: bytes | str | Path, data_format: str, images: Path | None = None
) -> ImportReport:
    """Import items from JSONL or CSV (plus images from a folder or zip), all or nothing.

    Every line is checked first; any problem anywhere means nothing is written and the report
    lists the problems by line number. Then items, images (stored once by content hash) and
    the minimal assignments are written in one transaction."""
    preset = project.preset
    if data_format not in ("jsonl", "csv"):
        raise ServiceError(f"unsupported format {data_format!r}: use jsonl or csv")
    raw = Path(data).read_bytes() if isinstance(data, Path) else data
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            report = ImportReport(ok=False, errors=[f"the file is not UTF-8 text (byte {exc.start})"])
            return report
    else:
        text = raw
    try:
        source = images_source(images)
    except (ServiceError, ImageProblem) as exc:
        return ImportReport(ok=False, errors=[str(getattr(exc, "message", exc))])

    report = ImportReport(ok=True)
    errors: list[str] = []

    def fail(line: int, message: str) -> None:
        if len(errors) < MAX_REPORTED_ERRORS:
            errors.append(f"line {line}: {message}")
        else:
            report.errors_truncated += 1

    stream = io.StringIO(text, newline="")
    rows = _read_jsonl(stream) if data_format == "jsonl" else _read_csv(stream, preset)
    checked_images: dict[str, CheckedImage] = {}
    pending: list[tuple[int, Any]] = []
    seen_ids: dict[str, int] = {}
    for line_no, record, problem in rows:
        report.lines_read += 1
        if problem:
            fail(line_no, problem)
            continue
        checked = check_record(preset, record)
        for message in checked.errors:
            fail(line_no, message)
        if checked.errors:
            continue
        for field_name, rel in checked.image_refs.items():
            if rel in checked_images:
                continue
            try:
                checked_images[rel] = check_image(source.read(rel), name=f"image {rel!r}")
            except ImageProblem as exc:
                fail(line_no, f"field '{field_name}': {exc}")
        ext_id = checked.external_id or f"line-{line_no}"
        if ext_id in seen_ids:
            fail(line_no, f"duplicate id {ext_id!r} (first on line {seen_ids[ext_id]})")
            continue
        seen_ids[ext_id] = line_no
        pending.append((line_no, checked, ext_id))
    if report.lines_read == 0:
        fail(1, "the file holds no records")
    # Ids already in the project: refuse, a revised item is imported as a new version elsewhere.
    taken = set()
    ids = list(seen_ids) if Item.objects.filter(project=project).exists() else []
    for start in range(0, len(ids), 5000):
        taken.update(
            Item.objects.filter(project=project, external_id__in=ids[start : start + 5000]).values_list(
                "external_id", flat=True
            )
        )
    for ext_id in sorted(taken, key=seen_ids.get):
        fail(seen_ids[ext_id], f"an item with id {ext_id!r} already exists in this project")
    if errors:
        report.ok = False
        report.errors = errors
        return report

    written: list[Path] = []
    try:
        with transaction.atomic():
            asset_ids = _store_assets(checked_images, report, written)
            item_ids = reserve_ids(Item, len(pending))
            now = timezone.now()
            dumps = json.dumps
            insert_rows(
                Item,
                ["id", "project", "external_id", "version", "data", "meta", *STRATA_KEYS, "created_at"],
                (
                    (
                        item_id, project.id, ext_id, 1,
                        dumps({**checked.data, **{f: checked_images[rel].sha256 for f, rel in checked.image_refs.items()}}),
                        dumps(checked.meta), *(checked.strata.get(k, "") for k in STRATA_KEYS), now,
                    )
                    for item_id, (_line, checked, ext_id) in zip(item_ids, pending, strict=True)
                ),
            )
            if checked_images:
                insert_rows(
                    Item.assets.through,
                    ["item", "asset"],
                    (
                        (item_id, asset_ids[sha])
                        for item_id, (_line, checked, _ext) in zip(item_ids, pending, strict=True)
                        for sha in {checked_images[rel].sha256 for rel in checked.image_refs.values()}
                    ),
                )
            report.items_created = len(item_ids)
            if uses_default_assignment(project):
                # Attention / gold items (meta.qc) are injected by quality control, never handed out.
                regular_ids = [
                    item_id for item_id, (_line, checked, _ext) in zip(item_ids, pending, strict=True)
                    if not (checked.meta or {}).get("qc")
                ]
                report.assignments_created = assign_new_items(project=project, item_ids=regular_ids)
    except Exception:
        for path in written:
            path.unlink(missing_ok=True)
        raise
    return report


def _store_assets(checked: dict[str, CheckedImage], report: ImportReport, written: list[Path]) -> dict[str, int]:
    by_sha = {img.sha256: img for img in checked.values()}
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
    job.status = ImportJob.Status.RUNNING
    job.save(update_fields=["status"])
    try:
        report = import_items(
            project=job.project,
            data=Path(job.data_file),
            data_format=job.data_format,
            images=Path(job.images_path) if job.images_path else None,
        )
        job.report = report.as_dict()
        job.status = ImportJob.Status.DONE if report.ok else ImportJob.Status.FAILED
    except ServiceError as exc:
        job.report = ImportReport(ok=False, errors=[exc.message]).as_dict()
        job.status = ImportJob.Status.FAILED
    except Exception as exc:  # noqa: BLE001 - a worker must record why, not die silently
        job.report = ImportReport(ok=False, errors=[f"internal error: {exc.__class__.__name__}: {exc}"]).as_dict()
        job.status = ImportJob.Status.FAILED
    job.finished_at = timezone.now()
    job.save(update_fields=["status", "report", "finished_at"])
    return job


def start_import(
    *, project: Project, user: AbstractBaseUser | None, data_name: str, data_stream: Iterable[bytes],
    images_name: str | None = None, images_stream: Iterable[bytes] | None = None,
) -> ImportJob:
    """Stage the uploaded files and create the job. Small files run at once; large ones go to
    a worker (``annotation.tasks.run_import``)."""
    suffix = Path(data_name).suffix.lower().lstrip(".")
    data_format = {"jsonl": "jsonl", "ndjson": "jsonl", "csv": "csv"}.get(suffix)
    if data_format is None:
        raise ServiceError(f"cannot tell the format of {data_name!r}: name it .jsonl or .csv")
    staging = Path(settings.MEDIA_ROOT) / "imports" / secrets.token_hex(12)
    staging.mkdir(parents=True)
    data_path = staging / f"data.{data_format}"
    size = _save_stream(data_stream, data_path)
    images_path = ""
    if images_stream is not None:
        if not (images_name or "").lower().endswith(".zip"):
            raise ServiceError("images must be uploaded as a .zip file")
        images_path = str(staging / "images.zip")
        size += _save_stream(images_stream, Path(images_path))
    job = ImportJob.objects.create(
        project=project, created_by=user, data_file=str(data_path), data_format=data_format,
        images_path=images_path, original_name=Path(data_name).name[:255],
    )
    if size <= settings.HV_INLINE_IMPORT_BYTES:
        return run_import_job(job=job)
    from .tasks import run_import

    def fail(message: str) -> None:
        ImportJob.objects.filter(pk=job.pk).update(
            status=ImportJob.Status.FAILED, finished_at=timezone.now(),
            report=ImportReport(ok=False, errors=[message]).as_dict(),
        )

    transaction.on_commit(lambda: send_or_fail(lambda: run_import.delay(job.id), fail))
    return job


def _save_stream(chunks: Iterable[bytes], path: Path) -> int:
    total = 0
    with open(path, "wb") as fh:
        for chunk in chunks:
            total += len(chunk)
            if total > settings.HV_MAX_UPLOAD_BYTES:
                fh.close()
                path.unlink(missing_ok=True)
                raise ServiceError(f"upload larger than {settings.HV_MAX_UPLOAD_BYTES} bytes")
            fh.write(chunk)
    return total


# ------------------------------------------------------------------------- annotating
def _check_owner(assignment: Assignment, rater: Rater) -> None:
    if assignment.rater_id != rater.id:
        # Never reveal whether the assignment exists for someone else.
        raise ServiceError("assignment not found")


def open_assignment(*, assignment: Assignment, rater: Rater) -> Assignment:
    _check_owner(assignment, rater)
    if assignment.status == Assignment.Status.ASSIGNED:
        now = timezone.now()
        Assignment.objects.filter(pk=assignment.pk, status=Assignment.Status.ASSIGNED).update(
            status=Assignment.Status.IN_PROGRESS, opened_at=now
        )
        assignment.status, assignment.opened_at = Assignment.Status.IN_PROGRESS, now
    return assignment


def submit_annotation(
    *, assignment_id: int, rater: Rater, answers: dict[str, Any], duration_ms: int | None = None,
    edit: bool = False, loaded: Assignment | None = None,
) -> Annotation:
    """Validate answers against the project's rubric version and store them. A first submission
    and an edit are distinct requests: submitting twice is refused, editing needs an existing
    annotation; both only while the project is open. ``loaded`` is the same assignment already
    read with its item and project (the views have it); only its status is re-read under lock."""
    with transaction.atomic():
        # A pooled assignment's slot is locked first, as a claim does, so a submit and a
        # reclaim of an expired lease never deadlock; the one that comes second sees the result.
        slot = None
        if loaded is None or loaded.pk != assignment_id or loaded.plan_id is not None:
            from .plans import lock_slot_for

            slot = lock_slot_for(assignment_id)
        # Lock the assignment row only (locking a joined project row would serialise every
        # submission of a project) and re-read what may have changed since ``loaded``.
        locked = (
            Assignment.objects.select_for_update(of=("self",))
            .filter(pk=assignment_id)
            .values_list("status", "rater_id")
            .first()
        )
        if locked is None or locked[1] != rater.id:
            raise ServiceError("assignment not found")  # never reveal someone else's assignment
        status = locked[0]
        assignment = loaded if loaded is not None and loaded.pk == assignment_id else (
            Assignment.objects.select_related("item", "project__rubric_version").get(pk=assignment_id)
        )
        project = assignment.project
        if not project.is_open:
            raise ServiceError("this project is closed; answers can no longer be changed")
        if status == Assignment.Status.SKIPPED and assignment.plan_id is not None:
            # A skipped plan item went back to the pool for someone else.
            raise ServiceError("this assignment was skipped; the item has gone to someone else")
        if status == Assignment.Status.EXPIRED:
            raise ServiceError("this assignment has expired (its hold ran out and the item went back to the pool)")
        already = status == Assignment.Status.SUBMITTED
        if already and not edit:
            raise ServiceError("this assignment was already submitted; edit your answer instead")
        if edit and not already:
            raise ServiceError("there is no submitted answer to edit")
        rubric_version = project.rubric_version
        rubric = rubric_version.parsed()
        try:
            cleaned = rubric.validate(answers, item=item_render_context(assignment.item),
                                      presentation=assignment.presentation)
        except AnswerError as exc:
            raise ServiceError("some answers are missing or invalid", errors=exc.errors) from None
        derived = rubric.derive(cleaned, presentation=assignment.presentation)
        if duration_ms is not None and (duration_ms < 0 or duration_ms > 86_400_000):
            duration_ms = None
        qc_on = bool(project.options.get("qc"))
        if qc_on and not already:
            from .quality import check_submission

            check_submission(project=project, assignment=assignment, answers=cleaned, duration_ms=duration_ms)
        if already:
            annotation = Annotation.objects.select_for_update().get(assignment_id=assignment_id)
            annotation.answers, annotation.derived = cleaned, derived
            annotation.rubric_version = rubric_version
            annotation.revision += 1
            annotation.save(update_fields=["answers", "derived", "rubric_version", "revision", "updated_at"])
        else:
            annotation = Annotation.objects.create(
                assignment_id=assignment_id, item_id=assignment.item_id, rater=rater, rubric_version=rubric_version,
                answers=cleaned, derived=derived, duration_ms=duration_ms,
            )
            Assignment.objects.filter(pk=assignment_id).update(
                status=Assignment.Status.SUBMITTED, submitted_at=timezone.now(), skip_reason="", lease_expires_at=None
            )
            assignment.status = Assignment.Status.SUBMITTED
            if slot is not None:
                from .plans import release_slot

                release_slot(slot[0], submitted=True)
            if assignment.purpose in (Assignment.Purpose.ATTENTION, Assignment.Purpose.GOLD):
                from .quality import record_submission

                record_submission(assignment=assignment, annotation=annotation)
    return annotation


def skip_assignment(*, assignment_id: int, rater: Rater, reason: str) -> Assignment:
    reason = (reason or "").strip()
    if not reason:
        raise ServiceError("say why you skip this item", errors={"reason": "a reason is required"})
    from .plans import lock_slot_for, release_slot

    with transaction.atomic():
        slot = lock_slot_for(assignment_id)
        assignment = (
            Assignment.objects.select_for_update(of=("self",)).select_related("project").filter(pk=assignment_id).first()
        )
        if assignment is None:
            raise ServiceError("assignment not found")
        _check_owner(assignment, rater)
        if not assignment.project.is_open:
            raise ServiceError("this project is closed")
        if assignment.status == Assignment.Status.SUBMITTED:
            raise ServiceError("this assignment was already submitted")
        if assignment.status == Assignment.Status.EXPIRED:
            raise ServiceError("this assignment has expired")
        assignment.status = Assignment.Status.SKIPPED
        assignment.skip_reason = reason[:2000]
        assignment.lease_expires_at = None
        assignment.save(update_fields=["status", "skip_reason", "lease_expires_at"])
        if slot is not None:
            release_slot(slot[0], submitted=False)  # someone else does this item
    return assignment


def next_assignment(*, rater: Rater, project: Project) -> Assignment | None:
    """The annotator's next assignment: their queue first (selectors.next_assignment_for, two
    index-ordered LIMIT 1 queries), then quality-control injection and the pooled plans.
    Nothing for a paused annotator or a crowd participant who reached their study's quota."""
    options = project.options
    qc_on = bool(options.get("qc"))
    if rater.attributes.get("crowd"):
        from .crowd import quota_reached

        if quota_reached(rater=rater, project=project):
            return None
    if qc_on:
        from .quality import maybe_inject, pause_reason

        if pause_reason(rater, project) is not None:
            return None
        injected = maybe_inject(rater=rater, project=project)
        if injected is not None:
            return injected
    from .selectors import next_assignment_for

    found = next_assignment_for(rater, project)
    if found is not None or not options.get("pooled_plans") or not project.is_open:
        return found
    from .plans import claim_from_pool

    return claim_from_pool(rater=rater, project=project)


def item_render_context(item: Item) -> dict[str, Any]:
    """What a rubric prompt and per-element repetition see: the item's fields plus its strata."""
    ctx = {k: getattr(item, k) for k in ("country", "region", "generator", "category", "dimension") if getattr(item, k)}
    ctx.update(item.data)
    return ctx
