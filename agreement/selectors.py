"""Reads for the agreement reports: database rows -> the long-format table of the pure core.

``ratings_frame(project)`` is the adapter between the human side (items, raters, annotations
with JSON answers) and :mod:`hvstats` (a long table ``item, rater, rater_kind, field,
value`` plus strata columns). It reads ``values_list`` rows in chunks and never builds model
instances, so 100k items x 5 raters stays a few hundred MB at most.

Fields, from the project's current rubric:

- ``scale`` / ``binary`` answers: numbers (scale -> ordinal, binary -> nominal).
- ``choice`` answers: nominal labels (the option value as text).
- ``pairwise`` answers: the *item field* the rater picked (or ``"tie"``), resolved through the
  assignment's presentation order, so "left"/"right" never leak into the statistics.
- ``checklist``: one binary field per flag, ``flags:<value>`` = 1 if ticked, else 0. A model
  judge rates only the flags and questions it decides (:mod:`judges.decides`): the others, and
  the derived fields that read them, are missing for it, never 0.
- repeated questions (one answer per element of a list field): one field per element,
  ``<id>[<n>]`` (1-based), **and** a pooled field ``<id>[*]`` whose unit is the
  (item, element) pair: its ``item`` column is ``"<item>#<n>"``, so coefficients pool all
  elements and the bootstrap resamples (item, element) units. That is the convention of
  CQ-Bench-style "per value" judgements; it ignores the clustering of elements within an
  item (intervals are then slightly too narrow when elements of one item are correlated).
- numeric derived fields (bools as 0/1, including ``accepted``): interval unless they take
  at most 10 integer values, then ordinal (the core's inference).
- ``text`` answers are excluded.

The stored JSON is read by :func:`annotation.answers.flatten_answers`, the reader the exports
and the acceptance policy share, with ``exact=True``: a combined (ensemble / mean-of-passes)
judge counts with its exact mean scores, where the exports hold its stored, rounded answer.

Only submitted annotations of regular assignments count (one per item and rater: repeats,
gold and attention assignments would otherwise give duplicate ratings), and never those of a
judge the researcher hid (``JudgeConfig.hidden``): every report, validation table, policy and
export reads :func:`submitted_annotations`, so a hidden judge leaves them all at once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd
from django.db.models import Count, Max, QuerySet

from annotation.answers import flatten_answers
from annotation.models import Annotation, AnnotationImport, Assignment, Item, Project, Rater
from annotation.rubric import Question, Rubric
from annotation.sources import registry
from benchmarks.base import STRATA_KEYS
from judges.decides import rater_decides
from judges.models import JudgeConfig
from studies import quality
from studies.models import AssignmentPlan, Sample

CHUNK = 5_000
RESERVED = {"item", "rater", "rater_kind", "field", "value", "external_id", "item_pk", "element"}
POOLED_SUFFIX = "[*]"


def hidden_rater_ids(project: Project) -> list[int]:
    """The model raters of the project's hidden judges: kept, but read by no report or export."""
    return list(
        Rater.objects.filter(judge_config__project=project, judge_config__hidden=True).values_list("id", flat=True)
    )


def submitted_annotations(project: Project) -> QuerySet[Annotation]:
    qs = Annotation.objects.filter(
        item__project=project,
        assignment__status=Assignment.Status.SUBMITTED,
        assignment__purpose=Assignment.Purpose.REGULAR,
    )
    hidden = hidden_rater_ids(project)
    return qs.exclude(rater_id__in=hidden) if hidden else qs


def project_raters(project: Project) -> QuerySet[Rater]:
    """Every rater with an annotation in the project but the hidden judges' (one list, so the
    frame, the profiles and the slot order name raters alike)."""
    qs = Rater.objects.filter(annotations__item__project=project).distinct()
    hidden = hidden_rater_ids(project)
    return qs.exclude(pk__in=hidden) if hidden else qs


def annotation_count(project: Project) -> int:
    return submitted_annotations(project).count()


def annotations_signature(project: Project) -> str:
    """Changes whenever an annotation is added or edited: the cache key of stored reports."""
    agg = submitted_annotations(project).aggregate(n=Max("id"), t=Max("updated_at"))
    return f"{annotation_count(project)}:{agg['n']}:{agg['t'].isoformat() if agg['t'] else ''}"


