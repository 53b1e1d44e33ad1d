"""analyse_matrix: the shape of its output, typed keys, and the steps sharing one bootstrap."""

import numpy as np
import pytest

from hvstats import analysis
from hvstats.analysis import CeilingKey, JudgeKey, MultiKey, PairKey, analyse_matrix


def _likert(n=300, humans=4, seed=0, k=5):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, 1))
    X = np.clip(np.round(3 + q + rng.normal(scale=0.8, size=(n, humans + 1))), 1, k)
    X[rng.random(X.shape) < 0.1] = np.nan
    names = [f"h{i}" for i in range(humans)] + ["judge"]
    return X, names


def test_output_shape():
    X, names = _likert()
    r = analyse_matrix(X, names, names[:-1], ["judge"], "ordinal", None, n_boot=50)
    assert list(r) == [
        "n_items",
        "n_patterns",
        "level",
        "humans",
        "judges",
        "n_categories",
        "humans_vs_humans",
        "judges_vs_humans",
    ]
    h = r["humans_vs_humans"]
    assert list(h) == [
        "krippendorff_alpha",
        "fleiss_kappa",
        "gwet_ac1",
        "gwet_ac2_linear",
        "gwet_ac2_quadratic",
        "percent_agreement",
        "pairwise",
        "split_half",
        "leave_one_rater_out",
    ]
    assert list(h["pairwise"]) == [
        "pearson",
        "spearman",
        "kendall",
        "cohen_kappa",
        "cohen_kappa_linear",
        "cohen_kappa_quadratic",
        "percent_agreement",
        "krippendorff_alpha",
    ]
    for pw in h["pairwise"].values():
        assert pw["raters"] == names and len(pw["pairs"]) == 10 and len(pw["matrix"]) == 5
    assert list(h["leave_one_rater_out"]) == ["pearson", "spearman"]
    assert list(h["leave_one_rater_out"]["pearson"]["per_rater"]) == names[:-1]
    j = r["judges_vs_humans"]["judge"]
    assert list(j) == ["vs_human_mean", "vs_human_majority", "rank_among_humans"]
    assert set(j["rank_among_humans"]["pearson"]) == {
        "judge",
        "human_leave_one_out",
        "human_mean",
        "human_min",
        "human_max",
        "rank",
        "of",
        "inside_spread",
        "above_all_humans",
        "difference",
        "difference_ci",
    }
    assert "boot" not in h["leave_one_rater_out"]["pearson"]


def test_binary_shape():
    X, names = _likert(k=2)
    X = np.where(np.isnan(X), np.nan, (X >= 2).astype(float))
    r = analyse_matrix(X, names, names[:-1], ["judge"], "nominal", None, n_boot=20)
    h = r["humans_vs_humans"]
    assert "positive_rate" in h and "majority_positive_rate" in h
    assert list(r["judges_vs_humans"]["judge"]) == ["vs_human_majority", "binary_vs_majority", "positive_rate"]


def test_typed_keys():
    assert PairKey(0, 1)._replace(metric="pearson") == PairKey(0, 1, "pearson")
    assert JudgeKey(0, "mean", "pearson") != CeilingKey(0, "pearson")
    assert MultiKey("fleiss_kappa").metric == "fleiss_kappa"
    # the collector registers typed keys (no "pw|a|b|metric" strings)
    X, names = _likert(n=80)
    mx = analysis._Matrix.prepare(X, names, names[:-1], ["judge"], "ordinal", None)
    col = analysis._Collector(mx.counts)
    analysis._add_multi_rater(mx, col)
    analysis._add_pairwise(mx, col)
    ceil = analysis._add_ceilings(mx, col)
    analysis._add_judges(mx, col, ceil)
    point, _ = col.block.run(0, np.random.default_rng(0))
    assert point and all(isinstance(k, (MultiKey, PairKey, CeilingKey, JudgeKey)) for k in point)
    assert PairKey(0, 4, "krippendorff_alpha") in point and JudgeKey(0, "majority", "cohen_kappa") in point


def test_shared_resamples_do_not_depend_on_the_other_statistics():
    """The resamples depend only on the item counts: a coefficient's CI is the same whether
    it is computed alone or with everything else."""
    X, names = _likert(n=200)
    full = analyse_matrix(X, names, names[:-1], ["judge"], "ordinal", None, n_boot=100, seed=4)
    for metric in ("krippendorff_alpha", "fleiss_kappa"):
        alone = analyse_matrix(X, names, names[:-1], ["judge"], "ordinal", [metric], n_boot=100, seed=4)
        a, b = full["humans_vs_humans"][metric], alone["humans_vs_humans"][metric]
        assert a["value"] == b["value"] and a["ci"] == pytest.approx(b["ci"], abs=1e-12)


@pytest.mark.parametrize("level", ["ordinal", "interval", "ratio", "nominal"])
def test_alpha_only_with_judges(level):
    """Only alpha requested at a numeric level with a judge: no ceilings, no crash."""
    X, names = _likert(n=100)
    r = analyse_matrix(X, names, names[:-1], ["judge"], level, ["krippendorff_alpha"], n_boot=20)
    assert r["humans_vs_humans"]["leave_one_rater_out"] == {}
    assert r["judges_vs_humans"]["judge"] == {}
    assert r["humans_vs_humans"]["krippendorff_alpha"]["value"] is not None


def test_one_human_ceilings_undefined():
    X, names = _likert(n=60, humans=1)
    r = analyse_matrix(X, names, names[:-1], ["judge"], "interval", None, n_boot=20)
    loo = r["humans_vs_humans"]["leave_one_rater_out"]
    assert list(loo) == ["pearson", "spearman"] and all("fewer than two human" in d["reason"] for d in loo.values())
    rank = r["judges_vs_humans"]["judge"]["rank_among_humans"]["pearson"]
    assert rank["value"] is None and "fewer than two human" in rank["reason"]
    assert r["humans_vs_humans"]["krippendorff_alpha"]["value"] is None
