"""One answer per judge (hvstats/answers.py) against an independent recomputation.

``_independent_answer`` below recomputes, in plain numpy loops (scipy only for Student's t
distribution), the alt-test of Calderon, Reichart and Dror (ACL 2025, Sec. 3) per field, the
answer (replace / some_fields / cannot / cannot_tell) and the leave-one-human-out stability,
without calling the platform's functions; the tests compare it with ``agreement_report``'s
``"answers"`` on constructed studies, and check each verdict kind and the decision that a
human left out of the tests (fewer than 30 items) still enters the others' references.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import t as student_t

from hvstats.alt_test import alt_test
from hvstats.report import agreement_report, verdict_answers

EPS, Q, MIN_ITEMS, MIN_HUMANS = 0.2, 0.05, 30, 3


# ---- independent recomputation ------------------------------------------------------------
def _alt(ratings: dict[str, dict[int, float]], judge: dict[int, float], accuracy: bool) -> dict:
    """The alt-test of one field from dicts: human -> item -> value, item -> judge value.
    Returns omega (None when nobody is tested), the tested humans and the kept items."""
    raters_of: dict[int, list[str]] = {}
    for h, anns in ratings.items():
        for i in anns:
            raters_of.setdefault(i, []).append(h)
    kept = {i for i, hs in raters_of.items() if len(hs) >= 2 and i in judge}
    pvals, tested = [], []
    for h, anns in ratings.items():
        items = [i for i in anns if i in kept]
        if len(items) < MIN_ITEMS:
            continue
        d = []
        for i in items:
            # the references: every other human who rated the item (paper: H[i] \ {h})
            rest = [ratings[o][i] for o in raters_of[i] if o != h]
            if accuracy:
                sh = sum(r == anns[i] for r in rest) / len(rest)
                sj = sum(r == judge[i] for r in rest) / len(rest)
            else:
                sh = -np.sqrt(sum((anns[i] - r) ** 2 for r in rest) / len(rest))
                sj = -np.sqrt(sum((judge[i] - r) ** 2 for r in rest) / len(rest))
            d.append(float(sh >= sj) - float(sj >= sh))
        d = np.array(d)
        sd = d.std(ddof=1)
        tstat = (d.mean() - EPS) / (sd / np.sqrt(len(d))) if sd > 0 else (-np.inf if d.mean() < EPS else np.inf)
        pvals.append(float(student_t.cdf(tstat, len(d) - 1)))
        tested.append(h)
    if not tested:
        return {"omega": None, "tested": [], "items": len(kept), "p": {}}
    m = len(pvals)
    order = sorted(range(m), key=lambda k: pvals[k])
    harmonic = sum(1 / k for k in range(1, m + 1))
    k_max = 0
    for rank, k in enumerate(order, start=1):
        if pvals[k] <= rank / m * Q / harmonic:
            k_max = rank
    return {"omega": k_max / m, "tested": tested, "items": len(kept), "p": dict(zip(tested, pvals, strict=True))}


def _status(r: dict, ratings: dict, judge: dict, least: int) -> str:
    if r["omega"] is None or len(r["tested"]) < least:
        return "undecided"
    raters_of: dict = {}
    for h in ratings:
        for i in ratings[h]:
            raters_of.setdefault(i, []).append(h)
    kept = [i for i, hs in raters_of.items() if len(hs) >= 2 and i in judge]
    kept_values = {ratings[h][i] for i in kept for h in raters_of[i]}
    if len(kept_values) == 1 and {judge[i] for i in kept} <= kept_values:
        return "undecided"
    return "passed" if r["omega"] >= 0.5 else "failed"


def _kind(st: dict[str, str]) -> tuple[str, list[str], list[str]]:
    p = [f for f, s in st.items() if s == "passed"]
    f_ = [f for f, s in st.items() if s == "failed"]
    u = [f for f, s in st.items() if s == "undecided"]
    if not p and not f_:
        return "cannot_tell", p, f_
    if not f_ and not u:
        return "replace", p, f_
    return ("some_fields" if p else "cannot"), p, f_


def _independent_answer(fields: dict[str, tuple[dict, dict, bool]]) -> dict:
    full = {f: _alt(r, j, acc) for f, (r, j, acc) in fields.items()}
    st = {f: _status(full[f], *fields[f][:2], MIN_HUMANS) for f in fields}
    ans = _kind(st)
    people = sorted({h for r, _, _ in fields.values() for h in r})
    flipped = []
    for h in people:
        rst = {}
        for f, (r, j, acc) in fields.items():
            rest = {o: v for o, v in r.items() if o != h}
            least = MIN_HUMANS - 1 if st[f] != "undecided" else MIN_HUMANS
            rst[f] = _status(_alt(rest, j, acc), rest, j, least)
        if _kind(rst) != ans:
            flipped.append(h)
    at_threshold = any(full[f]["omega"] == 0.5 for f in fields if st[f] != "undecided")
    return {
        "verdict": ans[0],
        "fields_passed": ans[1],
        "fields_failed": ans[2],
        "stability": (len(people) - len(flipped)) / len(people),
        "flipped_by": flipped,
        "borderline": bool(flipped) or at_threshold,
        "humans": sorted({h for r in full.values() for h in r["tested"]}),
    }


# ---- constructed studies ----------------------------------------------------------------------
def _study(seed: int, n_items: int = 40, humans: int = 4, few: int = 6, judge_noise=(0.1, 0.6)):
    """Two fields on 0-2 (ordinal, negative RMSE) and a yes/no field (accuracy): ``humans``
    annotators rate every item with 20% noise, one more rates ``few`` items (not tested), the
    judge rates every item with the given noise on q1 and q2; q3 noise is the first."""
    rng = np.random.default_rng(seed)
    rows = []
    truth = rng.integers(0, 3, (n_items, 2))
    yes = rng.integers(0, 2, n_items)
    names = [f"ann{k}" for k in range(humans)] + ["late"]
    for i in range(n_items):
        for h in names:
            if h == "late" and i >= few:
                continue
            for c, f in enumerate(("q1", "q2")):
                v = truth[i, c] if rng.random() > 0.2 else rng.integers(0, 3)
                rows.append((f"it{i}", h, "human", f, float(v)))
            rows.append((f"it{i}", h, "human", "q3", "yes" if (yes[i] ^ (rng.random() < 0.15)) else "no"))
        for c, f in enumerate(("q1", "q2")):
            v = truth[i, c] if rng.random() > judge_noise[c] else rng.integers(0, 3)
            rows.append((f"it{i}", "gpt", "model", f, float(v)))
        rows.append((f"it{i}", "gpt", "model", "q3", "yes" if (yes[i] ^ (rng.random() < judge_noise[0])) else "no"))
    return pd.DataFrame(rows, columns=["item", "rater", "rater_kind", "field", "value"])


def _dicts(df: pd.DataFrame, judge: str = "gpt") -> dict[str, tuple[dict, dict, bool]]:
    out = {}
    for f, sub in df.groupby("field", sort=False):
        hum = sub[sub.rater_kind == "human"]
        ratings = {h: dict(zip(g.item, g.value, strict=True)) for h, g in hum.groupby("rater")}
        j = sub[sub.rater == judge]
        out[f] = (ratings, dict(zip(j.item, j.value, strict=True)), f == "q3")
    return out


def _answers(df: pd.DataFrame) -> list[dict]:
    return agreement_report(df, bootstrap=0, verdicts=["alt_test"])["answers"]


@pytest.mark.parametrize("seed", range(8))
def test_answer_and_stability_equal_an_independent_recomputation(seed):
    df = _study(seed, n_items=int(32 + 2 * seed), judge_noise=(0.1 + 0.05 * seed, 0.3 + 0.07 * seed))
    got = _answers(df)[0]
    want = _independent_answer(_dicts(df))
    for k, v in want.items():
        assert got[k] == v, (k, got[k], v)
    assert got["replicates"] == 5  # four annotators and the late one
    # the same answer through the platform's entry point
    assert verdict_answers(df)[0] == got


def test_the_recomputation_covers_unstable_and_stable_answers():
    """The constructed studies above are not all alike: some answers hold whatever person is
    left out, others flip (so the comparison checks a stability below 1 too)."""
    stabilities = {
        _independent_answer(_dicts(_study(s, 32 + 2 * s, 4, 6, (0.1 + 0.05 * s, 0.3 + 0.07 * s))))["stability"]
        for s in range(8)
    }
    assert 1.0 in stabilities and min(stabilities) < 1.0


# ---- each verdict kind ----------------------------------------------------------------------
def test_replace():
    a = _answers(_study(0, 32, judge_noise=(0.1, 0.3)))[0]
    assert (a["verdict"], a["fields_passed"], a["fields_failed"]) == ("replace", ["q1", "q2", "q3"], [])
    assert a["stability"] == 1.0 and a["borderline"] is False
    assert a["reason"].startswith("passes the alt-test at epsilon 0.2 on every field")
    assert a["humans"] == ["ann0", "ann1", "ann2", "ann3"] and a["n_items"] == 32
    assert "no family-wise guarantee" in a["multiplicity"]["across_fields"]
    assert "Benjamini-Yekutieli" in a["multiplicity"]["across_humans"]


def test_some_fields():
    a = _answers(_study(4, 40, 4, 6, (0.3, 0.58)))[0]
    assert (a["verdict"], a["fields_passed"], a["fields_failed"]) == ("some_fields", ["q1"], ["q2", "q3"])
    assert a["reason"] == "passes on q1; fails on q2, q3"


def test_cannot():
    a = _answers(_study(6, 44, 4, 6, (0.4, 0.72)))[0]
    assert (a["verdict"], a["fields_passed"], a["fields_failed"]) == ("cannot", [], ["q1", "q2", "q3"])
    assert a["stability"] == 1.0 and not a["borderline"]


def test_cannot_tell_with_two_humans():
    """Two annotators with 30+ items each: the paper asks for three; no field is decided."""
    a = _answers(_study(0, 40, humans=2))[0]
    assert a["verdict"] == "cannot_tell" and a["fields_passed"] == a["fields_failed"] == []
    assert a["fields_undecided"] == ["q1", "q2", "q3"]
    assert "too few humans: 2 tested" in a["reason"]
    assert a["stability"] == 1.0  # leaving one out never makes it decidable


def test_cannot_tell_without_common_items():
    """The judge rated only items no human rated."""
    df = _study(0, 40)
    judge = df.rater == "gpt"
    df.loc[judge, "item"] = "judge-only-" + df.loc[judge, "item"]
    a = _answers(df)[0]
    assert a["verdict"] == "cannot_tell"
    assert "the judge rated no item a human rated" in a["reason"]


def test_some_fields_with_a_field_that_cannot_be_told():
    """No variation on one field: the test would pass it trivially, the answer does not count it."""
    df = _study(0, 32, judge_noise=(0.1, 0.3))
    df.loc[df.field == "q3", "value"] = "yes"
    a = _answers(df)[0]
    assert (a["verdict"], a["fields_passed"], a["fields_undecided"]) == ("some_fields", ["q1", "q2"], ["q3"])
    assert "cannot tell on q3: no variation" in a["reason"]


def test_borderline_at_the_threshold():
    """q1's winning rate is exactly 0.5 (2 of 4 humans rejected): a pass that is borderline."""
    a = _answers(_study(109, 36, 4, 6, (0.35, 0.45)))[0]
    assert a["per_field"]["q1"]["winning_rate"] == 0.5 and "q1" in a["fields_passed"]
    assert a["borderline"] and "winning rate exactly 0.5 on q1" in a["borderline_reasons"]
    want = _independent_answer(_dicts(_study(109, 36, 4, 6, (0.35, 0.45))))
    assert (a["stability"], a["flipped_by"]) == (want["stability"], want["flipped_by"])


