"""All statistics for one items x raters matrix (one field, one stratum), sharing one set of
bootstrap resamples: humans vs humans (multi-rater coefficients, pairwise matrix,
leave-one-rater-out and split-half ceilings) and each judge vs the humans.

Structure
---------
:func:`analyse_matrix` prepares the matrix once (:class:`_Matrix`: distinct rating rows and
their counts), then runs four named steps.  Each step first *registers* its statistics with
a :class:`_Collector` (per-item features of one shared bootstrap, :class:`.bootstrap.Block`),
and after the one bootstrap run *reads* its results from the :class:`_Estimates`:

=====================  =========================  ======================  ====================
step                   registers                  key of a statistic      reads
=====================  =========================  ======================  ====================
multi-rater            :func:`_add_multi_rater`   ``MultiKey(metric)``    :func:`_multi_rater_results`
pairwise matrix        :func:`_add_pairwise`      ``PairKey(a, b, m)``    :func:`_pairwise_results`
human ceilings         :func:`_add_ceilings`      ``CeilingKey(r, m)``    :func:`_ceiling_results`,
                                                                          :func:`_split_half_results`
judge vs humans        :func:`_add_judges`        ``JudgeKey(j, t, m)``   :func:`_judge_results`
=====================  =========================  ======================  ====================

A two-rater statistic comes from a :class:`.pairs.PairTable` registered under the key with
``metric=None`` (the table's feature set); ``key._replace(metric=m)`` names coefficient ``m``
of that table.  The output dict is documented in :func:`analyse_matrix`.

Human ceilings
--------------
- Leave-one-rater-out (ValueGround Table 4): each human vs the mean of the *other* humans
  on the items both exist for; the ceiling is the mean of the per-rater coefficients
  (bootstrap CI of that mean from the same resamples).
- Split-half: raters are randomly split into two halves (``n_splits`` seeded splits); the
  per-item means of the halves are correlated and Spearman-Brown corrected to full length,
  ``r_sb = 2 r / (1 + r)`` (Spearman 1910; Brown 1910), averaged over splits.

Judge vs humans
---------------
- vs the per-item mean of the humans (correlations) and vs the human majority label
  (kappa / percent agreement; ties in the majority drop the item).
- rank: the judge's correlation with the mean of *all* humans compared with each human's
  leave-one-out correlation; ``rank`` 1 = above every human, ``inside_spread`` = within
  [min, max] of the human values, ``difference`` = judge - mean human ceiling with a
  bootstrap CI (same resamples), i.e. "is the judge inside the human spread?".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import combinations
from typing import Any, NamedTuple

import numpy as np

from .binary import binary_report
from .bootstrap import Block, compress_rows, percentile_ci, percentile_cis
from .correlation import CORRELATIONS, pair_result
from .kappa import MAX_CATEGORIES, Features, fleiss_features, gwet_features, percent_agreement_features
from .outcomes import majority_vote
from .pairs import PairTable
from .reliability import alpha_features, krippendorff_alpha
from .result import MetricResult, undefined

MULTI_METRICS = (
    "krippendorff_alpha",
    "fleiss_kappa",
    "gwet_ac1",
    "gwet_ac2_linear",
    "gwet_ac2_quadratic",
    "percent_agreement",
)
CEILING_METRICS = ("pearson", "spearman")
ALPHA = "krippendorff_alpha"


def default_metrics(level: str, categorical: bool) -> list[str]:
    """The metrics reported when none are asked for: alpha always, correlations for ordered
    data, kappa-type coefficients for categorical data (weighted ones for ordered data)."""
    m = [ALPHA]
    if level != "nominal":
        m += ["pearson", "spearman", "kendall"]
    if categorical:
        m += ["cohen_kappa", "fleiss_kappa", "gwet_ac1", "percent_agreement"]
        if level != "nominal":
            m += ["cohen_kappa_linear", "cohen_kappa_quadratic", "gwet_ac2_linear", "gwet_ac2_quadratic"]
    return m


# ---------------------------------------------------------------------------------------
# Keys of the statistics of one matrix
# ---------------------------------------------------------------------------------------
class MultiKey(NamedTuple):
    """Multi-rater coefficient ``metric`` of the humans."""

    metric: str


class PairKey(NamedTuple):
    """Raters ``a`` < ``b`` of the pairwise matrix (positions in humans + judges); ``metric``
    None: the pair's joint-value table."""

    a: int
    b: int
    metric: str | None = None


