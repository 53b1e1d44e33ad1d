"""Agreement reports of a project, stored and served while current (issue 35): a small project's
first report is computed inline, every other one on a worker, the last good one shown meanwhile.

The numbers come only from :func:`hvstats.agreement_report`, called once per field on
:func:`agreement.selectors.ratings_frame` with the field's level from the rubric; this module
adds what a report page needs around them (the judge-vs-mean-human scatter / confusion data
and the items where judge and humans disagree most) and the stored-job workflow.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.models import Project
from core import csvsafe, jobs
from core.errors import DomainError
from hvstats import agreement_report
from hvstats.alt_test import DEFAULT_EPSILON, EPSILON_GUIDANCE, EPSILON_RANGE, MIN_ITEMS_PER_HUMAN, valid_epsilon
from hvstats.data import infer_level
from hvstats.report import joint_alt_tests
from hvstats.tables import Table
from hvstats.validation import MIN_RATER_ITEMS, judge_label

from . import active, conclusions, selectors, validation
from .models import AgreementReport

MAX_BOOTSTRAP = 10_000
#: the largest minimum number of items per rater a report accepts
MAX_MIN_RATER_ITEMS = 100_000
DRILLDOWN_ROWS = 25
MAX_SCATTER_POINTS = 2_000
#: the verdicts every platform report carries per judge (``agreement_report(verdicts=...)``)
VERDICTS = ("alt_test", "ppi")


@dataclass(frozen=True)
class ReportParams:
    field: str | None = None  # None: every field
    by: str | None = None  # a stratum column, or None
    bootstrap: int = 1000
    seed: int = 0
    # the alt-test's cost-benefit margin (paper's guidance: 0.2 expert, 0.15 skilled, 0.1 crowd)
    epsilon: float = DEFAULT_EPSILON
    # the CI half-width the budget advice aims at (None: no advice)
    half_width: float | None = None
    # also one alt-test per judge over all fields (or, with ``by``, all strata) with one FDR
    # correction (the paper's "several environments")
    joint: bool = False
    # the least number of rated items for a rater to enter the validation tables' human
    # agreement ceilings and slots (``hvstats.validation.MIN_RATER_ITEMS``: the alt-test's 30)
    min_rater_items: int = MIN_RATER_ITEMS
    # "Does the benchmark's conclusion hold?": the item stratum whose values are the systems
    # (None: the preset's) and a named comparison "column: A, B vs C" (None: the preset's)
    system: str | None = None
    finding: str | None = None

    @classmethod
    def parse(
        cls,
        *,
        field: Any = None,
        by: Any = None,
        bootstrap: Any = None,
        seed: Any = None,
        epsilon: Any = None,
        half_width: Any = None,
        joint: Any = None,
        min_rater_items: Any = None,
        system: Any = None,
        finding: Any = None,
    ) -> ReportParams:
        """Validate raw (query-string) values; raises DomainError with a clear message."""
        try:
            b = 1000 if bootstrap in (None, "") else int(bootstrap)
            s = 0 if seed in (None, "") else int(seed)
            m = MIN_RATER_ITEMS if min_rater_items in (None, "") else int(min_rater_items)
        except (TypeError, ValueError):
            raise DomainError("bootstrap, seed and min_rater_items must be whole numbers") from None
        if not 0 <= m <= MAX_MIN_RATER_ITEMS:
            raise DomainError(f"min_rater_items must be between 0 and {MAX_MIN_RATER_ITEMS}")
        if not 0 <= b <= MAX_BOOTSTRAP:
            raise DomainError(f"bootstrap must be between 0 and {MAX_BOOTSTRAP}")
        if s < 0:
            raise DomainError("seed must be zero or positive")
        e = _number(epsilon, "epsilon", DEFAULT_EPSILON)
        if not valid_epsilon(e):
            raise DomainError(f"epsilon must be between 0 and 1 (0 included, 1 not: {EPSILON_RANGE}); {_EPSILON_HINT}")
        w = _number(half_width, "half_width", None)
        if w is not None and not w > 0:
            raise DomainError("half_width must be a positive number (the CI half-width to plan for)")
        return cls(
            field=str(field) if field else None,
            by=str(by) if by else None,
            bootstrap=b,
            seed=s,
            epsilon=e,
            half_width=w,
            joint=str(joint).lower() in ("1", "true", "on", "yes"),
            min_rater_items=m,
            system=_short_text(system, "system"),
            finding=_short_text(finding, "finding"),
        )

    @classmethod
    def from_query(cls, q: Any) -> ReportParams:
        """:meth:`parse` of a request's query string (the page and the API read the same keys)."""
        keys = (
            "field",
            "by",
            "bootstrap",
            "seed",
            "epsilon",
            "half_width",
            "joint",
            "min_rater_items",
            "system",
            "finding",
        )
        return cls.parse(**{k: q.get(k) for k in keys})

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


