"""Krippendorff's alpha: one implementation for the point estimate and the bootstrap.

Source: K. Krippendorff, "Computing Krippendorff's Alpha-Reliability" (2011; cited below as
K2011), and Krippendorff, *Content Analysis* (2004/2013), ch. 12.  K2011's general form is

    alpha = 1 - D_o / D_e,  D_o = (1/n) sum_{c,k} o_ck delta^2_ck,
                            D_e = 1/(n (n - 1)) sum_{c,k} n_c n_k delta^2_ck,

i.e. ``alpha = 1 - (n - 1) * sum o_ck delta^2_ck / sum n_c n_k delta^2_ck``, with K2011's
coincidence matrix of the *pairable* units (units with ``m_u >= 2`` values; units with one
value drop out)

    o_ck = sum_u (number of ordered pairs (i, j), i != j, in u with x_i = c, x_j = k) / (m_u - 1),

its marginals ``n_c = sum_k o_ck`` and ``n = sum_c n_c`` (the number of pairable values).
K2011's difference functions ``delta^2_ck``: nominal ``[c != k]``; ordinal
``(sum_{g=c}^{k} n_g - (n_c + n_k)/2)^2``; interval ``(c - k)^2``; ratio ``((c - k)/(c + k))^2``.

One implementation
------------------
Every sum in the formula is a sum over units, so alpha is ``finalize(w @ F)``: a function of
additive per-unit features ``F`` (units x f) weighted by unit multiplicities ``w``.  The
point estimate :func:`krippendorff_alpha` is ``finalize(1 @ F)``; a bootstrap resample of
units (:mod:`.bootstrap`) is ``finalize(w @ F)`` with multinomial counts ``w``;
:func:`alpha_features` hands ``(F, finalize)`` to the bootstrap.  Both go through
:func:`_features`, so there is a single definition of each level's alpha.

Features per level (``m_u`` values in unit u, only pairable units are non-zero):

- interval: ``[m_u, sum_i x_i, sum_i x_i^2, d_u]`` with the values centred on their mean (for
  numerical stability) and ``d_u = sum_{i!=j} (x_i - x_j)^2 / (m_u - 1)
  = (2 m_u sum x^2 - 2 (sum x)^2) / (m_u - 1)``; the expected sum is
  ``sum_{c,k} n_c n_k (c - k)^2 = 2 n sum x^2 - 2 (sum x)^2`` over all pairable values.
- nominal: ``[n_uc (per category), d_u]`` with ``d_u = (m_u^2 - sum_c n_uc^2) / (m_u - 1)``
  (the off-diagonal coincidences of u); expected ``n^2 - sum_c n_c^2``.
- ordinal: ``[n_uc, C_u,ck (c < k)]`` with ``C_u,ck = n_uc n_uk / (m_u - 1)``: delta depends on
  the (resampled) marginals, so the off-diagonal coincidences are kept.  The ordinal
  difference is ``(r_k - r_c)^2`` with the mid-rank positions ``r_c = N_{c-1} + n_c/2`` (``N``
  the cumulative marginal), hence the expected sum is the interval one of the mid-ranks.
- ratio: ``[n_uc, d_u]`` with ``d_u = sum_{i!=j} delta^2(x_i, x_j) / (m_u - 1)`` (summed over
  the unit's rater pairs); expected ``sum_{c,k} n_c n_k delta^2_ck`` (K x K, in row blocks).

Features with more than ``DENSE_MAX_CELLS`` cells are built as a sparse matrix (many
categories: continuous data, free-text labels); the ordinal coincidences are then collected
from the units' rater pairs, one column per category pair that occurs (or, with very many
categories, where no bootstrap is offered, one column per coincident pair of values).

Input layout: ``data`` is an *items x raters* matrix (NaN = missing).  The ``krippendorff``
package uses the transpose (raters x units).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from .result import MetricResult, undefined

LEVELS = ("nominal", "ordinal", "interval", "ratio")
#: ordinal bootstrap features grow as K^2; above this many distinct values no bootstrap CI.
ORDINAL_BOOT_MAX_K = 64
#: ratio bootstrap finaliser is a K x K quadratic form per resample; above: no bootstrap CI.
RATIO_BOOT_MAX_K = 2000
#: features with more cells (units x columns) are built sparse.
DENSE_MAX_CELLS = 20_000_000
#: sparse ordinal features merge the coincidences of equal category pairs into one column
#: (by counting) up to this many K x K cells; above (far more categories than bootstrap
#: features allow) each coincident value pair keeps its own column.
_MERGE_PAIRS_MAX = 1 << 20
#: rows of the K x K ratio difference matrix evaluated at a time (memory bound).
_RATIO_BLOCK_CELLS = 4_000_000

Finalize = Callable[[np.ndarray], np.ndarray]


class AlphaFeatures(NamedTuple):
    """``finalize(w @ F)`` is alpha of the data with units weighted by ``w`` (a ``(B, units)``
    array: ones for the point estimate, multinomial counts for bootstrap resamples); it
    returns a ``(B,)`` array, NaN where alpha is undefined (no expected disagreement)."""

    F: np.ndarray | sp.spmatrix
    finalize: Finalize


def _check_level(level: str) -> str:
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    return level


def _categories(vals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(vals, return_inverse=True)`` in one pass: by counting (O(n)) when the values
    are integers in a small range (Likert scales, binary answers, codes), by sorting otherwise."""
    if len(vals):
        lo, hi = vals.min(), vals.max()
        if hi - lo < 1_000_000:
            iv = (vals - lo).astype(np.int64)
            if np.array_equal(iv, vals - lo):
                present = np.flatnonzero(np.bincount(iv))
                code_of = np.zeros(int(iv.max()) + 1, dtype=np.int64)
                code_of[present] = np.arange(len(present))
                return present.astype(float) + lo, code_of[iv]
    cats, codes = np.unique(vals, return_inverse=True)
    return cats, codes.reshape(-1)