def report_fingerprint(project: Project) -> str:
    """What a stored report was computed from, cheaply (one pass over the project's submitted
    annotations, grouped by rater, and four small reads; no answer is read): per rater the
    submitted annotations' count, last id and last edit (a rating added, edited, or its
    assignment no longer submitted and regular), the raters' names, kinds, backends, attributes
    and judges' short labels (the tables' judge labels, annotator groups), the hidden judges, the
    rubric version, the items (count, last id) and the samples (active estimates). A stored
    report is current only while this is unchanged; its parameters are keyed separately."""
    per_rater = sorted(
        (r["rater_id"], r["n"], r["last"], r["t"].isoformat() if r["t"] else "")
        for r in submitted_annotations(project)
        .order_by()
        .values("rater_id")
        .annotate(n=Count("id"), last=Max("id"), t=Max("updated_at"))
    )
    raters = sorted(
        Rater.objects.filter(pk__in=[r[0] for r in per_rater]).values_list(
            "id", "name", "kind", "backend", "attributes", "judge_config__short_label"
        )
    )
    parts = {
        "annotations": per_rater,
        "raters": raters,
        "hidden": sorted(hidden_rater_ids(project)),
        "rubric": project.rubric_version_id,
        # items are revised as new versions (new rows), never edited in place: their count and
        # last id say when the strata a report breaks down by may have changed
        "items": list(Item.objects.filter(project=project).aggregate(n=Count("id"), last=Max("id")).values()),
        "samples": list(Sample.objects.filter(project=project).order_by("id").values_list("id", "design")),
    }
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:32]
    return f"{sum(r[1] for r in per_rater)}:{max((r[2] for r in per_rater), default=0)}:{digest}"


def _meta_column(key: str) -> str:
    return f"meta_{key}" if key in RESERVED or key in STRATA_KEYS else key


def base_field(field: str) -> str:
    """``q[3]`` / ``q[*]`` -> ``q``; ``flags:f1`` -> ``flags``."""
    return field.split("[", 1)[0].split(":", 1)[0]


def field_level(rubric: Rubric, field: str) -> str | None:
    """Measurement level of a frame field from the rubric; None = let the core infer it."""
    base = base_field(field)
    for q in rubric.questions:
        if q.id == base:
            # Binary answers and checklist flags are two-point scales: ordinal alpha and kappa
            # equal their nominal values there (the one disagreement weight cancels), and the
            # judge-vs-human correlations (phi) become available, as ValueGround Table 4 needs.
            if q.type in ("scale", "binary", "checklist"):
                return "ordinal"
            return "nominal"  # choice, pairwise
    return None  # derived: inferred from the values


