"""The judge bias checks (hvstats/bias.py) against independent computations: counts by
hand, scipy.stats (binomtest, spearmanr), the krippendorff package, and each bootstrap resample
recomputed from the expanded rows (the same item draws, the statistic computed independently)."""

from __future__ import annotations

import itertools

import krippendorff
import numpy as np
import pytest
from scipy import stats

from hvstats import bias
from hvstats.bootstrap import compress_rows, resample_counts

TOL = 1e-9


def boot_ci(X: np.ndarray, stat, n_boot: int, seed: int, level: float = 0.95):
    """The percentile interval of ``stat(expanded rows)`` over the resamples bias.py draws."""
    P, cnt, _ = compress_rows(np.asarray(X, dtype=float))
    vals = []
    for W in resample_counts(cnt, n_boot, np.random.default_rng(seed)):
        for w in W:
            rows = np.repeat(P, w.astype(int), axis=0)
            assert len(rows) == len(X)
            v = stat(rows)
            vals.append(np.nan if v is None else v)
    v = np.asarray(vals, dtype=float)
    v = v[np.isfinite(v)]
    if len(v) < 2:
        return None
    a = (1 - level) / 2
    return tuple(np.quantile(v, [a, 1 - a]))


def close(ci, expected):
    assert (ci is None) == (expected is None)
    if ci is not None:
        assert ci == pytest.approx(expected, abs=TOL)


# ------------------------------------------------------------------------- position
ORIG = ["a", "a", "b", "tie", "a", "b", None, "a", "b", "a", "tie", "a"]
SWAP = ["a", "b", "a", "tie", "a", "b", "a", None, "b", "tie", "a", "b"]


def test_position_consistency_counts_and_bootstrap():
    res = bias.position_consistency(ORIG, SWAP, n_boot=300, seed=7)
    pairs = [(o, s) for o, s in zip(ORIG, SWAP, strict=True) if o is not None and s is not None]
    same = np.array([o == s for o, s in pairs], dtype=float)
    assert res.n_items == len(pairs) == 10
    assert res.value == pytest.approx(same.mean(), abs=TOL)
    assert res.extra["consistent"] == 5
    assert res.extra["first_both"] == sum(o == "a" and s == "b" for o, s in pairs) == 2
    assert res.extra["second_both"] == sum(o == "b" and s == "a" for o, s in pairs) == 1
    assert res.extra["other_inconsistent"] == 2 and res.extra["n_missing"] == 2
    close(res.ci, boot_ci(same[:, None], lambda r: r[:, 0].mean(), 300, 7))


def test_position_consistency_edge_cases():
    # every item consistent: 1 with a degenerate interval
    res = bias.position_consistency(["a", "b", "tie"], ["a", "b", "tie"], n_boot=50)
    assert res.value == 1.0 and res.ci == (1.0, 1.0) and res.extra["n_missing"] == 0
    # the second order missing everywhere: undefined, with the reason
    res = bias.position_consistency(["a", "b"], [None, None])
    assert res.value is None and "both orders" in res.reason and res.extra["n_missing"] == 2
    # one item: a value, no interval
    res = bias.position_consistency(["a"], ["b"], n_boot=50)
    assert res.value == 0.0 and res.ci is None and res.extra["first_both"] == 1
    with pytest.raises(ValueError):
        bias.position_consistency(["left"], ["a"])
    with pytest.raises(ValueError):
        bias.position_consistency(["a", "b"], ["a"])


def test_first_position_rate_pools_both_orders_and_tests_against_half():
    res = bias.first_position_rate(ORIG, SWAP)
    pairs = [(o, s) for o, s in zip(ORIG, SWAP, strict=True) if o is not None and s is not None]
    first = [o == "a" for o, _ in pairs if o != "tie"] + [s == "b" for _, s in pairs if s != "tie"]
    k, n = sum(first), len(first)
    assert (res.extra["n_first"], res.extra["n_second"]) == (k, n - k) == (9, 7)
    assert res.extra["n_ties"] == 4 and res.extra["n_judgements"] == 20 and res.extra["n_missing"] == 2
    assert res.value == pytest.approx(k / n, abs=TOL)
    # independent: the two-sided exact binomial p-value summed by hand, and scipy's Clopper-Pearson
    pmf = [stats.binom.pmf(i, n, 0.5) for i in range(n + 1)]
    p = sum(x for x in pmf if x <= pmf[k] * (1 + 1e-7))
    assert res.p_value == pytest.approx(min(1.0, p), abs=TOL)
    lo = stats.beta.ppf(0.025, k, n - k + 1)
    hi = stats.beta.ppf(0.975, k + 1, n - k)
    assert res.ci == pytest.approx((lo, hi), abs=TOL)


