"""Grouped pair statistics from one (stratified) item resample (stats.pair_groups):
point values against scipy on the whole and on each stratum, resamples that keep every
stratum's item count, derived columns, missing data and determinism."""

from __future__ import annotations

import warnings
from itertools import combinations

import numpy as np
import pytest
from scipy import stats as ss

from hvstats.bootstrap import PatternSampler
from hvstats.pair_groups import WHOLE, pair_group_bootstrap
from hvstats.validation import judge_and_ceiling

TOL = 1e-9


def ratings(n=240, k=4, seed=0, missing=0.1):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=n)
    X = np.clip(np.round(2 + q[:, None] + rng.normal(scale=0.9, size=(n, k))), 0, 4)
    X[rng.random((n, k)) < missing] = np.nan
    return X


def loo_means(V):
    """Each column's leave-one-out mean of the others (NaN where the others are all missing)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-missing row has no mean
        return np.column_stack([np.nanmean(np.delete(V, h, axis=1), axis=1) for h in range(V.shape[1])])


def both(x, y):
    m = ~np.isnan(x) & ~np.isnan(y)
    return x[m], y[m]


def test_points_per_pair_and_per_stratum_equal_scipy():
    X = ratings()
    strata = np.where(np.arange(len(X)) % 3 == 0, "b", "a")
    pairs = list(combinations(range(X.shape[1]), 2))
    out = pair_group_bootstrap(X, {"all": pairs, "first": pairs[:1]}, ["pearson", "spearman"], 200, 5, strata)
    assert list(out) == [WHOLE, "a", "b"]
    for key, rows in ((WHOLE, np.ones(len(X), bool)), ("a", strata == "a"), ("b", strata == "b")):
        for (a, b), r in zip(pairs, out[key]["all"]["spearman"].pairs, strict=True):
            x, y = both(X[rows, a], X[rows, b])
            assert abs(r.value - ss.spearmanr(x, y).statistic) <= TOL and r.n_items == len(x)
            assert abs(r.p_value - ss.spearmanr(x, y).pvalue) <= 1e-9
        (a, b), r = pairs[0], out[key]["first"]["pearson"].pairs[0]
        x, y = both(X[rows, a], X[rows, b])
        assert abs(r.value - ss.pearsonr(x, y).statistic) <= TOL
        assert out[key]["all"]["pearson"].boot.shape == (200, len(pairs))


def test_resamples_keep_each_stratum_item_count():
    """Stratum a agrees on every item, stratum b on none: the whole's percent agreement is the
    share of a's items in every stratified resample, and varies without strata."""
    a = np.arange(60) % 3
    x = np.concatenate([a, a]).astype(float)
    y = np.concatenate([a, (a + 1) % 3]).astype(float)
    strata = ["a"] * 60 + ["b"] * 60
    M = np.column_stack([x, y])
    out = pair_group_bootstrap(M, {"g": [(0, 1)]}, ["percent_agreement"], 300, 1, strata)
    boot = out[WHOLE]["g"]["percent_agreement"].boot[:, 0]
    assert np.allclose(boot, 0.5) and np.allclose(out["a"]["g"]["percent_agreement"].boot, 1.0)
    assert np.allclose(out["b"]["g"]["percent_agreement"].boot, 0.0)
    plain = pair_group_bootstrap(M, {"g": [(0, 1)]}, ["percent_agreement"], 300, 1)
    assert list(plain) == [WHOLE] and plain[WHOLE]["g"]["percent_agreement"].boot.std() > 0.01
    # only the whole when asked, still resampled within strata
    whole_only = pair_group_bootstrap(M, {"g": [(0, 1)]}, ["percent_agreement"], 50, 1, strata, per_stratum=False)
    assert list(whole_only) == [WHOLE] and np.allclose(whole_only[WHOLE]["g"]["percent_agreement"].boot, 0.5)


def test_derived_columns_and_determinism():
    X = ratings(k=3)
    loo = pair_group_bootstrap(
        X,
        {"loo": [(h, 3 + h) for h in range(3)]},
        ["pearson"],
        100,
        2,
        derived=loo_means,
    )
    for h, r in enumerate(loo[WHOLE]["loo"]["pearson"].pairs):
        x, y = both(X[:, h], loo_means(X)[:, h])
        assert abs(r.value - ss.pearsonr(x, y).statistic) <= TOL
    again = pair_group_bootstrap(
        X,
        {"loo": [(h, 3 + h) for h in range(3)]},
        ["pearson"],
        100,
        2,
        derived=loo_means,
    )
    assert np.array_equal(loo[WHOLE]["loo"]["pearson"].boot, again[WHOLE]["loo"]["pearson"].boot)


def test_undefined_pairs_missing_items_and_bad_strata():
    X = np.column_stack([np.ones(30), np.arange(30.0), np.full(30, np.nan)])
    out = pair_group_bootstrap(X, {"g": [(0, 1), (1, 2)]}, ["pearson"], 20, 0)
    const, empty = out[WHOLE]["g"]["pearson"].pairs
    assert const.value is None and "constant" in const.reason
    assert empty.value is None and empty.n_items == 0
    assert np.isnan(out[WHOLE]["g"]["pearson"].mean_of_all()).all()
    with pytest.raises(ValueError):
        pair_group_bootstrap(X, {"g": [(0, 1)]}, ["pearson"], 0, 0, strata=[None] * 30)


def test_judge_and_ceiling_by_stratum_against_scipy():
    rng = np.random.default_rng(7)
    H = ratings(n=300, k=4, seed=3, missing=0.05)
    J = np.clip(np.nanmean(H, axis=1, keepdims=True) + rng.normal(scale=0.7, size=(300, 1)), 0, 4).round()
    S = H[:, ::-1].copy()  # slots: the humans in reverse order
    strata = np.where(np.arange(300) < 120, "gpt", "gemini")
    out = judge_and_ceiling(H, J, S, ["judge"], 200, 3, strata)
    for key, rows in ((WHOLE, slice(None)), ("gpt", slice(0, 120)), ("gemini", slice(120, None))):
        h, j = H[rows], J[rows, 0]
        x, y = both(j, np.nanmean(h, axis=1))
        r = out[key].judges["judge"]["spearman"]
        assert abs(r.value - ss.spearmanr(x, y).statistic) <= TOL and r.ci[0] <= r.value <= r.ci[1]
        want = np.mean(
            [ss.pearsonr(*both(h[:, k], np.nanmean(np.delete(h, k, axis=1), axis=1))).statistic for k in range(4)]
        )
        assert abs(out[key].ceiling["pearson"].value - want) <= TOL
        s = S[rows]
        pooled = np.mean([ss.spearmanr(*both(s[:, a], s[:, b])).statistic for a, b in combinations(range(4), 2)])
        assert abs(out[key].slots["spearman"].value - pooled) <= TOL and out[key].slots["spearman"].ci


def test_per_resample_light_draws_are_multinomial():
    """Many light items (one bincount per resample): every resample has N items, and each
    pattern's mean multiplicity is its count (the multinomial's mean)."""
    rng = np.random.default_rng(0)
    counts = rng.integers(1, 4, size=3000).astype(float)
    counts[:5] = 40  # a few heavy patterns
    smp = PatternSampler(counts)
    W = np.empty((smp.P, 400))
    W[smp.order] = smp.sample_t(400, rng)
    assert np.allclose(W.sum(0), counts.sum())
    assert abs(W.mean(1) - counts).max() < 6 * np.sqrt(counts.max() / 400)
