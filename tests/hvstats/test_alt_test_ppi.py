"""Alt-test (Calderon, Reichart and Dror, ACL 2025) and PPI++ (Angelopoulos et al., Science
2023; Angelopoulos, Duchi and Zrnic 2023) against their references.

- Alt-test: ``_reference_alt_test`` below transcribes the reference implementation
  ``alt_test`` / ``by_procedure`` / ``accuracy`` / ``neg_rmse`` of github.com/nitaytech/AltTest
  (``alt_test_example.ipynb``, commit 18428b1), loops and dicts as published (prints removed,
  skipped humans and p-values returned as well).  It runs on dicts with the raw labels
  (strings for categorical data), ours on the NaN matrix of codes.
- PPI: ppi-python 0.2.3 (test-only pin in requirements-dev.txt), ``ppi_mean_pointestimate`` /
  ``ppi_mean_ci`` with ``lam=None`` (power tuned) and ``alpha=0.05``, and ``classical_mean_ci``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import ttest_1samp

from hvstats import alt_test, alt_test_joint, by_rejections, ppi_mean

LABELS = np.array(["agree", "disagree", "neutral", "n/a", "other", "x", "y", "z", "zz"], dtype=object)


# ---- reference transcription (nitaytech/AltTest, alt_test_example.ipynb) -------------------


def _by_procedure(p_values, q):
    p_values = np.array(p_values, dtype=float)
    m = len(p_values)
    sorted_indices = np.argsort(p_values)
    sorted_pvals = p_values[sorted_indices]
    H_m = np.sum(1.0 / np.arange(1, m + 1))
    by_thresholds = (np.arange(1, m + 1) / m) * (q / H_m)
    max_i = -1
    for i in range(m):
        if sorted_pvals[i] <= by_thresholds[i]:
            max_i = i
    if max_i == -1:
        return []
    return list(sorted_indices[: max_i + 1])


def _accuracy(pred, annotations):
    return float(np.mean([pred == ann for ann in annotations]))


def _neg_rmse(pred, annotations):
    return -1 * float(np.sqrt(np.mean([(pred - ann) ** 2 for ann in annotations])))


def _reference_alt_test(
    llm_annotations, humans_annotations, scoring_function, epsilon=0.2, q_fdr=0.05, min_humans=2, min_instances=30
):
    scoring_function = _accuracy if scoring_function == "accuracy" else _neg_rmse
    i_set, h_set = {}, {}
    for h, anns in humans_annotations.items():
        i_set[h] = list(anns.keys())
        for i in anns:
            h_set.setdefault(i, []).append(h)
    instances_to_keep = {i for i in h_set if len(h_set[i]) >= min_humans and i in llm_annotations}
    dropped = len(h_set) - len(instances_to_keep)
    i_set = {h: [i for i in i_set[h] if i in instances_to_keep] for h in i_set}
    h_set = {i: h_set[i] for i in h_set if i in instances_to_keep}
    p_values, advantage_probs, humans, skipped = [], [], [], {}
    for excluded_h in humans_annotations:
        llm_indicators, excluded_indicators = [], []
        instances = [i for i in i_set[excluded_h] if i in llm_annotations]
        if len(instances) < min_instances:
            skipped[excluded_h] = len(instances)
            continue
        for i in instances:
            human_ann = humans_annotations[excluded_h][i]
            llm_ann = llm_annotations[i]
            remaining_anns = [humans_annotations[h][i] for h in h_set[i] if h != excluded_h]
            human_score = scoring_function(human_ann, remaining_anns)
            llm_score = scoring_function(llm_ann, remaining_anns)
            llm_indicators.append(1 if llm_score >= human_score else 0)
            excluded_indicators.append(1 if human_score >= llm_score else 0)
        diff = [e - m for e, m in zip(excluded_indicators, llm_indicators, strict=True)]
        p_values.append(ttest_1samp(diff, epsilon, alternative="less").pvalue)
        advantage_probs.append(float(np.mean(llm_indicators)))
        humans.append(excluded_h)
    rejected = _by_procedure(p_values, q_fdr)
    if not humans:
        return None, None, {}, skipped, dropped
    return (
        len(rejected) / len(humans),
        float(np.mean(advantage_probs)),
        dict(zip(humans, p_values, strict=True)),
        skipped,
        dropped,
    )


# ---- data -----------------------------------------------------------------------------------


def _panel(seed: int, kind: str):
    """items x humans matrix with missing ratings (some humans below 30 items), a judge with
    missing ratings, and the same data as the reference's dicts (string labels for
    ``kind="labels"``, integers for "likert", floats on a 0.37-step scale plus noise for
    "float")."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(35, 160)), int(rng.integers(2, 10))
    truth = rng.integers(0, 5, n)
    H = (truth[:, None] + (rng.random((n, m)) < 0.35) * rng.integers(-1, 2, (n, m))).astype(float)
    y = (truth + (rng.random(n) < rng.uniform(0.05, 0.7)) * rng.integers(-2, 3, n)).astype(float)
    if kind == "float":
        H = H * 0.37 + rng.normal(0, 0.05, H.shape) * (rng.random(H.shape) < 0.2)
        y = y * 0.37 + rng.normal(0, 0.05, n) * (rng.random(n) < 0.2)
    H[rng.random((n, m)) < rng.uniform(0.05, 0.5)] = np.nan
    y[rng.random(n) < 0.05] = np.nan
    names = [f"ann{k}" for k in range(m)]

    def raw(v):
        return LABELS[int(v) + 2] if kind == "labels" else (int(v) if kind == "likert" else float(v))

    humans = {names[k]: {f"it{i}": raw(H[i, k]) for i in rng.permutation(n) if not np.isnan(H[i, k])} for k in range(m)}
    llm = {f"it{i}": raw(y[i]) for i in range(n) if not np.isnan(y[i])}
    if kind == "labels":  # our side: codes of the labels (any injective coding)
        H, y = H + 2, y + 2
    return H, y, names, humans, llm