def ratings_frame(project: Project, *, include_models: bool = True) -> pd.DataFrame:
    """The project's submitted ratings as the long table :func:`hvstats.agreement_report`
    expects (see the module docstring for the field conventions).

    Columns: ``item`` (item pk as text; ``"<pk>#<n>"`` for pooled repeat fields), ``item_pk``,
    ``external_id``, ``rater``, ``rater_kind``, ``field``, ``value``, ``element`` (1-based,
    0 when not repeated), the strata columns and one column per scalar ``Item.meta`` key."""
    rubric = project.rubric_version.parsed()
    has_pairwise = any(q.type == "pairwise" for q in rubric.questions)

    # items: strata once per item, joined by position later
    item_pos: dict[int, int] = {}
    item_pk: list[int] = []
    ext: list[str] = []
    strata: dict[str, list[str]] = {c: [] for c in STRATA_KEYS}
    metas: list[dict[str, Any]] = []
    meta_keys: dict[str, None] = {}
    rows = (
        Item.objects.filter(project=project)
        .order_by()
        .values_list("id", "external_id", *STRATA_KEYS, "meta")
        .iterator(chunk_size=CHUNK)
    )
    for row in rows:
        item_pos[row[0]] = len(item_pk)
        item_pk.append(row[0])
        ext.append(row[1])
        for c, v in zip(STRATA_KEYS, row[2:7], strict=True):
            strata[c].append(v or "")
        meta = {k: v for k, v in (row[7] or {}).items() if isinstance(v, (str, int, float, bool))}
        metas.append(meta)
        for k in meta:
            meta_keys.setdefault(k, None)

    raters = list(project_raters(project).values_list("id", "name", "kind", "parameters", "backend"))
    # A judge decides only its questions and, of a checklist, the flags it assesses (the Table 3
    # classifiers, the CLIP / SSIM filter: judges/decides.py); what it does not decide is missing
    # for it, not its "no": left out of its ratings, with the derived fields that read it.
    preset = project.preset
    decides_of = {
        rid: rater_decides(kind=kind, backend=backend or "", parameters=params, preset=preset)
        for rid, _, kind, params, backend in raters
    }
    raters = [(rid, name, kind) for rid, name, kind, _, _ in raters]
    rater_list = sorted(set(raters), key=lambda r: (r[2] != "human", r[1], r[0]))
    rater_pos = {rid: k for k, (rid, _, _) in enumerate(rater_list)}
    rater_name = unique_rater_names(rater_list)
    rater_kind = [kind for _, _, kind in rater_list]
    rater_decides_list = [decides_of.get(rid) for rid, _, _ in rater_list]
    rater_undecided = [d.undecided(rubric) if d is not None else frozenset() for d in rater_decides_list]

    fields: dict[str, int] = {}
    col_item: list[int] = []
    col_rater: list[int] = []
    col_field: list[int] = []
    col_elem: list[int] = []
    col_value: list[Any] = []

    def add(ip: int, rp: int, fname: str, elem: int, value: Any) -> None:
        fi = fields.get(fname)
        if fi is None:
            fi = fields[fname] = len(fields)
        col_item.append(ip)
        col_rater.append(rp)
        col_field.append(fi)
        col_elem.append(elem)
        col_value.append(value)

    def emit(ip: int, rp: int, fid: str, q: Question, v: Any, elem: int) -> None:
        if q.type == "checklist":
            ticked = set(v or [])
            decides = rater_decides_list[rp]
            options = decides.options(q) if decides is not None else q.option_values()
            for opt in options:
                add(ip, rp, f"{fid}:{opt}", elem, 1 if opt in ticked else 0)
        elif v is not None and not isinstance(v, bool):
            add(ip, rp, fid, elem, v if q.type in ("scale", "binary") else str(v))
        elif isinstance(v, bool):
            add(ip, rp, fid, elem, int(v))

    has_acceptance = rubric.acceptance is not None
    qs = submitted_annotations(project)
    if not include_models:
        qs = qs.filter(rater__kind=Rater.Kind.HUMAN)
    cols = ["item_id", "rater_id", "answers", "derived"] + (["assignment__presentation"] if has_pairwise else [])
    for row in qs.order_by().values_list(*cols).iterator(chunk_size=CHUNK):
        ip = item_pos.get(row[0])
        rp = rater_pos.get(row[1])
        if ip is None or rp is None:
            continue
        # An ensemble judge stores the option nearest its members' mean as its answer (answers
        # must be valid rubric options) and the exact mean beside it: statistics use the mean,
        # as the papers do ("scores averaged"); exports keep the stored answer (exact=False).
        cells = flatten_answers(
            rubric, row[2], row[3], row[4] if has_pairwise else None, exact=True, text=False, missing=True
        )
        undecided = rater_undecided[rp]
        for fname, n, v, src in cells:
            if undecided and (src.id if src is not None else fname) in undecided:
                continue  # a question, derived field or verdict this judge does not decide
            if src.__class__ is Question:
                if n is not None:  # one element of a repeated question: its own field and the pooled one
                    emit(ip, rp, fname, src, v, n)
                    emit(ip, rp, f"{src.id}{POOLED_SUFFIX}", src, v, n)
                elif not src.repeat_over:  # (a repeated question whose stored answer is not a list: none)
                    emit(ip, rp, fname, src, v, 0)
            elif src is None:  # accepted
                if has_acceptance and isinstance(v, bool):
                    add(ip, rp, fname, 0, int(v))
            else:  # derived
                if isinstance(v, bool):
                    v = int(v)
                if isinstance(v, (int, float)) and np.isfinite(v):
                    add(ip, rp, fname, 0, v)
    return _assemble(
        col_item,
        col_rater,
        col_field,
        col_elem,
        col_value,
        list(fields),
        item_pk,
        ext,
        strata,
        metas,
        list(meta_keys),
        rater_name,
        rater_kind,
    )


#: the prefix of a judge rater's stored name (``judges.configuration.create_judge_config``)
JUDGE_PREFIX = "judge: "


def unique_rater_names(rater_list: list[tuple[int, str, str]]) -> list[str]:
    """The frame's rater names of ``(id, name, kind)`` rows: the name, or ``name#id`` where two
    raters of the project share a name."""
    names: dict[str, int] = {}
    for _, name, _ in rater_list:
        names[name] = names.get(name, 0) + 1
    return [name if names[name] == 1 else f"{name}#{rid}" for rid, name, _ in rater_list]


