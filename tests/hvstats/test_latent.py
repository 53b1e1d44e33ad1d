"""Latent-truth aggregation (hvstats/latent.py): the wrapper gives crowd-kit's own
Dawid-Skene and MACE results, recovers known rater quality on simulated data, and handles the
edge cases the module docstring lists."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from crowdkit.aggregation import MACE, DawidSkene
from scipy.stats import entropy as scipy_entropy

from hvstats.latent import (
    DS_N_ITER,
    DS_TOL,
    MACE_N_ITER,
    entropy_nats,
    latent_truth,
    latent_truth_long,
    long_table,
)

# the direct crowd-kit calls below use pandas keywords that pandas 3 deprecates
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")
#: slow: crowd-kit's EM fits on the simulated table (3-6 s each); `make test-fast` leaves these
#: to `make test` and CI, the edge cases below stay in it
SLOW_FIT = pytest.mark.slow


def simulate(n: int, confusions: list[np.ndarray], priors: np.ndarray, seed: int = 0, missing: float = 0.0):
    """(truth, grid items x raters of int labels with NaN holes) drawn from the DS model."""
    rng = np.random.default_rng(seed)
    k = len(priors)
    truth = rng.choice(k, size=n, p=priors)
    grid = np.empty((n, len(confusions)))
    for j, m in enumerate(confusions):
        u = rng.random(n)
        cum = np.cumsum(m[truth], axis=1)
        grid[:, j] = (u[:, None] > cum).sum(axis=1)
    if missing:
        holes = rng.random(grid.shape) < missing
        holes[:, :2] = False  # every item keeps two ratings
        grid[holes] = np.nan
    return truth, grid


def symmetric(acc: float, k: int = 3) -> np.ndarray:
    m = np.full((k, k), (1 - acc) / (k - 1))
    np.fill_diagonal(m, acc)
    return m


ACCS = [0.9, 0.75, 0.6, 0.45]
PRIORS = np.array([0.5, 0.3, 0.2])


@pytest.fixture(scope="module")
def simulated():
    return simulate(3000, [symmetric(a) for a in ACCS], PRIORS, seed=1, missing=0.3)


def crowdkit_table(grid: np.ndarray, raters: list[str]) -> pd.DataFrame:
    rows, cols = np.nonzero(~np.isnan(grid))
    return pd.DataFrame({"task": rows, "worker": [raters[j] for j in cols], "label": grid[rows, cols].astype(int)})


# ------------------------------------------------------------------------------ same as crowd-kit
@SLOW_FIT
def test_dawid_skene_equals_crowdkit_on_the_same_long_table(simulated):
    _, grid = simulated
    raters = ["r0", "r1", "r2", "r3"]
    res = latent_truth(grid, raters=raters, method="dawid_skene")
    direct = DawidSkene(n_iter=DS_N_ITER, tol=DS_TOL).fit(crowdkit_table(grid, raters))
    probas = direct.probas_.sort_index()[[0, 1, 2]]  # crowd-kit's columns: order of appearance
    assert list(res.categories) == [0, 1, 2]
    np.testing.assert_allclose(res.probabilities, probas.to_numpy(), atol=1e-9, rtol=0)
    assert list(res.labels) == list(direct.labels_.sort_index())
    np.testing.assert_allclose(res.priors, direct.priors_.reindex([0, 1, 2]).to_numpy(), atol=1e-9, rtol=0)
    for r in raters:  # errors_: rows (worker, said), columns truth; ours: row truth, column said
        expected = direct.errors_.xs(r, level="worker").reindex(index=[0, 1, 2], columns=[0, 1, 2], fill_value=0.0)
        np.testing.assert_allclose(res.confusion[r], expected.to_numpy().T, atol=1e-9, rtol=0)
        assert res.accuracy[r] == pytest.approx(float(np.dot(res.priors, np.diag(res.confusion[r]))), abs=1e-12)


@SLOW_FIT
def test_mace_equals_crowdkit_on_the_long_table_it_is_given(simulated):
    _, grid = simulated
    rows, cols = np.nonzero(~np.isnan(grid))
    table, rater_of_code, cat_of_code = long_table(rows, cols, grid[rows, cols].astype(np.int64))
    direct = MACE(n_restarts=1, n_iter=MACE_N_ITER, random_state=0).fit(table)
    res = latent_truth(grid, raters=["a", "b", "c", "d"], method="mace")
    probas = direct.probas_.sort_index()
    expected = np.zeros_like(res.probabilities)
    expected[:, cat_of_code[list(probas.columns)]] = probas.to_numpy()
    np.testing.assert_allclose(res.probabilities, expected, atol=1e-9, rtol=0)
    names = ["a", "b", "c", "d"]
    for code, pos in enumerate(rater_of_code):
        spamming = direct.spamming_[code]
        assert res.accuracy[names[pos]] == pytest.approx(spamming[1] / spamming.sum(), abs=1e-12)
    # with raters and labels named in their order of appearance, the raw crowd-kit call agrees too
    seen_labels = pd.unique(grid[rows, cols])  # row-major order of appearance
    relabel = {v: i for i, v in enumerate(seen_labels)}
    renamed = np.array([[np.nan if np.isnan(x) else relabel[x] for x in row] for row in grid])
    names = [""] * 4
    for i, j in enumerate(pd.unique(cols)):
        names[j] = f"w{i}"
    res = latent_truth(renamed, raters=names, method="mace")
    raw = MACE(n_restarts=1, n_iter=MACE_N_ITER, random_state=0).fit(crowdkit_table(renamed, names))
    np.testing.assert_allclose(res.probabilities, raw.probas_.sort_index()[[0, 1, 2]].to_numpy(), atol=1e-9, rtol=0)
    assert list(raw.labels_.sort_index()) == [int(x) for x in res.labels]


def test_mace_does_not_depend_on_how_raters_are_named(simulated):
    """crowd-kit's MACE alone mixes parameters up when names sort unlike their appearance."""
    _, grid = simulated
    a = latent_truth(grid, raters=["a", "b", "c", "d"], method="mace")
    b = latent_truth(grid, raters=["zz", "yy", "xx", "aa"], method="mace")
    np.testing.assert_allclose(a.probabilities, b.probabilities, atol=1e-12, rtol=0)
    assert list(a.accuracy.values()) == pytest.approx(list(b.accuracy.values()), abs=1e-12)