_EPSILON_HINT = "the paper's guidance: " + ", ".join(f"{v} for {k} annotators" for k, v in EPSILON_GUIDANCE.items())


#: the longest system stratum or finding a report accepts
MAX_TEXT = 500


def _short_text(raw: Any, name: str) -> str | None:
    text = str(raw).strip() if raw not in (None, "") else ""
    if len(text) > MAX_TEXT:
        raise DomainError(f"{name} must be at most {MAX_TEXT} characters")
    return text or None


def _number(raw: Any, name: str, default: float | None) -> float | None:
    if raw in (None, ""):
        return default
    try:
        v = float(raw)
    except (TypeError, ValueError):
        raise DomainError(f"{name} must be a number") from None
    if not math.isfinite(v):
        raise DomainError(f"{name} must be a finite number")
    return v


def inline_max() -> int:
    return int(settings.HV_AGREEMENT_INLINE_MAX)


# ------------------------------------------------------------------------------ computing
def compute_report(
    *,
    project: Project,
    params: ReportParams,
    frame: pd.DataFrame | None = None,
    progress: Callable[[float], None] | None = None,
) -> dict[str, Any]:
    """The project's agreement report as a JSON-safe dict.

    ``fields[f]`` is exactly ``agreement_report(frame, fields=[f], level=<rubric level>, by=[by],
    bootstrap, seed, verdicts=VERDICTS, epsilon, half_width)["fields"][f]``, so each judge's
    entry ``judges_vs_humans[judge]`` carries the alt-test (``alt_test``) and, for numeric and
    binary fields, the PPI++ mean (``ppi``, with the budget advice when ``half_width`` is set)
    under the keys the ``agreement`` command writes; ``notes`` are the fields' notes
    (``hvstats.notes``: no variation, one category, too few humans, no common item, small samples,
    exact intervals), as the command's ``"notes"``; ``answers`` is one answer per judge over the
    fields (``hvstats.answers``, as the command's ``"answers"``); ``drilldown[f][judge]`` holds the judge-vs-mean-human
    scatter (numeric fields) or confusion table (nominal fields) and the items where the judge
    and the humans disagree most."""
    frame = selectors.ratings_frame(project) if frame is None else frame
    rubric = project.rubric_version.parsed()
    available = list(dict.fromkeys(frame["field"].tolist())) if len(frame) else []
    strata = selectors.strata_columns(frame) if len(frame) else []
    if params.field and params.field not in available:
        raise DomainError(f"unknown field {params.field!r}; fields with ratings: {', '.join(available) or 'none'}")
    if params.by and params.by not in frame.columns:
        raise DomainError(f"unknown stratum column {params.by!r}; choose one of: {', '.join(strata) or 'none'}")
    fields = [params.field] if params.field else available
    by = [params.by] if params.by else []
    out: dict[str, Any] = {
        "project": project.id,
        "params": params.as_dict(),
        "n_ratings": len(frame),
        "n_items": int(frame["item_pk"].nunique()) if len(frame) else 0,
        "raters": _raters(frame),
        "available_fields": available,
        "available_strata": strata,
        "levels": {},
        "fields": {},
        "drilldown": {},
        # what makes a number uninformative or rough (hvstats.notes), as the command's "notes"
        "notes": [],
    }
    profiles = selectors.rater_profiles(project)
    out["judge_labels"] = {
        name: judge_label(p["label"], p["backend"]) for name, p in profiles.items() if p["kind"] == "model"
    }
    for r in out["raters"]:  # what the page calls each rater (a judge by its short label)
        r["label"] = out["judge_labels"].get(r["name"], r["name"])
    # "Does the benchmark's conclusion hold?" (hvstats.systems): one computation for the page,
    # the printable report and the validation tables
    out["conclusions"] = conclusions.project_conclusions(
        project, frame=frame, system=params.system, finding=params.finding, bootstrap=params.bootstrap, seed=params.seed
    )
    if not params.field and validation.has_tables(project):
        # the protocol's tables ride with the full report (same frame, bootstrap and seed), so a
        # large project's worker computes them too and the page shows them from the stored result
        tables = validation.compute_tables(
            project,
            bootstrap=params.bootstrap,
            seed=params.seed,
            frame=frame,
            epsilon=params.epsilon,
            min_rater_items=params.min_rater_items,
            conclusions=out["conclusions"],
        )
        out["validation"] = [t.to_dict() for t in tables]
    if not params.field and active.has_active(project):
        out["active"] = active.estimates(project, frame)
    if params.joint and len(frame):
        sub = frame[frame["field"].isin(fields)]
        levels = {f: lv for f in fields if (lv := selectors.field_level(rubric, f))}
        out["alt_test_joint"] = joint_alt_tests(sub, levels, params.by, params.epsilon)
    groups = frame.groupby("field", sort=False).indices if len(frame) else {}
    for k, f in enumerate(fields):
        sub = frame.iloc[groups[f]].reset_index(drop=True)
        level = selectors.field_level(rubric, f) or infer_level(sub["value"].tolist())
        out["levels"][f] = level
        rep = agreement_report(
            sub,
            fields=[f],
            level=level,
            by=by,
            bootstrap=params.bootstrap,
            seed=params.seed,
            verdicts=VERDICTS,
            epsilon=params.epsilon,
            half_width=params.half_width,
        )
        out["fields"][f] = rep["fields"][f]
        out["notes"] += rep.get("notes", [])
        out["drilldown"][f] = judge_drilldown(sub, level)
        if progress is not None:
            progress((k + 1) / len(fields))
    out["answers"] = _answers(frame, fields, out["levels"], params.epsilon)
    return out