def rater_profiles(project: Project) -> dict[str, dict[str, Any]]:
    """Frame rater name -> ``{"kind", "attributes", "backend", "label"}`` of every rater with an
    annotation in the project (the names :func:`ratings_frame` gives them). ``label`` is what
    tables and pages call the rater: a judge's short label (``judges/labels.py``), else the name
    without the stored ``judge: `` prefix (a badge marks a judge on the pages, issue 35); the
    frame name itself when that label would be another rater's too."""
    rows = list(
        project_raters(project).values_list("id", "name", "kind", "attributes", "backend", "judge_config__short_label")
    )
    rows.sort(key=lambda r: (r[2] != "human", r[1], r[0]))
    names = unique_rater_names([(r[0], r[1], r[2]) for r in rows])
    wanted = [
        (r[5] or n.removeprefix(JUDGE_PREFIX)) if r[2] == Rater.Kind.MODEL else n
        for n, r in zip(names, rows, strict=True)
    ]
    counts: dict[str, int] = {}
    for w in wanted:
        counts[w] = counts.get(w, 0) + 1
    return {
        n: {
            "kind": r[2],
            "attributes": r[3] or {},
            "backend": r[4] or "",
            "label": w if counts[w] == 1 and (w == n or w not in names) else n,
        }
        for n, r, w in zip(names, rows, wanted, strict=True)
    }


def assignment_order(project: Project) -> dict[tuple[int, str], int]:
    """``(item pk, frame rater name) -> assignment id`` of every submitted regular annotation:
    the order in which the item's raters were assigned, from which the validation tables derive
    the slot each rating filled (first, second, ... rater of the item; see
    ``hvstats.validation.ValidationInput.by_slot``). Read at report time, not stored."""
    rows = list(project_raters(project).values_list("id", "name", "kind"))
    rows.sort(key=lambda r: (r[2] != "human", r[1], r[0]))
    name_of = dict(zip((r[0] for r in rows), unique_rater_names(rows), strict=True))
    return {
        (item_id, name_of[rater_id]): assignment_id
        for item_id, rater_id, assignment_id in submitted_annotations(project)
        .order_by()
        .values_list("item_id", "rater_id", "assignment_id")
        .iterator(chunk_size=CHUNK)
        if rater_id in name_of
    }


def _assemble(
    col_item,
    col_rater,
    col_field,
    col_elem,
    col_value,
    field_names,
    item_pk,
    ext,
    strata,
    metas,
    meta_keys,
    rater_name,
    rater_kind,
) -> pd.DataFrame:
    ii = np.asarray(col_item, dtype=np.int64)
    rr = np.asarray(col_rater, dtype=np.int64)
    ff = np.asarray(col_field, dtype=np.int64)
    ee = np.asarray(col_elem, dtype=np.int64)
    pk = np.asarray(item_pk, dtype=np.int64)
    pooled = np.array([f.endswith(POOLED_SUFFIX) for f in field_names], dtype=bool)
    item_txt = pk.astype(str).astype(object)
    item_col = item_txt[ii] if len(ii) else np.array([], dtype=object)
    if len(ii) and pooled.any():
        pm = pooled[ff]
        item_col = item_col.copy()
        item_col[pm] = [f"{a}#{b}" for a, b in zip(item_col[pm], ee[pm], strict=True)]
    data: dict[str, Any] = {
        "item": item_col,
        "item_pk": pk[ii] if len(ii) else np.array([], dtype=np.int64),
        "external_id": np.asarray(ext, dtype=object)[ii] if len(ii) else np.array([], dtype=object),
        "rater": np.asarray(rater_name, dtype=object)[rr] if len(rr) else np.array([], dtype=object),
        "rater_kind": np.asarray(rater_kind, dtype=object)[rr] if len(rr) else np.array([], dtype=object),
        "field": np.asarray(field_names, dtype=object)[ff] if len(ff) else np.array([], dtype=object),
        "value": np.asarray(col_value, dtype=object) if col_value else np.array([], dtype=object),
        "element": ee,
    }
    for c in STRATA_KEYS:
        data[c] = np.asarray(strata[c], dtype=object)[ii] if len(ii) else np.array([], dtype=object)
    for k in meta_keys:
        vals = np.asarray(["" if m.get(k) is None else str(m.get(k)) for m in metas], dtype=object)
        data[_meta_column(k)] = vals[ii] if len(ii) else np.array([], dtype=object)
    return pd.DataFrame(data)


