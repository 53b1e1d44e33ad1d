"""The pattern resampler draws exactly Multinomial(N, counts / N) (item bootstrap), and the
batched helpers give the same numbers as the one-at-a-time ones."""

import numpy as np
import pytest

from hvstats.bootstrap import (
    PatternSampler,
    compress_rows,
    percentile_ci,
    percentile_cis,
    resample_counts,
)


def _counts():
    # heavy patterns (binomial part), light ones (index draws) and an empty one
    return np.array([400.0, 150.0, 60.0, 25.0, 7.0, 3.0, 1.0, 1.0, 1.0, 0.0, 2.0, 45.0])


@pytest.mark.parametrize("counts", [_counts(), np.ones(50), np.array([500.0, 300.0]), np.array([5.0])])
def test_sampler_is_multinomial(counts):
    N = counts.sum()
    p = counts / N
    B = 20_000
    W = np.vstack(list(resample_counts(counts, B, np.random.default_rng(7))))
    assert W.shape == (B, len(counts))
    assert (W.sum(1) == N).all() and (W >= 0).all() and (np.round(W) == W).all()
    assert (W[:, counts == 0] == 0).all()
    # mean N p, variance N p (1 - p), covariance -N p_i p_j (multinomial moments)
    se_mean = np.sqrt(N * p * (1 - p) / B)
    assert np.all(np.abs(W.mean(0) - N * p) <= 5 * se_mean + 1e-12)
    var = N * p * (1 - p)
    ok = var > 0
    assert np.allclose(W.var(0)[ok] / var[ok], 1, atol=0.1)
    if len(counts) >= 4:
        C = np.cov(W.T)
        i, j = 0, len(counts) - 1  # a heavy and a light/other pattern
        ref = -N * p[i] * p[j]
        assert abs(C[i, j] - ref) <= 0.1 * np.sqrt(var[i] * var[j]) + 1e-9


def test_sampler_matches_numpy_multinomial_distribution():
    """Light-pattern total and one light cell: same distribution as rng.multinomial."""
    counts = _counts()
    N = int(counts.sum())
    B = 20_000
    ours = np.vstack(list(resample_counts(counts, B, np.random.default_rng(3))))
    ref = np.random.default_rng(4).multinomial(N, counts / N, size=B)
    light = counts < 20
    for a, b in ((ours[:, light].sum(1), ref[:, light].sum(1)), (ours[:, 6], ref[:, 6])):
        # two-sample comparison of the distributions on their common support
        vals = np.union1d(a, b)
        pa = np.array([(a == v).mean() for v in vals])
        pb = np.array([(b == v).mean() for v in vals])
        assert np.abs(np.cumsum(pa) - np.cumsum(pb)).max() < 0.02  # KS distance


def test_sampler_reproducible_and_ordered():
    counts = _counts()
    s = PatternSampler(counts)
    a = s.sample_t(300, np.random.default_rng(1))
    b = s.sample_t(300, np.random.default_rng(1))
    assert np.array_equal(a, b)
    assert sorted(s.order.tolist()) == list(range(len(counts)))
    # rows in sampler order: the mean of each row is the count of that pattern
    assert np.allclose(a.mean(1), counts[s.order], rtol=0.25, atol=1.0)


def test_percentile_cis_equal_one_by_one():
    rng = np.random.default_rng(0)
    boot = {f"k{i}": rng.normal(size=500) for i in range(20)}
    boot["nan"] = np.where(rng.random(500) < 0.1, np.nan, rng.normal(size=500))
    boot["allnan"] = np.full(500, np.nan)
    got = percentile_cis(boot)
    for k, v in boot.items():
        assert got[k] == percentile_ci(v)


def test_compress_rows_lexicographic_and_inverse():
    rng = np.random.default_rng(2)
    X = np.where(rng.random((3000, 4)) < 0.2, np.nan, rng.integers(1, 6, (3000, 4)).astype(float))
    P, cnt, inv = compress_rows(X)
    sentinel = -1.0
    Y = np.where(np.isnan(X), sentinel, X)
    refP, refinv, refcnt = np.unique(Y, axis=0, return_inverse=True, return_counts=True)
    assert np.array_equal(np.where(np.isnan(P), sentinel, P), refP)
    assert np.array_equal(inv, refinv.reshape(-1)) and np.array_equal(cnt, refcnt)
    assert np.array_equal(np.where(np.isnan(P[inv]), sentinel, P[inv]), Y)
    for k in (3, 12):  # 500**12 distinct keys overflow int64: falls back to sorting rows
        Z = rng.normal(size=(500, k))
        Z[::7, 1] = np.nan
        P2, cnt2, inv2 = compress_rows(np.repeat(Z, 2, axis=0))
        assert len(P2) == 500 and (cnt2 == 2).all()
        assert np.array_equal(P2[inv2], np.repeat(Z, 2, axis=0), equal_nan=True)


def test_kendall_quadratic_form_equals_grid(monkeypatch):
    import scipy.stats as ss

    from hvstats import pairs

    rng = np.random.default_rng(5)
    x = rng.integers(0, 40, 3000).astype(float)
    y = x + rng.integers(0, 60, 3000)
    t = pairs.PairTable(x, y)
    T = np.vstack([t.counts, rng.multinomial(int(t.n), t.counts / t.n, size=3)])
    monkeypatch.setattr(pairs, "KENDALL_QF_MAX_G", 10**6)
    qf = t.compute(T, ["kendall"])["kendall"]
    monkeypatch.setattr(pairs, "KENDALL_QF_MAX_G", 0)
    grid = t.compute(T, ["kendall"])["kendall"]
    assert np.allclose(qf, grid, rtol=0, atol=1e-12)
    assert qf[0] == pytest.approx(ss.kendalltau(x, y).statistic, abs=1e-12)