@pytest.mark.parametrize("kind", ["labels", "likert", "float"])
@pytest.mark.parametrize("seed", range(12))
def test_alt_test_equals_reference(kind, seed):
    H, y, names, humans, llm = _panel(seed, kind)
    scoring = "accuracy" if kind == "labels" else "neg_rmse"
    eps = (0.1, 0.15, 0.2)[seed % 3]
    wr, ap, pv, skipped, dropped = _reference_alt_test(llm, humans, scoring, epsilon=eps)
    got = alt_test(H, y, names, scoring=scoring, epsilon=eps)
    assert got["winning_rate"] == wr
    assert got["scoring"] == scoring and got["epsilon"] == eps
    assert got["skipped_humans"] == skipped and got["n_items_dropped"] == dropped
    assert set(got["per_human"]) == set(pv)
    if wr is None:
        assert got["advantage_probability"] is None and got["passed"] is None and "reason" in got
        return
    assert got["advantage_probability"] == pytest.approx(ap, abs=1e-9)
    assert got["passed"] == (wr >= 0.5)
    for h, p in pv.items():
        assert got["per_human"][h]["p_value"] == pytest.approx(p, abs=1e-12)
        assert got["per_human"][h]["items"] >= 30
    assert sum(d["rejected"] for d in got["per_human"].values()) == round(wr * len(pv))


def test_alt_test_reference_cases_cover_both_outcomes():
    """The parametrised data above include passing and failing judges, skipped humans and
    dropped items (so the equality is not vacuous)."""
    results = [
        alt_test(*_panel(s, k)[:3], scoring="accuracy" if k == "labels" else "neg_rmse")
        for s in range(12)
        for k in ("labels", "likert", "float")
    ]
    assert any(r["passed"] for r in results) and any(r["passed"] is False for r in results)
    assert any(r["skipped_humans"] for r in results) and any(r["n_items_dropped"] for r in results)


