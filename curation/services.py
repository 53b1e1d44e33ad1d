"""Curation writes: the acceptance policy, applying it (item decisions with audited history),
manual overrides, re-importing revised items as new versions, and starting exports.
Keyword-only arguments, one transaction each, refusals raised as :class:`core.errors.DomainError`."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Max
from django.db.models.fields.json import KeyTextTransform
from django.utils import timezone

from annotation.importing import ImportReport, import_items
from annotation.models import Item, Project
from annotation.rubric import Rubric
from annotation.staging import stage_upload
from benchmarks.base import STRATA_KEYS
from core import jobs
from core.errors import DomainError
from curation.browse import meta_keys
from hvstats.ppi import ppi_mean
from hvstats.result import to_jsonable

from . import export_formats, selectors
from .models import AcceptancePolicy, DecisionEvent, Export, ItemDecision
from .policy import (
    LATENT_AGGREGATIONS,
    STATUSES,
    CompiledPolicy,
    LatentCollector,
    LatentLabels,
    PolicyError,
    PolicySpec,
    acceptance_labels,
    compile_policy,
    decide,
)


# ------------------------------------------------------------------------------ policy
def default_policy(project: Project) -> dict[str, Any]:
    """The preset's rule (the rubric's acceptance expression, else the rule the preset suggests on
    a derived field, ``Preset.suggested_policy``), all / majority as the paper decides, and k
    human ratings required."""
    rubric = project.rubric_version.parsed()
    suggested = project.preset.suggested_policy or {}
    rule = rubric.acceptance.source if rubric.acceptance is not None else suggested.get("rule", "")
    return {
        "rule": rule,
        "aggregation": suggested.get("aggregation", "all"),
        "tie": "reject",
        "judge_screening": False,
        "min_human_ratings": project.k_per_item,
        "revise_if": suggested.get("revise_if", ""),
        "element_filter": dict(suggested.get("element_filter") or {}),
    }


def current_policy(project: Project) -> dict[str, Any]:
    policy = AcceptancePolicy.objects.filter(project=project).first()
    return policy.spec_dict() if policy else default_policy(project)


def parse_policy(*, project: Project, raw: dict[str, Any] | None) -> CompiledPolicy:
    """Validate a raw policy (missing keys: the project's current policy) against the rubric."""
    try:
        spec = PolicySpec.parse(raw or {}, defaults=current_policy(project))
        return compile_policy(spec, project.rubric_version.parsed())
    except PolicyError as exc:
        raise DomainError(exc.message) from None


def set_policy(*, project: Project, raw: dict[str, Any], user: AbstractBaseUser | None) -> AcceptancePolicy:
    spec = parse_policy(project=project, raw=raw).spec
    with transaction.atomic():
        policy, _ = AcceptancePolicy.objects.update_or_create(
            project=project, defaults={**spec.as_dict(), "updated_by": user if _real(user) else None}
        )
    return policy


def _real(user: Any) -> bool:
    return bool(user is not None and getattr(user, "is_authenticated", False))


# ------------------------------------------------------------------------------ preview / apply
def latent_labels(project: Project, rubric: Rubric, fields: list[str] | tuple[str, ...], method: str) -> LatentLabels:
    """``method`` (dawid_skene | mace) fitted per categorical field over every item of the
    project, humans and model judges together as raters (one pass over the ratings, by chunk)."""
    collector = LatentCollector(rubric, fields, method)
    for rows in selectors.item_chunks(Item.objects.filter(project=project)):
        ids = [r[0] for r in rows]
        ratings = selectors.ratings_for(project, ids)
        for item_id in ids:
            collector.add(item_id, ratings.get(item_id, []))
    return collector.fit()


def _latent_for(project: Project, compiled: CompiledPolicy) -> LatentLabels | None:
    """The policy's latent-truth model fitted over the whole project (None for other aggregations)."""
    if compiled.spec.aggregation not in LATENT_AGGREGATIONS:
        return None
    return latent_labels(project, compiled.rubric, compiled.latent_fields, compiled.spec.aggregation)


def _verdicts(project: Project, compiled: CompiledPolicy, latent: LatentLabels | None):
    """(chunk of item rows (id, *strata), {item_id: its ratings}, {item_id: Verdict}) per chunk of
    items. A latent-truth aggregation needs its model fitted over the whole project first
    (:func:`_latent_for`)."""
    for rows in selectors.item_chunks(Item.objects.filter(project=project), *STRATA_KEYS):
        ratings = selectors.ratings_for(project, [r[0] for r in rows])
        yield rows, ratings, {r[0]: decide(compiled, ratings.get(r[0], []), latent, r[0]) for r in rows}


_META_KEY = re.compile(r"^[A-Za-z0-9_-]{1,100}$")


def _meta_values(item_ids: list[int], key: str) -> dict[int, str | None]:
    """Each item's ``meta[key]`` as text (None where it has none)."""
    return dict(Item.objects.filter(id__in=item_ids).annotate(_v=KeyTextTransform(key, "meta")).values_list("id", "_v"))


def preview_policy(*, project: Project, raw: dict[str, Any] | None = None, by: str | None = None) -> dict[str, Any]:
    """How many items the policy would accept / reject / send to revision / leave pending,
    overall and by stratum; under a latent-truth aggregation also each rater's estimated accuracy
    per field (``rater_accuracy``). Writes nothing."""
    by = (by or "").strip().removeprefix("meta.") or None
    if (
        by
        and by not in STRATA_KEYS
        and not (_META_KEY.match(by) and Item.objects.filter(project=project, meta__has_key=by).exists())
    ):
        known = [*STRATA_KEYS, *(k for k in meta_keys(project) if k not in STRATA_KEYS)]
        raise DomainError(f"unknown stratum {by!r}: use one of {', '.join(known)}")
    compiled = parse_policy(project=project, raw=raw)
    total: Counter = Counter()
    groups: dict[str, Counter] = defaultdict(Counter)
    col = STRATA_KEYS.index(by) + 1 if by in STRATA_KEYS else None
    latent = _latent_for(project, compiled)
    labels: list[tuple[str | None, int | None, dict[str, int | None]]] = []  # (stratum, human, judges)
    for rows, ratings, verdicts in _verdicts(project, compiled, latent):
        # a meta key is read for the chunk's items only (as text, the way samples read it)
        meta = _meta_values([r[0] for r in rows], by) if by and col is None else {}
        for row in rows:
            status = verdicts[row[0]].status
            total[status] += 1
            stratum = None
            if by:
                stratum = (row[col] if col is not None else meta.get(row[0])) or "(none)"
                groups[stratum][status] += 1
            if latent is None:
                human, judges = acceptance_labels(compiled, ratings.get(row[0], []))
                labels.append((stratum, human, judges))

    def shaped(c: Counter) -> dict[str, int]:
        return {
            **{s: c.get(s, 0) for s in ("accepted", "rejected", "needs_revision", "pending")},
            "total": sum(c.values()),
        }

    out = {
        "policy": compiled.spec.as_dict(),
        "by": by,
        "total": shaped(total),
        "strata": {g: shaped(c) for g, c in sorted(groups.items())},
    }
    if latent is None:
        out["acceptance_ppi"] = acceptance_ppi(labels)
    if latent is not None:  # each rater's estimated accuracy per field, humans and judges
        out["rater_accuracy"] = latent.rater_accuracy()
        if latent.errors:
            out["latent_errors"] = dict(latent.errors)
    return out


def acceptance_ppi(labels: list[tuple[str | None, int | None, dict[str, int | None]]]) -> dict[str, Any]:
    """The acceptance rate over every item with each judge (PPI++, ``hvstats.ppi``):
    an item the people decided is labelled by their decision (1 accepted), one they have not
    (pending) is unlabelled; the judge's own verdict under the rule covers both. Beside it the
    rate among the decided items alone. Per judge: ``whole`` and, with a stratum, ``strata``."""
    judges = sorted({j for _, _, js in labels for j in js})
    strata = sorted({s for s, _, _ in labels if s is not None})
    return {
        j.rsplit("#", 1)[0]: {
            "whole": _acceptance_estimate(labels, j),
            "strata": {g: _acceptance_estimate([r for r in labels if r[0] == g], j) for g in strata},
        }
        for j in judges
    }


def _acceptance_estimate(
    rows: list[tuple[str | None, int | None, dict[str, int | None]]], judge: str
) -> dict[str, Any]:
    lab = [(h, js[judge]) for _, h, js in rows if h is not None and js.get(judge) is not None]
    unlab = [js[judge] for _, h, js in rows if h is None and js.get(judge) is not None]
    res = ppi_mean(
        np.array([h for h, _ in lab], dtype=float),
        np.array([y for _, y in lab], dtype=float),
        np.array(unlab, dtype=float),
    )
    res["n_decided_without_judge"] = sum(1 for _, h, js in rows if h is not None and js.get(judge) is None)
    return to_jsonable(res)


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
        for rows, _, verdicts in _verdicts(project, compiled, _latent_for(project, compiled)):
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
                    create.append(
                        ItemDecision(
                            item_id=item_id,
                            project=project,
                            status=v.status,
                            reason=v.reason,
                            details=v.details,
                            policy=spec,
                            decided_by=who,
                            decided_at=now,
                        )
                    )
                    events.append(
                        DecisionEvent(
                            item_id=item_id,
                            project=project,
                            status=v.status,
                            previous_status="",
                            reason=v.reason,
                            source="policy",
                            policy=spec,
                            user=who,
                        )
                    )
                    continue
                changed = d.status != v.status or d.source != ItemDecision.Source.POLICY
                if changed or d.reason != v.reason or d.policy != spec or d.details != v.details:
                    if changed:
                        events.append(
                            DecisionEvent(
                                item_id=item_id,
                                project=project,
                                status=v.status,
                                previous_status=d.status,
                                reason=v.reason,
                                source="policy",
                                policy=spec,
                                user=who,
                            )
                        )
                    d.status, d.reason, d.details, d.policy = v.status, v.reason, v.details, spec
                    d.source, d.note, d.decided_by, d.decided_at = ItemDecision.Source.POLICY, "", who, now
                    update.append(d)
            ItemDecision.objects.bulk_create(create)
            ItemDecision.objects.bulk_update(
                update, ["status", "reason", "details", "policy", "source", "note", "decided_by", "decided_at"]
            )
            DecisionEvent.objects.bulk_create(events)
            report.changed += len(events)
    report.counts = {s: counts.get(s, 0) for s in STATUSES}
    return report


def override_decision(*, item: Item, user: AbstractBaseUser, status: str, note: str) -> ItemDecision:
    """A researcher's manual decision on one item, with a required note; audited."""
    if status not in STATUSES:
        raise DomainError(f"unknown status {status!r}: use one of {', '.join(STATUSES)}")
    note = (note or "").strip()
    if not note:
        raise DomainError("a manual decision needs a note saying why")
    with transaction.atomic():
        d = ItemDecision.objects.select_for_update().filter(item=item).first()
        previous = d.status if d else ""
        if d is None:
            d = ItemDecision(item=item, project_id=item.project_id)
        d.status, d.source, d.note, d.decided_by, d.decided_at = (
            status,
            ItemDecision.Source.MANUAL,
            note[:5000],
            user,
            timezone.now(),
        )
        d.reason = f"manual decision by {user.get_username()}"
        d.save()
        DecisionEvent.objects.create(
            item=item,
            project_id=item.project_id,
            status=status,
            previous_status=previous,
            reason=d.reason,
            source="manual",
            note=d.note,
            user=user,
        )
    return d


# ------------------------------------------------------------------------------ revisions
def import_revisions(*, project: Project, data: bytes | str | Path, images: Path | None = None) -> ImportReport:
    """Re-import revised items (JSONL, the import format; the revision export's ``_revision`` key
    is ignored) as new versions of existing items: version = latest + 1, ``parent`` = the latest
    version. Image fields take a path in ``images`` (folder or zip) or ``sha256:<hex>`` of an
    image already stored in this project (an unchanged image). All or nothing; then assigned
    like any imported item (see :mod:`annotation.importing`, the one pipeline for both)."""
    return import_items(project=project, data=data, data_format="jsonl", images=images, revisions=True)


def import_revision_upload(
    *,
    project: Project,
    data_stream: Iterable[bytes],
    images_name: str | None = None,
    images_stream: Iterable[bytes] | None = None,
) -> ImportReport:
    """An uploaded revision file (page or API): staged to disk chunk by chunk through the item
    import's door (``HV_MAX_UPLOAD_BYTES`` for data and zip together, a zip for images), read
    as a stream, and deleted afterwards whatever happened. A refused upload raises DomainError
    and leaves nothing behind."""
    staged = stage_upload(
        data_name="revisions.jsonl", data_stream=data_stream, images_name=images_name, images_stream=images_stream
    )
    try:
        return import_revisions(project=project, data=staged.data_path, images=staged.images_path)
    finally:
        staged.discard()


# ------------------------------------------------------------------------------ exports
def start_export(
    *, project: Project, user: AbstractBaseUser | None, content: str, format: str, scope: str = "accepted"
) -> Export:
    """Validate the request, create the export row and hand it to a worker on commit."""
    contents, scopes = Export.Content.values, Export.Scope.values
    if content not in contents:
        raise DomainError(f"unknown export content {content!r}: use one of {', '.join(contents)}")
    why = export_formats.refusal(content, format)  # the registry says which formats exist and serve what
    if why is not None:
        raise DomainError(why)
    if scope not in scopes:
        raise DomainError(f"unknown scope {scope!r}: use one of {', '.join(scopes)}")
    with transaction.atomic():
        export = Export.objects.create(
            project=project, created_by=user if _real(user) else None, content=content, format=format, scope=scope
        )
        jobs.enqueue_on_commit(export)  # sent by curation.tasks's sender once this commits
    return export


def latest_version(project: Project, external_id: str) -> int:
    return Item.objects.filter(project=project, external_id=external_id).aggregate(m=Max("version"))["m"] or 0
