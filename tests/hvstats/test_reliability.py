import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hvstats import bootstrap_statistic, krippendorff_alpha, reliability
from hvstats.analysis import analyse_matrix
from hvstats.reliability import alpha_features
from tests.hvstats.kripp2011 import KRIPP, LEVELS, OBSERVERS, PUBLISHED

nan = np.nan


def _pkg(X, level):
    """The ``krippendorff`` package's alpha of an items x raters matrix."""
    return krippendorff.alpha(reliability_data=np.asarray(X, dtype=float).T, level_of_measurement=level)


@pytest.mark.parametrize("level", LEVELS)
def test_published_example(level):
    r = krippendorff_alpha(KRIPP, level)
    assert round(r.value, 3) == PUBLISHED[level]
    assert r.n_items == 11  # unit 12 has a single value: not pairable
    assert r.value == pytest.approx(krippendorff.alpha(reliability_data=KRIPP.T, level_of_measurement=level), abs=1e-12)


def _random(seed, n=150, r=6, k=7, miss=0.3, continuous=False):
    rng = np.random.default_rng(seed)
    X = (
        rng.normal(size=(n, r)) * 3 + rng.normal(size=(n, 1)) * 3
        if continuous
        else np.clip(rng.integers(0, k, size=(n, 1)) + rng.integers(-1, 2, size=(n, r)), 0, k).astype(float)
    )
    if continuous:
        X = np.abs(X)
    X[rng.random(X.shape) < miss] = nan
    return X


# slow: the krippendorff package builds its coincidence matrices in pure Python loops (4-13 s for
# an ordinal grid); `make test-fast` leaves these 24 comparisons to `make test` and CI
@pytest.mark.slow
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


# ---------------------------------------------------------------------------------------
# Krippendorff's 2011 worked example through every path that computes alpha
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("level", LEVELS)
def test_worked_example_bootstrap_features(level):
    """The bootstrap features at unit weights give the point estimate: alpha_features,
    bootstrap_statistic (patterns + counts) and the same data with weights."""
    ref = _pkg(KRIPP, level)
    F, fin = alpha_features(KRIPP, level)
    v = fin(np.ones((1, len(KRIPP))) @ F)[0]
    assert round(v, 3) == PUBLISHED[level]
    assert v == pytest.approx(ref, abs=1e-12)
    point, ci = bootstrap_statistic(KRIPP, lambda P: alpha_features(P, level), n_boot=200, seed=3)
    assert point == pytest.approx(ref, abs=1e-12)
    assert ci is not None and ci[0] <= point <= ci[1]


@pytest.mark.parametrize("metrics", [["krippendorff_alpha"], None])
@pytest.mark.parametrize("level", LEVELS)
def test_worked_example_analyse_matrix(level, metrics):
    """The report's alpha (multi-rater and every pairwise alpha), alone or with the default
    metrics (pair tables present: the pairwise alpha is derived from the pair's counts).
    The pair (A, B) does not use category 5: it used to raise IndexError."""
    r = analyse_matrix(KRIPP, OBSERVERS, OBSERVERS, [], level, metrics, n_boot=200, seed=1)
    a = r["humans_vs_humans"]["krippendorff_alpha"]
    assert round(a["value"], 3) == PUBLISHED[level]
    assert a["value"] == pytest.approx(_pkg(KRIPP, level), abs=1e-12)
    assert a["n_items"] == 11 and a["level"] == level and a["ci"] is not None
    pw = r["humans_vs_humans"]["pairwise"]["krippendorff_alpha"]
    assert len(pw["pairs"]) == 6
    for p in pw["pairs"]:
        i, j = (OBSERVERS.index(x) for x in p["raters"])
        both = ~np.isnan(KRIPP[:, i]) & ~np.isnan(KRIPP[:, j])
        assert p["n_items"] == both.sum()
        ref = _pkg(KRIPP[:, [i, j]], level)
        if np.isfinite(ref):
            assert p["value"] == pytest.approx(ref, abs=1e-12)
        else:
            assert p["value"] is None


@pytest.mark.parametrize("level", LEVELS)
def test_point_estimate_is_the_bootstrap_finaliser(level):
    """One implementation: krippendorff_alpha is the finaliser of alpha_features applied
    to the unresampled sums, also with missing data and both feature layouts."""
    for seed in range(4):
        X = _random(seed, n=60, r=5, k=6, miss=0.35)
        F, fin = alpha_features(X, level)
        assert krippendorff_alpha(X, level).value == fin(F.sum(0)[None])[0]
        c = reliability._code(X, level != "interval")
        Fs, fins = reliability._features(c, level, dense_max_cells=0)  # sparse layout
        assert fins(reliability._weighted_sums(Fs, None))[0] == pytest.approx(_pkg(X, level), abs=1e-12)