def test_by_matches_statsmodels():
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(3)
    for _ in range(200):
        m = int(rng.integers(1, 30))
        p = np.where(rng.random(m) < 0.5, rng.random(m) * 0.01, rng.random(m))
        assert (by_rejections(p, 0.05) == multipletests(p, alpha=0.05, method="fdr_by")[0]).all()
        assert sorted(np.nonzero(by_rejections(p, 0.05))[0]) == sorted(_by_procedure(p, 0.05))


def test_alt_test_perfect_and_useless_judges():
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 3, 200).astype(float)
    H = np.where(rng.random((200, 5)) < 0.85, truth[:, None], (truth[:, None] + 1) % 3)
    good = alt_test(H, truth, scoring="accuracy", epsilon=0.1)
    assert good["passed"] and good["winning_rate"] == 1.0 and good["advantage_probability"] > 0.9
    bad = alt_test(H, (truth + 1) % 3, scoring="accuracy", epsilon=0.1)
    assert bad["passed"] is False and bad["winning_rate"] == 0.0
    with pytest.raises(ValueError, match="scoring"):
        alt_test(H, truth, scoring="f1")


def test_alt_test_joint_pools_the_fdr():
    H1, y1, n1, *_ = _panel(4, "likert")
    H2, y2, n2, *_ = _panel(5, "labels")
    one = alt_test_joint({"a": (H1, y1, n1, "neg_rmse")})
    assert one["environments"]["a"]["winning_rate"] == alt_test(H1, y1, n1, scoring="neg_rmse")["winning_rate"]
    both = alt_test_joint({"a": (H1, y1, n1, "neg_rmse"), "b": (H2, y2, n2, "accuracy")}, epsilon=0.15)
    for env, (H, y, names, sc) in {"a": (H1, y1, n1, "neg_rmse"), "b": (H2, y2, n2, "accuracy")}.items():
        sep = alt_test(H, y, names, scoring=sc, epsilon=0.15)
        # one correction over more hypotheses never rejects more in an environment
        if sep["winning_rate"] is not None:
            assert both["environments"][env]["winning_rate"] <= sep["winning_rate"]
    assert both["of"] == sum(r["passed"] is not None for r in both["environments"].values())
    assert both["n_hypotheses"] == sum(len(r["per_human"]) for r in both["environments"].values())


# ---- PPI ------------------------------------------------------------------------------------


def _ppi_data(seed: int):
    rng = np.random.default_rng(seed)
    n, N = int(rng.integers(10, 400)), int(rng.integers(20, 5000))
    t = rng.normal(size=n + N)
    yh = rng.uniform(-0.5, 1.5) * t + rng.normal(rng.uniform(-1, 1), rng.uniform(0.05, 3), n + N)
    if seed % 3 == 1:  # binary field (0/1) with a binary judge
        t, yh = (t > 0.2).astype(float), (yh > 0.2).astype(float)
    if seed % 3 == 2:  # a 1-5 scale, label = mean of 3 humans
        t = np.clip(np.round(3 + t + rng.normal(0, 0.7, (3, n + N))), 1, 5).mean(axis=0)
        yh = np.clip(np.round(3 + yh), 1, 5)
    return t[:n], yh[:n], yh[n:]