class CeilingKey(NamedTuple):
    """Leave-one-rater-out: human ``rater`` (position among the humans) vs the mean of the
    other humans; ``metric`` None: the pair table."""

    rater: int
    metric: str | None = None


class JudgeKey(NamedTuple):
    """Judge ``judge`` (position among the judges) vs ``target``: ``"mean"`` (the per-item
    mean of the humans) or ``"majority"`` (their majority label); ``metric`` None: the pair
    table."""

    judge: int
    target: str
    metric: str | None = None


#: a pair table (a bootstrap feature set); with ``metric`` set, one of its coefficients
TableKey = PairKey | CeilingKey | JudgeKey
StatKey = MultiKey | PairKey | CeilingKey | JudgeKey


# ---------------------------------------------------------------------------------------
# The prepared matrix, the collector of statistics and the estimates
# ---------------------------------------------------------------------------------------
def _nanmean_rows(A: np.ndarray) -> np.ndarray:
    m = ~np.isnan(A)
    c = m.sum(1)
    s = np.where(m, A, 0.0).sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(c > 0, s / np.maximum(c, 1), np.nan)


@dataclass
class _Matrix:
    """One items x raters matrix as every step uses it: the distinct rating rows ``P``
    (patterns) with their item ``counts``, the rater columns of the humans (``hidx``) and the
    judges (``jidx``), and what kind of data it is."""

    P: np.ndarray
    counts: np.ndarray
    raters: list[str]
    hidx: list[int]
    jidx: list[int]
    level: str
    metrics: list[str]
    cats: np.ndarray

    @classmethod
    def prepare(
        cls,
        X: np.ndarray,
        raters: Sequence[str],
        humans: Sequence[str],
        judges: Sequence[str],
        level: str,
        metrics: Sequence[str] | None,
    ) -> _Matrix:
        raters = list(raters)
        P, counts, _ = compress_rows(np.asarray(X, dtype=float))
        cats = np.unique(P[~np.isnan(P)])
        categorical = 0 < len(cats) <= MAX_CATEGORIES
        return cls(
            P,
            counts,
            raters,
            [raters.index(h) for h in humans],
            [raters.index(j) for j in judges],
            level,
            list(metrics) if metrics else default_metrics(level, categorical),
            cats,
        )

    @property
    def categorical(self) -> bool:
        return 0 < len(self.cats) <= MAX_CATEGORIES

    @property
    def numeric(self) -> bool:
        return self.level != "nominal"

    @property
    def binary(self) -> bool:
        return self.categorical and len(self.cats) == 2

    @property
    def labels(self) -> np.ndarray | None:
        """The category values when the data are categorical (kappa label set)."""
        return self.cats if self.categorical else None

    @property
    def n_items(self) -> int:
        return int(self.counts.sum())

    @property
    def nh(self) -> int:
        return len(self.hidx)

    @cached_property
    def human_ratings(self) -> np.ndarray:
        """The humans' columns of ``P``."""
        return self.P[:, self.hidx]

    @cached_property
    def n_multi(self) -> int:
        """Items with two or more human ratings."""
        return int(self.counts[(~np.isnan(self.human_ratings)).sum(1) >= 2].sum())

    @cached_property
    def human_mean(self) -> np.ndarray:
        return _nanmean_rows(self.human_ratings) if self.nh else np.full(len(self.P), np.nan)

    @cached_property
    def human_majority(self) -> np.ndarray:
        return majority_vote(self.human_ratings) if self.nh and self.categorical else np.full(len(self.P), np.nan)

    def correlation_metrics(self) -> list[str]:
        """Requested correlations (ordered data only)."""
        return [m for m in self.metrics if m in CORRELATIONS and self.numeric]

    def kappa_metrics(self) -> list[str]:
        """Requested Cohen's kappas (categorical data; weighted ones for ordered data)."""
        return [
            m
            for m in self.metrics
            if m.startswith("cohen_kappa") and self.categorical and (self.numeric or m == "cohen_kappa")
        ]