def _answers(frame: pd.DataFrame, fields: list[str], levels: dict[str, str], epsilon: float) -> list[dict[str, Any]]:
    """One answer per judge over the report's main fields (``validation.answers_of``: can it
    replace the annotators, on which fields, how sure), the same as ``manage.py agreement``'s
    ``"answers"`` and the validation report's."""
    if not len(frame):
        return []
    return validation.answers_of(frame[frame["field"].isin(fields)], levels, epsilon)


def _raters(frame: pd.DataFrame) -> list[dict[str, str]]:
    if not len(frame):
        return []
    kinds = frame.groupby("rater", sort=True)["rater_kind"].first()
    return [{"name": r, "kind": k} for r, k in kinds.items()]


def judge_drilldown(sub: pd.DataFrame, level: str) -> dict[str, Any]:
    """Per judge (model rater) of one field: the items where judge and humans disagree most,
    plus the scatter points (numeric levels: judge value vs mean human, with counts) or the
    confusion table (nominal and two-point fields: judge label vs human majority label; tied
    majorities left out)."""
    humans = sorted(sub.loc[sub["rater_kind"] == "human", "rater"].unique().tolist())
    judges = sorted(sub.loc[sub["rater_kind"] == "model", "rater"].unique().tolist())
    if not judges or not humans:
        return {}
    # A two-point field (binary answers, checklist flags) is shown as a confusion table even
    # at the ordinal level; a scatter of 0/1 points says nothing.
    num = pd.to_numeric(sub["value"], errors="coerce")
    two_point = bool(num.notna().all() and set(num.unique()) <= {0, 1})
    numeric = level != "nominal" and not two_point
    val = num if numeric else sub["value"].astype(str)
    wide = pd.DataFrame({"item": sub["item"], "rater": sub["rater"], "v": val}).pivot(
        index="item", columns="rater", values="v"
    )
    first = sub.drop_duplicates("item")
    # item -> (pk, external id, element), read once: a ``.loc`` per drill-down row cost more than
    # the statistics on small studies
    info = dict(
        zip(
            first["item"].tolist(),
            zip(first["item_pk"].tolist(), first["external_id"].tolist(), first["element"].tolist(), strict=True),
            strict=True,
        )
    )
    H = wide.reindex(columns=humans)
    out: dict[str, Any] = {}
    for j in judges:
        jv = wide[j]
        ok = jv.notna() & H.notna().any(axis=1)
        if not ok.any():
            out[j] = {"reason": "no item rated by this judge and a human"}
            continue
        Hj, jv = H[ok], jv[ok]
        d: dict[str, Any] = {"n_items": int(ok.sum())}
        if numeric:
            hmean = Hj.astype(float).mean(axis=1)
            gap = (jv.astype(float) - hmean).abs()
            pts = pd.DataFrame({"x": hmean.round(4), "y": jv.astype(float)}).value_counts().reset_index(name="n")
            pts = pts.sort_values("n", ascending=False).head(MAX_SCATTER_POINTS)
            d["scatter"] = {"points": pts[["x", "y", "n"]].to_dict("records"), "x_label": "mean human", "y_label": j}
            order = gap.sort_values(ascending=False, kind="stable")
            score, human_summary = gap, hmean.round(3)
        else:
            maj = human_majorities(Hj)
            share = Hj.ne(jv, axis=0).where(Hj.notna()).mean(axis=1)
            d["confusion"] = _confusion(jv[maj.notna()].tolist(), maj[maj.notna()].tolist())
            order = share.sort_values(ascending=False, kind="stable")
            score, human_summary = share, maj
        top = order.index[:DRILLDOWN_ROWS]
        top_score = score.reindex(top).to_numpy(dtype=float)
        top_judge = jv.reindex(top).tolist()
        top_humans = Hj.reindex(top)
        human_values = top_humans.to_numpy(dtype=object)
        top_summary = human_summary.reindex(top).tolist()
        rows = []
        for pos, item in enumerate(top):
            if not top_score[pos] > 0:
                break
            item_pk, external_id, element = info[item]
            rows.append(
                {
                    "item": item,
                    "item_pk": int(item_pk),
                    "external_id": external_id,
                    "element": int(element) or None,
                    "judge": _py(top_judge[pos]),
                    "humans": {
                        h: _py(v) for h, v in zip(top_humans.columns, human_values[pos], strict=True) if pd.notna(v)
                    },
                    "human_summary": _py(top_summary[pos]),
                    "disagreement": round(float(top_score[pos]), 4),
                }
            )
        d["disagreements"] = rows
        d["disagreement_measure"] = (
            "|judge - mean human|" if numeric else "share of humans whose label differs from the judge's"
        )
        out[j] = d
    return out