@dataclass
class _Coding:
    """The pairable values of an items x raters matrix (K2011: units with a single value are
    not pairable and drop out of the coincidence matrix).

    ``ok``: mask of the pairable values; ``m``: values per unit (0 for a unit that is not
    pairable); ``codes``: index into ``cats`` (the sorted distinct pairable values) of each
    pairable value, in row-major order (``X[ok]``); empty when coded without categories (the
    interval level needs none).  Only the values of pairable units are coded, so every code
    indexes ``cats``, also when a value occurs only in units that are not pairable (e.g. a
    rater pair that does not use every category).
    """

    X: np.ndarray
    ok: np.ndarray
    m: np.ndarray
    codes: np.ndarray
    cats: np.ndarray

    @property
    def n_units(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_categories(self) -> int:
        return len(self.cats)

    @property
    def n_pairable(self) -> int:
        return int((self.m > 0).sum())

    @property
    def n_values(self) -> int:
        return int(self.m.sum())

    @cached_property
    def rows(self) -> np.ndarray:
        """Unit of each coded value."""
        return np.repeat(np.arange(self.n_units), self.m)

    @cached_property
    def inv_m1(self) -> np.ndarray:
        """``1 / (m_u - 1)`` for pairable units, 0 otherwise."""
        mm = np.where(self.m > 0, self.m, 2).astype(float)
        return np.where(self.m > 0, 1.0 / (mm - 1.0), 0.0)

    def unit_counts_into(self, out: np.ndarray) -> None:
        """Write ``n_uc`` (values of category c in unit u) into the (units x K) ``out``."""
        n, K = self.n_units, self.n_categories
        # category-major keys: the counts come out as K contiguous columns of length n
        out[:] = np.bincount(self.codes * n + self.rows, minlength=K * n).reshape(K, n).T

    def unit_count_entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Non-zero ``n_uc`` as ``(u, c, n_uc)`` (sparse)."""
        keys, cnt = np.unique(self.rows.astype(np.int64) * self.n_categories + self.codes, return_counts=True)
        return keys // self.n_categories, keys % self.n_categories, cnt.astype(float)

    def rater_pairs(self) -> list[tuple[int, int, np.ndarray]]:
        """``(i, j, units)`` for each pair of rater columns i < j and the units where both
        have a pairable value."""
        R = self.X.shape[1]
        out = []
        for i in range(R):
            for j in range(i + 1, R):
                u = np.flatnonzero(self.ok[:, i] & self.ok[:, j])
                if len(u):
                    out.append((i, j, u))
        return out


def _code(data: np.ndarray, with_categories: bool = True) -> _Coding:
    X = np.asarray(data, dtype=float)
    if X.ndim != 2:
        raise ValueError("data must be a 2-D items x raters matrix")
    mask = ~np.isnan(X)
    m = mask.sum(1)
    pairable = m >= 2
    ok = mask & pairable[:, None]
    m = np.where(pairable, m, 0)
    if not with_categories:
        return _Coding(X, ok, m, np.zeros(0, dtype=np.int64), np.zeros(0))
    cats, codes = _categories(X[ok])
    return _Coding(X, ok, m, codes, cats)


def _dense(n: int, f: int) -> np.ndarray:
    """An uninitialised (n x f) feature matrix in column-major order: features are filled
    column by column, and ``1 @ F`` reads it contiguously."""
    return np.empty((n, f), order="F")


def _sparse(n: int, f: int, entries: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> sp.coo_matrix:
    """A sparse (n x f) feature matrix from ``(row, column, value)`` entries (summed)."""
    rows, cols, vals = (np.concatenate(e) for e in zip(*entries, strict=True))
    return sp.coo_matrix((vals, (rows, cols)), shape=(n, f))


def _alpha(n: np.ndarray, observed: np.ndarray, expected: np.ndarray, defined: np.ndarray) -> np.ndarray:
    """``alpha = 1 - (n - 1) * sum o delta / sum n_c n_k delta`` (K2011, general form), NaN where
    the expected disagreement is zero (``defined`` false)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        a = 1.0 - (n - 1.0) * observed / expected
    a[~defined] = np.nan
    return a


# ---------------------------------------------------------------------------------------
# Features and finaliser of each level (see the module docstring).
# ---------------------------------------------------------------------------------------
def _interval(c: _Coding) -> AlphaFeatures:
    vals = c.X[c.ok]
    mu = vals.mean() if len(vals) else 0.0
    Xc = np.where(c.ok, c.X - mu, 0.0)
    F = _dense(c.n_units, 4)
    m, s1, s2 = F[:, 0], F[:, 1], F[:, 2]
    m[:] = c.m
    np.sum(Xc, axis=1, out=s1)
    np.einsum("ij,ij->i", Xc, Xc, out=s2)
    mm = np.where(m > 0, m, 2.0)
    # sum_{i != j} (x_i - x_j)^2 = 2 m sum x^2 - 2 (sum x)^2
    F[:, 3] = np.where(m > 0, (2 * mm * s2 - 2 * s1 * s1) / (mm - 1), 0.0)

    def finalize(S: np.ndarray) -> np.ndarray:
        n, S1, S2 = S[:, 0], S[:, 1], S[:, 2]
        # sum_{c,k} n_c n_k (c - k)^2 over the pairable values; relative threshold: constant
        # data leave only rounding error of the (uncancelled) 2 n sum x^2
        de = 2 * n * S2 - 2 * S1**2
        return _alpha(n, S[:, 3], de, de > 1e-12 * 2 * n * S2)

    return AlphaFeatures(F, finalize)


def _nominal(c: _Coding, dense: bool) -> AlphaFeatures:
    n, K = c.n_units, c.n_categories
    m = c.m.astype(float)
    if dense:
        F = _dense(n, K + 1)
        nuc = F[:, :K]
        c.unit_counts_into(nuc)
        sq = np.einsum("ij,ij->i", nuc, nuc)
    else:
        u, k, cnt = c.unit_count_entries()
        sq = np.bincount(u, weights=cnt * cnt, minlength=n)
    # off-diagonal coincidences of unit u: (m_u^2 - sum_c n_uc^2) / (m_u - 1)
    d = (m * m - sq) * c.inv_m1
    if dense:
        F[:, K] = d
    else:
        F = _sparse(n, K + 1, [(u, k, cnt), (np.arange(n), np.full(n, K), d)])

    def finalize(S: np.ndarray) -> np.ndarray:
        nc = S[:, :K]
        tot = nc.sum(1)
        de = tot * tot - (nc * nc).sum(1)  # sum_{c != k} n_c n_k
        return _alpha(tot, S[:, K], de, de > 0.5)

    return AlphaFeatures(F, finalize)


def _ordinal(c: _Coding, dense: bool) -> AlphaFeatures:
    n, K = c.n_units, c.n_categories
    if dense:
        # every category pair c < k is a column: C_u,ck = n_uc n_uk / (m_u - 1)
        iu, ju = np.triu_indices(K, 1)
        F = _dense(n, K + len(iu))
        c.unit_counts_into(F[:, :K])
        np.multiply(F[:, iu], F[:, ju], out=F[:, K:])
        F[:, K:] *= c.inv_m1[:, None]
    else:
        # sparse: each rater pair of a unit with values c < k adds 1 / (m_u - 1) to C_u,ck
        # (n_uc n_uk such rater pairs; ties c = k have delta 0 and are skipped)
        grid = np.full(c.X.shape, -1, dtype=np.int64)
        grid[c.ok] = c.codes
        units, lo, hi = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
        for i, j, both in c.rater_pairs():
            a, b = grid[both, i], grid[both, j]
            ne = a != b
            units.append(both[ne])
            lo.append(np.minimum(a[ne], b[ne]))
            hi.append(np.maximum(a[ne], b[ne]))
        u, iu, ju = np.concatenate(units), np.concatenate(lo), np.concatenate(hi)
        col = np.arange(len(u))  # one column per coincident value pair ...
        if K * K <= _MERGE_PAIRS_MAX:  # ... or, countable, one per category pair that occurs
            key = iu * K + ju
            present = np.flatnonzero(np.bincount(key, minlength=K * K))
            col_of = np.zeros(K * K, dtype=np.int64)
            col_of[present] = np.arange(len(present))
            col, iu, ju = col_of[key], present // K, present % K
        F = _sparse(n, K + len(iu), [(c.rows, c.codes, np.ones(len(c.codes))), (u, K + col, c.inv_m1[u])])

    def finalize(S: np.ndarray) -> np.ndarray:
        nc = S[:, :K]
        tot = nc.sum(1)
        # K2011 ordinal metric (sum_{g=c}^{k} n_g - (n_c + n_k)/2)^2 = (r_k - r_c)^2 with the
        # mid-rank positions r_c = N_{c-1} + n_c / 2, here centred on their mean tot / 2
        r = np.cumsum(nc, 1) - nc / 2.0 - (tot / 2.0)[:, None]
        do = 2 * (S[:, K:] * (r[:, ju] - r[:, iu]) ** 2).sum(1)
        s1 = (nc * r).sum(1)
        de = 2 * tot * (nc * r * r).sum(1) - 2 * s1 * s1  # sum_{c,k} n_c n_k (r_c - r_k)^2
        return _alpha(tot, do, de, de > 0)

    return AlphaFeatures(F, finalize)


def _ratio_delta(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """K2011 ratio metric ``((a - b) / (a + b))^2``, 0 where a + b = 0."""
    s = a + b
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(s != 0, ((a - b) / s) ** 2, 0.0)


def _ratio(c: _Coding, dense: bool) -> AlphaFeatures:
    n, K, cats = c.n_units, c.n_categories, c.cats
    # d_u = sum_{i != j in u} delta^2(x_i, x_j) / (m_u - 1), over the unit's rater pairs
    d = np.zeros(n)
    for i, j, u in c.rater_pairs():
        d[u] += 2 * _ratio_delta(c.X[u, i], c.X[u, j]) * c.inv_m1[u]
    if dense:
        F = _dense(n, K + 1)
        c.unit_counts_into(F[:, :K])
        F[:, K] = d
    else:
        F = _sparse(n, K + 1, [(c.rows, c.codes, np.ones(len(c.codes))), (np.arange(n), np.full(n, K), d)])
    step = max(1, _RATIO_BLOCK_CELLS // max(K, 1))
    dl = _ratio_delta(cats[:, None], cats[None, :]) if step >= K else None

    def finalize(S: np.ndarray) -> np.ndarray:
        nc = S[:, :K]
        if dl is not None:
            de = ((nc @ dl) * nc).sum(1)
        else:  # sum_{c,k} n_c n_k delta^2_ck in row blocks of the K x K difference matrix
            de = np.zeros(len(S))
            for s0 in range(0, K, step):
                blk = _ratio_delta(cats[s0 : s0 + step, None], cats[None, :])
                de += ((nc[:, s0 : s0 + step] @ blk) * nc).sum(1)
        return _alpha(nc.sum(1), S[:, K], de, de > 0)

    return AlphaFeatures(F, finalize)


def _features(c: _Coding, level: str, dense_max_cells: int = DENSE_MAX_CELLS) -> AlphaFeatures:
    """``(F, finalize)`` of ``level`` for coded data: the single definition of alpha."""
    if level == "interval":
        return _interval(c)
    K = c.n_categories
    cols = K + 1 if level != "ordinal" else K + K * (K - 1) // 2
    dense = c.n_units * cols <= dense_max_cells
    return {"nominal": _nominal, "ordinal": _ordinal, "ratio": _ratio}[level](c, dense)


def _weighted_sums(F: np.ndarray | sp.spmatrix, w: np.ndarray | None) -> np.ndarray:
    """``w @ F`` as a ``(1, f)`` array (``w`` None: all ones)."""
    if sp.issparse(F):
        F = F.tocoo()
        data = F.data if w is None else F.data * w[F.row]
        return np.bincount(F.col, weights=data, minlength=F.shape[1])[None, :]
    return (F.sum(0) if w is None else w @ F)[None, :]


def krippendorff_alpha(data: np.ndarray, level: str = "interval", weights: np.ndarray | None = None) -> MetricResult:
    """Krippendorff's alpha for an items x raters matrix (NaN = missing): the finaliser of
    :func:`alpha_features` applied to the feature sums of the unresampled items.

    ``weights``: optional item multiplicities (e.g. the counts of distinct rating rows);
    alpha is then that of the data with each row repeated ``weights`` times.

    Undefined (value None) when no item has two ratings, or when all pairable values are
    identical (D_e = 0).
    """
    _check_level(level)
    c = _code(data, with_categories=level != "interval")
    n_raters = int((~np.isnan(c.X)).any(0).sum())
    w = None if weights is None else np.asarray(weights, dtype=float).reshape(-1)
    if w is not None and len(w) != c.n_units:
        raise ValueError("weights must have one entry per item")
    n_items = c.n_pairable if w is None else round(float(w[c.m > 0].sum()))
    if n_items == 0:
        return undefined("krippendorff_alpha", "no item has two or more ratings", 0, n_raters, level=level)
    n_values = c.n_values if w is None else round(float(w @ c.m))
    F, finalize = _features(c, level)
    value = float(finalize(_weighted_sums(F, w))[0])
    if not np.isfinite(value):
        return undefined(
            "krippendorff_alpha",
            "all pairable values are identical (no expected disagreement)",
            n_items,
            n_raters,
            level=level,
        )
    return MetricResult(
        "krippendorff_alpha", value, None, None, n_items, n_raters, None, {"level": level, "n_values": n_values}
    )


def alpha_features(data: np.ndarray, level: str) -> AlphaFeatures | None:
    """Per-item additive features ``F`` (items x f) and ``finalize(S) -> alpha`` such that
    ``finalize(w @ F)`` is alpha of the data with items weighted by ``w`` (w = 1: the
    point estimate -- :func:`krippendorff_alpha` is ``finalize(F.sum(0))`` of these same
    features; multinomial counts: a bootstrap resample).  Unpacks as
    ``F, finalize = alpha_features(...)``.

    None when bootstrap features are not offered: more than ``ORDINAL_BOOT_MAX_K``
    (ordinal) or ``RATIO_BOOT_MAX_K`` (ratio) distinct values, or no pairable value at a
    categorical level.
    """
    _check_level(level)
    c = _code(data, with_categories=level != "interval")
    K = c.n_categories
    too_many = (level == "ordinal" and K > ORDINAL_BOOT_MAX_K) or (level == "ratio" and K > RATIO_BOOT_MAX_K)
    if level != "interval" and (K == 0 or too_many):
        return None
    return _features(c, level)
