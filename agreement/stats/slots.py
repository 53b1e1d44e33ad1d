"""Pooled slot-vs-slot agreement: "annotator 1 vs annotator 2" when many people share the work.

Papers whose items are each rated by two (or a few) people drawn from a larger pool report the
agreement of the *slots*, not of named raters: for every item, the rating of whoever filled its
first slot against the rating of whoever filled its second, pooled over all items (CQ-Bench's
50 volunteers, CULTIVate's two raters per image; Cohen's kappa "between the two annotator
groups"). A slot is the rank of the rater's assignment for the item (first, second, ...) or a
value of a rater attribute (e.g. nationality); the caller builds the matrix, see
:meth:`.validation.ValidationInput.by_slot`.

:func:`slot_agreement` takes ``S`` (items x slots, NaN = the slot is empty for that item):

- two slots: the two-rater coefficient of column 1 vs column 2 over the items with both slots
  filled (:func:`.kappa.cohen_kappa` or :func:`.correlation.correlation`, so the value is
  exactly sklearn's ``cohen_kappa_score`` / scipy's ``pearsonr`` / ``spearmanr`` /
  ``kendalltau`` of the two columns);
- more than two: the mean over slot pairs of those pooled coefficients (pairs where it is
  undefined are left out).

The 95% interval is a percentile bootstrap over items (one resample shared by every slot
pair), computed from :class:`.pairs.PairTable` count vectors as the other coefficients are.
This is the second way to state the human ceiling, beside the mean over raters of each rater
vs the mean of the others (:func:`.analysis.leave_one_rater_out`): the two coincide only when
the same people fill the same slots everywhere.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import combinations

import numpy as np

from .bootstrap import compress_rows, percentile_ci, resample_counts
from .correlation import CORRELATIONS, correlation
from .kappa import cohen_kappa
from .pairs import PairTable
from .result import MetricResult, undefined

KAPPAS = ("cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic")
SLOT_METRICS = (*KAPPAS, *CORRELATIONS)


def pair_value(x: np.ndarray, y: np.ndarray, metric: str) -> MetricResult:
    """The two-rater coefficient ``metric`` of two aligned vectors (NaN = missing)."""
    if metric in KAPPAS:
        weights = None if metric == "cohen_kappa" else metric.rsplit("_", 1)[1]
        return cohen_kappa(x, y, weights)
    return correlation(x, y, metric)


def slot_agreement(S: np.ndarray, metric: str = "cohen_kappa", n_boot: int = 0, seed: int = 0) -> MetricResult:
    """Pooled slot-vs-slot ``metric`` of an items x slots matrix (see the module docstring);
    ``n_items`` is the number of items with both slots filled (two slots) or with at least two
    filled slots (more)."""
    return slot_bootstrap(S, metric, n_boot, seed)[0]


def slot_bootstrap(
    S: np.ndarray, metric: str = "cohen_kappa", n_boot: int = 0, seed: int = 0
) -> tuple[MetricResult, np.ndarray]:
    """:func:`slot_agreement` and its ``n_boot`` bootstrap values (NaN where a resample leaves
    it undefined; empty without a bootstrap), e.g. to combine independent strata."""
    if metric not in SLOT_METRICS:
        raise ValueError(f"metric must be one of {SLOT_METRICS}")
    S = np.asarray(S, dtype=float)
    if S.ndim != 2:
        raise ValueError("S must be an items x slots matrix")
    S = S[:, ~np.isnan(S).all(0)] if S.size else S
    k = S.shape[1]
    n_items = int(((~np.isnan(S)).sum(1) >= 2).sum()) if k else 0
    if k < 2:
        return undefined(metric, "fewer than two filled slots", n_items, k), np.zeros(0)
    pairs = list(combinations(range(k), 2))
    results = [pair_value(S[:, a], S[:, b], metric) for a, b in pairs]
    defined = [r.value for r in results if r.value is not None]
    if not defined:
        return undefined(metric, results[0].reason or "undefined for every slot pair", n_items, k), np.zeros(0)
    boot = _bootstrap(S, pairs, metric, n_boot, seed) if n_boot else np.zeros(0)
    ci = percentile_ci(boot)[0] if len(boot) else None
    if k == 2:
        return replace(results[0], ci=ci), boot
    extra = {"slot_pairs": len(defined)}
    return MetricResult(metric, float(np.mean(defined)), ci, None, n_items, k, None, extra), boot


def _bootstrap(S: np.ndarray, pairs: list[tuple[int, int]], metric: str, n_boot: int, seed: int) -> np.ndarray:
    """Bootstrap values of the (mean over pairs) coefficient over item resamples."""
    P, cnt, _ = compress_rows(S)
    tables = []
    for a, b in pairs:
        t = PairTable(P[:, a], P[:, b], weights=cnt)
        if t.G:
            tables.append((t, t.onehot()))
    if not tables:
        return np.full(n_boot, np.nan)
    chunks = []
    for W in resample_counts(cnt, n_boot, np.random.default_rng(seed)):
        vals = np.column_stack([t.compute(np.asarray((H.T @ W.T).T), [metric])[metric] for t, H in tables])
        ok = np.isfinite(vals)
        with np.errstate(invalid="ignore", divide="ignore"):
            chunks.append(np.where(ok, vals, 0.0).sum(1) / ok.sum(1))
    return np.concatenate(chunks)
