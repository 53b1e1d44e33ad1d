"""Chance-corrected agreement for categorical ratings.

- Cohen's kappa (Cohen 1960), weighted kappa (Cohen 1968): see :mod:`.pairs`; weights as
  in ``sklearn.metrics.cohen_kappa_score`` (linear |i-j|, quadratic (i-j)^2 on label
  indices of the sorted union of both raters' labels).
- Fleiss' kappa (Fleiss 1971): ``(P_bar - P_e)/(1 - P_e)`` with
  ``P_i = (sum_j n_ij^2 - m_i)/(m_i (m_i - 1))`` and ``p_j = sum_i n_ij / sum_i m_i``; items
  need not all have the same number of ratings (items with < 2 ratings are dropped).  With
  a constant number of raters this is exactly statsmodels' ``fleiss_kappa``.
- Gwet's AC1 / AC2 (Gwet 2008; Gwet, *Handbook of Inter-Rater Reliability*, 4th ed. 2014,
  ch. 2-3, as implemented in irrCAC ``gwet.ac1.raw``):
  ``p_a = mean_{i: r_i>=2} sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1))`` with
  ``r*_ik = sum_l w_kl r_il``; ``pi_k = mean_{i: r_i>=1} r_ik / r_i``;
  ``p_e = T_w / (q (q - 1)) * sum_k pi_k (1 - pi_k)`` with ``T_w = sum_kl w_kl``;
  ``AC = (p_a - p_e)/(1 - p_e)``.  Weights: identity (AC1), linear
  ``1 - |c_k - c_l|/(c_max - c_min)`` or quadratic ``1 - (c_k - c_l)^2/(c_max - c_min)^2`` on
  the category values (AC2).
- Percent agreement: mean over items with >= 2 ratings of the share of agreeing rater
  pairs (``P_bar`` of Fleiss); for two raters the share of identical ratings.

Input: ``data`` items x raters (NaN = missing); values are category codes or numbers.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .pairs import PairTable, corr_pvalue  # noqa: F401  (re-exported helpers)
from .result import MetricResult, undefined

#: categorical coefficients are refused above this many distinct values
MAX_CATEGORIES = 100

Features = tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]


def category_counts(data: np.ndarray, cats: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(items x K) count matrix ``n_ik`` and the sorted category values."""
    X = np.asarray(data, dtype=float)
    mask = ~np.isnan(X)
    if cats is None:
        cats = np.unique(X[mask])
    K = len(cats)
    nuc = np.zeros((X.shape[0], max(K, 1)))
    if K:
        codes = np.searchsorted(cats, np.where(mask, X, cats[0]))
        rows = np.repeat(np.arange(X.shape[0])[:, None], X.shape[1], 1)
        np.add.at(nuc, (rows[mask], codes[mask]), 1.0)
    return nuc[:, :K], cats


