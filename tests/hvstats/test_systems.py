"""hvstats.systems against recomputations written here: ppi-python for every PPI++ mean and its
interval (Bonferroni as ppi-python's interval at alpha / k), numpy for the people-only and
judge-only means, scipy for Kendall's tau and Spearman's rho (each bootstrap resample redrawn
here and correlated with scipy), Chatzi et al.'s rank-set rule written as a loop."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
from scipy.stats import chi2, kendalltau, norm, spearmanr

from hvstats.systems import (
    Finding,
    SystemsInputError,
    conclusions,
    finding,
    item_scores,
    system_scores,
)

MEANS = {"A": 3.0, "B": 2.4, "C": 2.0}
JUDGE_SHIFT = {"C": 1.5}  # the judge over-rates C: its ranking differs from people's


def _study(seed: int = 1, n: int = 50, labelled: int = 22) -> pd.DataFrame:
    """Three systems of ``n`` items; people (two) rate the first ``labelled`` of each, the judge all."""
    rng = np.random.default_rng(seed)
    rows = []
    for s, mu in MEANS.items():
        for i in range(n):
            item, truth = f"{s}{i}", mu + rng.normal()
            region = "North" if i % 2 else "South"
            if i < labelled:
                for h in ("h1", "h2"):
                    v = int(np.clip(round(truth + rng.normal() * 0.5), 1, 5))
                    rows.append(dict(item=item, rater=h, value=v, rater_kind="human", gen=s, region=region))
            jv = truth + rng.normal() * 0.3 + JUDGE_SHIFT.get(s, 0.0)
            rows.append(dict(item=item, rater="J", value=jv, rater_kind="model", gen=s, region=region))
    return pd.DataFrame(rows)


def _per_item(df: pd.DataFrame, items: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """People's mean and the judge's value of each item (nan where absent), written out."""
    h = df[df.rater_kind == "human"].groupby("item")["value"].mean()
    j = df[df.rater == "J"].set_index("item")["value"]
    return h.reindex(items).to_numpy(float), j.reindex(items).to_numpy(float)


def _ppi_py(df: pd.DataFrame, items: list[str], alpha: float) -> tuple[float, tuple[float, float]]:
    h, j = _per_item(df, items)
    lab = ~np.isnan(h)
    est = float(ppi_mean_pointestimate(h[lab], j[lab], j[~lab])[0])
    lo, hi = ppi_mean_ci(h[lab], j[lab], j[~lab], alpha=alpha)
    return est, (float(lo[0]), float(hi[0]))


@pytest.fixture(scope="module")
def study() -> pd.DataFrame:
    return _study()


@pytest.fixture(scope="module")
def result(study: pd.DataFrame) -> dict:
    return system_scores(item_scores(study, "gen", "value", "J"), bootstrap=300, seed=7)


def _items(df: pd.DataFrame, col: str, values) -> list[str]:
    return sorted(df.loc[df[col].isin(values), "item"].unique())


def test_per_system_ppi_means_and_bonferroni_intervals_equal_ppi_python(study, result):
    k, alpha = 3, 0.05
    for row in result["systems"]:
        est, (lo, hi) = _ppi_py(study, _items(study, "gen", [row["system"]]), alpha / k)  # Bonferroni
        assert row["ppi"]["estimate"] == pytest.approx(est, abs=1e-10)
        assert row["ppi"]["ci"] == pytest.approx([lo, hi], abs=1e-8)


def test_people_only_and_judge_only_means_written_out(study, result):
    z = norm.ppf(1 - 0.05 / 6)
    for row in result["systems"]:
        h, j = _per_item(study, _items(study, "gen", [row["system"]]))
        for key, x in (("human_only", h[~np.isnan(h)]), ("judge_only", j)):
            se = x.std() / math.sqrt(len(x))
            assert row[key]["estimate"] == pytest.approx(x.mean())
            assert row[key]["ci"] == pytest.approx([x.mean() - z * se, x.mean() + z * se])
        assert row["n_labelled"] == 22 and row["n_judge_only"] == 28
    assert "Bonferroni" in result["correction"]


def test_pairwise_differences_bonferroni_over_pairs_and_sentences(study, result):
    alpha, pairs = 0.05, 3
    z = norm.ppf(1 - alpha / (2 * pairs))
    for p in result["pairs"]:
        ea, (la, ha) = _ppi_py(study, _items(study, "gen", [p["a"]]), alpha)
        eb, (lb, hb) = _ppi_py(study, _items(study, "gen", [p["b"]]), alpha)
        z1 = norm.ppf(1 - alpha / 2)
        se = math.hypot((ha - la) / (2 * z1), (hb - lb) / (2 * z1))  # independent systems
        lo, hi = ea - eb - z * se, ea - eb + z * se
        assert p["ppi"]["ci"] == pytest.approx([lo, hi], abs=1e-8)
        want = (
            f"{p['a']} scores higher than {p['b']}"
            if lo > 0
            else f"{p['b']} scores higher than {p['a']}"
            if hi < 0
            else f"cannot tell {p['a']} from {p['b']}"
        )
        assert p["sentence"] == want
    ac = next(p for p in result["pairs"] if (p["a"], p["b"]) == ("A", "C"))
    assert ac["sentence"] == "A scores higher than C"
    assert ac["judge_only_holds"] is False  # the judge alone cannot tell A from C, or puts C first


def _rank_sets_loop(est: list[float], var: list[float], alpha: float) -> list[list[int]]:
    k = len(est)
    q = chi2.ppf(1 - alpha, k)
    out = []
    for s in range(k):
        above = sum(1 for t in range(k) if t != s and est[t] - est[s] > math.sqrt(q * (var[s] + var[t])))
        below = sum(1 for t in range(k) if t != s and est[s] - est[t] > math.sqrt(q * (var[s] + var[t])))
        out.append([1 + above, k - below])
    return out


def test_rank_sets_and_judge_outside_them(study, result):
    systems = [r["system"] for r in result["systems"]]
    for method in ("human_only", "judge_only", "ppi"):
        est = [r[method]["estimate"] for r in result["systems"]]
        var = [r[method]["se"] ** 2 for r in result["systems"]]
        want = _rank_sets_loop(est, var, 0.05)
        assert [result["rank_sets"][method][s] for s in systems] == want
    judge = {r["system"]: r["judge_only"]["estimate"] for r in result["systems"]}
    judge_rank = {s: 1 + sum(v > judge[s] for v in judge.values()) for s in judge}
    outside = {
        s
        for s in systems
        if not (result["rank_sets"]["ppi"][s][0] <= judge_rank[s] <= result["rank_sets"]["ppi"][s][1])
    }
    assert {o["system"] for o in result["judge_outside_rank_sets"]} == outside
    assert "C" in outside  # the judge ranks C first; people do not


def test_system_level_agreement_against_scipy_and_a_bootstrap_redrawn_here(study, result):
    systems = ["A", "B", "C"]
    hs, js = [], []
    for s in systems:
        h, j = _per_item(study, _items(study, "gen", [s]))
        hs.append(np.nanmean(h))
        js.append(j.mean())
    ag = result["agreement"]
    assert ag["kendall_tau"]["value"] == pytest.approx(kendalltau(js, hs).statistic)
    assert ag["spearman"]["value"] == pytest.approx(spearmanr(js, hs).statistic)
    # the documented resampling: per system in order, rng.integers(0, n_s, (B, n_s))
    rng = np.random.default_rng(7)
    per = []
    for s in systems:
        h, j = _per_item(study, _items(study, "gen", [s]))
        per.append((h, j, rng.integers(0, len(h), (300, len(h)))))
    taus, rhos = [], []
    for b in range(300):
        hm = [np.nanmean(h[d[b]]) for h, _, d in per]
        jm = [j[d[b]].mean() for _, j, d in per]
        t, r = kendalltau(jm, hm).statistic, spearmanr(jm, hm).statistic
        taus.append(t)
        rhos.append(r)
    for key, vals in (("kendall_tau", taus), ("spearman", rhos)):
        v = np.array(vals, dtype=float)
        v = v[np.isfinite(v)]
        assert ag[key]["ci"] == pytest.approx([np.quantile(v, 0.025), np.quantile(v, 0.975)])
    disc = {(d["a"], d["b"]) for d in ag["discordant_pairs"]}
    want = {
        (systems[a], systems[b]) for a in range(3) for b in range(a + 1, 3) if (js[a] - js[b]) * (hs[a] - hs[b]) < 0
    }
    assert disc == want and ("A", "C") in disc


def test_finding_difference_equals_ppi_python_and_says_whether_the_judge_holds(study):
    out = finding(study, Finding.parse("gen: A vs B, C"), "value", "J", alpha=0.1)
    ea, (la, ha) = _ppi_py(study, _items(study, "gen", ["A"]), 0.1)
    eb, (lb, hb) = _ppi_py(study, _items(study, "gen", ["B", "C"]), 0.1)
    z = norm.ppf(0.95)
    se = math.hypot((ha - la) / (2 * z), (hb - lb) / (2 * z))
    assert out["ppi"]["estimate"] == pytest.approx(ea - eb)
    assert out["ppi"]["ci"] == pytest.approx([ea - eb - z * se, ea - eb + z * se], abs=1e-8)
    assert out["a"] == "A" and out["b"] == "B + C"
    assert out["sentence"] == "A scores higher than B + C"
    # the judge's over-rating of C hides the difference: its own conclusion differs
    assert out["judge_only_holds"] == (out["judge_only"]["outcome"] == "higher")


def test_conclusions_over_fields_and_judges(study):
    out = conclusions(study, "gen", fields=["value"], findings=[Finding.parse("region: North vs South")], bootstrap=50)
    assert set(out["fields"]["value"]) == {"J"}
    assert out["findings"][0]["finding"] == "region: North vs South"


def test_two_labels_are_scored_as_shares():
    df = _study(seed=3)
    df["value"] = np.where(df["value"].astype(float) >= 2.5, "good", "bad")
    scores = item_scores(df, "gen", "value", "J", level="nominal")
    h, j = _per_item(df.assign(value=(df["value"] == "good").astype(float)), list(scores.items))
    np.testing.assert_allclose(scores.human, h)
    np.testing.assert_allclose(scores.judge, j)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda d: item_scores(d, "nope", "value", "J"), "unknown stratum column 'nope'"),
        (lambda d: item_scores(d, "gen", "value", "h1"), "'h1' is not a judge"),
        (lambda d: item_scores(d, "gen", "other", "J"), "no ratings of field 'other'"),
        (lambda d: Finding.parse("gen A vs B"), "column: value"),
        (lambda d: Finding.parse("gen: A vs A"), "both sides"),
        (lambda d: finding(d, Finding.parse("gen: A vs Z"), "value", "J"), "no value 'Z'"),
        (lambda d: conclusions(d, "gen", fields=["value"], findings=[Finding.parse("gen: A vs Z")]), "no value 'Z'"),
        (lambda d: system_scores(item_scores(d, "gen", "value", "J"), alpha=1.5), "alpha"),
        (lambda d: system_scores(item_scores(d[d.gen == "A"], "gen", "value", "J")), "at least two values"),
    ],
)
def test_bad_input_is_refused_clearly(call, message):
    df = _study(n=6, labelled=3)
    before = df.copy()
    with pytest.raises(SystemsInputError, match=message):
        call(df)
    pd.testing.assert_frame_equal(df, before)  # nothing changed


def test_a_nominal_field_with_three_labels_is_skipped_with_why():
    df = _study(n=6, labelled=3)
    df["value"] = np.array(["x", "y", "z"])[np.arange(len(df)) % 3]
    out = conclusions(df, "gen", fields=["value"], levels={"value": "nominal"}, bootstrap=0)
    assert out["fields"] == {} and "three" not in out["skipped"]["value"] and "3 labels" in out["skipped"]["value"]


def test_a_finding_a_field_cannot_answer_leaves_the_systems_of_that_field():
    df = _study(n=8, labelled=4).assign(field="value")
    other = df.assign(field="other")
    other = other[other["region"] == "North"]  # no South item in this field
    both = pd.concat([df, other], ignore_index=True)
    out = conclusions(
        both, "gen", fields=["value", "other"], findings=[Finding.parse("region: North vs South")], bootstrap=0
    )
    assert set(out["fields"]) == {"value", "other"}
    assert [f["field"] for f in out["findings"]] == ["value"]
    assert "no value 'South'" in out["skipped"]["other: region: North vs South"]