@SLOW_FIT
def test_mace_is_deterministic_and_seeded(simulated):
    _, grid = simulated
    a = latent_truth(grid, method="mace")
    b = latent_truth(grid, method="mace")
    np.testing.assert_array_equal(a.probabilities, b.probabilities)
    c = latent_truth(grid, method="mace", seed=7)
    assert not np.array_equal(a.probabilities, c.probabilities)


@SLOW_FIT
def test_entropy_matches_scipy(simulated):
    _, grid = simulated
    for method in ("dawid_skene", "mace"):
        res = latent_truth(grid, method=method)
        expected = scipy_entropy(res.probabilities, axis=1)  # natural log
        np.testing.assert_allclose(res.entropy, expected, atol=1e-12, rtol=0)
    p = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [np.nan, np.nan, np.nan]])
    out = entropy_nats(p)
    assert out[0] == 0.0 and out[1] == pytest.approx(np.log(2)) and np.isnan(out[2])


# ------------------------------------------------------------------------------ recovers the truth
@SLOW_FIT
def test_dawid_skene_recovers_known_rater_quality(simulated):
    truth, grid = simulated
    res = latent_truth(grid, method="dawid_skene")
    for j, acc in enumerate(ACCS):  # symmetric confusion: accuracy = acc whatever the priors
        assert res.accuracy[f"rater_{j}"] == pytest.approx(acc, abs=0.04)
        np.testing.assert_allclose(res.confusion[f"rater_{j}"], symmetric(acc), atol=0.06)
    np.testing.assert_allclose(res.priors, PRIORS, atol=0.03)
    majority = pd.DataFrame(grid).mode(axis=1)[0].to_numpy()
    assert (np.array(res.labels) == truth).mean() > (majority == truth).mean()


@SLOW_FIT
def test_a_label_swapping_rater_is_read_through_its_confusion_matrix():
    """A rater who always says the other label is useless to majority vote, perfect to DS."""
    swap = np.array([[0.02, 0.98], [0.98, 0.02]])
    truth, grid = simulate(2000, [symmetric(0.8, 2), symmetric(0.7, 2), swap], np.array([0.6, 0.4]), seed=3)
    res = latent_truth(grid, method="dawid_skene")
    assert res.confusion["rater_2"][0, 1] > 0.9 and res.confusion["rater_2"][1, 0] > 0.9
    assert res.accuracy["rater_2"] < 0.1
    assert (np.array(res.labels) == truth).mean() > 0.95


def test_mace_finds_the_spammer():
    rng = np.random.default_rng(5)
    truth, grid = simulate(2000, [symmetric(0.9), symmetric(0.85), symmetric(0.8)], PRIORS, seed=5)
    spam = rng.integers(0, 3, size=(len(truth), 1)).astype(float)
    res = latent_truth(np.hstack([grid, spam]), method="mace")
    # competence c of a rater right with probability a over 3 classes: c + (1 - c) / 3 = a
    assert res.accuracy["rater_3"] < 0.2 < 0.6 < min(res.accuracy[f"rater_{j}"] for j in range(3))
    assert (np.array(res.labels) == truth).mean() > 0.92
    np.testing.assert_allclose(res.confusion["rater_0"].sum(axis=1), 1.0, atol=1e-9)


