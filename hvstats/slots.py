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
pair, :mod:`.pair_groups`), computed from :class:`.pairs.PairTable` count vectors as the other
coefficients are.
This is the second way to state the human ceiling, beside the mean over raters of each rater
vs the mean of the others (:func:`.analysis.leave_one_rater_out`): the two coincide only when
the same people fill the same slots everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from itertools import combinations

import numpy as np

from .bootstrap import percentile_ci
from .correlation import CORRELATIONS, correlation
from .kappa import cohen_kappa
from .pair_groups import WHOLE, pair_group_bootstrap
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
    return slot_bootstraps(S, [metric], n_boot, seed)[metric]


def slot_bootstraps(
    S: np.ndarray, metrics: Sequence[str], n_boot: int = 0, seed: int = 0
) -> dict[str, tuple[MetricResult, np.ndarray]]:
    """:func:`slot_bootstrap` of several metrics of one matrix from the same resamples (the
    draws depend only on ``S`` and ``seed``, so each metric's result is exactly what
    :func:`slot_bootstrap` gives for it alone), with the pair tables built once."""
    metrics = list(metrics)
    for metric in metrics:
        if metric not in SLOT_METRICS:
            raise ValueError(f"metric must be one of {SLOT_METRICS}")
    S = np.asarray(S, dtype=float)
    if S.ndim != 2:
        raise ValueError("S must be an items x slots matrix")
    S = S[:, ~np.isnan(S).all(0)] if S.size else S
    k = S.shape[1]
    n_items = int(((~np.isnan(S)).sum(1) >= 2).sum()) if k else 0
    if k < 2:
        return {m: (undefined(m, "fewer than two filled slots", n_items, k), np.zeros(0)) for m in metrics}
    pairs = list(combinations(range(k), 2))
    out: dict[str, tuple[MetricResult, np.ndarray]] = {}
    live: dict[str, list[MetricResult]] = {}
    for metric in metrics:
        results = [pair_value(S[:, a], S[:, b], metric) for a, b in pairs]
        if any(r.value is not None for r in results):
            live[metric] = results
        else:
            reason = results[0].reason or "undefined for every slot pair"
            out[metric] = (undefined(metric, reason, n_items, k), np.zeros(0))
    boots = _bootstrap(S, pairs, list(live), n_boot, seed) if n_boot and live else {}
    for metric, results in live.items():
        boot = boots.get(metric, np.zeros(0))
        ci = percentile_ci(boot)[0] if len(boot) else None
        if k == 2:
            out[metric] = (replace(results[0], ci=ci), boot)
            continue
        defined = [r.value for r in results if r.value is not None]
        extra = {"slot_pairs": len(defined)}
        out[metric] = (MetricResult(metric, float(np.mean(defined)), ci, None, n_items, k, None, extra), boot)
    return {m: out[m] for m in metrics}


def _bootstrap(
    S: np.ndarray, pairs: list[tuple[int, int]], metrics: list[str], n_boot: int, seed: int
) -> dict[str, np.ndarray]:
    """Bootstrap values of each metric's (mean over the defined pairs) coefficient over item
    resamples, all pairs from the same resamples (:func:`.pair_groups.pair_group_bootstrap`)."""
    got = pair_group_bootstrap(S, {"slots": pairs}, metrics, n_boot, seed)[WHOLE]["slots"]
    return {m: got[m].mean_of_defined() for m in metrics}
