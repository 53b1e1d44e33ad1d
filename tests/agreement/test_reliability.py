import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from agreement.stats import bootstrap_statistic, krippendorff_alpha
from agreement.stats.reliability import alpha_features

nan = np.nan
# Krippendorff (2011) "Computing Krippendorff's Alpha-Reliability", 4 observers x 12 units
KRIPP = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]).T  # items x raters
PUBLISHED = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}
LEVELS = list(PUBLISHED)


@pytest.mark.parametrize("level", LEVELS)
def test_published_example(level):
    r = krippendorff_alpha(KRIPP, level)
    assert round(r.value, 3) == PUBLISHED[level]
    assert r.n_items == 11  # unit 12 has a single value: not pairable
    assert r.value == pytest.approx(krippendorff.alpha(reliability_data=KRIPP.T, level_of_measurement=level), abs=1e-12)


def _random(seed, n=150, r=6, k=7, miss=0.3, continuous=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, r)) * 3 + rng.normal(size=(n, 1)) * 3 if continuous else \
        np.clip(rng.integers(0, k, size=(n, 1)) + rng.integers(-1, 2, size=(n, r)), 0, k).astype(float)
    if continuous:
        X = np.abs(X)
    X[rng.random(X.shape) < miss] = nan
    return X


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("level", LEVELS)
def test_against_krippendorff_package(seed, level):
    X = _random(seed, continuous=(seed % 3 == 2 and level != "nominal"))
    ref = krippendorff.alpha(reliability_data=X.T, level_of_measurement=level)
    assert krippendorff_alpha(X, level).value == pytest.approx(ref, abs=1e-9)
    fb = alpha_features(X, level)
    if fb is not None:
        F, fin = fb
        assert fin(np.ones((1, len(X))) @ F)[0] == pytest.approx(ref, abs=1e-9)


def test_weighted_features_equal_duplicated_items():
    X = _random(1, n=40, r=4, k=4)
    w = np.random.default_rng(3).integers(0, 4, size=40)
    Xd = np.repeat(X, w, axis=0)
    for level in LEVELS:
        F, fin = alpha_features(X, level)
        assert fin(w[None, :].astype(float) @ F)[0] == pytest.approx(krippendorff_alpha(Xd, level).value, abs=1e-9)


def test_edge_cases():
    assert krippendorff_alpha(np.full((5, 3), 2.0), "nominal").value is None
    assert "undefined" in krippendorff_alpha(np.full((5, 3), 2.0), "interval").reason
    one = krippendorff_alpha(np.array([[1.0], [2.0], [3.0]]), "interval")
    assert one.value is None and "two or more" in one.reason
    allmiss = krippendorff_alpha(np.full((4, 3), nan), "ordinal")
    assert allmiss.value is None
    with pytest.raises(ValueError):
        krippendorff_alpha(KRIPP, "cardinal")


def test_bootstrap_ci_contains_point_and_is_seeded():
    X = _random(4, n=300, r=4, k=5)
    v, ci = bootstrap_statistic(X, lambda P: alpha_features(P, "ordinal"), n_boot=300, seed=1)
    assert v == pytest.approx(krippendorff_alpha(X, "ordinal").value, abs=1e-12)
    assert ci[0] < v < ci[1]
    assert bootstrap_statistic(X, lambda P: alpha_features(P, "ordinal"), n_boot=300, seed=1)[1] == ci


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(LEVELS))
def test_invariances(seed, level):
    rng = np.random.default_rng(seed)
    X = _random(seed, n=30, r=4, k=4)
    a = krippendorff_alpha(X, level).value
    perm_r = rng.permutation(X.shape[1])
    perm_i = rng.permutation(X.shape[0])
    b = krippendorff_alpha(X[perm_i][:, perm_r], level).value
    if a is None:
        assert b is None
        return
    assert b == pytest.approx(a, abs=1e-9)
    if level == "nominal":  # relabelling categories
        lab = rng.permutation(20)[:6] * 3.0 + 100
        Y = np.where(np.isnan(X), nan, lab[np.nan_to_num(X).astype(int) % 6])
        if len(np.unique(X[~np.isnan(X)])) == len(np.unique(Y[~np.isnan(Y)])):
            assert krippendorff_alpha(Y, "nominal").value == pytest.approx(a, abs=1e-9)
