"""The study's provenance in an export: how the items were drawn (the design samples), how they
were handed out (the plans, with their quotas), which model judges rated them and how (backend,
model, prompt template, parser, parameters with secrets hidden, questions, passes, runs), and who
the annotators were as a group (their profile attributes, never who they are).

Identities stay out: annotators appear only as per-export pseudonyms in the data files, and their
attributes pass :func:`public_attributes` (nothing that names, mails or reaches a person, nothing
secret-named). Judge parameters and prompt templates pass ``judges.endpoints.public_params``
(secret-named values hidden), as everywhere parameters are shown. Hidden judges are left out, as
in every report and export."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.db.models import Count

from agreement.selectors import project_raters
from annotation.models import AnnotationImport, Project, Rater
from judges.endpoints import is_secret_name, public_params
from judges.models import JudgeConfig
from studies.models import AssignmentPlan, Sample

#: attribute names that identify a person rather than describe them (compared as lowercase words)
IDENTIFYING_WORDS = frozenset(
    {
        "email",
        "mail",
        "name",
        "username",
        "user",
        "phone",
        "mobile",
        "address",
        "pid",
        "participant",
        "ip",
        "ssn",
        "passport",
        "birthdate",
        "dob",
    }
)
EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", str(name))
    return [w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w]


def public_attribute(name: str, value: Any) -> bool:
    """Whether a profile attribute may leave the platform: a describing attribute (nationality,
    country, language, crowd), not one that identifies (``email``, ``prolific_pid``, ``name``...)
    or is secret-named, and not a value that is an e-mail address."""
    words = _words(name)
    if not words or any(w in IDENTIFYING_WORDS for w in words) or "email" in "".join(words):
        return False
    if is_secret_name(name):
        return False
    return not (isinstance(value, str) and EMAIL.search(value))


def public_attributes(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    """``attributes`` without the ones :func:`public_attribute` keeps back."""
    return {k: v for k, v in (attributes or {}).items() if public_attribute(str(k), v)}


def text_cell(v: Any) -> str | None:
    """A value as a text column holds it in every format: text as it is, anything else as JSON
    (``true``, ``2``, ``["a"]``), None as empty."""
    if v is None or isinstance(v, str):
        return v
    return json.dumps(v, ensure_ascii=False, sort_keys=True)


def _iso(t: datetime | None) -> str | None:
    # provenance is stored as JSON (the export row, Parquet metadata): times as ISO text
    return t.isoformat() if t is not None else None


def human_raters(project: Project) -> list[tuple[int, dict[str, Any]]]:
    """(rater id, public attributes) of the people who rated in the project."""
    return [
        (rid, public_attributes(attrs))
        for rid, attrs in project_raters(project).filter(kind=Rater.Kind.HUMAN).values_list("id", "attributes")
    ]


def attribute_keys(project: Project) -> list[str]:
    """The public attribute names of the project's annotators (the ``rater.<name>`` columns)."""
    return sorted({k for _, attrs in human_raters(project) for k in attrs})


def annotators(project: Project) -> dict[str, Any]:
    """The annotators as a group: how many, and how many per value of each public attribute."""
    raters = human_raters(project)
    counts: dict[str, Counter] = {}
    for _, attrs in raters:
        for k, v in attrs.items():
            counts.setdefault(k, Counter())[text_cell(v)] += 1
    return {
        "count": len(raters),
        "attributes": {k: dict(sorted(c.items())) for k, c in sorted(counts.items())},
        "identities": "pseudonymous: rater ids in the data files are per-export pseudonyms; no names or e-mails",
    }


def samples(project: Project) -> list[dict[str, Any]]:
    """Every design sample of the project: what it was drawn with and what it holds."""
    out = []
    for s in Sample.objects.filter(project=project).annotate(size=Count("members")).order_by("id"):
        report = s.report or {}
        out.append(
            {
                "id": s.id,
                "name": s.name,
                "seed": s.seed,
                "strata_keys": list(s.strata_keys or []),
                "allocation": s.allocation,
                "total_size": s.total_size,
                "per_stratum": s.per_stratum,
                "size": s.size,
                "population": report.get("population"),
                "strata": [
                    {k: st.get(k) for k in ("label", "available", "asked", "drawn")}
                    for st in report.get("strata") or []
                ],
                "created_at": _iso(s.created_at),
            }
        )
    return out