@pytest.mark.parametrize("seed", range(15))
def test_ppi_equals_ppi_python(seed):
    from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate

    Y, Yh, Yu = _ppi_data(seed)
    got = ppi_mean(Y, Yh, Yu)
    # fewer than 100 labels: lambda = N / (n + N) (hvstats.ppi "Small samples"), ppi-python's lam=
    lam = len(Yu) / (len(Y) + len(Yu)) if len(Y) < 100 else None
    assert got["lambda_rule"] == ("lambda = N/(n+N): fewer than 100 labels" if lam else "power-tuned")
    assert got["estimate"] == pytest.approx(float(np.squeeze(ppi_mean_pointestimate(Y, Yh, Yu, lam=lam))), abs=1e-9)
    lo, hi = ppi_mean_ci(Y, Yh, Yu, alpha=0.05, lam=lam)
    assert got["ci"][0] == pytest.approx(float(np.squeeze(lo)), abs=1e-9)
    assert got["ci"][1] == pytest.approx(float(np.squeeze(hi)), abs=1e-9)
    clo, chi = classical_mean_ci(Y, alpha=0.05)
    assert got["classical_ci"] == pytest.approx([float(clo), float(chi)], abs=1e-9)
    assert got["classical_estimate"] == pytest.approx(float(Y.mean()), abs=1e-12)
    assert 0 <= got["lambda"] <= 1 and got["n_labeled"] == len(Y) and got["n_unlabeled"] == len(Yu)
    # lambda fixed: lambda = 0 is the classical estimate (ppi-python's documented identity)
    zero = ppi_mean(Y, Yh, Yu, lam=0.0)
    assert zero["estimate"] == pytest.approx(got["classical_estimate"], abs=1e-12)
    one_lo, _ = ppi_mean_ci(Y, Yh, Yu, alpha=0.05, lam=1.0)
    assert ppi_mean(Y, Yh, Yu, lam=1.0)["ci"][0] == pytest.approx(float(np.squeeze(one_lo)), abs=1e-9)


def test_ppi_coverage_by_simulation():
    """2,000 seeded replications: 100 labelled + 1,000 unlabelled items from a population with
    mean 2.0, a biased and noisy judge; the 95% PPI CI covers the mean in >= 93% of them, and
    is narrower than the human-only CI on average."""
    rng = np.random.default_rng(2026)
    cover = cover_classical = 0
    widths = []
    reps = 2000
    for _ in range(reps):
        t = rng.normal(2.0, 1.0, 1100)
        yh = 0.8 * t + 0.7 + rng.normal(0, 0.5, 1100)
        r = ppi_mean(t[:100], yh[:100], yh[100:])
        cover += r["ci"][0] <= 2.0 <= r["ci"][1]
        cover_classical += r["classical_ci"][0] <= 2.0 <= r["classical_ci"][1]
        widths.append((r["ci"][1] - r["ci"][0]) / (r["classical_ci"][1] - r["classical_ci"][0]))
    assert cover / reps >= 0.93 and cover_classical / reps >= 0.93
    assert np.mean(widths) < 0.9


def test_ppi_budget_formula():
    Y, Yh, Yu = _ppi_data(0)
    r = ppi_mean(Y, Yh, Yu, half_width=0.1, ratings_per_item=3.0)
    b = r["budget"]
    z = 1.959963984540054
    lam = r["lambda"]
    var_f, var_d = float((lam * Yu).var()), float((Y - lam * Yh).var())
    if b["ppi_items"] is not None:
        n = b["ppi_items"]
        assert z * math.sqrt(var_f / len(Yu) + var_d / n) <= 0.1 + 1e-12
        assert z * math.sqrt(var_f / len(Yu) + var_d / (n - 1)) > 0.1
        assert b["ppi_human_ratings"] == math.ceil(3 * n)
    assert b["classical_items"] == math.ceil(float(Y.var()) * (z / 0.1) ** 2)
    rng = np.random.default_rng(1)
    t = rng.normal(size=205)
    tiny = ppi_mean(t[:200], t[:200] + rng.normal(0, 0.1, 200), t[200:], half_width=1e-2)["budget"]
    assert tiny["ppi_items"] is None and "unattainable" in tiny["reason"]


