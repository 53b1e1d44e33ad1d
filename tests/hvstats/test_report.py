import json

import numpy as np
import pandas as pd
import pytest
import scipy.stats as ss

from hvstats import (
    agreement_report,
    binary_report,
    flag_rates,
    judge_vs_humans,
    leave_one_rater_out,
    majority_vote,
    restricted_agreement,
    split_half,
    turing_accuracy,
)


def _long(U=120, R=4, seed=0, judge=True, countries=("CN", "DE")):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=U)
    rows = []
    for i in range(U):
        c = countries[i % len(countries)]
        for r in range(R):
            rows.append(
                dict(
                    item=f"i{i}",
                    rater=f"h{r}",
                    rater_kind="human",
                    field="Q1",
                    country=c,
                    value=int(np.clip(np.round(1 + q[i] + rng.normal(scale=0.7)), 0, 2)),
                )
            )
        if judge:
            rows.append(
                dict(
                    item=f"i{i}",
                    rater="gpt",
                    rater_kind="model",
                    field="Q1",
                    country=c,
                    value=int(np.clip(np.round(1 + q[i] + rng.normal(scale=0.9)), 0, 2)),
                )
            )
    return pd.DataFrame(rows)


def test_leave_one_rater_out_matches_manual():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 1)) + rng.normal(size=(50, 4))
    res = leave_one_rater_out(X, "pearson")
    manual = [ss.pearsonr(X[:, k], np.delete(X, k, 1).mean(1)).statistic for k in range(4)]
    assert res.value == pytest.approx(np.mean(manual), abs=1e-12)
    assert res.extra["per_rater"]["r2"]["value"] == pytest.approx(manual[2], abs=1e-12)


def test_split_half_spearman_brown():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 1)) + rng.normal(size=(200, 2))
    r = ss.pearsonr(X[:, 0], X[:, 1]).statistic
    res = split_half(X, "pearson", n_splits=5)
    assert res.value == pytest.approx(2 * r / (1 + r), abs=1e-12)
    assert res.extra["raw_mean"] == pytest.approx(r, abs=1e-12)


def test_judge_rank_inside_spread():
    rng = np.random.default_rng(3)
    t = rng.normal(size=(300, 1))
    H = t + rng.normal(size=(300, 4))
    judge = t[:, 0] + rng.normal(size=300) * 5  # a poor judge
    r = judge_vs_humans(judge, H, "pearson", n_boot=200)
    assert r["vs_human_mean"]["value"] == pytest.approx(ss.pearsonr(judge, H.mean(1)).statistic, abs=1e-12)
    rk = r["rank_among_humans"]
    assert rk["rank"] == 5 and rk["inside_spread"] is False and rk["difference_ci"][1] < 0


def test_binary_and_restricted_agreement_cqbench_style():
    # model positive on 200 values; humans agree on 189 of them (94.5%), 40 model-negatives
    model = np.array([1] * 200 + [0] * 40)
    human = np.array([1] * 189 + [0] * 11 + [1] * 15 + [0] * 25)
    ra = restricted_agreement(model, human, given="pred", side="positive")
    assert ra.value == pytest.approx(0.945) and ra.n_items == 200
    rep = binary_report(model, human)
    c = rep["confusion"]
    assert (c["tp"], c["fp"], c["fn"], c["tn"]) == (189, 11, 15, 25)
    assert c["precision"] == pytest.approx(0.945)
    assert c["recall"] == pytest.approx(189 / 204)
    assert c["f1"] == pytest.approx(2 * 0.945 * (189 / 204) / (0.945 + 189 / 204))
    assert c["accuracy"] == pytest.approx(214 / 240)
    assert restricted_agreement([0, 0], [1, 0]).value is None


def test_turing_accuracy_with_ties():
    # 3 raters x 100 pairs; truth "A"; pooled 134 correct, 20 ties
    rng = np.random.default_rng(0)
    ans, raters = [], []
    for r, (c, t) in enumerate([(45, 5), (44, 10), (45, 5)]):
        a = ["A"] * c + ["tie"] * t + ["B"] * (100 - c - t)
        ans += list(rng.permutation(a))
        raters += [f"r{r}"] * 100
    out = turing_accuracy(ans, ["A"] * 300, raters)
    p = out["pooled"]
    assert p["value"] == pytest.approx(134 / 300)
    assert p["tie_rate"] == pytest.approx(20 / 300)
    assert p["accuracy_non_tie"] == pytest.approx(134 / 280)
    assert p["p_value"] == pytest.approx(ss.binomtest(134, 280, 0.5).pvalue)
    assert p["p_value_ties_incorrect"] == pytest.approx(ss.binomtest(134, 300, 0.5).pvalue)
    assert out["per_rater"]["r1"]["value"] == pytest.approx(0.44)
    assert out["macro_accuracy"] == pytest.approx((0.45 + 0.44 + 0.45) / 3)
    scored = turing_accuracy([1, 0, "tie", 1])
    assert scored["pooled"]["value"] == 0.5 and scored["pooled"]["ties"] == 1


