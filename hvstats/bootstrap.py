"""Item bootstrap via per-item sufficient statistics.

Every coefficient in this package is ``finalize(w @ F)``: a function of additive per-item
features ``F`` weighted by item multiplicities ``w``.  A nonparametric bootstrap resample of
items (Efron & Tibshirani 1993, ch. 6 and 13: percentile intervals) is a multinomial count
vector ``w``, so a resample costs one matrix product instead of a recomputation from raw
rows.  Items with identical rating rows are interchangeable, so rows are first collapsed
into distinct *patterns*; drawing multinomial counts over patterns with probabilities
``count_p / N`` has exactly the distribution of the item-level resample.

Randomness: ``numpy.random.Generator`` (PCG64) seeded by the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp

#: a statistic (or a feature set) of a :class:`Block`: any hashable key (strings, typed tuples)
Key = Hashable
Finalizer = Callable[[np.ndarray], "dict[Key, np.ndarray] | np.ndarray"]


def compress_rows(X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct rows of ``X`` (NaN-aware): ``(patterns, counts, inverse)``, patterns in
    lexicographic order (NaN first in each column)."""
    X = np.asarray(X, dtype=float)
    if X.shape[0] == 0:
        return X, np.zeros(0), np.zeros(0, dtype=np.int64)
    # mixed-radix integer key of the per-column value codes (same lexicographic order as
    # np.unique(axis=0), one integer sort instead of a sort of row records); a column's
    # codes by hashing (pandas.factorize), cheaper than sorting the column
    codes, radix = [], 1
    for j in range(X.shape[1]):
        c, u = pd.factorize(X[:, j], sort=True)  # NaN -> -1
        codes.append((c.astype(np.int64) + 1, len(u) + 1))  # NaN first
        radix *= len(u) + 1
    if radix >= 2**62:  # too many value combinations for an integer key: sort the rows
        sentinel = np.nanmin(X) - 1.0 if np.isfinite(X).any() else -1.0
        P, inv, cnt = np.unique(np.where(np.isnan(X), sentinel, X), axis=0, return_inverse=True, return_counts=True)
        return np.where(P == sentinel, np.nan, P), cnt.astype(float), inv.reshape(-1)  # noqa: SIM300
    key = np.zeros(X.shape[0], dtype=np.int64)
    for c, size in codes:
        key *= size
        key += c
    if radix <= 4 * X.shape[0] + 1024:  # few possible keys: count them, no sort
        counts = np.bincount(key, minlength=radix)
        present = np.flatnonzero(counts)
        inv = (np.cumsum(counts > 0) - 1)[key]
        first = np.empty(radix, dtype=np.int64)
        first[key[::-1]] = np.arange(len(key) - 1, -1, -1)  # each key's smallest row
        first, cnt = first[present], counts[present]
    else:
        _, first, inv, cnt = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
    return X[first], cnt.astype(float), inv.reshape(-1)


#: relative cost of one binomial draw (numpy's conditional-binomial multinomial, per
#: category) and of one item index draw + gather + bincount: a pattern whose count is at
#: least this ratio is cheaper to draw as a binomial than item by item.
_BINOMIAL_COST = 20
#: item index draws per chunk of resamples (int32: 1 MiB, stays in the L2 cache).
_DRAWS_PER_CHUNK = 1 << 18
#: from this many light items on, a resample's light multiplicities are one bincount of its
#: own draws (written straight into its column): no pattern x resample key arithmetic, which
#: costs more than the per-resample call once a resample has thousands of draws
_PER_RESAMPLE_FROM = 4096