# ------------------------------------------------------------------------------ edge cases
@pytest.mark.parametrize("method", ["dawid_skene", "mace"])
def test_string_labels_and_item_ids(method):
    grid = [["good", "good", "bad"], ["bad", "bad", None], ["good", None, "good"], [None, None, "bad"], ["bad"] * 3]
    res = latent_truth(grid, item_ids=["i1", "i2", "i3", "i4", "i5"], raters=["ann", "bob", "judge"], method=method)
    assert res.categories == ("bad", "good")
    assert res.labels[:3] == ("good", "bad", "good") and res.labels[4] == "bad"
    label, ent = res.item("i4")  # single rating: defined
    assert label in ("bad", "good") and 0.0 <= ent <= np.log(2) + 1e-12
    assert set(res.accuracy) == {"ann", "bob", "judge"}


def test_dataframe_input_takes_index_and_columns():
    df = pd.DataFrame({"h1": [1, 2, 1, 2], "h2": [1, 2, 2, 2], "gpt": [1, np.nan, 1, 2]}, index=[10, 11, 12, 13])
    res = latent_truth(df)
    assert res.item_ids == (10, 11, 12, 13) and res.raters == ("h1", "h2", "gpt")
    assert res.item(11)[0] == 2


@pytest.mark.parametrize("method", ["dawid_skene", "mace"])
def test_item_nobody_rated_has_no_label(method):
    grid = np.array([[0, 0], [1, 1], [np.nan, np.nan], [0, 1]])
    res = latent_truth(grid, method=method)
    assert res.labels[2] is None
    assert np.isnan(res.probabilities[2]).all() and np.isnan(res.entropy[2])
    assert not np.isnan(res.probabilities[[0, 1, 3]]).any()


@pytest.mark.parametrize("method", ["dawid_skene", "mace"])
def test_constant_grid_is_certain(method):
    res = latent_truth([["G", "G"], ["G", None], ["G", "G"]], method=method, categories=["B", "G"])
    assert res.labels == ("G", "G", "G")
    np.testing.assert_array_equal(res.probabilities, [[0, 1], [0, 1], [0, 1]])
    np.testing.assert_array_equal(res.entropy, [0, 0, 0])
    assert res.accuracy == {"rater_0": 1.0, "rater_1": 1.0}


def test_category_a_rater_never_used_has_zero_probability():
    _, grid = simulate(500, [symmetric(0.8), symmetric(0.7), symmetric(0.6)], PRIORS, seed=2)
    grid[:, 2] = np.where(grid[:, 2] == 2, 1, grid[:, 2])  # rater_2 never says 2
    res = latent_truth(grid, method="dawid_skene")
    m = res.confusion["rater_2"]
    np.testing.assert_array_equal(m[:, 2], 0.0)
    np.testing.assert_allclose(m.sum(axis=1), 1.0, atol=1e-9)


def test_declared_categories_keep_unused_ones():
    res = latent_truth([[1, 1], [2, 2], [1, 2]], categories=[1, 2, 3])
    assert res.categories == (1, 2, 3)
    np.testing.assert_array_equal(res.probabilities[:, 2], 0.0)
    assert res.confusion["rater_0"].shape == (3, 3)
    with pytest.raises(ValueError, match="outside the categories"):
        latent_truth([[1, 4], [2, 2]], categories=[1, 2, 3])


@pytest.mark.parametrize(
    "grid, kwargs, message",
    [
        ([[1], [2], [1]], {}, "at least two raters"),
        ([[1, None], [2, None]], {}, "at least two raters"),
        ([[1, None], [None, 2]], {}, "rated by two or more raters"),
        ([[None, None]], {}, "no ratings"),
        ([[1, "a"], [2, "b"]], {}, "cannot be ordered"),
        ([[1, 2]], {"method": "glad"}, "unknown latent-truth method"),
        ([[1, 2]], {"raters": ["a"]}, "rater names"),
        ([[1, 2]], {"raters": ["a", "a"]}, "unique"),
        ([1, 2], {}, "items x raters"),
    ],
)
def test_refused_inputs(grid, kwargs, message):
    with pytest.raises(ValueError, match=message):
        latent_truth(grid, **kwargs)


def test_long_input_refuses_two_labels_from_one_rater_for_one_item():
    with pytest.raises(ValueError, match="more than one label"):
        latent_truth_long(["i1", "i1", "i1"], ["a", "a", "b"], [1, 2, 1])
    res = latent_truth_long(
        ["i1", "i1", "i2", "i2"], ["a", "b", "a", "b"], [1, 1, 2, None], item_ids=["i0", "i1", "i2"]
    )
    assert res.labels[0] is None and res.labels[1] == 1
