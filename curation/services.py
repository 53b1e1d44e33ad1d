"""Curation writes: the acceptance policy, applying it (item decisions with audited history),
manual overrides, re-importing revised items as new versions, and starting exports.
Keyword-only arguments, one transaction each, one domain error (:class:`CurationError`)."""

from __future__ import annotations

import io
import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from agreement.selectors import STRATA_COLUMNS
from annotation import services as annotation_services
from annotation.assets import ImageProblem, check_image
from annotation.item_schema import check_record
from annotation.models import Asset, Item, Project
from config.celery import send_or_fail

from . import selectors
from .models import AcceptancePolicy, DecisionEvent, Export, ItemDecision
from .policy import (
    STATUSES,
    SUGGESTED,
    CompiledPolicy,
    PolicyError,
    PolicySpec,
    compile_policy,
    decide,
)

MAX_REPORTED_ERRORS = 200
SHA_PREFIX = "sha256:"


class CurationError(Exception):
    """A request the domain refuses; ``message`` is for the user, ``errors`` lists details."""

    def __init__(self, message: str, *, errors: list[str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.errors = errors or []


# ------------------------------------------------------------------------------ policy
def default_policy(project: Project) -> dict[str, Any]:
    """The preset's rule (the rubric's acceptance expression, else a suggested rule on a derived
    field), all / majority as the paper decides, and k human ratings required."""
    rubric = project.rubric_version.parsed()
    suggested = SUGGESTED.get(project.preset_key, {})
    rule = rubric.acceptance.source if rubric.acceptance is not None else suggested.get("rule", "")
    return {"rule": rule, "aggregation": suggested.get("aggregation", "all"), "tie": "reject",
            "judge_screening": False, "min_human_ratings": project.k_per_item,
            "revise_if": suggested.get("revise_if", ""),
            "element_filter": dict(suggested.get("element_filter") or {})}


def current_policy(project: Project) -> dict[str, Any]:
    policy = AcceptancePolicy.objects.filter(project=project).first()
    return policy.spec_dict() if policy else default_policy(project)


def parse_policy(*, project: Project, raw: dict[str, Any] | None) -> CompiledPolicy:
    """Validate a raw policy (missing keys: the project's current policy) against the rubric."""
    try:
        spec = PolicySpec.parse(raw or {}, defaults=current_policy(project))
        return compile_policy(spec, project.rubric_version.parsed())
    except PolicyError as exc:
        raise CurationError(exc.message) from None


def set_policy(*, project: Project, raw: dict[str, Any], user: AbstractBaseUser | None) -> AcceptancePolicy:
    spec = parse_policy(project=project, raw=raw).spec
    with transaction.atomic():
        policy, _ = AcceptancePolicy.objects.update_or_create(
            project=project, defaults={**spec.as_dict(), "updated_by": user if _real(user) else None})
    return policy


def _real(user: Any) -> bool:
    return bool(user is not None and getattr(user, "is_authenticated", False))


# ------------------------------------------------------------------------------ preview / apply
def _verdicts(project: Project, compiled: CompiledPolicy):
    """(chunk of item rows (id, *strata), {item_id: Verdict}) per chunk of items."""
    for rows in selectors.item_chunks(Item.objects.filter(project=project), *STRATA_COLUMNS):
        ratings = selectors.ratings_for(project, [r[0] for r in rows])
        yield rows, {r[0]: decide(compiled, ratings.get(r[0], [])) for r in rows}


def preview_policy(*, project: Project, raw: dict[str, Any] | None = None, by: str | None = None) -> dict[str, Any]:
    """How many items the policy would accept / reject / send to revision / leave pending,
    overall and by stratum. Writes nothing."""
    if by and by not in STRATA_COLUMNS:
        raise CurationError(f"unknown stratum {by!r}: use one of {', '.join(STRATA_COLUMNS)}")
    compiled = parse_policy(project=project, raw=raw)
    total: Counter = Counter()
    groups: dict[str, Counter] = defaultdict(Counter)
    col = STRATA_COLUMNS.index(by) + 1 if by else None
    for rows, verdicts in _verdicts(project, compiled):
        for row in rows:
            status = verdicts[row[0]].status
            total[status] += 1
            if col is not None:
                groups[row[col] or "(none)"][status] += 1

    def shaped(c: Counter) -> dict[str, int]:
        return {**{s: c.get(s, 0) for s in ("accepted", "rejected", "needs_revision", "pending")}, "total": sum(c.values())}

    return {"policy": compiled.spec.as_dict(), "by": by, "total": shaped(total),
            "strata": {g: shaped(c) for g, c in sorted(groups.items())}}


@dataclass
class ApplyReport:
    counts: dict[str, int] = field(default_factory=dict)
    changed: int = 0
    kept_manual: int = 0

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def apply_policy(*, project: Project, user: AbstractBaseUser | None, override_manual: bool = False) -> ApplyReport:
    """Decide every item under the project's policy. Manual overrides are kept unless
    ``override_manual``. Each change of status is recorded as a :class:`DecisionEvent`."""
    policy = AcceptancePolicy.objects.filter(project=project).first()
    compiled = parse_policy(project=project, raw=policy.spec_dict() if policy else None)
    spec = compiled.spec.as_dict()
    who = user if _real(user) else None
    report = ApplyReport()
    counts: Counter = Counter()
    now = timezone.now()
    with transaction.atomic():
        for rows, verdicts in _verdicts(project, compiled):
            ids = [r[0] for r in rows]
            existing = {d.item_id: d for d in ItemDecision.objects.filter(item_id__in=ids)}
            create, update, events = [], [], []
            for item_id in ids:
                v = verdicts[item_id]
                d = existing.get(item_id)
                if d is not None and d.source == ItemDecision.Source.MANUAL and not override_manual:
                    report.kept_manual += 1
                    counts[d.status] += 1
                    continue
                counts[v.status] += 1
                if d is None:
                    create.append(ItemDecision(item_id=item_id, project=project, status=v.status, reason=v.reason,
                                               details=v.details, policy=spec, decided_by=who, decided_at=now))
                    events.append(DecisionEvent(item_id=item_id, project=project, status=v.status, previous_status="",
                                                reason=v.reason, source="policy", policy=spec, user=who))
                    continue
                changed = d.status != v.status or d.source != ItemDecision.Source.POLICY
                if changed or d.reason != v.reason or d.policy != spec or d.details != v.details:
                    if changed:
                        events.append(DecisionEvent(item_id=item_id, project=project, status=v.status,
                                                    previous_status=d.status, reason=v.reason, source="policy",
                                                    policy=spec, user=who))
                    d.status, d.reason, d.details, d.policy = v.status, v.reason, v.details, spec
                    d.source, d.note, d.decided_by, d.decided_at = ItemDecision.Source.POLICY, "", who, now
                    update.append(d)
            ItemDecision.objects.bulk_create(create)
            ItemDecision.objects.bulk_update(update, ["status", "reason", "details", "policy", "source", "note",
                                                      "decided_by", "decided_at"])
            DecisionEvent.objects.bulk_create(events)
            report.changed += len(events)
    report.counts = {s: counts.get(s, 0) for s in STATUSES}
    return report


def override_decision(*, item: Item, user: AbstractBaseUser, status: str, note: str) -> ItemDecision:
    """A researcher's manual decision on one item, with a required note; audited."""
    if status not in STATUSES:
        raise CurationError(f"unknown status {status!r}: use one of {', '.join(STATUSES)}")
    note = (note or "").strip()
    if not note:
        raise CurationError("a manual decision needs a note saying why")
    with transaction.atomic():
        d = ItemDecision.objects.select_for_update().filter(item=item).first()
        previous = d.status if d else ""
        if d is None:
            d = ItemDecision(item=item, project_id=item.project_id)
        d.status, d.source, d.note, d.decided_by, d.decided_at = status, ItemDecision.Source.MANUAL, note[:5000], user, timezone.now()
        d.reason = f"manual decision by {user.get_username()}"
        d.save()
        DecisionEvent.objects.create(item=item, project_id=item.project_id, status=status, previous_status=previous,
                                     reason=d.reason, source="manual", note=d.note, user=user)
    return d


# ------------------------------------------------------------------------------ revisions
# A revision import reports exactly what an item import does.
RevisionReport = annotation_services.ImportReport


def import_revisions(*, project: Project, data: bytes | str | Path, images: Path | None = None) -> RevisionReport:
    """Re-import revised items (JSONL, the import format; the revision export's ``_revision`` key
    is ignored) as new versions of existing items: version = latest + 1, ``parent`` = the latest
    version. Image fields take a path in ``images`` (folder or zip) or ``sha256:<hex>`` of an
    image already stored (an unchanged image). All or nothing; then assigned like any item.

    Uses the same record checker and image checks as :func:`annotation.services.import_items`."""
    preset = project.preset
    raw = Path(data).read_bytes() if isinstance(data, Path) else data
    try:
        text = raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as exc:
        return RevisionReport(ok=False, errors=[f"the file is not UTF-8 text (byte {exc.start})"])
    try:
        source = annotation_services.images_source(images)
    except (annotation_services.ServiceError, ImageProblem) as exc:
        return RevisionReport(ok=False, errors=[str(getattr(exc, "message", exc))])
    report = RevisionReport(ok=True)
    errors: list[str] = []

    def fail(line: int, message: str) -> None:
        if len(errors) < MAX_REPORTED_ERRORS:
            errors.append(f"line {line}: {message}")

    pending: list[tuple[int, Any, str]] = []
    checked_images: dict[str, Any] = {}
    reused: dict[str, str] = {}  # "sha256:<hex>" -> hex of a stored asset
    seen: dict[str, int] = {}
    for line_no, line in enumerate(io.StringIO(text), start=1):
        if not line.strip():
            continue
        report.lines_read += 1
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            fail(line_no, f"invalid JSON ({exc.msg} at column {exc.colno})")
            continue
        if isinstance(record, dict):
            record = {k: v for k, v in record.items() if k not in ("_revision", "version")}
        checked = check_record(preset, record)
        for message in checked.errors:
            fail(line_no, message)
        if checked.errors:
            continue
        if not checked.external_id:
            fail(line_no, "a revised item needs the 'id' of the item it revises")
            continue
        if checked.external_id in seen:
            fail(line_no, f"duplicate id {checked.external_id!r} (first on line {seen[checked.external_id]})")
            continue
        seen[checked.external_id] = line_no
        for field_name, ref in checked.image_refs.items():
            if ref.startswith(SHA_PREFIX):
                reused[ref] = ref[len(SHA_PREFIX):]
            elif ref not in checked_images:
                try:
                    checked_images[ref] = check_image(source.read(ref), name=f"image {ref!r}")
                except ImageProblem as exc:
                    fail(line_no, f"field '{field_name}': {exc}")
        pending.append((line_no, checked, checked.external_id))
    if report.lines_read == 0:
        fail(1, "the file holds no records")
    stored = dict(Asset.objects.filter(sha256__in=list(set(reused.values()))).values_list("sha256", "id"))
    for ref, sha in reused.items():
        if sha not in stored:
            fail(next(ln for ln, c, _ in pending if ref in c.image_refs.values()), f"no stored image {ref!r}")
    latest = {}
    ids = list(seen)
    for start in range(0, len(ids), 2000):
        for ext, version, pk in (Item.objects.filter(project=project, external_id__in=ids[start:start + 2000])
                                 .values_list("external_id", "version", "id")):
            if ext not in latest or version > latest[ext][0]:
                latest[ext] = (version, pk)
    for ext, line_no in seen.items():
        if ext not in latest:
            fail(line_no, f"no item with id {ext!r} in this project to revise")
    if errors:
        report.ok, report.errors = False, errors
        return report

    written: list[Path] = []
    try:
        with transaction.atomic():
            # the import's own asset writer (content-addressed files, thumbnails, Asset rows)
            asset_ids = annotation_services._store_assets(checked_images, report, written)
            asset_ids.update(stored)
            items, links = [], []
            for _line, checked, ext in pending:
                data = dict(checked.data)
                shas = set()
                for field_name, ref in checked.image_refs.items():
                    sha = reused[ref] if ref.startswith(SHA_PREFIX) else checked_images[ref].sha256
                    data[field_name] = sha
                    shas.add(sha)
                version, parent_id = latest[ext]
                items.append(Item(project=project, external_id=ext, version=version + 1, parent_id=parent_id,
                                  data=data, meta=checked.meta, **checked.strata))
                links.append(shas)
            Item.objects.bulk_create(items)
            through = Item.assets.through
            through.objects.bulk_create(
                [through(item_id=it.id, asset_id=asset_ids[sha]) for it, shas in zip(items, links) for sha in shas],
                ignore_conflicts=True)
            report.items_created = len(items)
            report.assignments_created = annotation_services.assign_all_annotators(project=project, items=items)
    except Exception:
        for path in written:
            path.unlink(missing_ok=True)
        raise
    return report


# ------------------------------------------------------------------------------ exports
def start_export(*, project: Project, user: AbstractBaseUser | None, content: str, format: str,
                 scope: str = "accepted") -> Export:
    """Validate the request, create the export row and hand it to a worker on commit."""
    contents, formats, scopes = Export.Content.values, Export.Format.values, Export.Scope.values
    if content not in contents:
        raise CurationError(f"unknown export content {content!r}: use one of {', '.join(contents)}")
    if format not in formats:
        raise CurationError(f"unknown export format {format!r}: use one of {', '.join(formats)}")
    if scope not in scopes:
        raise CurationError(f"unknown scope {scope!r}: use one of {', '.join(scopes)}")
    if format == "hf" and content != "items":
        raise CurationError("the Hugging Face folder format exports items; use jsonl, csv or parquet for "
                            f"{content}")
    if content == "revisions" and format != "jsonl":
        raise CurationError("items needing revision are exported as jsonl (the import format)")
    from .tasks import run_export

    with transaction.atomic():
        export = Export.objects.create(project=project, created_by=user if _real(user) else None, content=content,
                                       format=format, scope=scope)
        def fail(message: str) -> None:
            Export.objects.filter(pk=export.pk).update(status=Export.Status.FAILED, message=message)

        transaction.on_commit(lambda: send_or_fail(lambda: run_export.delay(export.id), fail))
    return export


def latest_version(project: Project, external_id: str) -> int:
    return Item.objects.filter(project=project, external_id=external_id).aggregate(m=Max("version"))["m"] or 0