def test_first_position_rate_edge_cases():
    # a judge that always picks whatever is shown first
    res = bias.first_position_rate(["a"] * 10, ["b"] * 10)
    assert res.value == 1.0 and res.p_value == pytest.approx(2 * 0.5**20, abs=TOL)
    # a judge that always picks the same member (the truth): exactly half first
    res = bias.first_position_rate(["a"] * 6, ["a"] * 6)
    assert res.value == 0.5 and res.p_value == pytest.approx(1.0, abs=TOL)
    # only ties: undefined
    res = bias.first_position_rate(["tie", "tie"], ["tie", "tie"])
    assert res.value is None and "tie" in res.reason and res.extra["n_ties"] == 4
    # unpaired items are left out of the pooled share
    res = bias.first_position_rate(["a", "a", "a"], ["b", None, None])
    assert res.extra["n_judgements"] == 2 and res.extra["n_missing"] == 2


# ------------------------------------------------------------------------- passes
def pct_agreement(X: np.ndarray) -> float | None:
    per = []
    for row in X:
        v = row[~np.isnan(row)]
        if len(v) < 2:
            continue
        pairs = list(itertools.combinations(v, 2))
        per.append(sum(a == b for a, b in pairs) / len(pairs))
    return float(np.mean(per)) if per else None


def kripp(X: np.ndarray, level: str) -> float | None:
    try:
        v = krippendorff.alpha(reliability_data=X.T, level_of_measurement=level)
    except (ValueError, ZeroDivisionError):
        return None
    return float(v) if np.isfinite(v) else None


@pytest.mark.parametrize("level", ["nominal", "ordinal"])
def test_pass_stability_matches_krippendorff_and_pairs_by_hand(level):
    rng = np.random.default_rng(3)
    base = rng.integers(0, 3, 25).astype(float)
    X = np.column_stack([base, np.where(rng.random(25) < 0.7, base, rng.integers(0, 3, 25)), base])
    X[2, 1] = np.nan
    X[5, 2] = np.nan
    out = bias.pass_stability(X, level=level, n_boot=200, seed=11)
    pa, alpha = out["percent_agreement"], out["krippendorff_alpha"]
    assert pa.value == pytest.approx(pct_agreement(X), abs=TOL)
    assert alpha.value == pytest.approx(kripp(X, level), abs=TOL)
    close(pa.ci, boot_ci(X, pct_agreement, 200, 11))
    close(alpha.ci, boot_ci(X, lambda r: kripp(r, level), 200, 12))


def test_pass_stability_constant_answers_and_total_agreement():
    # the same answer everywhere: full agreement, alpha undefined (no expected disagreement)
    out = bias.pass_stability(np.full((6, 2), 2.0), n_boot=50)
    assert out["percent_agreement"].value == 1.0
    assert out["krippendorff_alpha"].value is None and "identical" in out["krippendorff_alpha"].reason
    # passes agree on every item with varied answers: alpha 1 as the krippendorff package says
    X = np.column_stack([[0, 1, 2, 1, 0, 2.0]] * 2)
    out = bias.pass_stability(X, level="nominal", n_boot=50)
    assert out["krippendorff_alpha"].value == pytest.approx(kripp(X, "nominal"), abs=TOL) == pytest.approx(1.0)
    # a single pass: nothing to compare
    out = bias.pass_stability(np.array([[1.0], [2.0]]), n_boot=50)
    assert out["percent_agreement"].value is None and out["krippendorff_alpha"].value is None


# ------------------------------------------------------------------------- verbosity
def rho(x: np.ndarray, y: np.ndarray) -> float | None:
    if len(np.unique(x)) < 2 or len(np.unique(y)) < 2 or len(x) < 3:
        return None
    return float(stats.spearmanr(x, y).statistic)