def strata_columns(frame: pd.DataFrame) -> list[str]:
    """Columns a report may be broken down ``by``: the item strata and meta keys that vary."""
    skip = {"item", "item_pk", "external_id", "rater", "rater_kind", "field", "value", "element"}
    return [c for c in frame.columns if c not in skip and frame[c].nunique() > 1]


def items_by_pk(pks: Iterable[int]) -> dict[int, dict[str, Any]]:
    """External id and strata of a few items (drill-down rows)."""
    return {r["id"]: r for r in Item.objects.filter(pk__in=list(pks)).values("id", "external_id", *STRATA_KEYS)}


def actual_k(project: Project) -> dict[str, Any]:
    """How many people actually rated each item (the ``k`` a study reached, which for ratings
    imported from another tool is not the preset's default): distinct human raters with an
    annotation per rated item, as ``{"items", "min", "median", "max"}`` (None when nothing is rated)."""
    per_item = (
        Annotation.objects.filter(item__project=project, rater__kind=Rater.Kind.HUMAN)
        .values("item_id")
        .annotate(raters=Count("rater_id", distinct=True))
        .values_list("raters", flat=True)
    )
    counts = sorted(per_item)
    if not counts:
        return {"items": 0, "min": None, "median": None, "max": None}
    median = float(np.median(counts))
    return {
        "items": len(counts),
        "min": counts[0],
        "median": int(median) if median.is_integer() else median,
        "max": counts[-1],
    }


def imported_ratings(project: Project) -> list[dict[str, Any]]:
    """The imports that brought people's ratings from another tool, oldest first: the file, the
    tool's format (its reader's label), the item key, and how many annotations and raters each added."""
    out = []
    # a preview job (issue 37, M3) imported nothing: no provenance of the data
    for job in AnnotationImport.objects.filter(
        project=project, status=AnnotationImport.Status.DONE, preview=False
    ).order_by("id"):
        report = job.report or {}
        if not report.get("annotations_created"):
            continue  # a duplicate of an earlier import added nothing
        reader = registry.READERS.get(job.data_format)
        out.append(
            {
                "id": job.id,
                "source": job.source_label,
                "file": job.original_name,
                "format": job.data_format,
                "format_label": str(reader.label) if reader else job.data_format,
                "item_key": job.item_key,
                "annotations": report.get("annotations_created", 0),
                "raters": report.get("raters", 0),
                "imported_at": job.finished_at,
            }
        )
    return out


def study_settings(project: Project) -> dict[str, Any]:
    """The study's settings the printable report states beside its tables (issue 25): k, the
    samples, the plans, quality control and the judges shown in the reports, with their settings.
    Plain values, newest first, read here once for the page."""
    samples = [
        {
            "name": s.name,
            "strata": list(s.strata_keys),
            "allocation": s.allocation,
            "total_size": s.total_size,
            "per_stratum": s.per_stratum,
            "seed": s.seed,
            "drawn": (s.report or {}).get("total_drawn"),
        }
        for s in Sample.objects.filter(project=project).order_by("-created_at")
    ]
    plans = [
        {
            "name": p.name,
            "sample": p.sample.name,
            "mode": p.mode,
            "status": p.status,
            "k": p.k,
            "eligibility": list(p.eligibility or []),
            "balance": dict(p.balance or {}),
            "cap_per_annotator": p.cap_per_annotator,
            "seed": p.seed,
        }
        for p in AssignmentPlan.objects.filter(project=project).select_related("sample").order_by("-created_at")
    ]
    judges = [
        {
            "name": j.name,
            "backend": j.backend,
            "model_id": j.model_id,
            "questions": list(j.questions or []),
            "params": dict(j.params or {}),
            "passes": j.passes,
            "combine": j.combine,
            "both_orders": j.both_orders,
            "members": [m.name for m in j.members.all()],
        }
        for j in JudgeConfig.objects.filter(project=project, hidden=False).prefetch_related("members").order_by("name")
    ]
    return {
        "k": project.k_per_item,
        "actual_k": actual_k(project),
        "imports": imported_ratings(project),
        "samples": samples,
        "plans": plans,
        "qc_enabled": quality.qc_enabled(project),
        "qc": quality.qc_settings(project),
        "judges": judges,
    }


def main_fields(fields: list[str]) -> list[str]:
    """The fields a judge's one answer is over: a per-element field (``q[1]``) counts through its
    pooled ``q[*]``, as on the verdict panel, so that no question is counted twice."""
    return [f for f in fields if not ("[" in f and not f.endswith("[*]"))]