def _confusion(judge: list[Any], majority: list[Any]) -> dict[str, Any]:
    """Judge label (rows) x human majority label (columns) counts over the labels either uses,
    in natural order."""
    labels = sorted(set(judge) | set(majority), key=_natural)
    at = {label: k for k, label in enumerate(labels)}
    matrix = np.zeros((len(labels), len(labels)), dtype=int)
    for a, b in zip(judge, majority, strict=True):
        matrix[at[a], at[b]] += 1
    return {"labels": labels, "rows": "judge", "columns": "human majority", "matrix": matrix.tolist()}


def human_majorities(H: pd.DataFrame) -> pd.Series:
    """Each row's most frequent label (missing ones left out); None for an empty row or a tie at
    the top. Counted in one pass over the whole table: a per-row ``value_counts`` was half of
    the CQ-Bench story demo's report time (cProfile, docs/benchmarks.md)."""
    vals = H.to_numpy(dtype=object)
    present = pd.notna(vals)
    out = np.full(len(H), None, dtype=object)
    if not present.any():
        return pd.Series(out, index=H.index, dtype=object)
    codes, labels = pd.factorize(vals[present])  # row-major, as np.nonzero below
    counts = np.zeros((len(H), len(labels)), dtype=np.int64)
    np.add.at(counts, (np.nonzero(present)[0], codes), 1)
    top = counts.max(axis=1)
    clear = (top > 0) & ((counts == top[:, None]).sum(axis=1) == 1)
    out[clear] = np.asarray(labels, dtype=object)[counts[clear].argmax(axis=1)]
    return pd.Series(out, index=H.index, dtype=object)


def _natural(k: Any):
    try:
        return (0, float(k), str(k))
    except (TypeError, ValueError):
        return (1, 0.0, str(k))


def _py(v: Any) -> Any:
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return None
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