def plans(project: Project) -> list[dict[str, Any]]:
    """Every assignment plan: k, eligibility, the balance quotas, caps, and what it wrote."""
    out = []
    for p in AssignmentPlan.objects.filter(project=project).order_by("id"):
        report = p.report or {}
        out.append(
            {
                "id": p.id,
                "name": p.name,
                "sample": p.sample_id,
                "mode": p.mode,
                "status": p.status,
                "k": p.k,
                "eligibility": p.eligibility,
                "balance": p.balance,
                "cap_per_annotator": p.cap_per_annotator,
                "seed": p.seed,
                "items": report.get("items"),
                "slots": report.get("slots"),
                "unstaffable_items": report.get("unstaffable_items", []),
                "created_at": _iso(p.created_at),
            }
        )
    return out


def judges(project: Project) -> list[dict[str, Any]]:
    """Every judge configuration (hidden ones left out) with its runs."""
    configs = (
        JudgeConfig.objects.filter(project=project, hidden=False)
        .select_related("rater")
        .prefetch_related("members", "runs")
        .order_by("id")
    )
    out = []
    for c in configs:
        out.append(
            {
                "id": c.id,
                "name": c.name,
                "backend": c.backend,
                "model": c.model_id,
                "prompt_template": public_params(c.prompt_template),
                "prompt_hash": c.rater.prompt_hash,
                "parser": c.parser,
                "params": public_params(c.params),
                "questions": list(c.questions or []),
                "passes": c.passes,
                "both_orders": c.both_orders,
                "combine": c.combine,
                "members": sorted(m.name for m in c.members.all()),
                "runs": [
                    {
                        "id": r.id,
                        "status": r.status,
                        "scope": r.scope,
                        "sample": r.sample_id,
                        "stratum": r.stratum,
                        "items": r.total,
                        "created_at": _iso(r.created_at),
                        "finished_at": _iso(r.finished_at),
                    }
                    for r in sorted(c.runs.all(), key=lambda r: r.id)
                ],
            }
        )
    return out


def other_model_raters(project: Project) -> list[dict[str, Any]]:
    """Model raters without a judge configuration (imported judge outputs), as they are stored."""
    rows = (
        project_raters(project)
        .filter(kind=Rater.Kind.MODEL, judge_config__isnull=True)
        .order_by("id")
        .values_list("name", "backend", "model_id", "prompt_hash", "parameters")
    )
    return [
        {"name": n, "backend": b, "model": m, "prompt_hash": h, "params": public_params(p or {})}
        for n, b, m, h, p in rows
    ]


def annotation_imports(project: Project) -> list[dict[str, Any]]:
    """Every completed import of human annotations made in another tool: the file's SHA-256,
    name, format, item key and mapping, and what it added (the rows marked ``imported:<id>`` in
    the annotations table). Source annotator ids stay out, as every identity does."""
    out = []
    # a preview job (issue 37, M3) imported nothing: no provenance of the data
    for job in AnnotationImport.objects.filter(
        project=project, status=AnnotationImport.Status.DONE, preview=False
    ).order_by("id"):
        report = job.report or {}
        out.append(
            {
                "id": job.id,
                "source": job.source_label,
                "file": job.original_name,
                "sha256": job.sha256,
                "format": job.data_format,
                "item_key": job.item_key,
                "mapping": report.get("mapping") or {},
                "explicit_mapping": job.mapping or {},
                "annotations": report.get("annotations_created", 0),
                "raters": report.get("raters", 0),
                "skipped_cancelled": report.get("skipped_cancelled", 0),
                "duplicate_of": report.get("duplicate_of"),
                "imported_at": _iso(job.finished_at),
            }
        )
    return out


def study_provenance(project: Project) -> dict[str, Any]:
    """The study's part of an export's ``provenance.json``."""
    return {
        "design": {"samples": samples(project), "plans": plans(project)},
        "judges": judges(project),
        "other_model_raters": other_model_raters(project),
        "annotators": annotators(project),
        "annotation_imports": annotation_imports(project),
    }