# ---- the person the alt-test leaves out ---------------------------------------------------------
def test_a_human_below_30_items_enters_the_others_references():
    """Calderon, Reichart and Dror (2025, Sec. 3) score a held-out annotator j against every
    other annotator of the instance, H[i] \\ {j}; the 30-item minimum only decides whether j's
    own t-test is run. So "late" (20 items, not tested) is in ann0..ann3's references: their
    p-values are those of the inclusive recomputation, and differ from what they would be with
    late's ratings removed (the choice matters on this study)."""
    df = _study(6, 34, few=20)
    fields = _dicts(df)
    ratings, judge, _ = fields["q1"]
    sub = df[df.field == "q1"]
    humans = sorted(ratings)
    items = sorted(set(sub.item))
    H = np.array([[ratings[h].get(i, np.nan) for h in humans] for i in items])
    y = np.array([judge[i] for i in items])
    got = alt_test(H, y, humans, scoring="neg_rmse")
    assert got["skipped_humans"] == {"late": 20}
    inclusive = _alt(ratings, judge, False)["p"]
    exclusive = _alt({h: r for h, r in ratings.items() if h != "late"}, judge, False)["p"]
    for h, d in got["per_human"].items():
        assert d["p_value"] == pytest.approx(inclusive[h], rel=1e-12, abs=1e-15)
    assert any(abs(inclusive[h] - exclusive[h]) > 1e-6 for h in inclusive)


def test_the_late_humans_removal_is_a_replicate():
    """Leaving out the person with few ratings is one of the replicates, so a verdict that such
    a person decides is flagged: here late's 20 ratings of q1 and q2, all 0, decide it."""
    df = _study(2, 34, few=20, judge_noise=(0.3, 0.45))
    late = (df.rater == "late") & df.field.isin(["q1", "q2"])
    df.loc[late, "value"] = 0.0
    a = _answers(df)[0]
    want = _independent_answer(_dicts(df))
    assert (a["verdict"], a["stability"], a["flipped_by"]) == (want["verdict"], want["stability"], want["flipped_by"])
    assert "late" in a["flipped_by"] and a["borderline"] and a["stability"] < 1
    assert "late" not in a["humans"]  # not tested, yet their ratings move the others' references