# ------------------------------------------------------------------------------ the workflow
def report_for(*, project: Project, params: ReportParams, user=None) -> AgreementReport:
    """The stored :class:`AgreementReport` for these parameters, never a stale one presented as
    current (issue 35, fast reports).

    The project's :func:`selectors.report_fingerprint` (what the ratings, judges and raters are
    now) keys the stored reports. A done report with the current fingerprint is answered at once.
    Otherwise one job per parameters and fingerprint is queued (or the queued one reused), and the
    pending job is returned with ``last_good`` set: the newest done report for these parameters
    computed from older data (None when there is none), which the pages and the API show marked
    out of date while the job runs. Only a project with no stored report yet and at most
    ``HV_AGREEMENT_INLINE_MAX`` submitted annotations is computed in the request, and stored."""
    fingerprint = selectors.report_fingerprint(project)
    # the result JSON is read only where it is shown and not yet rendered (agreement.views)
    stored = AgreementReport.objects.filter(project=project, params=params.as_dict()).defer("result")
    current = stored.filter(data_signature=fingerprint).exclude(status=AgreementReport.Status.FAILED).first()
    if current is not None and current.status == AgreementReport.Status.DONE:
        current.last_good = None
        return current
    last_good = (
        stored.filter(status=AgreementReport.Status.DONE)
        .exclude(data_signature=fingerprint)
        .order_by("-finished_at", "-id")
        .first()
    )
    if current is None:
        if last_good is None and selectors.annotation_count(project) <= inline_max():
            return store_inline(project=project, params=params, user=user, fingerprint=fingerprint)
        current = start_report(project=project, params=params, user=user, signature=fingerprint)
    current.last_good = last_good
    return current


def store_inline(*, project: Project, params: ReportParams, user=None, fingerprint: str) -> AgreementReport:
    """Compute a small project's first report in the request and store it as a done report
    (``fingerprint`` read before the ratings, so data changing meanwhile makes it out of date,
    never current). A refusal (an unknown field) raises before anything is stored."""
    result = compute_report(project=project, params=params)
    job = AgreementReport.objects.create(
        project=project,
        created_by=user if getattr(user, "is_authenticated", False) else None,
        params=params.as_dict(),
        data_signature=fingerprint,
        status=AgreementReport.Status.DONE,
        progress=1.0,
        result=result,
        finished_at=timezone.now(),
    )
    job.last_good = None
    return job


def last_good_for(job: AgreementReport) -> AgreementReport | None:
    """While ``job`` is pending: the newest done report for its parameters, which the page shows
    marked out of date until ``job`` ends."""
    if not job.is_pending:
        return None
    return (
        AgreementReport.objects.filter(project_id=job.project_id, params=job.params, status=AgreementReport.Status.DONE)
        .defer("result")
        .exclude(pk=job.pk)
        .order_by("-finished_at", "-id")
        .first()
    )


def is_current(job: AgreementReport) -> bool:
    """Whether a stored report was computed from the project's ratings, judges and raters as they
    are now (the poll of a job that ended checks this, so a report overtaken by new ratings while
    it ran is marked out of date)."""
    return job.data_signature == selectors.report_fingerprint(job.project)


def validation_tables_for(
    *,
    project: Project,
    bootstrap: int = 1000,
    seed: int = 0,
    epsilon: float = DEFAULT_EPSILON,
    min_rater_items: int = MIN_RATER_ITEMS,
    system: str | None = None,
    finding: str | None = None,
    user=None,
) -> list[Table] | AgreementReport:
    """The protocol's validation tables, read from the stored full report for these bootstrap
    settings (its ``validation`` entry; see :func:`report_for`), or the pending report while it
    is computed."""
    params = ReportParams(
        bootstrap=bootstrap,
        seed=seed,
        epsilon=epsilon,
        min_rater_items=min_rater_items,
        system=system,
        finding=finding,
    )
    answer = report_for(project=project, params=params, user=user)
    if isinstance(answer, AgreementReport):
        if answer.status != AgreementReport.Status.DONE:
            return answer
        answer = answer.result or {}
    return [Table.from_dict(t) for t in answer.get("validation", [])]


def start_report(*, project: Project, params: ReportParams, user=None, signature: str | None = None) -> AgreementReport:
    with transaction.atomic():
        job = AgreementReport.objects.create(
            project=project,
            created_by=user if getattr(user, "is_authenticated", False) else None,
            params=params.as_dict(),
            data_signature=signature if signature is not None else selectors.report_fingerprint(project),
        )
        jobs.enqueue_on_commit(job)  # sent by agreement.tasks's sender once this commits
    return job


