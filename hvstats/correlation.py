"""Correlation between two raters or two aggregates (pairwise-complete items).

Pearson r, Spearman rho (mid-ranks) and Kendall tau-b, each with its two-sided p-value and
n.  The values are computed from :class:`.pairs.PairTable` (the same code path the
bootstrap uses) and agree with scipy.stats.pearsonr / spearmanr / kendalltau.
"""

from __future__ import annotations

import numpy as np

from .pairs import PairTable, corr_pvalue
from .result import MetricResult, undefined

CORRELATIONS = ("pearson", "spearman", "kendall")


def pair_result(table: PairTable, metric: str, value: float, n_raters: int = 2) -> MetricResult:
    """Wrap a computed pair coefficient in a MetricResult with guards and p-value."""
    n = round(table.n)
    if n < 3:
        return undefined(metric, "fewer than three items rated by both", n, n_raters)
    if table.kx < 2 or table.ky < 2:
        return undefined(metric, "a constant rating vector (zero variance)", n, n_raters)
    if value is None or not np.isfinite(value):
        return undefined(metric, "coefficient not computable for these data", n, n_raters)
    p = None
    if metric in ("pearson", "spearman"):
        p = corr_pvalue(value, table.n)
    elif metric == "kendall":
        p = table.kendall_pvalue()
    return MetricResult(metric, float(value), None, p, n, n_raters, None)


def correlation(x: np.ndarray, y: np.ndarray, metric: str = "pearson") -> MetricResult:
    """Correlation of two vectors aligned by item (NaN = missing, dropped pairwise)."""
    if metric not in CORRELATIONS:
        raise ValueError(f"metric must be one of {CORRELATIONS}")
    t = PairTable(x, y)
    v = t.compute(t.counts[None], [metric])[metric][0] if t.G else np.nan
    return pair_result(t, metric, v)


def pearson(x: np.ndarray, y: np.ndarray) -> MetricResult:
    return correlation(x, y, "pearson")


def spearman(x: np.ndarray, y: np.ndarray) -> MetricResult:
    return correlation(x, y, "spearman")


def kendall(x: np.ndarray, y: np.ndarray) -> MetricResult:
    return correlation(x, y, "kendall")
