"""Two-rater coefficients averaged over groups of column pairs, bootstrapped over items from one
(optionally stratified) resample.

A validation table needs, on the same items, several statistics that are each a mean over
pairs of columns of a two-rater coefficient: the leave-one-out human ceiling (each human ``h``
vs the mean of the others: pairs ``(h, m_-h)``), the pooled slot-vs-slot agreement (slot ``s``
vs slot ``t`` for every ``s < t``), a judge vs the human mean (a single pair). Each pair's
coefficient is a function of its joint-value table (:class:`.pairs.PairTable`), and a bootstrap
resample only changes the tables' counts, so :func:`pair_group_bootstrap` collapses the items
into distinct rows (patterns) once, draws pattern multiplicities
(:class:`.bootstrap.PatternSampler`, exact multinomial resampling of the items) and gets every
pair's resampled table from one sparse product per chunk of resamples.

Strata. With ``strata`` (one code per item) the resamples are drawn within each stratum, each
keeping its stratum's item count: the bootstrap of a sample stratified by that code (Efron and
Tibshirani 1993, sec. 8.4 / Davison and Hinkley 1997, sec. 3.7). The whole's tables are then the
sum of its strata's, so the statistics of the whole and of every stratum come from the same
draws at no extra cost: a table and its split by the stratum share one resample.

The caller chooses how a group's pairs combine (the ceiling needs every pair defined; the slot
mean leaves undefined pairs out), from the per-pair point results and per-pair bootstrap values
returned here.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .bootstrap import PatternSampler, compress_rows
from .correlation import CORRELATIONS, pair_result
from .pairs import PairTable
from .result import MetricResult, undefined

#: pattern-multiplicity cells (patterns x resamples) per chunk: 32 MiB of float64
_CELLS_PER_CHUNK = 4_000_000
#: resampled multiplicities and one-hot tables: float32 is exact for counts below 2**24
_COUNTS = np.float32
#: the whole sample, as a key of :func:`pair_group_bootstrap`'s result beside the strata
WHOLE = None


@dataclass
class PairGroupResult:
    """One group's coefficient ``metric`` on one stratum (or the whole): ``pairs`` holds the
    point result of each pair (in the group's order) and ``boot`` their ``(B, pairs)``
    bootstrap values (NaN where a resample leaves a pair undefined; ``(0, pairs)`` without a
    bootstrap)."""

    metric: str
    pairs: list[MetricResult]
    boot: np.ndarray

    def mean_of_defined(self) -> np.ndarray:
        """Per resample, the mean over the pairs defined in it (NaN when none is)."""
        ok = np.isfinite(self.boot)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(ok, self.boot, 0.0).sum(1) / ok.sum(1)

    def mean_of_all(self) -> np.ndarray:
        """Per resample, the mean over all pairs (NaN when any is undefined)."""
        return self.boot.mean(1) if self.boot.shape[1] else np.full(len(self.boot), np.nan)


def _point(t: PairTable, metric: str, value: float) -> MetricResult:
    """A pair's point result with the guards of the pair coefficients (p-values for the
    correlations, as :func:`.correlation.pair_result`)."""
    if metric in CORRELATIONS:
        return pair_result(t, metric, value)
    n = round(t.n)
    if n < 2:
        return undefined(metric, "fewer than two items rated by both", n, 2)
    if not np.isfinite(value):
        return undefined(metric, "chance agreement is 1 (a single category in use)", n, 2)
    return MetricResult(metric, float(value), None, None, n, 2, None)


def pair_group_bootstrap(
    M: np.ndarray,
    groups: Mapping[Hashable, Sequence[tuple[int, int]]],
    metrics: Sequence[str],
    n_boot: int = 0,
    seed: int = 0,
    strata: Sequence[Hashable] | np.ndarray | None = None,
    labels: np.ndarray | None = None,
    derived: Callable[[np.ndarray], np.ndarray] | None = None,
    per_stratum: bool = True,
) -> dict[Hashable, dict[Hashable, dict[str, PairGroupResult]]]:
    """Every group's pairs ``(a, b)`` of columns of ``M`` (items x columns, NaN = missing; a
    pair uses the items where both are present), coefficient by coefficient (``metrics``:
    any of :data:`.pairs.PAIR_METRICS`; ``labels`` the category set of the kappas).
    ``derived(rows)`` adds columns that are functions of a row of ``M`` (e.g. leave-one-out
    means), numbered after ``M``'s: they are computed on the distinct rows only.

    Returns ``{stratum: {group: {metric: PairGroupResult}}}`` with the whole sample under
    :data:`WHOLE` (``None``) and, with ``strata`` and ``per_stratum``, each stratum value in
    sorted order (without ``per_stratum`` the resamples are still drawn within strata). Items
    with no value in any column are not units (neither counted nor resampled)."""
    M = np.asarray(M, dtype=float)
    if M.ndim != 2:
        raise ValueError("M must be an items x columns matrix")
    metrics = list(metrics)
    if strata is None:
        codes, values = np.zeros(len(M), dtype=np.int64), [WHOLE]
    else:
        codes, values = pd.factorize(np.asarray(strata, dtype=object), sort=True)
        if len(codes) != len(M) or (codes < 0).any():
            raise ValueError("strata must give every item a (non-missing) stratum")
    keep = ~np.isnan(M).all(1) if M.shape[1] else np.zeros(len(M), dtype=bool)
    P, cnt, _ = compress_rows(np.column_stack([codes[keep].astype(float), M[keep]]))
    stratum_of, V = P[:, 0].astype(np.int64), P[:, 1:]
    if derived is not None:
        V = np.column_stack([V, derived(V)])
    pairs = sorted({tuple(p) for ps in groups.values() for p in ps})
    tables = {p: PairTable(V[:, p[0]], V[:, p[1]], weights=cnt) for p in pairs}
    offs = dict(zip(pairs, np.cumsum([0] + [max(tables[p].G, 1) for p in pairs]).tolist(), strict=False))
    names = list(range(len(values))) if strata is not None else []
    keys: list[Hashable] = [WHOLE, *[values[s] for s in names]] if per_stratum else [WHOLE]

    # per-stratum point tables: the whole's tables restricted to the stratum's patterns
    def restricted(s: int | None) -> dict[tuple[int, int], PairTable]:
        if s is None:
            return tables
        m = stratum_of == s
        return {p: PairTable(V[m, p[0]], V[m, p[1]], weights=cnt[m]) for p in pairs}

    points = {k: restricted(s) for k, s in zip(keys, [None, *names], strict=False)}
    boots: dict[Hashable, dict[tuple[int, int], dict[str, np.ndarray]]] = {k: {} for k in keys}
    if n_boot and pairs and len(P):
        boots = _bootstrap(tables, pairs, offs, stratum_of, cnt, names, keys, metrics, n_boot, seed, labels)

    out: dict[Hashable, dict[Hashable, dict[str, PairGroupResult]]] = {}
    for k in keys:
        pt = points[k]
        vals = {
            p: (
                t.compute(t.counts[None], metrics, labels=labels) if t.G else dict.fromkeys(metrics, np.array([np.nan]))
            )
            for p, t in pt.items()
        }
        out[k] = {}
        for g, ps in groups.items():
            out[k][g] = {}
            for m in metrics:
                res = [_point(pt[tuple(p)], m, float(vals[tuple(p)][m][0])) for p in ps]
                b = np.column_stack([boots[k][tuple(p)][m] for p in ps]) if boots[k] and ps else np.zeros((0, len(ps)))
                out[k][g][m] = PairGroupResult(m, res, b)
    return out


def _bootstrap(
    tables: dict[tuple[int, int], PairTable],
    pairs: list[tuple[int, int]],
    offs: dict[tuple[int, int], int],
    stratum_of: np.ndarray,
    cnt: np.ndarray,
    strata: list[int],
    keys: list[Hashable],  # WHOLE, then one per stratum when the strata are reported
    metrics: list[str],
    n_boot: int,
    seed: int,
    labels: np.ndarray | None,
) -> dict[Hashable, dict[tuple[int, int], dict[str, np.ndarray]]]:
    """Per stratum key, per pair, per metric: the ``(n_boot,)`` bootstrap values. Each stratum
    has its own sampler over its patterns; the whole's resampled tables are the sum of the
    strata's (a single stratum when there are no strata)."""
    H = sp.hstack([tables[p].onehot() for p in pairs]).tocsr().astype(_COUNTS)  # (patterns, sum G)
    parts = [np.flatnonzero(stratum_of == s) for s in (strata or [0])]
    samplers = [PatternSampler(cnt[idx]) for idx in parts]
    # rows of each stratum's block in its sampler's order: the product reads the sampled
    # multiplicities as they come
    blocks = [H[idx[smp.order]].T.tocsr() for idx, smp in zip(parts, samplers, strict=True)]
    rng = np.random.default_rng(seed)
    chunk = max(1, min(n_boot, _CELLS_PER_CHUNK // max(max(s.P for s in samplers), 1)))
    per: dict[Hashable, dict[tuple[int, int], dict[str, list[np.ndarray]]]] = {
        k: {p: {m: [] for m in metrics} for p in pairs} for k in keys
    }

    def evaluate(key: Hashable, T: np.ndarray) -> None:  # T: (sum G, b)
        for p in pairs:
            t = tables[p]
            if not t.G:
                for m in metrics:
                    per[key][p][m].append(np.full(T.shape[1], np.nan))
                continue
            vals = t.compute(T[offs[p] : offs[p] + t.G].T, metrics, labels=labels)
            for m in metrics:
                per[key][p][m].append(vals[m])

    for s0 in range(0, n_boot, chunk):
        b = min(chunk, n_boot - s0)
        whole = None
        for s, smp, blk in zip(strata or [0], samplers, blocks, strict=True):
            T = np.asarray(blk @ smp.sample_t(b, rng, _COUNTS), dtype=np.float64)
            if len(keys) > 1:
                evaluate(keys[1 + s], T)
            whole = T if whole is None else whole + T
        evaluate(WHOLE, whole)
    return {k: {p: {m: np.concatenate(v) for m, v in d.items()} for p, d in per[k].items()} for k in keys}