def run_report_job(*, job: AgreementReport) -> AgreementReport:
    """Compute a stored report, recording progress (0..1, per field) and the result; once done,
    the older done reports for the same parameters are superseded and deleted."""

    def progress(p: float) -> None:
        # the frame is read first (about 10% of the time on large projects)
        AgreementReport.objects.filter(pk=job.pk).update(progress=round(0.1 + 0.9 * min(max(p, 0.0), 1.0), 4))

    def work(job: AgreementReport) -> dict[str, Any]:
        params = ReportParams(**job.params)
        frame = selectors.ratings_frame(job.project)
        progress(0.0)
        result = compute_report(project=job.project, params=params, frame=frame, progress=progress)
        return {"result": result, "progress": 1.0, "message": ""}

    job = jobs.run(job, work)
    if job.status == AgreementReport.Status.DONE:
        AgreementReport.objects.filter(
            project_id=job.project_id,
            params=job.params,
            status=AgreementReport.Status.DONE,
            created_at__lt=job.created_at,
        ).delete()
    return job


# ------------------------------------------------------------------------------ CSV export
CSV_COLUMNS = (
    "field",
    "level",
    "stratum_column",
    "stratum",
    "section",
    "subject",
    "metric",
    "value",
    "ci_low",
    "ci_high",
    "p_value",
    "n_items",
    "n_raters",
    "reason",
)
_SKIP = {"matrix", "raters", "labels", "humans", "judges", "strata", "per_rater_names"}