def test_majority_vote_and_flag_rates():
    X = np.array([[1, 1, 0], [0, 0, 1], [1, np.nan, 0], [0, 0, 0]], float)
    mv = majority_vote(X)
    assert mv[0] == 1 and mv[1] == 0 and np.isnan(mv[2]) and mv[3] == 0
    rows = []
    for i in range(10):
        for r in range(3):
            rows.append(
                dict(item=i, rater=r, field="flag1", value=int(i < 3), dim="religion" if i < 5 else "nationality")
            )
            rows.append(dict(item=i, rater=r, field="flag2", value=0, dim="religion" if i < 5 else "nationality"))
    fr = flag_rates(pd.DataFrame(rows), by=["dim"], unit="item", n_boot=100)
    assert fr["overall"]["flag1"]["value"] == pytest.approx(0.3)
    assert fr["overall"]["flag2"]["value"] == 0.0
    assert fr["strata"]["dim"]["religion"]["flag1"]["value"] == pytest.approx(0.6)


def test_report_structure_json_and_strata():
    df = _long()
    rep = agreement_report(df, by=["country"], bootstrap=100, seed=1)
    json.dumps(rep)
    f = rep["fields"]["Q1"]
    h = f["humans_vs_humans"]
    for k in ("krippendorff_alpha", "fleiss_kappa", "gwet_ac1", "percent_agreement"):
        assert h[k]["value"] is not None and h[k]["ci"][0] <= h[k]["value"] <= h[k]["ci"][1]
    assert set(h["pairwise"]) >= {"pearson", "spearman", "kendall", "cohen_kappa", "krippendorff_alpha"}
    assert h["leave_one_rater_out"]["pearson"]["value"] is not None
    j = f["judges_vs_humans"]["gpt"]
    assert {"pearson", "spearman", "kendall"} <= set(j["vs_human_mean"])
    assert "rank_among_humans" in j and "cohen_kappa" in j["vs_human_majority"]
    assert set(f["strata"]["country"]) == {"CN", "DE"}
    # a stratum equals the report run on the subset (point values)
    sub = agreement_report(df[df.country == "CN"], bootstrap=0)
    assert f["strata"]["country"]["CN"]["humans_vs_humans"]["krippendorff_alpha"]["value"] == pytest.approx(
        sub["fields"]["Q1"]["humans_vs_humans"]["krippendorff_alpha"]["value"], abs=1e-12
    )
    # deterministic with the seed
    assert agreement_report(df, by=["country"], bootstrap=100, seed=1) == rep


def test_report_guards_never_crash():
    one = pd.DataFrame([dict(item=i, rater="a", value=i % 3) for i in range(10)])
    rep = agreement_report(one, bootstrap=10)
    h = rep["fields"]["value"]["humans_vs_humans"]
    assert h["krippendorff_alpha"]["value"] is None and h["krippendorff_alpha"]["reason"].startswith("undefined")
    const = pd.DataFrame([dict(item=i, rater=r, value=2) for i in range(10) for r in "abc"])
    h = agreement_report(const, bootstrap=10, level="ordinal")["fields"]["value"]["humans_vs_humans"]
    for k in ("krippendorff_alpha", "fleiss_kappa", "gwet_ac1"):
        assert h[k]["value"] is None and "undefined" in h[k]["reason"]
    assert h["pairwise"]["pearson"]["pairs"][0]["reason"].startswith("undefined")
    nominal = pd.DataFrame(
        [dict(item=i, rater=r, value=["good", "bad"][(i + (r == "c")) % 2]) for i in range(20) for r in "abc"]
    )
    rep = agreement_report(nominal, bootstrap=20)
    assert rep["fields"]["value"]["level"] == "nominal"
    assert "pearson" not in rep["fields"]["value"]["humans_vs_humans"]["pairwise"]
    with pytest.raises(ValueError, match="not a number"):
        agreement_report(nominal, level="interval")
    with pytest.raises(ValueError, match="missing required column"):
        agreement_report(pd.DataFrame([{"item": 1, "value": 2}]))


def test_binary_field_report_has_confusion():
    rows = []
    rng = np.random.default_rng(5)
    for i in range(60):
        t = int(rng.random() < 0.6)
        for r in range(3):
            rows.append(dict(item=i, rater=f"h{r}", value=t if rng.random() < 0.85 else 1 - t))
        rows.append(dict(item=i, rater="m", rater_kind="model", value=t if rng.random() < 0.8 else 1 - t))
    rep = agreement_report(pd.DataFrame(rows).fillna({"rater_kind": "human"}), bootstrap=0)
    j = rep["fields"]["value"]["judges_vs_humans"]["m"]
    assert "agreement_pred_positive" in j["binary_vs_majority"]
    assert j["binary_vs_majority"]["confusion"]["n_items"] == 60
