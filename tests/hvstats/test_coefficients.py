import numpy as np
import pytest
import scipy.stats as ss
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

from hvstats import cohen_kappa, correlation, fleiss_kappa, gwet_ac, pairwise_matrix, percent_agreement
from hvstats.pairs import PairTable

nan = np.nan
KRIPP = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
).T


def _pair(seed, n=200, k=5, miss=0.1, cont=False):
    rng = np.random.default_rng(seed)
    if cont:
        x = rng.normal(size=n)
        y = x + rng.normal(size=n)
    else:
        x = rng.integers(1, k + 1, n).astype(float)
        y = np.clip(x + rng.integers(-1, 2, n), 1, k)
    x[rng.random(n) < miss] = nan
    y[rng.random(n) < miss] = nan
    return x, y


SCIPY = {"pearson": ss.pearsonr, "spearman": ss.spearmanr, "kendall": ss.kendalltau}


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("metric", list(SCIPY))
@pytest.mark.parametrize("cont", [False, True])
def test_correlations_vs_scipy(seed, metric, cont):
    x, y = _pair(seed, n=40 if seed == 0 else 300, cont=cont)
    m = ~np.isnan(x) & ~np.isnan(y)
    ref = SCIPY[metric](x[m], y[m])
    r = correlation(x, y, metric)
    assert r.value == pytest.approx(ref.statistic, abs=1e-9)
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-6, abs=1e-12)
    assert r.n_items == m.sum()


def test_correlation_guards():
    assert "constant" in correlation([1, 1, 1, 1], [1, 2, 3, 4]).reason
    assert "fewer than three" in correlation([1, 2], [1, 2]).reason
    assert correlation([nan, nan, 1], [1, 2, nan]).value is None
    assert correlation([1, 2, 3, 4], [1, 2, 3, 5]).to_dict()["metric"] == "pearson"


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("w", [None, "linear", "quadratic"])
def test_cohen_vs_sklearn(seed, w):
    x, y = _pair(seed)
    m = ~np.isnan(x) & ~np.isnan(y)
    assert cohen_kappa(x, y, w).value == pytest.approx(cohen_kappa_score(x[m], y[m], weights=w), abs=1e-9)


def test_cohen_guards_and_label_invariance():
    assert cohen_kappa([1, 1, 1], [1, 1, 1]).value is None
    assert "single category" in cohen_kappa([1, 1, 1], [1, 1, 1]).reason
    x, y = _pair(9, k=3)
    a = cohen_kappa(x, y).value
    ren = {1.0: 30.0, 2.0: 10.0, 3.0: 20.0}
    f = np.vectorize(lambda v: ren.get(v, nan))
    assert cohen_kappa(f(x), f(y)).value == pytest.approx(a, abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_fleiss_vs_statsmodels(seed):
    rng = np.random.default_rng(seed)
    X = np.clip(rng.integers(0, 4, (120, 1)) + rng.integers(-1, 2, (120, 5)), 0, 4).astype(float)
    assert fleiss_kappa(X).value == pytest.approx(sm_fleiss(aggregate_raters(X)[0]), abs=1e-9)


def test_gwet_published_and_irrcac_values():
    # Gwet (2014) Handbook / irrCAC on the same 4x12 data (cac.raw4raters): AC1 0.7754
    assert gwet_ac(KRIPP).value == pytest.approx(0.77544, abs=5e-6)
    assert gwet_ac(KRIPP, "linear").value == pytest.approx(0.85874, abs=5e-6)
    assert gwet_ac(KRIPP, "quadratic").value == pytest.approx(0.91400, abs=5e-6)


def test_gwet_hand_derived_two_raters():
    # 2 raters, binary: a=40 (yes,yes), b=10, c=5, d=45 -> pa=.85, pi=(45/100+50/100)/2... by hand
    x = np.array([1] * 40 + [1] * 10 + [0] * 5 + [0] * 45, float)
    y = np.array([1] * 40 + [0] * 10 + [1] * 5 + [0] * 45, float)
    pa = 0.85
    pi1 = ((50 + 45) / 2) / 100
    pe = 2 * pi1 * (1 - pi1)  # q=2: sum_k pi_k(1-pi_k)/(q-1)
    ac1 = (pa - pe) / (1 - pe)
    assert gwet_ac(np.column_stack([x, y])).value == pytest.approx(ac1, abs=1e-12)
    assert percent_agreement(np.column_stack([x, y])).value == pytest.approx(0.85)


def test_multi_rater_guards():
    assert "fewer than two raters" in fleiss_kappa(np.array([[1.0], [2.0]])).reason
    assert fleiss_kappa(np.ones((4, 3))).value is None
    assert gwet_ac(np.ones((4, 3))).value is None
    assert percent_agreement(np.ones((4, 3))).value == 1.0
    assert fleiss_kappa(np.full((3, 3), nan)).value is None


def test_pair_table_weighted_equals_repeated():
    x, y = _pair(3, n=60)
    w = np.random.default_rng(0).integers(0, 4, 60)
    t = PairTable(x, y)
    T = np.bincount(t.row_group[t.row_group >= 0], weights=w[t.row_group >= 0], minlength=t.G)[None]
    got = t.compute(T, ["pearson", "spearman", "kendall", "cohen_kappa_quadratic"])
    xr, yr = np.repeat(x, w), np.repeat(y, w)
    m = ~np.isnan(xr) & ~np.isnan(yr)
    assert got["spearman"][0] == pytest.approx(ss.spearmanr(xr[m], yr[m]).statistic, abs=1e-9)
    assert got["kendall"][0] == pytest.approx(ss.kendalltau(xr[m], yr[m]).statistic, abs=1e-9)
    assert got["cohen_kappa_quadratic"][0] == pytest.approx(
        cohen_kappa_score(xr[m], yr[m], weights="quadratic", labels=t.xu if len(t.xu) >= len(t.yu) else t.yu), abs=1e-9
    )


def test_pairwise_matrix():
    rng = np.random.default_rng(0)
    X = np.clip(rng.integers(1, 6, (80, 1)) + rng.integers(-1, 2, (80, 4)), 1, 5).astype(float)
    pm = pairwise_matrix(X, "cohen_kappa", raters=list("abcd"))
    assert pm["raters"] == list("abcd")
    assert pm["matrix"][0][1] == pytest.approx(cohen_kappa_score(X[:, 0], X[:, 1]), abs=1e-12)
    assert pm["matrix"][1][0] == pm["matrix"][0][1] and pm["matrix"][2][2] is None
    pk = pairwise_matrix(X, "krippendorff_alpha", level="ordinal", n_boot=50)
    assert pk["pairs"][0]["ci"] is not None


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 100_000))
def test_kappa_symmetry_and_order(seed):
    x, y = _pair(seed, n=50, k=4)
    perm = np.random.default_rng(seed).permutation(50)
    a = cohen_kappa(x, y).value
    b = cohen_kappa(y[perm], x[perm]).value
    assert (a is None and b is None) or b == pytest.approx(a, abs=1e-12)
    c1 = correlation(x, y, "kendall").value
    c2 = correlation(y[perm], x[perm], "kendall").value
    assert (c1 is None and c2 is None) or c2 == pytest.approx(c1, abs=1e-12)
