"""Issue 34 (part): degenerate and small data said in every output of the command (text, JSON,
Markdown, LaTeX). All-identical ratings are no unqualified pass; a 0/1 mean at 0% or 100% has
the exact binomial interval (checked against scipy's ``binomtest(...).proportion_ci(method=
"exact")``, never against the platform's own function); a coefficient on fewer than 30 items
says it is a small sample. Small crafted files, no bootstrap unless the interval is the point."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from hvstats import frame as hvframe
from hvstats.cli import main
from hvstats.notes import SMALL_SAMPLE_ITEMS, with_small_sample_note
from hvstats.report import agreement_report, judge_verdicts
from hvstats.tables import Cell, Row, Table, to_latex
from hvstats.verdicts import verdicts_table


def write(path: Path, rows: list[tuple]) -> str:
    pd.DataFrame(rows, columns=["item", "rater", "value", "rater_kind"]).to_csv(path, index=False)
    return str(path)


def run(capsys, *args: str) -> str:
    assert main(list(args)) == 0
    return capsys.readouterr().out


def exact(k: int, n: int) -> tuple[float, float]:
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    return ci.low, ci.high


def all_identical(n_items: int = 40) -> list[tuple]:
    return [(f"i{i}", r, 1, "model" if r == "j" else "human") for i in range(n_items) for r in ("h1", "h2", "h3", "j")]


# ------------------------------------------------------------------ all-identical ratings
def test_all_identical_ratings_are_said_and_no_unqualified_pass(tmp_path, capsys):
    f = write(tmp_path / "same.csv", all_identical())
    text = run(capsys, f, "--format", "table", "--bootstrap", "0")
    alt = next(line for line in text.splitlines() if "judge j alt_test" in line)
    # the reference alt-test passes trivially (omega = rho = 1); the command must not say PASSED alone
    assert "CANNOT TELL" in alt and "no variation" in alt and not alt.split("alt_test")[1].strip().startswith("PASSED")
    assert "== notes: read these numbers with care ==" in text
    assert "j on value: alt-test: no variation" in text
    assert text.index("== notes") < text.index("== field value")  # said before the numbers

    rep = json.loads(run(capsys, f, "--bootstrap", "0"))
    codes = {(n["code"], n["judge"]) for n in rep["notes"]}
    assert ("no_variation", "j") in codes and ("no_variation", None) in codes
    assert rep["fields"]["value"]["judges_vs_humans"]["j"]["alt_test"]["warnings"] == [
        "no variation: the test cannot tell (every rating is the same value)"
    ]
    assert rep["answers"][0]["verdict"] == "cannot_tell"
    assert hvframe.alt_tests(rep).loc[0, "warnings"].startswith("no variation")

    md = run(capsys, f, "--format", "markdown", "--bootstrap", "0")
    assert "| j: alt-test passed | cannot tell |" in md
    assert "j on value: alt-test: no variation: the test cannot tell" in md


def test_one_category_too_few_humans_and_no_common_item_are_notes(tmp_path, capsys):
    # the humans all say 1, the judge varies: one category only (the test itself stands)
    rows = [(f"i{i}", h, 1, "human") for i in range(40) for h in ("h1", "h2", "h3")]
    rows += [(f"i{i}", "j", i % 2, "model") for i in range(40)]
    # a second judge that rated only items no human rated
    rows += [(f"x{i}", "k", 1, "model") for i in range(5)]
    rep = json.loads(run(capsys, write(tmp_path / "one.csv", rows), "--bootstrap", "0"))
    got = {(n["code"], n["judge"]) for n in rep["notes"]}
    assert ("one_category", "j") in got and ("no_common_item", "k") in got

    rows = [(f"i{i}", h, (i + k) % 3, "human") for i in range(40) for k, h in enumerate(("h1", "h2"))]
    rows += [(f"i{i}", "j", i % 3, "model") for i in range(40)]
    f = write(tmp_path / "two.csv", rows)
    rep = json.loads(run(capsys, f, "--bootstrap", "0"))
    few = [n for n in rep["notes"] if n["code"] == "too_few_humans"]
    assert few and few[0]["n_humans"] == 2 and few[0]["threshold"] == 3
    text = run(capsys, f, "--format", "table", "--bootstrap", "0")
    assert "CANNOT TELL (too few humans: 2 tested" in text


# ------------------------------------------------------------------ 0/1 means at 0% or 100%
@pytest.mark.parametrize("labels", [("no", "yes"), (0, 1)])
def test_a_zero_one_mean_at_zero_gets_the_clopper_pearson_interval(tmp_path, capsys, labels):
    """A two-label field (and a numeric 0/1 one) whose humans never say the second label: the
    human-only mean and the PPI++ mean (lambda 0 there) are 0 with scipy's exact interval, not
    the zero-width Wald [0, 0]. The PPI++ mean, with lambda = N/(n+N) below 100 labels (the
    small-sample rule), moves off 0 with the judge and keeps its own non-zero-width interval."""
    neg = labels[0]
    n_labelled, n_judge_only = 25, 10
    rows = [(f"i{i}", h, neg, "human") for i in range(n_labelled) for h in ("h1", "h2", "h3")]
    rows += [(f"i{i}", "j", labels[i % 2], "model") for i in range(n_labelled + n_judge_only)]
    f = write(tmp_path / "zero.csv", rows)
    rep = json.loads(run(capsys, f, "--bootstrap", "0", "--metric", "ppi"))
    p = rep["fields"]["value"]["judges_vs_humans"]["j"]["ppi"]
    lo, hi = exact(0, n_labelled)
    assert p["classical_estimate"] == 0 and p["classical_ci"] == pytest.approx([lo, hi], abs=1e-12)
    assert p["classical_ci_method"] == "clopper_pearson" and hi > 0.1
    lam = n_judge_only / (n_labelled + n_judge_only)
    f_labelled = np.array([i % 2 for i in range(n_labelled)], dtype=float)
    f_unlabelled = np.array([i % 2 for i in range(n_labelled, n_labelled + n_judge_only)], dtype=float)
    # PPI++ mean (Angelopoulos, Duchi and Zrnic 2023, Eq. 1 with lambda): lam * mean f(unlabelled) + mean(Y - lam * f)
    assert p["lambda"] == pytest.approx(lam, abs=1e-12)
    assert p["estimate"] == pytest.approx(lam * f_unlabelled.mean() + (0 - lam * f_labelled).mean(), abs=1e-12)
    assert p.get("ci_method") != "clopper_pearson" and p["ci"][1] - p["ci"][0] > 0
    noted = {n["statistic"] for n in rep["notes"] if n["code"] == "exact_interval"}
    assert "human-only mean" in noted and "PPI++ mean" not in noted
    text = run(capsys, f, "--format", "table", "--bootstrap", "0", "--metric", "ppi")
    assert f"human-only 0.000 [0.000, {hi:.3f}]" in text and "[0.000, 0.000]" not in text


def test_an_active_mean_at_zero_gets_the_exact_interval(tmp_path, capsys):
    """Active sampling (``--active``): 12 of 30 items labelled (pi 0.4), every human says "no":
    the human-only mean is 0 with scipy's exact interval over the 12 labels; the active mean,
    with lambda = 1 below 200 labels (the small-sample rule), moves off 0 with the judge and
    keeps its own non-zero-width interval."""
    rows = [(f"i{i}", h, "no", "human", 0.4) for i in range(12) for h in ("h1", "h2")]
    rows += [(f"i{i}", "j", "yes" if i % 2 else "no", "model", 0.4) for i in range(30)]
    f = tmp_path / "active.csv"
    pd.DataFrame(rows, columns=["item", "rater", "value", "rater_kind", "pi"]).to_csv(f, index=False)
    rep = json.loads(run(capsys, str(f), "--bootstrap", "0", "--active", "--metric", "ppi"))
    a = rep["active"]["fields"]["value"]["judges"]["j"]
    assert a["lambda"] == 1 and a.get("ci_method") != "clopper_pearson" and a["ci"][1] - a["ci"][0] > 0
    h = a["human_only"]
    assert (
        h["estimate"] == 0 and h["ci"] == pytest.approx(exact(0, 12), abs=1e-12) and h["ci_method"] == "clopper_pearson"
    )
    got = {n["statistic"] for n in rep["notes"] if n["code"] == "exact_interval" and n["judge"] == "j"}
    assert "active human-only mean" in got and "active mean" not in got


def test_percent_agreement_at_100_percent_gets_the_exact_interval(tmp_path, capsys):
    rep = json.loads(run(capsys, write(tmp_path / "same.csv", all_identical(40)), "--bootstrap", "20"))
    pa = rep["fields"]["value"]["humans_vs_humans"]["percent_agreement"]
    assert pa["value"] == 1 and pa["ci"] == pytest.approx(exact(40, 40), abs=1e-12)
    maj = rep["fields"]["value"]["judges_vs_humans"]["j"]["vs_human_majority"]["percent_agreement"]
    assert maj["ci"] == pytest.approx(exact(40, 40), abs=1e-12)


def test_the_verdicts_table_notes_an_exact_mean():
    H = np.zeros((12, 3))
    y = np.r_[np.zeros(6), np.ones(6)]
    rows = [
        {"item": f"i{i}", "rater": f"h{k}", "rater_kind": "human", "field": "flag", "value": H[i, k]}
        for i in range(12)
        for k in range(3)
    ]
    rows += [{"item": f"i{i}", "rater": "j", "rater_kind": "model", "field": "flag", "value": y[i]} for i in range(12)]
    rows += [{"item": "u", "rater": "j", "rater_kind": "model", "field": "flag", "value": 1.0}]
    v = judge_verdicts(pd.DataFrame(rows), levels={"flag": "ordinal"})
    assert v["flag"]["j"]["ppi"]["classical_ci"] == pytest.approx(exact(0, 12), abs=1e-12)
    t = verdicts_table(v)
    assert any("j: flag: a mean at 0% of 12 items, with the exact binomial (Clopper-Pearson)" in n for n in t.notes)


# ------------------------------------------------------------------ small samples
def three_items(tmp_path: Path) -> str:
    # three images, three humans: alpha is defined on 3 items
    rows = [(f"img{i}", h, (i + (h == "h2")) % 3, "human") for i in range(3) for h in ("h1", "h2", "h3")]
    return write(tmp_path / "three.csv", rows)


def test_an_alpha_from_three_items_carries_a_small_sample_note_everywhere(tmp_path, capsys):
    f = three_items(tmp_path)
    rep = json.loads(run(capsys, f, "--bootstrap", "50"))
    alpha = rep["fields"]["value"]["humans_vs_humans"]["krippendorff_alpha"]
    assert alpha["value"] is not None and alpha["n_items"] == 3  # every image has >= 2 ratings
    small = [n for n in rep["notes"] if n["code"] == "small_sample" and not n["statistic"].startswith("pairwise ")]
    # the rater x rater matrix stands on the same few items and says so in a note of its own
    assert [n["n_items"] for n in rep["notes"] if n["statistic"].startswith("pairwise ")] == [3]
    assert len(small) == 1 and small[0]["n_items"] == 3 and small[0]["threshold"] == SMALL_SAMPLE_ITEMS == 30
    assert "krippendorff_alpha" in small[0]["statistic"] and small[0]["judge"] is None
    rows = hvframe.notes(rep)
    assert rows[rows["code"] == "small_sample"].iloc[0][["n_items", "threshold"]].tolist() == [3, 30]
    text = run(capsys, f, "--format", "table", "--bootstrap", "50")
    assert "krippendorff_alpha" in text.split("== field")[0] and "stand on 3 items, fewer than 30" in text
    latex = run(capsys, f, "--format", "latex", "--bootstrap", "50")
    assert "stand on 3 items, fewer than 30: a small sample" in latex and "krippendorff\\_alpha" in latex
    md = run(capsys, f, "--format", "markdown", "--bootstrap", "50")
    assert "stand on 3 items, fewer than 30" in md


def test_the_threshold_is_thirty_items():
    def frame(n: int) -> pd.DataFrame:
        rng = np.random.default_rng(n)
        return pd.DataFrame(
            [
                {"item": f"i{i}", "rater": h, "rater_kind": "human", "value": int(rng.integers(1, 4))}
                for i in range(n)
                for h in ("a", "b")
            ]
        )

    at = agreement_report(frame(30), bootstrap=0, metrics=["krippendorff_alpha"])
    below = agreement_report(frame(29), bootstrap=0, metrics=["krippendorff_alpha"])
    assert [n for n in at["notes"] if n["code"] == "small_sample"] == []
    # the alpha, and the matrix of its one rater pair
    assert [n["n_items"] for n in below["notes"] if n["code"] == "small_sample"] == [29, 29]
    assert below["notes"][-1]["statistic"].startswith("pairwise ")


def test_a_paper_table_names_its_small_coefficients():
    t = Table(
        key="t",
        title="T",
        columns=("r", "share"),
        rows=(
            Row("small", (Cell(0.5, n=3, fmt="r"), Cell(0.5, n=3, fmt="%"))),
            Row("enough", (Cell(0.5, n=30, fmt="r"), Cell(None, n=3, fmt="r"))),
        ),
    )
    noted = with_small_sample_note(t)
    assert noted.notes == (
        "Small samples, fewer than 30 items (the interval is rough): 1 coefficients on 3 to 3 items, in the rows "
        "small; columns r.",
    )
    assert "in the rows small; columns r." in to_latex([noted])
    assert (
        with_small_sample_note(Table(key="u", title="U", columns=("r",), rows=(Row("x", (Cell(1.0, n=30),)),))).notes
        == ()
    )


def test_a_validation_reports_top_level_notes_name_their_tables():
    """``table_notes``: the small-sample and exact-interval notes under the tables, each with its
    table, then the active series' notes (the active table's own exact line not twice)."""
    from hvstats.notes import EXACT_TABLE_NOTE, table_notes

    small = with_small_sample_note(
        Table(key="t", title="T", columns=("r",), rows=(Row("a", (Cell(0.5, n=4),)), Row("b", (Cell(0.2, n=7),))))
    )
    verdicts = Table(
        key="judge-verdicts",
        title="V",
        columns=("x",),
        rows=(Row("j", (Cell(1.0, n=12, fmt="%"),)),),
        notes=(EXACT_TABLE_NOTE % {"row": "j: q1", "percent": "100%", "n": 12}, "something else"),
    )
    active_table = Table(
        key="active-9",
        title="A",
        columns=("x",),
        rows=(Row("q", (Cell(0.0, n=5, fmt="%"),)),),
        notes=(EXACT_TABLE_NOTE % {"row": "q", "percent": "0%", "n": 5},),
    )
    series = [{"sample": 9, "notes": [{"code": "exact_interval", "field": "q", "value": 0.0, "n_items": 5}]}]
    got = table_notes([small, verdicts, active_table], series)
    assert [(n["code"], n["table"], n["n_items"]) for n in got] == [
        ("small_sample", "t", 4),
        ("exact_interval", "judge-verdicts", 12),
        ("exact_interval", "active-9", 5),
    ]
    assert got[0]["text"] == small.notes[-1] and got[0]["threshold"] == 30
    assert got[1]["value"] == 1.0 and got[1]["statistic"] == "j: q1"
    assert table_notes([Table(key="u", title="U", columns=("r",), rows=(Row("x", (Cell(1.0, n=30),)),))]) == []


def test_pairwise_matrices_and_split_half_ceilings_carry_the_small_sample_note():
    """A rater x rater matrix and the split-half ceilings on fewer than 30 items are noted; the
    items each pair shares are counted here from the ratings matrix, not from the platform."""
    from hvstats.analysis import analyse_matrix
    from hvstats.notes import block_notes

    rng = np.random.default_rng(0)
    X = rng.integers(1, 6, size=(12, 3)).astype(float)
    X[:4, 2] = np.nan  # rater c rates 8 items
    fo = analyse_matrix(X, ["a", "b", "c"], ["a", "b", "c"], [], "interval", n_boot=0)
    notes = block_notes(fo, "q", None)
    both = [int((~np.isnan(X[:, i]) & ~np.isnan(X[:, j])).sum()) for i, j in ((0, 1), (0, 2), (1, 2))]
    pairwise = [n for n in notes if n["statistic"].startswith("pairwise ")]
    assert len(pairwise) == 1 and pairwise[0]["n_items"] == min(both) == 8
    assert "(3 of 3 rater pairs)" in pairwise[0]["statistic"] and "pearson" in pairwise[0]["statistic"]
    assert any("split-half pearson" in n["statistic"] and n["n_items"] == 12 for n in notes)
    # on 30 items and more nothing is small
    Y = rng.integers(1, 6, size=(SMALL_SAMPLE_ITEMS, 3)).astype(float)
    big = analyse_matrix(Y, ["a", "b", "c"], ["a", "b", "c"], [], "interval", n_boot=0)
    assert [n for n in block_notes(big, "q", None) if n["code"] == "small_sample"] == []


def test_a_zero_width_bootstrap_interval_below_100_percent_is_noted():
    """Three items whose three raters split 2 to 1 on each: percent agreement is 1/3 on every item
    (one of three rater pairs agrees), so every item resample gives 1/3 and the bootstrap interval
    is [1/3, 1/3]: degenerate, and the report says so."""
    rows = [
        {"item": f"i{i}", "rater": h, "rater_kind": "human", "value": v}
        for i, vals in enumerate([("a", "a", "b"), ("c", "d", "d"), ("e", "f", "e")])
        for h, v in zip(("h1", "h2", "h3"), vals, strict=True)
    ]
    rep = agreement_report(pd.DataFrame(rows), bootstrap=50, metrics=["percent_agreement"])
    pa = rep["fields"]["value"]["humans_vs_humans"]["percent_agreement"]
    # independently: per item, the share of agreeing rater pairs, averaged
    per_item = [sum(a == b for a, b in ((v[0], v[1]), (v[0], v[2]), (v[1], v[2]))) / 3 for v in (("a", "a", "b"),) * 3]
    assert pa["value"] == pytest.approx(np.mean(per_item)) and pa["ci"][0] == pa["ci"][1]
    zero = [n for n in rep["notes"] if n["code"] == "zero_width_interval"]
    assert [(n["statistic"], n["n_items"]) for n in zero] == [("percent_agreement", 3)]
    assert zero[0]["value"] == pytest.approx(1 / 3)
    # a varying per-item agreement has a real interval and no such note
    rows[2]["value"] = rows[1]["value"] = "a"  # item 0: all agree
    varied = agreement_report(pd.DataFrame(rows), bootstrap=50, metrics=["percent_agreement"])
    assert not [n for n in varied["notes"] if n["code"] == "zero_width_interval"]


def test_a_paper_tables_zero_width_intervals_are_noted():
    t = Table(
        key="z",
        title="Z",
        columns=("agreement", "alpha"),
        rows=(
            Row("3 items", (Cell(1 / 3, ci=(1 / 3, 1 / 3), fmt="%"), Cell(0.2, ci=(-0.1, 0.5), n=40))),
            Row("fine", (Cell(0.5, ci=(0.4, 0.6), fmt="%"), Cell(None, ci=None, n=40))),
        ),
    )
    noted = with_small_sample_note(t)
    assert noted.notes == (
        "Zero-width intervals (every resample of the items gives the same value: degenerate, not precise): 1 cells, "
        "in the rows 3 items; columns agreement.",
    )
    from hvstats.notes import table_notes

    assert [(n["code"], n["table"], n["statistic"]) for n in table_notes([noted])] == [
        ("zero_width_interval", "z", "agreement")
    ]