def report_rows(result: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """One row per coefficient (and per pair, per rater, per stratum) of a report, then one per
    note (section ``notes``, metric = the note's code, reason = its text; ``hvstats.notes``)."""
    for f, fo in result.get("fields", {}).items():
        level = result.get("levels", {}).get(f, fo.get("level"))
        yield from _walk(fo, {"field": f, "level": level, "stratum_column": "", "stratum": ""}, [])
        for col, groups in (fo.get("strata") or {}).items():
            for g, go in groups.items():
                yield from _walk(go, {"field": f, "level": level, "stratum_column": col, "stratum": g}, [])
    for n in result.get("notes") or []:
        col, _, g = (n.get("stratum") or "").partition("=")
        yield {
            "field": n.get("field"),
            "level": result.get("levels", {}).get(n.get("field")),
            "stratum_column": col,
            "stratum": g,
            "section": "notes",
            "subject": n.get("judge") or "",
            "metric": n["code"],
            "value": None,
            "ci_low": None,
            "ci_high": None,
            "p_value": None,
            "n_items": n.get("n_items"),
            "n_raters": n.get("n_humans"),
            "reason": n["text"],
        }


def _walk(node: Any, base: dict[str, Any], path: list[str]) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        if "metric" in node and "value" in node:
            ci = node.get("ci") or [None, None]
            sec, subj = _section(path[:-1] if path and path[-1] == node["metric"] else path)
            yield {
                **base,
                "section": sec,
                "subject": subj,
                "metric": node["metric"],
                "value": node["value"],
                "ci_low": ci[0],
                "ci_high": ci[1],
                "p_value": node.get("p_value"),
                "n_items": node.get("n_items"),
                "n_raters": node.get("n_raters"),
                "reason": node.get("reason"),
            }
            for r, d in (node.get("per_rater") or {}).items():
                yield from _walk(d, base, [*path, "per_rater", r])
            return
        for k, v in node.items():
            if k in _SKIP:
                continue
            if k in VERDICTS and isinstance(v, dict):
                sec, subj = _section([*path, k])
                yield from _verdict_rows(k, v, {**base, "section": sec, "subject": subj})
                continue
            if k == "pairs" and isinstance(v, list):
                for d in v:
                    yield from _walk(d, base, [*path, "pair", " | ".join(d.get("raters", []))])
            elif isinstance(v, (dict, list)):
                yield from _walk(v, base, [*path, k])
            elif isinstance(v, (int, float)) and not isinstance(v, bool) and path and k not in ("n_patterns",):
                sec, subj = _section(path)
                yield {
                    **base,
                    "section": sec,
                    "subject": subj,
                    "metric": k,
                    "value": v,
                    "ci_low": None,
                    "ci_high": None,
                    "p_value": None,
                    "n_items": None,
                    "n_raters": None,
                    "reason": None,
                }


def _verdict_rows(kind: str, v: dict[str, Any], base: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """CSV rows of one judge's ``alt_test`` or ``ppi`` entry (section ``.../<judge>/alt_test``):
    alt-test: ``winning_rate`` (omega; n_raters = humans tested, reason when undefined),
    ``advantage_probability`` (rho), ``passed`` (1/0), ``epsilon``, ``n_items_dropped``, and per
    human (subject = the human) ``rejected`` (1/0, with its p-value and items) or ``skipped``
    (fewer than the paper's 30 items); PPI: ``estimate`` and ``classical_estimate`` with their
    CIs, ``lambda`` (reason: the small-sample rule where it chose lambda), ``n_unlabeled`` and the
    budget advice (``budget_*``)."""

    def row(metric: str, value: Any, **kw: Any) -> dict[str, Any]:
        ci = kw.pop("ci", None) or [None, None]
        out = {**base, "metric": metric, "value": value, "ci_low": ci[0], "ci_high": ci[1]}
        out.update({k: kw.get(k) for k in ("p_value", "n_items", "n_raters", "reason")})
        if "subject" in kw:
            out["subject"] = kw["subject"]
        return out

    def flag(b: Any) -> Any:
        return None if b is None else int(bool(b))

    reason = v.get("reason")
    if kind == "alt_test":
        n, m = v.get("n_items"), v.get("n_humans")
        yield row("winning_rate", v.get("winning_rate"), n_items=n, n_raters=m, reason=reason)
        yield row("advantage_probability", v.get("advantage_probability"), n_items=n, n_raters=m, reason=reason)
        yield row("passed", flag(v.get("passed")), n_items=n, n_raters=m, reason=reason)
        yield row("epsilon", v.get("epsilon"))
        yield row("n_items_dropped", v.get("n_items_dropped"), reason="items with fewer than two human ratings")
        for h, d in (v.get("per_human") or {}).items():
            yield row("rejected", flag(d.get("rejected")), subject=h, p_value=d.get("p_value"), n_items=d.get("items"))
            yield row("advantage_probability", d.get("advantage_probability"), subject=h, n_items=d.get("items"))
        for h, items in (v.get("skipped_humans") or {}).items():
            yield row(
                "skipped", None, subject=h, n_items=items, reason=f"skipped: fewer than {MIN_ITEMS_PER_HUMAN} items"
            )
        return
    n = v.get("n_labeled")
    yield row("estimate", v.get("estimate"), ci=v.get("ci"), n_items=n, reason=reason)
    yield row("classical_estimate", v.get("classical_estimate"), ci=v.get("classical_ci"), n_items=n)
    rule = v.get("lambda_rule") or ""
    yield row("lambda", v.get("lambda"), n_items=n, reason=rule if rule.startswith("lambda = ") else None)
    yield row("n_unlabeled", v.get("n_unlabeled"))
    b = v.get("budget")
    if b:
        yield row("budget_half_width", b.get("half_width"))
        for k in ("ppi_items", "ppi_additional_items", "ppi_human_ratings"):
            yield row(f"budget_{k}", b.get(k), reason=b.get("reason"))
        for k in ("classical_items", "classical_human_ratings"):
            yield row(f"budget_{k}", b.get(k))


def _section(path: list[str]) -> tuple[str, str]:
    """("judges_vs_humans/gpt/vs_human_mean", "") or ("humans_vs_humans/pairwise/pearson", "a | b")."""
    section, subject, i = [], [], 0
    while i < len(path):
        if path[i] in ("pair", "per_rater") and i + 1 < len(path):
            section.append(path[i])
            subject.append(path[i + 1])
            i += 2
            continue
        section.append(path[i])
        i += 1
    return "/".join(section), " / ".join(subject)


def report_csv(result: dict[str, Any]) -> str:
    buf = io.StringIO()
    w = csvsafe.dict_writer(buf, CSV_COLUMNS)
    w.writeheader()
    for row in report_rows(result):  # formulas defused (core.csvsafe); numbers stay numbers
        w.writerow(row)
    return buf.getvalue()