def test_ppi_degenerate_inputs():
    # a constant judge, tuned (the small-sample rule off): lambda 0, the classical estimate
    r = ppi_mean(np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0, 1.0]), np.array([1.0, 1.0]), small_sample_labels=0)
    assert r["lambda"] == 0.0 and r["estimate"] == pytest.approx(2.0)
    # with the rule (3 labels) a constant judge keeps lambda 0: N / (n + N) would change nothing
    r = ppi_mean(np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0, 1.0]), np.array([1.0, 1.0]))
    assert r["lambda"] == 0.0 and r["estimate"] == pytest.approx(2.0)
    # a judge that varies, 3 labels and 2 unlabelled items: lambda = 2 / 5
    r = ppi_mean(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 2.0]), np.array([1.0, 3.0]))
    assert r["lambda"] == pytest.approx(0.4, abs=1e-15)
    assert r["estimate"] == pytest.approx(0.4 * 2.0 + (2.0 - 0.4 * 5.0 / 3.0), abs=1e-12)
    none = ppi_mean(np.array([1.0, 2.0]), np.array([1.0, 2.0]), np.array([]))
    assert none["estimate"] is None and "no unlabelled" in none["reason"] and none["classical_estimate"] == 1.5
    with pytest.raises(ValueError):
        ppi_mean(np.array([1.0, np.nan]), np.array([1.0, 2.0]), np.array([1.0]))


@pytest.mark.parametrize("seed", range(6))
def test_labels_saved_from_ppi_python_intervals(seed):
    """Human labels saved (hvstats.ppi.labels_saved): the human-only items a classical interval
    needs to be as narrow as PPI++'s, ceil(n (w_classical / w_ppi)^2), minus n, with both
    half-widths taken from ppi-python's intervals (the classical variance scales as 1/n)."""
    from ppi_py import classical_mean_ci, ppi_mean_ci

    Y, Yh, Yu = _ppi_data(seed)
    got = ppi_mean(Y, Yh, Yu, ratings_per_item=2.0)["labels_saved"]
    lo, hi = ppi_mean_ci(Y, Yh, Yu, alpha=0.05)
    clo, chi = classical_mean_ci(Y, alpha=0.05)
    ratio = ((float(chi) - float(clo)) / (float(np.squeeze(hi)) - float(np.squeeze(lo)))) ** 2
    n = len(Y)
    assert got["variance_ratio"] == pytest.approx(ratio, rel=1e-9)
    assert got["items"] == math.ceil(n * ratio - 1e-9) - n
    assert got["human_only_items"] == got["items"] + n and got["labelled_items"] == n
    assert got["human_ratings"] == (math.ceil(2 * got["items"]) if got["items"] >= 0 else -math.ceil(-2 * got["items"]))
    assert got["half_width"] == pytest.approx((float(np.squeeze(hi)) - float(np.squeeze(lo))) / 2, rel=1e-9)


def test_labels_saved_is_zero_for_a_useless_judge_and_negative_when_it_costs():
    rng = np.random.default_rng(5)
    Y = rng.normal(size=60)
    flat = ppi_mean(Y, np.ones(60), np.ones(40))  # a constant judge: lambda 0, the classical interval
    assert flat["lambda"] == 0.0 and flat["labels_saved"]["items"] == 0
    # lambda forced to 1 with a judge unrelated to the labels: the interval widens, labels cost
    noise = ppi_mean(Y, rng.normal(size=60), rng.normal(size=40), lam=1.0)["labels_saved"]
    assert noise["items"] < 0 and noise["variance_ratio"] < 1


def test_a_judges_headline_is_the_fewest_labels_saved_over_its_fields():
    from hvstats.ppi import attach_labels_saved, judge_labels_saved

    def p(items):
        return {"labels_saved": {"items": items, "human_ratings": 2 * items}}

    head = judge_labels_saved({"q1": p(30), "q2": p(12), "q3": None, "q4": {"estimate": None}})
    assert head["items"] == 12 and head["field"] == "q2" and head["human_ratings"] == 24
    assert head["per_field"] == {"q1": 30, "q2": 12}
    assert judge_labels_saved({"q1": None}) is None
    answers = attach_labels_saved([{"judge": "a"}, {"judge": "b"}], {"q1": {"a": p(5)}})
    assert answers[0]["labels_saved"]["items"] == 5 and answers[1]["labels_saved"] is None