class _Collector:
    """The statistics of one matrix, registered for one shared bootstrap (a :class:`Block`
    over the pattern counts), and the pair tables behind the two-rater ones."""

    def __init__(self, counts: np.ndarray):
        self.block = Block(counts)
        self.tables: dict[TableKey, PairTable] = {}

    def pair(
        self, key: TableKey, x: np.ndarray, y: np.ndarray, metrics: Sequence[str], labels: np.ndarray | None = None
    ) -> PairTable:
        """Register the joint-value table of ``x`` and ``y`` under ``key`` and its
        coefficients ``metrics`` under ``key._replace(metric=m)``."""
        t = PairTable(x, y, weights=self.block.counts)
        self.tables[key] = t
        ms = list(metrics)
        stat = {m: key._replace(metric=m) for m in ms}
        self.block.add(key, t.onehot(), lambda S: {stat[m]: v for m, v in t.compute(S, ms, labels=labels).items()})
        return t

    def run(self, n_boot: int, rng: np.random.Generator) -> _Estimates:
        point, boot = self.block.run(n_boot, rng)
        return _Estimates(point, boot, percentile_cis(boot) if n_boot else {}, self.tables, n_boot)


@dataclass
class _Estimates:
    """Point values (``{key: (1,) array}``), bootstrap values (``{key: (B,)}``) and their
    percentile CIs, after the one bootstrap run."""

    point: dict[StatKey, np.ndarray]
    boot: dict[StatKey, np.ndarray]
    cis: dict[StatKey, tuple]
    tables: dict[TableKey, PairTable]
    n_boot: int

    def value(self, key: StatKey) -> float:
        return self.point.get(key, np.array([np.nan]))[0]

    def with_ci(self, r: MetricResult, key: StatKey) -> MetricResult:
        """``r`` with the CI of ``key`` and the count of undefined resamples (if any)."""
        if self.n_boot and key in self.cis:
            r.ci, bad = self.cis[key]
            if bad:
                r.extra["bootstrap_undefined"] = bad
        return r

    def pair_result(self, key: TableKey, n_raters: int = 2) -> MetricResult:
        """Coefficient ``key.metric`` of the pair table ``key._replace(metric=None)``."""
        metric = key.metric
        t = self.tables[key._replace(metric=None)]
        v = self.value(key)
        if metric in CORRELATIONS:
            r = pair_result(t, metric, v, n_raters)
        else:
            n = round(t.n)
            if n < 2:
                r = undefined(metric, "fewer than two items rated by both", n, n_raters)
            elif not np.isfinite(v):
                r = undefined(metric, "chance agreement is 1 (a single category in use)", n, n_raters)
            else:
                r = MetricResult(metric, float(v), None, None, n, n_raters, None)
        return self.with_ci(r, key) if r.defined else r


