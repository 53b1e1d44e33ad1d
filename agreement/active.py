"""Active samples end to end: the uncertainty a judge gives (``judges/uncertainty.py``), the
draw and its rounds (``studies/active.py``), and the estimates with valid intervals from the
people's labels of the drawn items (``hvstats/active.py``). This room sits above both the judges
and study design, so the pages that join them live here (``active_views.py``).

Estimates (:func:`estimates`): for each active series of the project and each field the judge
rated (numeric fields and two-label fields coded 0/1, which includes the acceptance decision
``accepted``: an acceptance rate), the active mean over the items of the rounds whose drawn
items all have a human rating (a round still being labelled is left out until it is done:
the estimator needs the label of every drawn item), overall and per stratum, with the
uniform-sampling comparison of :func:`hvstats.active.compare_uniform`. The item's human value is
the mean of its human ratings; ``xi = 1`` for the items the series drew; the judge's value on
every item of the population. With several rounds, :func:`hvstats.active.active_sequential`
(each round's probabilities depended on the earlier rounds only); with a target half-width,
its confidence sequence, valid at the data-chosen stop (``STOP_GUARANTEE``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from annotation.models import Project, Rater
from core.errors import DomainError
from hvstats.active import (
    DEFAULT_ALPHA,
    STOP_GUARANTEE,
    active_by_stratum,
    active_sequential,
    asymptotic_cs_half_width,
    refit_uncertainty,
)
from hvstats.active_table import METHOD, exact_at_bounds
from hvstats.notes import EXACT_TABLE_NOTE, exact_interval_note
from hvstats.result import to_jsonable
from hvstats.tables import Cell, Row, Table
from judges import uncertainty as judge_uncertainty
from studies import active as active_design
from studies.models import Sample, SampleItem

from . import selectors

MAX_STRATA_VALUES = 20
CLIPPED_NOTE = (
    "intervals that ran past the field's scale are cut to it: the mean lies within the scale, so the cut "
    "interval covers whenever the uncut one does (the half-widths are the uncut ones)"
)
NEGATIVE_SAVING_NOTE = (
    "a negative number of labels saved is a cost: uniform sampling would have reached the same precision "
    "with fewer labels"
)
FIXED_GUARANTEE = (
    "95% CLT interval of the active estimator (Zrnic and Candes, ICML 2024): valid as the number of items "
    "grows for a sample drawn with the stored probabilities, the rounds fixed in advance; each round's "
    "probabilities computed from earlier rounds' labels only (martingale CLT)."
)


def has_active(project: Project) -> bool:
    return Sample.objects.filter(project=project, design__kind=active_design.KIND).exists()


# ------------------------------------------------------------------------------ the data
def judge_column(frame: pd.DataFrame, judge: dict[str, Any]) -> str | None:
    """The frame's name of the design's judge (``name`` or ``name#id`` where names repeat)."""
    names = set(frame.loc[frame["rater_kind"] == "model", "rater"].unique().tolist()) if len(frame) else set()
    for candidate in (f"{judge.get('name')}#{judge.get('rater')}", judge.get("name")):
        if candidate in names:
            return candidate
    return None


def field_values(frame: pd.DataFrame, field: str, judge: str) -> tuple[dict[int, float], dict[int, float], str]:
    """(mean human value per item, the judge's value per item, kind) of a field; kind ``mean``
    (numeric), ``rate`` (two labels or 0/1: the share of the second label) or a reason."""
    sub = frame[frame["field"] == field]
    sub = sub[sub["item"] == sub["item_pk"].astype(str)]  # not the pooled repeat rows
    raw = sub["value"]
    num = pd.to_numeric(raw, errors="coerce")
    labels = sorted({str(v) for v in raw.dropna().tolist()})
    if num.notna().all():
        values = num.astype(float)
        kind = "rate" if set(values.unique().tolist()) <= {0.0, 1.0} else "mean"
    elif len(labels) == 2:
        values = (raw.astype(str) == labels[1]).astype(float)
        kind = "rate"
    else:
        return {}, {}, "not applicable: a nominal field with more than two labels"
    human = sub["rater_kind"] == "human"
    y = values[human].groupby(sub.loc[human, "item_pk"]).mean()
    mine = sub["rater"] == judge
    f = values[mine].groupby(sub.loc[mine, "item_pk"]).first()
    return {int(k): float(v) for k, v in y.items()}, {int(k): float(v) for k, v in f.items()}, kind


def field_scale(project: Project, field: str, kind: str) -> tuple[float, float] | None:
    """The values a field can take, its mean's bounds: ``[0, 1]`` for a rate, the lowest and
    highest option of a rubric question with numeric options; None where the rubric states no
    bounds (a derived field, a free number)."""
    if kind == "rate":
        return (0.0, 1.0)
    try:
        question = project.rubric_version.parsed().question(field)
    except (KeyError, ValueError, LookupError):
        return None
    values = [o.value for o in question.options]
    if not values or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return None
    return (float(min(values)), float(max(values)))


def clip_to_scale(res: dict[str, Any], scale: tuple[float, float] | None) -> dict[str, Any]:
    """The interval (``ci``) and confidence sequence (``cs``) of an estimate cut to the field's
    scale, with ``clipped`` saying that it was: the normal-approximation interval can run past
    a bounded scale, and since the mean lies within it, the cut interval covers it whenever the
    uncut one does (coverage kept, width honest). The half-widths stay the uncut ones (what the
    statistics and the comparisons with uniform sampling are about)."""
    if scale is None:
        return res
    lo, hi = scale
    res["scale"] = [lo, hi]
    for key in ("ci", "cs"):
        iv = res.get(key)
        if iv and iv[0] is not None and iv[1] is not None and (iv[0] < lo or iv[1] > hi):
            res[key] = [max(float(iv[0]), lo), min(float(iv[1]), hi)]
            res["clipped"] = True
    return res


def target_status(res: dict[str, Any], d: dict[str, Any], rounds_used: int) -> dict[str, Any] | None:
    """Whether a series' target half-width is reached and, if not, whether the remaining rounds
    can reach it: the confidence sequence's half-width projected to every planned item at the
    spread of the increments so far (:func:`hvstats.active.asymptotic_cs_half_width`; a
    projection, not a promise)."""
    target = d.get("target_half_width")
    hw = res.get("cs_half_width")
    if not target or hw is None:
        return None
    if res.get("stop"):
        return {"reached": True, "target": target, "half_width": hw}
    n, se, planned = res.get("n_items") or 0, res.get("se"), d["population_size"]
    projected = None
    if rounds_used < d["rounds"] and se is not None and n:
        sd = float(se) * float(np.sqrt(n))
        projected = asymptotic_cs_half_width(sd, planned, DEFAULT_ALPHA, planned)
    return {
        "reached": False,
        "target": target,
        "half_width": hw,
        "rounds_left": d["rounds"] - rounds_used,
        "projected": projected,
        "reachable": projected is not None and projected <= target,
    }


def _labelled_items(project: Project, item_ids: list[int]) -> set[int]:
    """Items with a submitted human rating (any field)."""
    return set(
        selectors.submitted_annotations(project)
        .filter(rater__kind=Rater.Kind.HUMAN, item_id__in=item_ids)
        .values_list("item_id", flat=True)
    )


def series_state(first: Sample) -> dict[str, Any]:
    """The rounds of a series: per round its population, probabilities, drawn items and how many
    of them people have rated; ``used``: the rounds whose drawn items all have a rating, from
    round 1 on (a prefix)."""
    rounds = active_design.series_rounds(first)
    members = SampleItem.objects.filter(sample__in=rounds).values_list("sample_id", "item_id")
    drawn_by_round: dict[int, set[int]] = {}
    for sample_id, item_id in members:
        drawn_by_round.setdefault(sample_id, set()).add(item_id)
    all_drawn = [i for s in drawn_by_round.values() for i in s]
    labelled = _labelled_items(first.project, all_drawn)
    out: list[dict[str, Any]] = []
    used = 0
    complete_so_far = True
    for s in rounds:
        drawn = drawn_by_round.get(s.id, set())
        done = len(drawn & labelled)
        pop = s.design["population"]
        complete_so_far = complete_so_far and done == len(drawn)
        if complete_so_far:
            used += 1
        out.append(
            {
                "sample": s,
                "round": s.design["round"],
                "items": pop["items"],
                "pi": pop["pi"],
                "u": pop["u"],
                "drawn": drawn,
                "n_drawn": len(drawn),
                "n_labelled": done,
                "expected": float(sum(pop["pi"])),
                "uncertainty": s.design.get("uncertainty", ""),
                "complete": done == len(drawn),
            }
        )
    return {"rounds": out, "used": used, "total_rounds": first.design["rounds"]}


# ------------------------------------------------------------------------------ estimates
def _arrays(state: dict[str, Any], y: dict[int, float], f: dict[int, float]):
    ids, pi, rnd, xi, yy, ff = [], [], [], [], [], []
    no_judge = no_value = 0
    for r in state["rounds"][: state["used"]]:
        for i, p in zip(r["items"], r["pi"], strict=True):
            if i not in f:
                no_judge += 1
                continue
            sampled = i in r["drawn"]
            if sampled and i not in y:
                no_value += 1
            ids.append(i)
            pi.append(p)
            rnd.append(r["round"])
            xi.append(1 if sampled and i in y else 0)
            yy.append(y.get(i, np.nan) if sampled else np.nan)
            ff.append(f[i])
    return ids, np.array(pi), np.array(rnd), np.array(xi), np.array(yy, dtype=float), np.array(ff), no_judge, no_value


def series_estimates(first: Sample, frame: pd.DataFrame, alpha: float = DEFAULT_ALPHA) -> dict[str, Any]:
    d = first.design
    state = series_state(first)
    judge = judge_column(frame, d["judge"])
    stop = d.get("target_half_width")
    out: dict[str, Any] = {
        "sample": first.id,
        # the series by the round it has reached: the first round's own name says "round 1"
        "name": active_design.series_name(first, len(state["rounds"])),
        "judge": d["judge"].get("name"),
        "field": d["field"],
        "uncertainty": [r["uncertainty"] for r in state["rounds"]],
        "budget": d["budget"],
        "tau": d["tau"],
        "floor": d["floor"],
        "seed": d["seed"],
        "rounds": d["rounds"],
        "rounds_drawn": len(state["rounds"]),
        "rounds_used": state["used"],
        "round_status": [
            {
                "round": r["round"] + 1,
                "sample": r["sample"].id,
                "items": len(r["items"]),
                "expected": r["expected"],
                "drawn": r["n_drawn"],
                "labelled": r["n_labelled"],
                "complete": r["complete"],
            }
            for r in state["rounds"]
        ],
        "target_half_width": stop,
        "alpha": alpha,
        "guarantee": STOP_GUARANTEE if stop else FIXED_GUARANTEE,
        "fields": {},
    }
    if judge is None:
        out["reason"] = "the design's judge has no ratings in this project any more"
        return out
    if state["used"] == 0:
        out["reason"] = "round 1 is still being labelled: the estimate needs a human rating of every drawn item"
        return out
    strata_cols = [c for c in selectors.strata_columns(frame) if frame[c].nunique() <= MAX_STRATA_VALUES]
    item_strata = frame.groupby("item_pk")[strata_cols].first() if strata_cols else None
    fields = [fd for fd in dict.fromkeys(frame.loc[frame["rater"] == judge, "field"].tolist()) if "[*]" not in fd]
    for fd in fields:
        y, f, kind = field_values(frame, fd, judge)
        if kind not in ("mean", "rate"):
            out["fields"][fd] = {"reason": kind}
            continue
        ids, pi, rnd, xi, yy, ff, no_judge, no_value = _arrays(state, y, f)
        if len(ids) < 2:
            out["fields"][fd] = {"kind": kind, "reason": "the judge rated fewer than 2 items of the design"}
            continue
        res = active_sequential(
            yy, ff, pi, rnd, xi=xi, alpha=alpha, stop_half_width=stop, planned_items=d["population_size"]
        )
        scale = field_scale(first.project, fd, kind)
        # a 0/1 field's mean at 0% or 100% has a zero-width CLT interval: the exact one instead,
        # as the command's --active path does (hvstats.active_table.exact_at_bounds)
        res = exact_at_bounds(clip_to_scale(res, scale), kind == "rate", alpha)
        entry: dict[str, Any] = {
            "kind": kind,
            "overall": res,
            "target": target_status(res, d, state["used"]),
            "n_items_without_judge": no_judge,
            "n_drawn_without_value": no_value,
            "strata": {},
        }
        if item_strata is not None:
            for c in strata_cols:
                groups = item_strata[c].reindex(ids).fillna("").astype(str).to_numpy()
                entry["strata"][c] = {
                    g: exact_at_bounds(clip_to_scale(r, scale), kind == "rate", alpha)
                    for g, r in active_by_stratum(yy, ff, pi, groups, xi=xi, alpha=alpha).items()
                }
        out["fields"][fd] = entry
    out["notes"] = series_notes(out)
    return out


def series_notes(series: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``exact_interval`` notes (:mod:`hvstats.notes`) of one series' estimates: a 0/1
    field's active or human-only mean at 0% or 100% with its exact interval."""
    out: list[dict[str, Any]] = []
    for fd, fo in series.get("fields", {}).items():
        blocks = [(None, fo.get("overall"))] + [
            (f"{c}={g}", r) for c, groups in fo.get("strata", {}).items() for g, r in groups.items()
        ]
        for stratum, r in blocks:
            if not r:
                continue
            for d, label in ((r, "active mean"), (r.get("human_only") or {}, "active human-only mean")):
                if d.get("ci_method") == "clopper_pearson":
                    out.append(
                        exact_interval_note(
                            fd, stratum, series.get("judge"), label, float(d["estimate"]), r["n_labeled"]
                        )
                    )
    return out


def estimates(project: Project, frame: pd.DataFrame | None = None) -> dict[str, Any] | None:
    """``{"method", "series": [...]}`` for a project with an active sample, else None."""
    series = active_design.project_series(project)
    if not series:
        return None
    frame = selectors.ratings_frame(project) if frame is None else frame
    try:
        return to_jsonable({"method": METHOD, "series": [series_estimates(s, frame) for s in series]})
    except ValueError as exc:  # the statistics refused the data
        raise DomainError(f"the active estimates could not be computed: {exc}") from exc


# ------------------------------------------------------------------------------ the next round
def refitted_uncertainty(first: Sample, frame: pd.DataFrame | None = None) -> tuple[dict[int, float], str]:
    """The next round's uncertainty from the labels of the rounds drawn so far
    (:func:`hvstats.active.refit_uncertainty` on the design's field; every earlier round must be
    fully labelled, so that the next probabilities depend on the past only)."""
    state = series_state(first)
    if state["used"] < len(state["rounds"]):
        r = state["rounds"][state["used"]]
        raise DomainError(
            f"round {r['round'] + 1} is still being labelled ({r['n_labelled']} of {r['n_drawn']} drawn items "
            "rated): refit once it is done, or draw the next round with the judge's own uncertainty"
        )
    frame = selectors.ratings_frame(first.project) if frame is None else frame
    d = first.design
    judge = judge_column(frame, d["judge"])
    if judge is None:
        raise DomainError("the design's judge has no ratings in this project any more")
    y, f, kind = field_values(frame, d["field"], judge)
    if kind not in ("mean", "rate"):
        raise DomainError(f"cannot refit on {d['field']!r}: {kind}")
    ids, pi, _, xi, yy, ff, _, _ = _arrays(state, y, f)
    if xi.sum() < 1:
        raise DomainError("no human label yet to refit on")
    prior = dict(zip(d["prior"]["items"], d["prior"]["u"], strict=True))
    _, nxt = active_design.next_round_items(first)
    u = refit_uncertainty(
        np.array([prior[i] for i in ids]), ff, yy, xi, pi, np.array([prior[i] for i in nxt], dtype=float)
    )
    return dict(zip(nxt, (float(v) for v in u), strict=True)), f"refitted on {int(xi.sum())} human labels"


def prior_uncertainty(first: Sample) -> tuple[dict[int, float], str]:
    """The next round's items with the uncertainty the series started from."""
    _, nxt = active_design.next_round_items(first)
    prior = dict(zip(first.design["prior"]["items"], first.design["prior"]["u"], strict=True))
    return {i: prior[i] for i in nxt}, first.design["uncertainty"]


def residual_variance(frame: pd.DataFrame, judge: str, field: str) -> float | None:
    """Mean of ``(human mean - judge)^2`` over the items both rated (None: no such item)."""
    y, f, kind = field_values(frame, field, judge)
    both = [i for i in y if i in f]
    if kind not in ("mean", "rate") or not both:
        return None
    return float(np.mean([(y[i] - f[i]) ** 2 for i in both]))


def judge_choices(project: Project) -> list[Rater]:
    return judge_uncertainty.judge_raters(project)


def estimates_tables(est: dict[str, Any] | None) -> list[Table]:
    """One validation table per active series: per field (and acceptance rate) the active
    estimate with its interval (the confidence sequence under a stopping rule), the human
    labels, and what uniform sampling of as many items would give."""
    out: list[Table] = []
    for s in (est or {}).get("series", []):
        seq = bool(s.get("target_half_width"))
        rows = []
        clipped = costs = False
        for name, fo in s["fields"].items():
            r = fo.get("overall")
            if r is None:
                continue
            u = r.get("uniform") or {}
            clipped = clipped or bool(r.get("clipped"))
            costs = costs or any(
                v is not None and v < 0 for v in (u.get("ppi_labels_saved"), u.get("human_only_labels_saved"))
            )
            ci = r.get("cs") if seq else r.get("ci")
            fmt = "%" if fo["kind"] == "rate" else "num"
            rows.append(
                Row(
                    name,
                    (
                        Cell(r["estimate"], tuple(ci) if ci else None, r["n_items"], fmt, r.get("reason", "")),
                        Cell(r["n_labeled"], None, None, "count"),
                        Cell(r.get("cs_half_width") if seq else r.get("half_width"), None, None, "r"),
                        Cell(u.get("ppi_half_width"), None, None, "r"),
                        Cell(u.get("human_only_half_width"), None, None, "r"),
                        Cell(u.get("ppi_labels_saved"), None, None, "count"),
                        Cell(u.get("human_only_labels_saved"), None, None, "num"),
                    ),
                )
            )
        out.append(
            Table(
                key=f"active-{s['sample']}",
                title=f"Active estimates: {s['name']} (judge {s['judge']})",
                columns=(
                    "active estimate [95% CS]" if seq else "active estimate [95% CI]",
                    "human labels",
                    "half-width",
                    "uniform PPI half-width (same labels)",
                    "humans-only half-width (same labels)",
                    "labels saved vs PPI",
                    "labels saved vs humans only",
                ),
                rows=tuple(rows),
                caption=METHOD,
                row_header="field",
                notes=(s["guarantee"],)
                + ((s["reason"],) if s.get("reason") else ())
                + ((CLIPPED_NOTE,) if clipped else ())
                + ((NEGATIVE_SAVING_NOTE,) if costs else ())
                # the exact interval of a 0/1 mean at 0% or 100%, in the words the pages translate
                + tuple(
                    EXACT_TABLE_NOTE % {"row": n["field"], "percent": f"{100 * n['value']:.0f}%", "n": n["n_items"]}
                    for n in s.get("notes", [])
                    if n["statistic"] == "active mean" and n["stratum"] is None
                ),
            )
        )
    return out