def fleiss_features(data: np.ndarray, cats: np.ndarray | None = None) -> Features:
    nuc, cats = category_counts(data, cats)
    m = nuc.sum(1)
    two = m >= 2
    mm = np.where(two, m, 2.0)
    Pi = np.where(two, ((nuc * nuc).sum(1) - mm) / (mm * (mm - 1)), 0.0)
    F = np.column_stack([two.astype(float), Pi, nuc * two[:, None]])

    def fin(S: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            pbar = S[:, 1] / S[:, 0]
            p = S[:, 2:] / S[:, 2:].sum(1, keepdims=True)
            pe = (p * p).sum(1)
            k = (pbar - pe) / (1 - pe)
        k[~((S[:, 0] >= 1) & (1 - pe > 1e-12))] = np.nan
        return k

    return F, fin


def percent_agreement_features(data: np.ndarray, cats: np.ndarray | None = None) -> Features:
    nuc, _ = category_counts(data, cats)
    m = nuc.sum(1)
    two = m >= 2
    mm = np.where(two, m, 2.0)
    Pi = np.where(two, (nuc * (nuc - 1)).sum(1) / (mm * (mm - 1)), 0.0)
    F = np.column_stack([two.astype(float), Pi])

    def fin(S: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            v = S[:, 1] / S[:, 0]
        v[~(S[:, 0] >= 1)] = np.nan
        return v

    return F, fin


def gwet_weights(cats: np.ndarray, weights: str | None) -> np.ndarray:
    K = len(cats)
    if weights in (None, "identity", "unweighted"):
        return np.eye(K)
    span = float(cats.max() - cats.min()) if K > 1 else 1.0
    d = np.abs(cats[:, None] - cats[None, :]) / (span if span else 1.0)
    if weights == "linear":
        return 1.0 - d
    if weights == "quadratic":
        return 1.0 - d * d
    raise ValueError(f"unknown weights {weights!r}")


def gwet_features(data: np.ndarray, weights: str | None = None, cats: np.ndarray | None = None) -> Features:
    nuc, cats = category_counts(data, cats)
    K = len(cats)
    W = gwet_weights(cats, weights)
    r = nuc.sum(1)
    two = r >= 2
    one = r >= 1
    rr = np.where(two, r, 2.0)
    rstar = nuc @ W.T
    pa_i = np.where(two, (nuc * (rstar - 1)).sum(1) / (rr * (rr - 1)), 0.0)
    share = np.where(one[:, None], nuc / np.where(one, r, 1.0)[:, None], 0.0)
    F = np.column_stack([two.astype(float), pa_i, one.astype(float), share])
    tw = W.sum()

    def fin(S: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            pa = S[:, 1] / S[:, 0]
            pi = S[:, 3:] / S[:, 2:3]
            pe = tw * (pi * (1 - pi)).sum(1) / (K * (K - 1)) if K > 1 else np.full(len(S), np.nan)
            v = (pa - pe) / (1 - pe)
        v[~((S[:, 0] >= 1) & (np.abs(1 - pe) > 1e-12))] = np.nan
        return v

    return F, fin


def _multi(metric: str, data: np.ndarray, builder, min_categories: int = 2, **kw) -> MetricResult:
    X = np.asarray(data, dtype=float)
    if X.ndim != 2:
        raise ValueError("data must be a 2-D items x raters matrix")
    mask = ~np.isnan(X)
    n_raters = int(mask.any(0).sum())
    n_items = int((mask.sum(1) >= 2).sum())
    if n_raters < 2:
        return undefined(metric, "fewer than two raters", n_items, n_raters)
    if n_items == 0:
        return undefined(metric, "no item has two or more ratings", 0, n_raters)
    K = len(np.unique(X[mask]))
    if K > MAX_CATEGORIES:
        return undefined(metric, f"more than {MAX_CATEGORIES} distinct values: not categorical data", n_items, n_raters)
    if K < min_categories:  # noqa: SIM300 (K is a count, not a constant)
        return undefined(metric, "a single category: chance agreement is 1", n_items, n_raters)
    F, fin = builder(X, **kw)
    v = float(fin(F.sum(0)[None, :])[0])
    if not np.isfinite(v):
        return undefined(metric, "chance agreement is 1 (a single category in use)", n_items, n_raters)
    return MetricResult(metric, v, None, None, n_items, n_raters, None)


def fleiss_kappa(data: np.ndarray) -> MetricResult:
    """Fleiss' kappa (generalised to a varying number of ratings per item)."""
    return _multi("fleiss_kappa", data, fleiss_features)


def gwet_ac(data: np.ndarray, weights: str | None = None) -> MetricResult:
    """Gwet's AC1 (``weights=None``) or AC2 (``"linear"`` / ``"quadratic"``)."""
    name = "gwet_ac1" if weights in (None, "identity") else f"gwet_ac2_{weights}"
    return _multi(name, data, gwet_features, weights=weights)


def percent_agreement(data: np.ndarray) -> MetricResult:
    """Share of agreeing rater pairs per item, averaged over items with >= 2 ratings."""
    return _multi("percent_agreement", data, percent_agreement_features, min_categories=1)


def cohen_kappa(
    x: np.ndarray, y: np.ndarray, weights: str | None = None, labels: np.ndarray | None = None
) -> MetricResult:
    """Cohen's kappa of two raters (pairwise-complete items); ``weights`` None/linear/quadratic."""
    name = "cohen_kappa" if weights is None else f"cohen_kappa_{weights}"
    t = PairTable(x, y)
    if t.n < 2:
        return undefined(name, "fewer than two items rated by both raters", int(t.n), 2)
    if len(np.union1d(t.xu, t.yu)) > MAX_CATEGORIES:
        return undefined(name, f"more than {MAX_CATEGORIES} distinct values: not categorical data", int(t.n), 2)
    v = float(t.compute(t.counts[None], [name], labels=labels)[name][0])
    if not np.isfinite(v):
        return undefined(name, "chance agreement is 1 (both raters use a single category)", int(t.n), 2)
    return MetricResult(name, v, None, None, int(t.n), 2, None)