# ---------------------------------------------------------------------------------------
# The analysis
# ---------------------------------------------------------------------------------------
def analyse_matrix(
    X: np.ndarray,
    raters: Sequence[str],
    humans: Sequence[str],
    judges: Sequence[str],
    level: str,
    metrics: Sequence[str] | None = None,
    n_boot: int = 1000,
    rng: np.random.Generator | None = None,
    n_splits: int = 100,
    seed: int = 0,
    positive: float | None = None,
    pairwise: bool = True,
) -> dict[str, Any]:
    """Everything for one matrix ``X`` (items x raters, NaN = missing, category codes for
    nominal data); ``raters`` names the columns, ``humans`` and ``judges`` are subsets.

    Returns ``{"n_items", "n_patterns", "level", "humans", "judges", "n_categories",
    "humans_vs_humans": {<multi-rater metric>: result, "pairwise": {metric: {"raters",
    "matrix", "pairs"}}, "split_half": {metric: result}, "leave_one_rater_out": {metric:
    result with "per_rater"}, "positive_rate", "majority_positive_rate" (binary data)},
    "judges_vs_humans": {judge: {"vs_human_mean", "vs_human_majority", "rank_among_humans",
    "binary_vs_majority", "positive_rate"}}}`` (results as :meth:`MetricResult.to_dict`).
    Bootstrap CIs come from ``n_boot`` item resamples shared by every statistic.
    ``pairwise=False`` leaves out the pairwise matrix and the split-half ceilings (``"pairwise"``
    and ``"split_half"`` are then absent): a caller that reads only the judges and the
    leave-one-out ceilings does not pay for R(R-1)/2 bootstrapped pair tables; every other value
    and CI is unchanged (the same resamples are drawn).
    """
    rng = rng if rng is not None else np.random.default_rng(seed)
    mx = _Matrix.prepare(X, raters, humans, judges, level, metrics)
    col = _Collector(mx.counts)
    multi = _add_multi_rater(mx, col)
    plan = _add_pairwise(mx, col) if pairwise else None
    ceiling_metrics = _add_ceilings(mx, col)
    judge_plan = _add_judges(mx, col, ceiling_metrics)
    est = col.run(n_boot, rng)

    hum: dict[str, Any] = _multi_rater_results(mx, multi, est)
    if plan is not None:
        hum["pairwise"] = _pairwise_results(mx, plan, est)
    ceilings = _ceiling_results(mx, ceiling_metrics, est)
    if pairwise and mx.numeric and mx.nh >= 2:
        hum["split_half"] = _split_half_results(mx, ceiling_metrics, n_splits, seed)
    pos = positive if positive is not None else (1.0 if 1.0 in mx.cats else (mx.cats.max() if len(mx.cats) else None))
    jout = {mx.raters[j]: _judge_results(mx, k, judge_plan, ceilings, est, pos) for k, j in enumerate(mx.jidx)}
    hum["leave_one_rater_out"] = {m: c.result.to_dict() for m, c in ceilings.items()}
    if mx.binary:
        hum["positive_rate"] = _rate(mx.human_ratings.reshape(-1), np.repeat(mx.counts, mx.nh), pos)
        hum["majority_positive_rate"] = _rate(mx.human_majority, mx.counts, pos)
    return {
        "n_items": mx.n_items,
        "n_patterns": len(mx.counts),
        "level": level,
        "humans": list(humans),
        "judges": list(judges),
        "n_categories": len(mx.cats),
        "humans_vs_humans": hum,
        "judges_vs_humans": jout,
    }


# ---- step 1: multi-rater coefficients of the humans ------------------------------------
#: ``(metric, why)`` per requested multi-rater coefficient, see :func:`_add_multi_rater`
MultiPlan = list[tuple[str, str | MetricResult | None]]


def _add_multi_rater(mx: _Matrix, col: _Collector) -> MultiPlan:
    """Register each requested multi-rater coefficient of the humans under
    ``MultiKey(metric)``.  Returns ``(metric, why)`` in report order: ``why`` None =
    registered, a string = why it is undefined, a :class:`MetricResult` = a point estimate
    without bootstrap (alpha with too many categories for bootstrap features)."""
    plan: MultiPlan = []
    for name in [m for m in MULTI_METRICS if m in mx.metrics]:
        if mx.nh < 2:
            plan.append((name, "fewer than two human raters"))
        elif mx.n_multi == 0:
            plan.append((name, "no item has two or more human ratings"))
        elif name != ALPHA and not mx.categorical:
            plan.append((name, f"more than {MAX_CATEGORIES} distinct values: not categorical data"))
        elif name.startswith("gwet_ac2") and not mx.numeric:
            plan.append((name, "weighted AC2 needs ordered categories"))
        else:
            fb = _multi_features(mx, name)
            if fb is None:  # alpha with too many categories for bootstrap features: point only
                plan.append((name, krippendorff_alpha(mx.human_ratings, mx.level, weights=mx.counts)))
                continue
            col.block.add(MultiKey(name), fb[0], fb[1])
            plan.append((name, None))
    return plan


def _multi_features(mx: _Matrix, name: str) -> Features | None:
    """Bootstrap features ``(F, finalize)`` of multi-rater coefficient ``name`` of the humans."""
    if name == ALPHA:
        return alpha_features(mx.human_ratings, mx.level)
    if name == "fleiss_kappa":
        return fleiss_features(mx.human_ratings, mx.labels)
    if name == "percent_agreement":
        return percent_agreement_features(mx.human_ratings, mx.labels)
    return gwet_features(mx.human_ratings, None if name == "gwet_ac1" else name.split("_")[-1], mx.labels)