def test_verbosity_spearman_of_judge_and_humans_with_ties_and_missing():
    rng = np.random.default_rng(5)
    n = 40
    lengths = rng.integers(20, 400, n).astype(float)
    lengths[:6] = 100.0  # tied lengths
    judge = np.clip(np.round(lengths / 100 + rng.normal(0, 1, n)), 1, 5)  # a length-loving judge
    humans = rng.integers(1, 6, n) + rng.random(n).round(1)
    judge_list = [None if i == 3 else float(v) for i, v in enumerate(judge)]
    humans_list = [None if i in (7, 8) else float(v) for i, v in enumerate(humans)]
    out = bias.verbosity(lengths, judge_list, humans_list, n_boot=200, seed=2)
    keep = np.array([i not in (3, 7, 8) for i in range(n)])
    L, J, H = lengths[keep], judge[keep], humans[keep]
    assert out["n_items"] == n - 3
    assert out["judge"].value == pytest.approx(stats.spearmanr(L, J).statistic, abs=TOL)
    assert out["judge"].p_value == pytest.approx(stats.spearmanr(L, J).pvalue, abs=1e-7)
    assert out["humans"].value == pytest.approx(stats.spearmanr(L, H).statistic, abs=TOL)
    assert out["difference"].value == pytest.approx(out["judge"].value - out["humans"].value, abs=TOL)
    close(out["judge"].ci, boot_ci(np.column_stack([L, J]), lambda r: rho(r[:, 0], r[:, 1]), 200, 2))
    close(out["humans"].ci, boot_ci(np.column_stack([L, H]), lambda r: rho(r[:, 0], r[:, 1]), 200, 2))

    def diff(r):
        a, b = rho(r[:, 0], r[:, 1]), rho(r[:, 0], r[:, 2])
        return None if a is None or b is None else a - b

    close(out["difference"].ci, boot_ci(np.column_stack([L, J, H]), diff, 200, 2))


def test_verbosity_constant_judge_is_undefined_not_zero():
    out = bias.verbosity([10, 20, 30, 40], [3, 3, 3, 3], [1, 2, 3, 4], n_boot=20)
    assert out["judge"].value is None and "constant" in out["judge"].reason
    assert out["humans"].value == pytest.approx(1.0, abs=TOL)
    assert out["difference"].value is None
    with pytest.raises(ValueError):
        bias.verbosity([1, 2], [1], [1, 2])


# ------------------------------------------------------------------------------ length choice
def test_longer_choice_rate_against_scipy_and_statsmodels():
    from statsmodels.stats.proportion import proportion_confint

    chose = [True] * 7 + [False] * 3 + [None] * 4  # None: a tie, no answer or equal lengths
    r = bias.longer_choice_rate(chose)
    assert r.value == pytest.approx(0.7, abs=1e-12) and r.n_items == 10
    assert r.extra == {"n_longer": 7, "n_shorter": 3, "n_left_out": 4}
    assert r.p_value == pytest.approx(stats.binomtest(7, 10, 0.5).pvalue, abs=1e-12)
    lo, hi = proportion_confint(7, 10, alpha=0.05, method="beta")  # Clopper-Pearson
    assert r.ci == (pytest.approx(lo, abs=1e-10), pytest.approx(hi, abs=1e-10))


def test_longer_choice_rate_edge_cases():
    from statsmodels.stats.proportion import proportion_confint

    always = bias.longer_choice_rate([True] * 5)
    lo, hi = proportion_confint(5, 5, alpha=0.05, method="beta")
    assert always.value == 1.0 and always.ci == (pytest.approx(lo, abs=1e-10), pytest.approx(hi, abs=1e-10))
    assert always.p_value == pytest.approx(2 * 0.5**5, abs=1e-12)
    never = bias.longer_choice_rate([False])  # one judgement
    assert never.value == 0.0 and never.p_value == pytest.approx(1.0) and never.ci[0] == 0.0
    for empty in ([], [None, None]):
        r = bias.longer_choice_rate(empty)
        assert r.value is None and r.ci is None and r.reason.startswith("undefined: no decisive")
        assert r.extra["n_left_out"] == len(empty)
