"""Krippendorff's alpha from the coincidence matrix.

Source: K. Krippendorff, "Computing Krippendorff's Alpha-Reliability" (2011), and
Krippendorff, *Content Analysis* (2004/2013), ch. 12:

    alpha = 1 - D_o / D_e = 1 - (n - 1) * sum_{c,k} o_ck delta^2_ck / sum_{c,k} n_c n_k delta^2_ck

with the coincidence matrix ``o_ck = sum_u (sum_{i != j in u} [x_i=c][x_j=k]) / (m_u - 1)``
over *pairable* units (``m_u >= 2`` values), ``n_c = sum_k o_ck`` and ``n = sum_c n_c``.
Difference functions: nominal ``[c != k]``; interval ``(c - k)^2``; ratio
``((c - k)/(c + k))^2``; ordinal ``(sum_{g=c}^{k} n_g - (n_c + n_k)/2)^2``.

Implementation notes (all exact, vectorised):
- interval: both sums reduce to per-unit moments,
  ``sum_{i!=j}(x_i-x_j)^2 = 2 m S2 - 2 S1^2``, so no K x K matrix is built;
- ordinal: ``delta_ck = (r_k - r_c)^2`` with mid-rank positions
  ``r_c = N_{c-1} + n_c / 2`` (``N`` the cumulative marginal), i.e. ordinal alpha is the
  interval alpha of the mid-rank-transformed values;
- nominal: ``sum o delta = sum_u (m_u^2 - sum_c n_uc^2)/(m_u - 1)``,
  ``sum n_c n_k delta = n^2 - sum n_c^2``;
- ratio: per-unit pairs of rater columns, and a dense K x K expected-disagreement sum.

Input layout: ``data`` is an *items x raters* matrix (NaN = missing).  The ``krippendorff``
package uses the transpose (raters x units).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .result import MetricResult, undefined

LEVELS = ("nominal", "ordinal", "interval", "ratio")
#: ordinal bootstrap features grow as K^2; above this many distinct values no bootstrap CI.
ORDINAL_BOOT_MAX_K = 64
RATIO_BOOT_MAX_K = 2000


def _check_level(level: str) -> str:
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    return level


def _pairable(data: np.ndarray):
    X = np.asarray(data, dtype=float)
    if X.ndim != 2:
        raise ValueError("data must be a 2-D items x raters matrix")
    mask = ~np.isnan(X)
    m = mask.sum(1)
    keep = m >= 2
    return X[keep], mask[keep], m[keep]


def _interval_sums(X: np.ndarray, mask: np.ndarray, m: np.ndarray) -> tuple[float, float]:
    """(sum o delta, sum n_c n_k delta) for the interval metric on pairable X."""
    vals = X[mask]
    mu = vals.mean()
    Xc = np.where(mask, X - mu, 0.0)
    s1 = Xc.sum(1)
    s2 = (Xc * Xc).sum(1)
    do = float(((2 * m * s2 - 2 * s1 * s1) / (m - 1)).sum())
    n = float(m.sum())
    de = float(2 * n * s2.sum() - 2 * s1.sum() ** 2)
    return do, de


def _categories(vals: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(vals, return_inverse=True, return_counts=True)`` in one pass: by counting
    (O(n)) when the values are integers in a small range (Likert scales, binary answers, codes),
    by sorting otherwise."""
    if len(vals):
        lo, hi = vals.min(), vals.max()
        if hi - lo < 1_000_000:
            iv = (vals - lo).astype(np.int64)
            if np.array_equal(iv, vals - lo):
                counts = np.bincount(iv)
                present = np.nonzero(counts)[0]
                code_of = np.zeros(len(counts), dtype=np.int64)
                code_of[present] = np.arange(len(present))
                return present.astype(float) + lo, code_of[iv], counts[present]
    return np.unique(vals, return_inverse=True, return_counts=True)