def _multi_rater_results(mx: _Matrix, plan: MultiPlan, est: _Estimates) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, why in plan:
        if isinstance(why, MetricResult):
            r = why
        elif why:
            r = undefined(name, why, mx.n_multi, mx.nh)
        elif not np.isfinite(v := est.value(MultiKey(name))):
            r = undefined(
                name, "all ratings in a single category / no variation (expected disagreement 0)", mx.n_multi, mx.nh
            )
        else:
            r = est.with_ci(MetricResult(name, float(v), None, None, mx.n_multi, mx.nh, None), MultiKey(name))
            if name == ALPHA:
                r.extra["level"] = mx.level
        out[name] = r.to_dict()
    return out


# ---- step 2: pairwise matrix over all raters (humans, then judges) -----------------------
@dataclass
class _PairwisePlan:
    """What :func:`_add_pairwise` registered: rater ``names`` (humans, then judges), the
    ``pairs`` ``(a, b)`` of positions in ``names``, the two-rater ``metrics`` and whether the
    pairwise alpha was asked for."""

    names: list[str]
    pairs: list[tuple[int, int]]
    metrics: list[str]
    alpha: bool
    #: items rated by both raters of each pair (for alpha without a pair table)
    n_both: dict[tuple[int, int], int] = field(default_factory=dict)


def _add_pairwise(mx: _Matrix, col: _Collector) -> _PairwisePlan:
    """Register, for every pair of raters ``a < b`` (humans, then judges), the pair table
    and its two-rater coefficients under ``PairKey(a, b, metric)``, and the pair's
    Krippendorff alpha under ``PairKey(a, b, "krippendorff_alpha")``."""
    metrics = mx.correlation_metrics() + mx.kappa_metrics()
    if "percent_agreement" in mx.metrics:
        metrics.append("percent_agreement")
    all_idx = mx.hidx + mx.jidx
    plan = _PairwisePlan(
        [mx.raters[i] for i in all_idx], list(combinations(range(len(all_idx)), 2)), metrics, ALPHA in mx.metrics
    )
    for a, b in plan.pairs:
        x, y = mx.P[:, all_idx[a]], mx.P[:, all_idx[b]]
        t = col.pair(PairKey(a, b), x, y, metrics, mx.labels) if metrics else None
        if plan.alpha:
            _add_pair_alpha(mx, col, PairKey(a, b), t, x, y)
            plan.n_both[a, b] = int(mx.counts[~np.isnan(x) & ~np.isnan(y)].sum())
    return plan


def _add_pair_alpha(
    mx: _Matrix, col: _Collector, key: PairKey, t: PairTable | None, x: np.ndarray, y: np.ndarray
) -> None:
    """Alpha of two raters is additive over the items rated by both, i.e. over the pair's
    distinct ``(x, y)`` values: with a pair table, the alpha features of its G rows applied
    to the table's (resampled) joint counts (no extra resampled columns); without one, the
    features of the two columns."""
    akey = key._replace(metric=ALPHA)
    if t is not None and t.G:
        fb = alpha_features(np.column_stack([t.xg, t.yg]), mx.level)
        if fb is not None:
            col.block.add_derived(akey, key, fb[0], fb[1])
    else:
        fb = alpha_features(np.column_stack([x, y]), mx.level)
        if fb is not None:
            col.block.add(akey, fb[0], fb[1])


def _pairwise_results(mx: _Matrix, plan: _PairwisePlan, est: _Estimates) -> dict[str, Any]:
    """``{metric: {"raters", "matrix", "pairs"}}``: the symmetric matrix of values and one
    result per pair (a pair whose alpha has no features is left out of ``pairs``)."""
    out: dict[str, Any] = {}
    for metric in plan.metrics + ([ALPHA] if plan.alpha else []):
        mat: list[list[float | None]] = [[None] * len(plan.names) for _ in plan.names]
        plist = []
        for a, b in plan.pairs:
            key = PairKey(a, b, metric)
            if metric != ALPHA:
                r = est.pair_result(key)
            elif key not in est.point:
                continue
            else:
                t = est.tables.get(PairKey(a, b))
                n = round(t.n) if t is not None else plan.n_both[a, b]
                v = est.value(key)
                r = (
                    est.with_ci(MetricResult(metric, float(v), None, None, n, 2, None), key)
                    if np.isfinite(v)
                    else undefined(metric, "no pairable items or no variation", n, 2)
                )
            mat[a][b] = mat[b][a] = r.value
            d = r.to_dict()
            d["raters"] = [plan.names[a], plan.names[b]]
            plist.append(d)
        out[metric] = {"raters": plan.names, "matrix": mat, "pairs": plist}
    return out


