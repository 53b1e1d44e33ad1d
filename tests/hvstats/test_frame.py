"""hvstats.frame reshapes the platform's results without changing them: each DataFrame row is the
report's own number (issue 33)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hvstats import frame
from hvstats.active_table import active_table
from hvstats.data import RatingTableError
from hvstats.tables import Cell, Row, Table


@pytest.fixture(scope="module")
def ratings() -> pd.DataFrame:
    """50 items, three humans on 36 of them (pi 0.6 says nothing here: a fixed design), a judge
    on all; a 1-5 score and a yes/no field; two regions; nationality as a rater attribute."""
    rng = np.random.default_rng(11)
    rows = []
    for i in range(50):
        t, region = int(rng.integers(1, 6)), "north" if i % 2 else "south"
        raters = [("gpt", "model", "")] + (
            [("a", "human", "DE"), ("b", "human", "CN"), ("c", "human", "DE")] if i < 36 else []
        )
        for r, kind, nat in raters:
            s = int(np.clip(t + rng.integers(-1, 2), 1, 5))
            ok = "yes" if (t >= 3) != (rng.random() < 0.2) else "no"
            for f, v in (("score", s), ("ok", ok)):
                rows.append({"item": f"i{i}", "rater": r, "rater_kind": kind, "field": f, "value": v, "region": region})
                rows[-1].update({"pi": 0.6, "rater.nationality": nat, "order": {"a": 3, "b": 2, "c": 1}.get(r, 0)})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def report(ratings) -> dict:
    return frame.agreement(ratings, by=["region"], bootstrap=40, half_width=0.3)


def test_coefficients_are_the_reports(report):
    coef = frame.coefficients(report)
    alpha = report["fields"]["score"]["strata"]["region"]["north"]["humans_vs_humans"]["krippendorff_alpha"]
    row = coef.query("field == 'score' and block == 'region=north' and comparison == 'humans'").set_index("metric")
    assert row.loc["krippendorff_alpha", "value"] == alpha["value"]
    assert (row.loc["krippendorff_alpha", "ci_low"], row.loc["krippendorff_alpha", "ci_high"]) == tuple(alpha["ci"])
    judge = report["fields"]["score"]["judges_vs_humans"]["gpt"]["vs_human_mean"]["pearson"]
    got = coef.query(
        "field == 'score' and block == 'all' and comparison == 'gpt vs human mean' and metric == 'pearson'"
    )
    assert got["value"].item() == judge["value"] and got["p_value"].item() == judge["p_value"]
    assert set(coef["block"]) == {"all", "region=north", "region=south"}


def test_alt_tests_and_ppi_are_the_reports(report):
    alt = frame.alt_tests(report).set_index(["field", "block", "judge"])
    a = report["fields"]["score"]["judges_vs_humans"]["gpt"]["alt_test"]
    assert alt.loc[("score", "all", "gpt"), "winning_rate"] == a["winning_rate"]
    assert alt.loc[("score", "all", "gpt"), "passed"] == a["passed"]
    p = report["fields"]["score"]["judges_vs_humans"]["gpt"]["ppi"]
    got = frame.ppi(report).set_index(["field", "block", "judge"]).loc[("score", "all", "gpt")]
    assert got["estimate"] == p["estimate"] and (got["ci_low"], got["ci_high"]) == tuple(p["ci"])
    assert got["n_unlabeled"] == 14 and got["ppi_human_ratings"] == p["budget"]["ppi_human_ratings"]


def test_answers_are_the_reports(report):
    (a,) = report["answers"]
    row = frame.answers(report).set_index("judge").loc["gpt"]
    assert row["verdict"] == a["verdict"] and row["stability"] == a["stability"]
    assert row["fields_passed"] == ", ".join(a["fields_passed"]) and row["borderline"] == a["borderline"]
    assert row["n_humans"] == a["n_humans"] == 3 and row["n_items"] == 36


def test_active_is_active_table(ratings):
    act = frame.active(ratings, by=["region"]).set_index(["field", "block", "judge"])
    want = active_table(ratings, by=["region"])["fields"]
    assert act.loc[("score", "all", "gpt"), "estimate"] == want["score"]["judges"]["gpt"]["estimate"]
    assert act.loc[("ok", "region=north", "gpt"), "ci_high"] == want["ok"]["strata"]["region"]["north"]["gpt"]["ci"][1]


def test_latent_truth_of_one_field(ratings):
    res = frame.latent_truth(ratings, field="ok", method="dawid_skene")
    items = res["items"]
    assert len(items) == 36 and set(items["label"]) <= {"yes", "no"}  # humans only: 36 items
    assert np.allclose(items[["p(no)", "p(yes)"]].sum(axis=1), 1)
    assert list(res["raters"]["rater"]) == ["a", "b", "c"]
    with pytest.raises(RatingTableError, match="several fields"):
        frame.latent_truth(ratings)


def test_validation_input_and_a_table_function(ratings):
    inp = frame.validation_input(ratings, levels={"score": "ordinal"}, bootstrap=0)
    assert inp.humans() == ["a", "b", "c"] and inp.judges() == ["gpt"]
    assert inp.attribute("b", "nationality") == "CN" and inp.attribute("gpt", "nationality") is None
    slots = inp.by_slot("score")
    first = ratings.query("field == 'score' and rater == 'c'").set_index("item")["value"]
    # slot 1 holds the first-assigned rater's rating (c, by the order column), not the first by name
    assert (slots[1] == first.reindex(slots.index).astype(float)).all()

    def my_tables(v):
        share = float(np.mean(v.wide("score")["gpt"] >= 3))
        return [
            Table(
                "mine",
                "Mine",
                ("share",),
                (
                    Row(
                        "gpt >= 3",
                        (Cell(share, fmt="%"),),
                    ),
                ),
            )
        ]

    tables = frame.paper_tables(ratings, my_tables, display=True)
    assert list(tables) == ["mine"] and tables["mine"].loc["gpt >= 3", "share"].endswith("%")


def test_long_form_of_a_wide_table():
    wide = pd.DataFrame({"item": ["x", "x"], "rater": ["a", "b"], "q1": [1, None], "q2": [2, 3], "region": ["n", "n"]})
    long = frame.long_form(wide, by=["region"])
    assert sorted(zip(long["rater"], long["field"], long["value"], strict=True)) == [
        ("a", "q1", 1.0),
        ("a", "q2", 2.0),
        ("b", "q2", 3.0),
    ]
    assert set(long["region"]) == {"n"}