# slow: the same package on many categories (6-12 s each)
@pytest.mark.slow
@pytest.mark.parametrize("level", ["ordinal", "ratio", "nominal"])
def test_sparse_features_many_categories(level, monkeypatch):
    """Continuous data (hundreds of categories): sparse features, with the ordinal
    coincidences merged per category pair or kept per value pair."""
    X = _random(7, n=200, r=5, miss=0.3, continuous=True)
    ref = _pkg(X, level)
    assert krippendorff_alpha(X, level).value == pytest.approx(ref, abs=1e-10)
    c = reliability._code(X)
    F, fin = reliability._features(c, level, dense_max_cells=0)
    assert fin(reliability._weighted_sums(F, None))[0] == pytest.approx(ref, abs=1e-10)
    monkeypatch.setattr(reliability, "_MERGE_PAIRS_MAX", 0)
    F, fin = reliability._features(c, level, dense_max_cells=0)
    assert fin(reliability._weighted_sums(F, None))[0] == pytest.approx(ref, abs=1e-10)


@pytest.mark.parametrize("level", LEVELS)
def test_category_unused_by_a_rater_pair(level):
    """A value that occurs only in units a pair did not both rate (or only in units with a
    single value) is not a category of that pair's coincidences."""
    X = np.array([[1, 1], [2, 2], [2, 3], [3, 3], [nan, 5], [4, nan], [1, 2]], dtype=float)
    ref = _pkg(X, level)
    assert krippendorff_alpha(X, level).value == pytest.approx(ref, abs=1e-12)
    F, fin = alpha_features(X, level)
    assert fin(F.sum(0)[None])[0] == pytest.approx(ref, abs=1e-12)
    Y = np.column_stack([X, [nan, nan, nan, nan, 7, nan, nan]])  # 7 and 5: one unit, two raters
    r = analyse_matrix(Y, ["a", "b", "c"], ["a", "b", "c"], [], level, ["krippendorff_alpha"], n_boot=50)
    pw = {tuple(p["raters"]): p for p in r["humans_vs_humans"]["pairwise"]["krippendorff_alpha"]["pairs"]}
    assert pw["a", "b"]["value"] == pytest.approx(ref, abs=1e-12)
    assert r["humans_vs_humans"]["krippendorff_alpha"]["value"] == pytest.approx(_pkg(Y, level), abs=1e-12)


@pytest.mark.parametrize("level", LEVELS)
def test_alpha_undefined_cases(level):
    """One rater, no pairable unit, constant ratings: undefined, never NaN or an exception,
    on every path."""
    one = np.array([[1.0], [2.0], [3.0]])
    const = np.full((6, 3), 2.0)
    const[0, 1] = nan
    for X, why in ((one, "two or more"), (np.array([[1, nan], [nan, 2.0]]), "two or more"), (const, "identical")):
        r = krippendorff_alpha(X, level)
        assert r.value is None and why in r.reason
        names = [f"r{i}" for i in range(X.shape[1])]
        a = analyse_matrix(X, names, names, [], level, ["krippendorff_alpha"], n_boot=20)
        assert a["humans_vs_humans"]["krippendorff_alpha"]["value"] is None
    F, fin = alpha_features(const, level)
    assert np.isnan(fin(F.sum(0)[None])[0])


@pytest.mark.parametrize("level", LEVELS)
def test_ties(level):
    """Heavily tied data (two categories in use, most units unanimous): mid-ranks of tied
    categories (ordinal), and equal values contribute no disagreement."""
    X = np.array([[1, 1, 1], [1, 1, 1], [1, 1, 2], [2, 2, 2], [2, 2, nan], [1, 2, nan], [2, 2, 2]], dtype=float)
    assert krippendorff_alpha(X, level).value == pytest.approx(_pkg(X, level), abs=1e-12)
    F, fin = alpha_features(X, level)
    assert fin(F.sum(0)[None])[0] == pytest.approx(_pkg(X, level), abs=1e-12)


def test_weights_equal_repeated_rows_and_scale_invariance():
    X = _random(2, n=40, r=4, k=5)
    w = np.random.default_rng(5).integers(0, 4, size=40)
    for level in LEVELS:
        assert krippendorff_alpha(X, level, weights=w).value == pytest.approx(
            krippendorff_alpha(np.repeat(X, w, axis=0), level).value, abs=1e-12
        )
    # the interval "no expected disagreement" guard is relative: tiny scales stay defined
    Y = _random(3, n=50, r=4, continuous=True)
    for level in ("interval", "ratio"):
        assert krippendorff_alpha(Y * 1e-9, level).value == pytest.approx(krippendorff_alpha(Y, level).value, abs=1e-9)


def test_report_alpha_without_bootstrap_features_counts_items():
    """Ordinal data with more categories than bootstrap features allow: the report's
    point estimate weights the distinct rating rows by their counts."""
    rng = np.random.default_rng(0)
    base = (rng.integers(0, 200, size=(60, 1)) + rng.integers(-9, 10, size=(60, 3))).astype(float)
    X = np.repeat(base, rng.integers(1, 6, size=60), axis=0)
    assert len(np.unique(X)) > reliability.ORDINAL_BOOT_MAX_K
    r = analyse_matrix(X, list("abc"), list("abc"), [], "ordinal", ["krippendorff_alpha"], n_boot=20)
    a = r["humans_vs_humans"]["krippendorff_alpha"]
    assert a["value"] == pytest.approx(_pkg(X, "ordinal"), abs=1e-12)
    assert a["n_items"] == len(X) and a["ci"] is None