# ---- step 3: human ceilings (leave-one-rater-out from the bootstrap; split-half) -------
def _ceiling_metrics(mx: _Matrix) -> list[str]:
    """Correlations of the ceilings: those requested (all with ``"leave_one_rater_out"``)."""
    return [m for m in CEILING_METRICS if mx.numeric and (m in mx.metrics or "leave_one_rater_out" in mx.metrics)]


def _add_ceilings(mx: _Matrix, col: _Collector) -> list[str]:
    """Register each human vs the mean of the other humans under ``CeilingKey(k, metric)``;
    returns the ceiling metrics."""
    metrics = _ceiling_metrics(mx)
    if mx.nh >= 2 and metrics:
        for k, h in enumerate(mx.hidx):
            others = [i for i in mx.hidx if i != h]
            col.pair(CeilingKey(k), mx.P[:, h], _nanmean_rows(mx.P[:, others]), metrics)
    return metrics


def _split_half_results(mx: _Matrix, metrics: list[str], n_splits: int, seed: int) -> dict[str, Any]:
    """Split-half ceilings of the humans (seeded splits, no bootstrap; see the module doc)."""
    sh = _split_half_many(mx.human_ratings, metrics, n_splits, seed, weights=mx.counts)
    return {m: sh[m].to_dict() for m in metrics}


@dataclass
class _Ceiling:
    """Leave-one-rater-out ceiling of one metric: the mean of the per-rater values
    (``result``, per-rater results in ``result.extra["per_rater"]``) and its bootstrap
    values (``boot``, for the judge's difference CI)."""

    result: MetricResult
    boot: np.ndarray | None = None

    @property
    def per_rater(self) -> dict[str, Any]:
        return self.result.extra.get("per_rater", {})


def _ceiling_results(mx: _Matrix, metrics: list[str], est: _Estimates) -> dict[str, _Ceiling]:
    out: dict[str, _Ceiling] = {}
    if mx.nh < 2:
        for metric in metrics:
            out[metric] = _Ceiling(undefined(metric, "fewer than two human raters", mx.n_items, mx.nh))
        return out
    for metric in metrics:
        per = {mx.raters[h]: est.pair_result(CeilingKey(k, metric), mx.nh) for k, h in enumerate(mx.hidx)}
        bad = [n for n, r in per.items() if r.value is None]
        boot = None
        if bad:
            res = undefined(metric, f"leave-one-out undefined for rater(s) {bad}", mx.n_items, mx.nh)
        else:
            res = MetricResult(
                metric,
                float(np.mean([r.value for r in per.values()])),
                None,
                None,
                max(r.n_items for r in per.values()),
                mx.nh,
                None,
            )
            if est.n_boot:
                boot = np.mean([est.boot[CeilingKey(k, metric)] for k in range(mx.nh)], axis=0)
                res.ci = percentile_ci(boot)[0]
        res.extra["per_rater"] = {n: r.to_dict() for n, r in per.items()}
        out[metric] = _Ceiling(res, boot)
    return out


# ---- step 4: each judge vs the humans --------------------------------------------------
@dataclass
class _JudgePlan:
    """What :func:`_add_judges` registered for every judge."""

    correlations: list[str]  # vs the human mean
    categorical: list[str]  # vs the human majority