class PatternSampler:
    """Exact multinomial resampling of items that were collapsed into patterns.

    A bootstrap resample draws ``N`` items with replacement; the multiplicities of the
    ``P`` patterns then follow ``Multinomial(N, counts / N)``.  Patterns are split into
    *heavy* ones (count >= ``_BINOMIAL_COST``) and *light* ones.  Per resample:

    1. ``M_L ~ Binomial(N, N_L / N)`` draws fall on light patterns (``N_L`` their items);
    2. heavy multiplicities: ``Multinomial(N - M_L, counts_H / N_H)`` (numpy's
       conditional-binomial sampler: one binomial per heavy pattern);
    3. light multiplicities: ``M_L`` uniform draws among the ``N_L`` light items, mapped
       to their patterns and counted (one index draw per item).

    Given ``M_L`` the two parts are independent multinomials over the two groups, which
    is exactly ``Multinomial(N, counts / N)`` (the group split of a multinomial is
    binomial, and within each group the draws are multinomial with the renormalised
    probabilities).  Each pattern goes where it is cheaper: many small patterns by index
    draws, few large ones by binomials.  The random stream consumed depends only on
    ``counts``, the number of resamples and the generator, so results are reproducible
    per seed.

    :meth:`sample_t` returns the patterns in the sampler's ``order`` (heavy, light, then
    zero-count patterns), so that each part is written as one contiguous block; callers
    permute their feature rows with ``order`` once instead.
    """

    def __init__(self, counts: np.ndarray):
        c = np.rint(np.asarray(counts, dtype=float)).astype(np.int64)
        if (c < 0).any():
            raise ValueError("pattern counts must be non-negative")
        self.P = len(c)
        self.N = int(c.sum())
        heavy = np.flatnonzero(c >= _BINOMIAL_COST)
        light = np.flatnonzero((c < _BINOMIAL_COST) & (c > 0))
        self.order = np.concatenate([heavy, light, np.flatnonzero(c == 0)])
        self.H, self.PL = len(heavy), len(light)
        self.NH = int(c[heavy].sum())
        self.NL = self.N - self.NH
        self.p_heavy = c[heavy] / self.NH if self.NH else None
        self.item_pattern = np.repeat(np.arange(self.PL, dtype=np.int64), c[light])
        self.rows_per_chunk = max(1, _DRAWS_PER_CHUNK // max(self.NL, 1))

    def _light(self, ML: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """(PL, b) light-pattern multiplicities of ``b`` resamples with ``ML`` draws each, from
        one batch of draws (few light items: one bincount over pattern x resample keys)."""
        b = len(ML)
        idx = rng.integers(0, self.NL, size=int(ML.sum()), dtype=np.int32)
        g = self.item_pattern[idx]
        g *= b  # key = pattern * b + resample: the counts come out as (PL, b)
        g += np.repeat(np.arange(b), ML)
        return np.bincount(g, minlength=b * self.PL).reshape(self.PL, b)

    def sample_t(self, n: int, rng: np.random.Generator, dtype: type = np.float64) -> np.ndarray:
        """``(P, n)`` float array: column j holds the multiplicities of resample j, rows in
        ``self.order`` (``np.float32`` holds them exactly up to 2**24 items, at half the
        memory traffic of the products that read them)."""
        H, PL = self.H, self.PL
        Wt = np.empty((self.P, n), dtype=dtype)
        Wt[H + PL :] = 0.0
        if self.NL == 0:
            Wt[:H] = rng.multinomial(self.N, self.p_heavy, size=n).T
            return Wt
        if self.NH:
            ML = rng.binomial(self.N, self.NL / self.N, size=n)
            Wt[:H] = rng.multinomial(self.N - ML, self.p_heavy).T
        else:
            ML = np.full(n, self.N, dtype=np.int64)
        if self.NL < _PER_RESAMPLE_FROM:
            step = self.rows_per_chunk
            for s in range(0, n, step):
                Wt[H : H + PL, s : s + step] = self._light(ML[s : s + step], rng)
            return Wt
        light = Wt[H : H + PL]
        for j in range(n):  # many light items: one draw and one bincount per resample
            light[:, j] = np.bincount(
                self.item_pattern[rng.integers(0, self.NL, size=int(ML[j]), dtype=np.int32)], minlength=PL
            )
        return Wt


def resample_counts(
    counts: np.ndarray, n_boot: int, rng: np.random.Generator, max_cells: int = 20_000_000
) -> Iterator[np.ndarray]:
    """Yield chunks (b x P) of bootstrap multiplicities for P patterns with ``counts``
    (see :class:`PatternSampler`)."""
    sampler = PatternSampler(counts)
    chunk = max(1, min(n_boot, max_cells // max(sampler.P, 1)))
    done = 0
    while done < n_boot:
        b = min(chunk, n_boot - done)
        Wt = sampler.sample_t(b, rng)
        W = np.empty((b, sampler.P))
        W[:, sampler.order] = Wt.T
        yield W
        done += b


def percentile_ci(values: np.ndarray, level: float = 0.95) -> tuple[tuple[float, float] | None, int]:
    """Percentile interval of the finite bootstrap values; also returns the count of
    resamples where the coefficient was undefined."""
    v = np.asarray(values, dtype=float)
    ok = np.isfinite(v)
    bad = int((~ok).sum())
    if ok.sum() < 2:
        return None, bad
    a = (1 - level) / 2
    lo, hi = np.quantile(v[ok], [a, 1 - a])
    return (float(lo), float(hi)), bad


def percentile_cis(boot: dict[Key, np.ndarray], level: float = 0.95) -> dict[Key, tuple]:
    """:func:`percentile_ci` of every array in ``boot`` (all of one length B): one
    vectorised quantile over the arrays without undefined resamples (the same numbers as
    row-by-row calls), the others one by one."""
    keys = list(boot)
    out: dict[Key, tuple] = {}
    if not keys:
        return out
    M = np.vstack([np.asarray(boot[k], dtype=float).reshape(-1) for k in keys])
    full = np.isfinite(M).all(1) if M.shape[1] >= 2 else np.zeros(len(keys), dtype=bool)
    if full.any():
        a = (1 - level) / 2
        lo, hi = np.quantile(M[full], [a, 1 - a], axis=1)
        done = [k for k, f in zip(keys, full, strict=True) if f]
        for k, low, high in zip(done, lo.tolist(), hi.tolist(), strict=True):
            out[k] = ((low, high), 0)
    for k, f in zip(keys, full, strict=True):
        if not f:
            out[k] = percentile_ci(boot[k], level)
    return out


@dataclass
class Block:
    """A set of statistics on the same items, bootstrapped with shared resamples.

    ``add(key, F, finalize)``: a statistic ``finalize(w @ F)`` of per-pattern features
    ``F`` (dense or sparse, P x f).  ``add_derived(key, source, M, finalize)``: a statistic
    ``finalize((w @ F_source) @ M)`` of the sums of an already added feature set, for
    statistics that are linear in another statistic's sums (e.g. a pair's Krippendorff
    alpha from the pair's joint-value counts): no extra P-sized columns are resampled.
    """

    counts: np.ndarray
    _feats: list = field(default_factory=list)
    _derived: list = field(default_factory=list)
    max_cells: int = 20_000_000

    def add(self, key: Key, F: np.ndarray | sp.spmatrix, finalize: Finalizer) -> None:
        self._feats.append((key, F, finalize))

    def add_derived(self, key: Key, source: Key, M: np.ndarray | sp.spmatrix, finalize: Finalizer) -> None:
        if source not in {k for k, _, _ in self._feats}:
            raise KeyError(f"unknown source feature set {source!r}")
        self._derived.append((key, source, M if sp.issparse(M) else np.asarray(M, dtype=float), finalize))

    @staticmethod
    def _apply(W: np.ndarray, F) -> np.ndarray:
        if sp.issparse(F):
            return np.asarray((F.T @ W.T).T)
        return W @ F

    @staticmethod
    def _as_dict(key, out):
        return out if isinstance(out, dict) else {key: out}

    def run(self, n_boot: int, rng: np.random.Generator) -> tuple[dict[Key, np.ndarray], dict[Key, np.ndarray]]:
        """Return ``(point, boot)``: ``{name: scalar array (1,)}`` and ``{name: (B,)}``."""
        point: dict[Key, np.ndarray] = {}
        c = self.counts[None, :]
        sums: dict[Key, np.ndarray] = {}
        for key, F, fin in self._feats:
            sums[key] = self._apply(c, F)
            point.update(self._as_dict(key, fin(sums[key])))
        for key, src, M, fin in self._derived:
            point.update(self._as_dict(key, fin(self._apply(sums[src], M))))
        boot: dict[Key, np.ndarray] = {}
        if n_boot and self._feats and self.counts.sum() > 0:
            # stack all dense and all sparse features: two products per chunk of resamples
            dense = [(i, F) for i, (_, F, _) in enumerate(self._feats) if not sp.issparse(F)]
            sparse = [(i, F) for i, (_, F, _) in enumerate(self._feats) if sp.issparse(F)]
            sampler = PatternSampler(self.counts)
            o = sampler.order  # resampled counts come in this pattern order
            D = np.hstack([F for _, F in dense])[o] if dense else None
            S = sp.hstack([F for _, F in sparse]).tocsr()[o].T.tocsr() if sparse else None
            chunk = max(1, min(n_boot, self.max_cells // max(sampler.P, 1)))
            dparts, sparts = [], []
            for s0 in range(0, n_boot, chunk):
                Wt = sampler.sample_t(min(chunk, n_boot - s0), rng)  # (P, b)
                if D is not None:
                    dparts.append(Wt.T @ D)  # (b, d)
                if S is not None:
                    sparts.append(np.asarray(S @ Wt))  # (g, b): rows of S are contiguous
            cols: dict[Key, np.ndarray] = {}
            for group, full in (
                (dense, np.vstack(dparts) if dense else None),
                (sparse, np.hstack(sparts).T if sparse else None),
            ):
                off = 0
                for i, F in group:
                    k = F.shape[1]
                    cols[self._feats[i][0]] = np.ascontiguousarray(full[:, off : off + k])
                    off += k
            for key, _, fin in self._feats:
                boot.update(self._as_dict(key, fin(cols[key])))
            for key, src, M, fin in self._derived:
                boot.update(self._as_dict(key, fin(self._apply(cols[src], M))))
        return point, boot


def bootstrap_statistic(
    data: np.ndarray, builder: Callable[[np.ndarray], tuple], n_boot: int = 1000, seed: int = 0, level: float = 0.95
) -> tuple[float, tuple[float, float] | None]:
    """Convenience: point value and percentile CI of a feature-based statistic on an
    items x raters matrix, e.g. ``bootstrap_statistic(X, lambda P: alpha_features(P, "ordinal"))``."""
    P, cnt, _ = compress_rows(data)
    F, fin = builder(P)
    blk = Block(cnt)
    blk.add("v", F, fin)
    point, boot = blk.run(n_boot, np.random.default_rng(seed))
    ci, _ = percentile_ci(boot["v"], level) if n_boot else (None, 0)
    return float(point["v"][0]), ci
