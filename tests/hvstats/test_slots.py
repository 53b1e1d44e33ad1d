"""Pooled slot-vs-slot agreement (issue 10, rater slots): the pure function against sklearn /
scipy, and the item x slot table a validation input derives from the assignment order or a
rater attribute."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as ss
from sklearn.metrics import cohen_kappa_score

from hvstats.slots import SLOT_METRICS, slot_agreement, slot_bootstrap
from hvstats.validation import RaterInfo, ValidationInput, over_strata

TOL = 1e-9


def two_slots(n=150, seed=0, missing=0.1):
    rng = np.random.default_rng(seed)
    a = rng.integers(1, 6, size=n).astype(float)
    b = np.clip(a + rng.integers(-1, 2, size=n), 1, 5).astype(float)
    b[rng.random(n) < missing] = np.nan
    return np.column_stack([a, b])


def reference(x, y, metric):
    return {
        "cohen_kappa": lambda: cohen_kappa_score(x, y),
        "cohen_kappa_linear": lambda: cohen_kappa_score(x, y, weights="linear"),
        "cohen_kappa_quadratic": lambda: cohen_kappa_score(x, y, weights="quadratic"),
        "pearson": lambda: ss.pearsonr(x, y).statistic,
        "spearman": lambda: ss.spearmanr(x, y).statistic,
        "kendall": lambda: ss.kendalltau(x, y).statistic,
    }[metric]()


@pytest.mark.parametrize("metric", SLOT_METRICS)
def test_two_slots_is_the_two_rater_coefficient_over_items_with_both(metric):
    S = two_slots()
    both = ~np.isnan(S).any(1)
    r = slot_agreement(S, metric, n_boot=300, seed=1)
    assert abs(r.value - reference(S[both, 0], S[both, 1], metric)) <= TOL
    assert r.n_items == int(both.sum()) and r.n_raters == 2
    assert r.ci is not None and r.ci[0] <= r.value <= r.ci[1]
    # same seed, same interval; the bootstrap values come with it
    res, boot = slot_bootstrap(S, metric, n_boot=300, seed=1)
    assert res.ci == r.ci and len(boot) == 300


def test_more_slots_average_the_pooled_pairs():
    rng = np.random.default_rng(3)
    S = np.column_stack([two_slots(seed=4, missing=0), rng.integers(1, 6, size=150)]).astype(float)
    S[rng.random(150) < 0.2, 2] = np.nan
    want = []
    for a, b in ((0, 1), (0, 2), (1, 2)):
        m = ~np.isnan(S[:, [a, b]]).any(1)
        want.append(cohen_kappa_score(S[m, a], S[m, b]))
    r = slot_agreement(S, "cohen_kappa", n_boot=100, seed=0)
    assert abs(r.value - np.mean(want)) <= TOL and r.n_raters == 3 and r.extra["slot_pairs"] == 3
    assert r.ci is not None


def test_undefined_slots():
    assert slot_agreement(np.ones((5, 1)), "spearman").value is None
    assert slot_agreement(np.full((4, 2), 3.0), "cohen_kappa").value is None
    with pytest.raises(ValueError):
        slot_agreement(np.ones((5, 2)), "fleiss")


def test_over_strata_mean_and_sd_of_independent_bootstraps():
    boots = [np.array([0.1, 0.2, 0.3]), np.array([0.5, 0.4, 0.6]), np.array([0.9, 0.7, 0.8])]
    m = over_strata([0.2, 0.5, None], boots, "mean")
    assert abs(m.value - 0.35) <= TOL and m.n_items == 2 and m.ci is not None
    sd = over_strata([0.2, 0.5, 0.8], boots, "sd")
    assert abs(sd.value - np.std([0.2, 0.5, 0.8], ddof=1)) <= TOL
    assert over_strata([0.2], boots[:1], "sd").value is None


def slot_input():
    """Three raters over four items, assigned in varying orders."""
    rows = [
        # item, rater, value
        ("1", "ann", 1),
        ("1", "bob", 2),
        ("2", "cat", 3),
        ("2", "ann", 4),
        ("3", "bob", 5),
        ("3", "cat", 1),
        ("4", "ann", 2),
    ]
    frame = pd.DataFrame(
        {
            "item": [r[0] for r in rows],
            "item_pk": [int(r[0]) for r in rows],
            "rater": [r[1] for r in rows],
            "rater_kind": "human",
            "field": "faith",
            "value": [r[2] for r in rows],
        }
    )
    # assignment ids: item 1 ann then bob, item 2 cat then ann, item 3 bob then cat
    order = {
        (1, "ann"): 10,
        (1, "bob"): 11,
        (2, "cat"): 12,
        (2, "ann"): 13,
        (3, "bob"): 20,
        (3, "cat"): 14,
        (4, "ann"): 5,
    }
    raters = {
        "ann": RaterInfo("ann", "human", {"nationality": "China"}),
        "bob": RaterInfo("bob", "human", {"nationality": "Germany"}),
        "cat": RaterInfo("cat", "human", {"nationality": "China"}),
    }
    return ValidationInput(frame=frame, raters=raters, assignment_order=order)


def test_by_slot_from_the_assignment_order_and_from_an_attribute():
    inp = slot_input()
    S = inp.by_slot("faith")
    assert list(S.columns) == [1, 2]
    assert S.loc["1"].tolist() == [1, 2] and S.loc["2"].tolist() == [3, 4]
    assert S.loc["3"].tolist() == [1, 5]  # cat (14) was assigned before bob (20)
    assert S.loc["4", 1] == 2 and np.isnan(S.loc["4", 2])
    # among a subset of raters the ranks are recomputed
    assert inp.by_slot("faith", ["bob", "cat"]).loc["3"].tolist() == [1, 5]
    assert inp.by_slot("faith", ["ann", "bob"]).loc["2"].tolist()[0] == 4
    # by nationality: China's rating vs Germany's (an item with two Chinese raters keeps the first)
    N = inp.by_slot("faith", attribute="nationality")
    assert list(N.columns) == ["China", "Germany"]
    assert N.loc["1"].tolist() == [1, 2] and N.loc["2", "China"] == 3 and np.isnan(N.loc["2", "Germany"])
    assert inp.by_slot("missing-field").empty