def _add_judges(mx: _Matrix, col: _Collector, ceiling_metrics: list[str]) -> _JudgePlan:
    """Register each judge vs the per-item human mean (correlations, and the ceiling
    metrics for its rank) under ``JudgeKey(k, "mean", metric)`` and vs the human majority
    label (kappas, percent agreement) under ``JudgeKey(k, "majority", metric)``."""
    plan = _JudgePlan(mx.correlation_metrics(), mx.kappa_metrics())
    if "percent_agreement" in mx.metrics and mx.categorical:
        plan.categorical.append("percent_agreement")
    vs_mean = sorted(set(plan.correlations) | set(ceiling_metrics))
    for k, j in enumerate(mx.jidx):
        if mx.nh and vs_mean:
            col.pair(JudgeKey(k, "mean"), mx.P[:, j], mx.human_mean, vs_mean)
        if mx.nh and plan.categorical:
            col.pair(JudgeKey(k, "majority"), mx.P[:, j], mx.human_majority, plan.categorical, mx.labels)
    return plan


def _judge_results(
    mx: _Matrix, k: int, plan: _JudgePlan, ceilings: dict[str, _Ceiling], est: _Estimates, pos: float | None
) -> dict[str, Any]:
    """Judge ``k``: vs the human mean / majority, its rank among the humans' leave-one-out
    values and, for binary data, the binary report vs the majority."""
    if mx.nh == 0:
        return {"reason": "undefined: no human raters to compare with"}
    jd: dict[str, Any] = {}
    if plan.correlations:
        jd["vs_human_mean"] = {m: est.pair_result(JudgeKey(k, "mean", m)).to_dict() for m in plan.correlations}
    if plan.categorical:
        jd["vs_human_majority"] = {m: est.pair_result(JudgeKey(k, "majority", m)).to_dict() for m in plan.categorical}
    if ceilings:
        jd["rank_among_humans"] = {m: _rank_among_humans(JudgeKey(k, "mean", m), c, est) for m, c in ceilings.items()}
    if mx.binary:
        j = mx.jidx[k]
        rep = np.repeat(np.arange(len(mx.P)), mx.counts.astype(int))
        jd["binary_vs_majority"] = binary_report(mx.P[rep, j], mx.human_majority[rep], positive=pos)
        jd["positive_rate"] = _rate(mx.P[:, j], mx.counts, pos)
    return jd


def _rank_among_humans(key: JudgeKey, ceiling: _Ceiling, est: _Estimates) -> dict[str, Any]:
    """The judge's correlation with the human mean among the humans' leave-one-out values
    (see the module docstring)."""
    jr = est.pair_result(key)
    lres = ceiling.result
    if jr.value is None or lres.value is None:
        return {"value": None, "reason": jr.reason or lres.reason}
    hv = [d["value"] for d in ceiling.per_rater.values()]
    diff_ci = None
    if est.n_boot and ceiling.boot is not None:
        diff_ci = percentile_ci(est.boot[key] - ceiling.boot)[0]
    return {
        "judge": jr.value,
        "human_leave_one_out": dict(zip(ceiling.per_rater.keys(), hv, strict=True)),
        "human_mean": lres.value,
        "human_min": min(hv),
        "human_max": max(hv),
        "rank": 1 + sum(v > jr.value for v in hv),
        "of": len(hv) + 1,
        "inside_spread": bool(min(hv) <= jr.value <= max(hv)),
        "above_all_humans": bool(jr.value > max(hv)),
        "difference": jr.value - lres.value,
        "difference_ci": diff_ci,
    }


def _rate(v: np.ndarray, w: np.ndarray, pos) -> float | None:
    m = ~np.isnan(v)
    tot = w[m].sum()
    return float(w[m][v[m] == pos].sum() / tot) if tot else None


def split_half(
    data: np.ndarray, metric: str = "pearson", n_splits: int = 100, seed: int = 0, weights: np.ndarray | None = None
) -> MetricResult:
    """Split-half reliability of the rater mean, Spearman-Brown corrected (see module doc).

    For each of ``n_splits`` seeded random splits of the raters into halves (sizes
    floor(R/2), ceil(R/2)) the per-item half means are correlated (``metric``) and
    corrected with r_sb = 2r/(1+r); the value is the mean over splits (``raw_mean`` is the
    uncorrected mean).
    """
    return _split_half_many(data, [metric], n_splits, seed, weights)[metric]