def _midranks(counts: np.ndarray) -> np.ndarray:
    """Krippendorff's ordinal metric works on the mid-ranks of the categories."""
    return np.cumsum(counts) - counts + counts / 2.0


def alpha_sums(data: np.ndarray, level: str) -> tuple[float, float, int, int, int]:
    """Return ``(sum o*delta, sum n_c n_k delta, n_pairable_items, n_values, n_categories)``."""
    _check_level(level)
    X, mask, m = _pairable(data)
    n_items = int(X.shape[0])
    if n_items == 0:
        return 0.0, 0.0, 0, 0, 0
    vals = X[mask]
    n = float(len(vals))
    cats, codes, counts = _categories(vals)
    K = int(len(cats))
    if level == "interval":
        do, de = _interval_sums(X, mask, m)
    elif level == "ordinal":
        R = np.full(X.shape, np.nan)
        R[mask] = _midranks(counts)[codes]
        do, de = _interval_sums(R, mask, m)
    elif level == "nominal":
        rows = np.nonzero(mask)[0]
        key = rows.astype(np.int64) * K + codes
        if n_items * K <= 50_000_000:
            nuc2 = np.bincount(key, minlength=n_items * K).astype(float) ** 2
            sq = nuc2.reshape(n_items, K).sum(1)
        else:
            uk, cnt = np.unique(key, return_counts=True)
            sq = np.bincount(uk // K, weights=cnt.astype(float) ** 2, minlength=n_items)
        do = float(((m * m - sq) / (m - 1)).sum())
        nc = counts.astype(float)
        de = float(n * n - (nc * nc).sum())
    else:  # ratio
        R = X.shape[1]
        do = 0.0
        for i in range(R):
            for j in range(i + 1, R):
                ok = mask[:, i] & mask[:, j]
                if not ok.any():
                    continue
                a, b = X[ok, i], X[ok, j]
                s = a + b
                with np.errstate(invalid="ignore", divide="ignore"):
                    d = np.where(s != 0, ((a - b) / s) ** 2, 0.0)
                do += float((2 * d / (m[ok] - 1)).sum())
        nc = counts.astype(float)
        de = 0.0
        step = max(1, 4_000_000 // max(K, 1))
        for s0 in range(0, K, step):
            c = cats[s0:s0 + step, None]
            s = c + cats[None, :]
            with np.errstate(invalid="ignore", divide="ignore"):
                dl = np.where(s != 0, ((c - cats[None, :]) / s) ** 2, 0.0)
            de += float(nc[s0:s0 + step] @ dl @ nc)
    return do, de, n_items, int(n), K


def krippendorff_alpha(data: np.ndarray, level: str = "interval") -> MetricResult:
    """Krippendorff's alpha for an items x raters matrix (NaN = missing).

    Undefined (value None) when no item has two ratings, or when all pairable values are
    identical (D_e = 0).
    """
    X = np.asarray(data, dtype=float)
    n_raters = int((~np.isnan(X)).any(0).sum()) if X.ndim == 2 else 0
    do, de, n_items, n, K = alpha_sums(X, level)
    if n_items == 0:
        return undefined("krippendorff_alpha", "no item has two or more ratings", 0, n_raters, level=level)
    if K < 2 or de <= 0:
        return undefined("krippendorff_alpha", "all pairable values are identical (no expected disagreement)",
                         n_items, n_raters, level=level)
    value = 1.0 - (n - 1) * do / de
    return MetricResult("krippendorff_alpha", float(value), None, None, n_items, n_raters, None,
                        {"level": level, "n_values": n})


# ---------------------------------------------------------------------------------------
# Bootstrap features: alpha is a function of additive per-item sums.
# ---------------------------------------------------------------------------------------
def alpha_features(data: np.ndarray, level: str) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]] | None:
    """Per-item additive features ``F`` (items x f) and ``finalize(S) -> alpha`` such that
    ``finalize(w @ F)`` is alpha of the data with items weighted by ``w`` (w = 1: the
    point estimate; multinomial counts: a bootstrap resample).  None if too many categories
    for the level's feature representation.
    """
    _check_level(level)
    X = np.asarray(data, dtype=float)
    mask = ~np.isnan(X)
    m = mask.sum(1).astype(float)
    pair = m >= 2
    vals = X[mask & pair[:, None]]
    cats = np.unique(vals)
    K = len(cats)
    mm = np.where(pair, m, 2.0)
    if level == "interval":
        mu = vals.mean() if len(vals) else 0.0
        Xc = np.where(mask & pair[:, None], X - mu, 0.0)
        s1 = Xc.sum(1)
        s2 = (Xc * Xc).sum(1)
        mp = np.where(pair, m, 0.0)
        d = np.where(pair, (2 * mm * s2 - 2 * s1 * s1) / (mm - 1), 0.0)
        F = np.column_stack([mp, s1, s2, d])

        def fin(S):
            n = S[:, 0]
            de = 2 * n * S[:, 2] - 2 * S[:, 1] ** 2
            with np.errstate(invalid="ignore", divide="ignore"):
                a = 1 - (n - 1) * S[:, 3] / de
            a[~(de > 1e-12 * np.maximum(n, 1) ** 2)] = np.nan
            return a
        return F, fin
    if K == 0:
        return None
    codes = np.searchsorted(cats, np.where(mask, X, cats[0]))
    nuc = np.zeros((X.shape[0], K))
    rows = np.repeat(np.arange(X.shape[0])[:, None], X.shape[1], 1)
    np.add.at(nuc, (rows[mask], codes[mask]), 1.0)
    nuc[~pair] = 0.0
    if level == "nominal":
        d = np.where(pair, (mm * mm - (nuc * nuc).sum(1)) / (mm - 1), 0.0)
        F = np.column_stack([nuc, d])

        def fin(S):
            nc = S[:, :K]
            n = nc.sum(1)
            de = n * n - (nc * nc).sum(1)
            with np.errstate(invalid="ignore", divide="ignore"):
                a = 1 - (n - 1) * S[:, K] / de
            a[~(de > 0.5)] = np.nan
            return a
        return F, fin
    if level == "ratio":
        if K > RATIO_BOOT_MAX_K:
            return None
        s = cats[:, None] + cats[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            dl = np.where(s != 0, ((cats[:, None] - cats[None, :]) / s) ** 2, 0.0)
        d = np.where(pair, np.einsum("uk,kl,ul->u", nuc, dl, nuc) / (mm - 1), 0.0)
        F = np.column_stack([nuc, d])

        def fin(S):
            nc = S[:, :K]
            n = nc.sum(1)
            de = np.einsum("bk,kl,bl->b", nc, dl, nc)
            with np.errstate(invalid="ignore", divide="ignore"):
                a = 1 - (n - 1) * S[:, K] / de
            a[~(de > 0)] = np.nan
            return a
        return F, fin
    # ordinal: delta depends on the (resampled) marginals -> keep the off-diagonal coincidences
    if K > ORDINAL_BOOT_MAX_K:
        return None
    iu, ju = np.triu_indices(K, 1)
    C = (nuc[:, iu] * nuc[:, ju]) / (mm - 1)[:, None]
    C[~pair] = 0.0
    F = np.column_stack([nuc, C])

    def fin(S):
        nc = S[:, :K]
        n = nc.sum(1)
        r = np.cumsum(nc, 1) - nc / 2.0
        dl = (r[:, ju] - r[:, iu]) ** 2  # (B, K(K-1)/2)
        do = 2 * (S[:, K:] * dl).sum(1)
        de = 2 * (nc[:, iu] * nc[:, ju] * dl).sum(1)
        with np.errstate(invalid="ignore", divide="ignore"):
            a = 1 - (n - 1) * do / de
        a[~(de > 0)] = np.nan
        return a
    return F, fin