def _split_half_many(
    data: np.ndarray, metrics: Sequence[str], n_splits: int = 100, seed: int = 0, weights: np.ndarray | None = None
) -> dict[str, MetricResult]:
    """:func:`split_half` for several metrics: the same seeded splits for each metric, and
    each distinct split's half-mean table is built once."""
    X = np.asarray(data, dtype=float)
    R = X.shape[1]
    metrics = list(metrics)
    if R < 2:
        return {m: undefined(f"split_half_{m}", "fewer than two raters", X.shape[0], R) for m in metrics}
    rng = np.random.default_rng(seed)
    raw: dict[str, list] = {m: [] for m in metrics}
    sb: dict[str, list] = {m: [] for m in metrics}
    n_items = 0
    cache: dict[tuple, dict[str, float]] = {}
    for _ in range(n_splits):
        perm = rng.permutation(R)
        a, b = sorted(perm[: R // 2].tolist()), sorted(perm[R // 2 :].tolist())
        key = (tuple(a), tuple(b))
        if key not in cache:  # few raters -> few distinct splits; compute each once
            t = PairTable(_nanmean_rows(X[:, a]), _nanmean_rows(X[:, b]), weights=weights)
            if t.G:
                vals = t.compute(t.counts[None], metrics)
                cache[key] = {m: vals[m][0] for m in metrics}
            else:
                cache[key] = dict.fromkeys(metrics, np.nan)
            n_items = max(n_items, round(t.n))
        for m in metrics:
            v = cache[key][m]
            if np.isfinite(v):
                raw[m].append(v)
                sb[m].append(2 * v / (1 + v) if v > -1 else np.nan)
    out = {}
    for m in metrics:
        name = f"split_half_{m}"
        if not raw[m]:
            out[m] = undefined(name, "half means are constant or too few items", n_items, R)
            continue
        out[m] = MetricResult(
            name,
            float(np.nanmean(sb[m])),
            None,
            None,
            n_items,
            R,
            None,
            {"raw_mean": float(np.mean(raw[m])), "n_splits": len(raw[m]), "correction": "Spearman-Brown 2r/(1+r)"},
        )
    return out


def leave_one_rater_out(
    data: np.ndarray, metric: str = "pearson", n_boot: int = 0, seed: int = 0, raters: Sequence[str] | None = None
) -> MetricResult:
    """Each rater vs the mean of the others, averaged (per-rater values in ``per_rater``)."""
    X = np.asarray(data, dtype=float)
    names = list(raters) if raters is not None else [f"r{i}" for i in range(X.shape[1])]
    r = analyse_matrix(
        X, names, names, [], "interval", [metric, "leave_one_rater_out"], n_boot, np.random.default_rng(seed), seed=seed
    )
    d = r["humans_vs_humans"]["leave_one_rater_out"].get(metric)
    if d is None:
        return undefined(metric, "fewer than two raters", X.shape[0], X.shape[1])
    return _from_dict(d)


def judge_vs_humans(
    judge: np.ndarray, humans: np.ndarray, metric: str = "pearson", n_boot: int = 0, seed: int = 0
) -> dict[str, Any]:
    """Judge vs the human mean (``metric`` correlation) and its rank among the humans'
    leave-one-out correlations.  ``humans`` is items x human raters."""
    H = np.asarray(humans, dtype=float)
    names = [f"h{i}" for i in range(H.shape[1])]
    X = np.column_stack([H, np.asarray(judge, dtype=float)])
    r = analyse_matrix(
        X,
        [*names, "judge"],
        names,
        ["judge"],
        "interval",
        [metric, "leave_one_rater_out"],
        n_boot,
        np.random.default_rng(seed),
        seed=seed,
    )
    j = r["judges_vs_humans"]["judge"]
    return {
        "vs_human_mean": j.get("vs_human_mean", {}).get(metric),
        "rank_among_humans": j.get("rank_among_humans", {}).get(metric),
    }


def _from_dict(d: dict) -> MetricResult:
    base = {k: d[k] for k in ("metric", "value", "p_value", "n_items", "n_raters", "reason")}
    extra = {k: v for k, v in d.items() if k not in base and k != "ci"}
    return MetricResult(ci=tuple(d["ci"]) if d.get("ci") else None, extra=extra, **base)
