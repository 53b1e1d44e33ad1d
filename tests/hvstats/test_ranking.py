"""Prediction-powered ranking (:mod:`hvstats.ranking`; Chatzi, Straitouri, Thejaswi and
Gomez-Rodriguez, NeurIPS 2024) against an independent recomputation.

``_reference`` below is written from the paper's formulas (Sec. 3 and Algorithm 2) with the
covariance derived in the module docstring, in plain Python loops over comparisons and dicts
keyed by system name, not with the module's matrices; the rank-sets come from the ellipsoid's
support function through a Cholesky factor. ``_published_covariance`` transcribes the scale of
the published code (``src/estimate.py``: residuals summed over comparisons, divided by ``n^2``)
to show where, and by how much, it differs. The per-system PPI++ means of a rated study are
checked against ppi-python (test-only dependency)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.stats import chi2

from hvstats.cli import main
from hvstats.ranking import (
    WINNERS,
    Comparison,
    RankingInputError,
    pairwise_win_rates,
    prediction_powered_win_rates,
    rank_report,
    rank_sets,
    rated_prediction_powered_means,
    read_comparisons,
    simultaneous_intervals,
)

# ---- independent recomputation ----------------------------------------------------------------


def _win_rates_ref(units: list[tuple[str, str, float, float]]) -> tuple[dict, dict]:
    """Per-system win-rate (wins over the comparisons it took part in) and the covariance
    sum_j M_s M_t (x_s - xbar_s)(x_t - xbar_t) / (n_s n_t) from a list of
    (system_a, system_b, value of a, value of b)."""
    wins: dict[str, float] = {}
    count: dict[str, int] = {}
    for a, b, xa, xb in units:
        for s, x in ((a, xa), (b, xb)):
            wins[s] = wins.get(s, 0.0) + x
            count[s] = count.get(s, 0) + 1
    mean = {s: wins[s] / count[s] for s in wins}
    cov: dict[tuple[str, str], float] = {}
    for a, b, xa, xb in units:
        r = {a: xa - mean[a], b: xb - mean[b]}
        for s in r:
            for t in r:
                cov[s, t] = cov.get((s, t), 0.0) + r[s] * r[t]
    for s, t in list(cov):
        cov[s, t] /= count[s] * count[t]
    return mean, cov


def _pp_ref(
    labelled: list[tuple[str, str, float, float, float, float]], unlabelled: list[tuple[str, str, float, float]]
):
    """lambda by minimising the trace of the plug-in covariance (a grid search on [0, 1] refined by
    the quadratic's vertex), then theta = lambda fbar_U + hbar_L - lambda fbar_L."""

    def at(lam: float):
        fu_mean, fu_cov = _win_rates_ref(unlabelled)
        rect = [(a, b, ha - lam * fa, hb - lam * fb) for a, b, ha, hb, fa, fb in labelled]
        r_mean, r_cov = _win_rates_ref(rect)
        theta = {s: lam * fu_mean[s] + r_mean[s] for s in r_mean}
        cov = {st: lam * lam * fu_cov.get(st, 0.0) + r_cov.get(st, 0.0) for st in set(r_cov) | set(fu_cov)}
        return theta, cov

    def trace(lam: float) -> float:
        _, cov = at(lam)
        return sum(v for (s, t), v in cov.items() if s == t)

    # tr Sigma(lambda) is a quadratic: three points give its vertex exactly
    t0, t1, t2 = trace(0.0), trace(0.5), trace(1.0)
    a2 = 2 * (t0 - 2 * t1 + t2)
    a1 = t2 - t0 - a2
    lam = 0.0 if a2 <= 0 else min(1.0, max(0.0, -a1 / (2 * a2)))
    theta, cov = at(lam)
    return theta, cov, lam


def _rank_sets_ref(theta: dict[str, float], cov: dict[tuple[str, str], float], alpha: float) -> dict[str, list[int]]:
    """Algorithm 2 through the support function of the ellipsoid {x: x' S^-1 x <= c}: the largest
    v'x over it is sqrt(c) |L' v| with S = L L' (Cholesky)."""
    names = sorted(theta)
    k = len(names)
    s_mat = np.array([[cov.get((s, t), 0.0) for t in names] for s in names])
    chol = np.linalg.cholesky(s_mat + 1e-15 * np.eye(k))
    c = chi2.ppf(1 - alpha, k)
    out = {}
    for i, s in enumerate(names):
        low, high = 1, k
        for j, t in enumerate(names):
            if i == j:
                continue
            v = np.zeros(k)
            v[i], v[j] = 1.0, -1.0
            reach = math.sqrt(c) * float(np.linalg.norm(chol.T @ v))
            if theta[t] - theta[s] > reach:
                low += 1
            if theta[s] - theta[t] > reach:
                high -= 1
        out[s] = [low, high]
    return out


def _published_covariance(units: list[tuple[str, str, float, float]], names: list[str]) -> np.ndarray:
    """The scale of the published code: the same residual sums divided by n^2 (n = comparisons)."""
    mean, _ = _win_rates_ref(units)
    k = len(names)
    acc = np.zeros((k, k))
    for a, b, xa, xb in units:
        r = np.zeros(k)
        r[names.index(a)] = xa - mean[a]
        r[names.index(b)] = xb - mean[b]
        acc += np.outer(r, r)
    return acc / len(units) ** 2


# ---- data ---------------------------------------------------------------------------------------


def _simulate(rng, k: int, n: int, strength=None, judge_agrees: float = 0.8, tie: float = 0.1):
    """n comparisons of k systems, pairs uniform; people prefer a with the Bradley-Terry probability
    (a tie with probability ``tie``); the judge repeats people's verdict with probability
    ``judge_agrees``, otherwise answers at random. Returns (a, b, human a/b wins, judge a/b wins)."""
    strength = np.linspace(1.0, -1.0, k) if strength is None else strength
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    p = 1 / (1 + np.exp(-(strength[a] - strength[b])))
    u = rng.random(n)
    human = np.where(u < tie, 0, np.where(rng.random(n) < p, 1, 2))  # 0 tie, 1 a, 2 b
    judge = np.where(rng.random(n) < judge_agrees, human, rng.integers(0, 3, n))
    return a, b, human, judge


def _matrices(k, a, b, verdict):
    n = len(a)
    m = np.zeros((k, n))
    w = np.zeros((k, n))
    m[a, np.arange(n)] = 1
    m[b, np.arange(n)] = 1
    w[a, np.arange(n)] = verdict == 1
    w[b, np.arange(n)] = verdict == 2
    return m, w


def _units(a, b, verdict, names):
    return [(names[x], names[y], float(v == 1), float(v == 2)) for x, y, v in zip(a, b, verdict, strict=True)]


def _true_win_rates(strength, tie: float = 0.1) -> np.ndarray:
    """People's win-rate of each system under _simulate: opponents uniform, ties no win."""
    k = len(strength)
    p = 1 / (1 + np.exp(-(strength[:, None] - strength[None, :])))
    np.fill_diagonal(p, 0.0)
    return (1 - tie) * p.sum(axis=1) / (k - 1)


NAMES = [f"s{i}" for i in range(8)]


# ---- the estimator against the recomputation ---------------------------------------------------


def test_win_rates_and_covariance_equal_the_recomputation():
    rng = np.random.default_rng(1)
    k = 6
    a, b, h, _ = _simulate(rng, k, 300)
    got = pairwise_win_rates(*_matrices(k, a, b, h))
    mean, cov = _win_rates_ref(_units(a, b, h, NAMES))
    np.testing.assert_allclose(got.win_rate, [mean[s] for s in NAMES[:k]], rtol=1e-12)
    np.testing.assert_allclose(
        got.covariance, [[cov.get((s, t), 0.0) for t in NAMES[:k]] for s in NAMES[:k]], rtol=1e-10, atol=1e-15
    )


def test_the_published_scale_differs_by_the_comparison_counts():
    """Ours = published * n^2 / (n_s n_t): the published variances are too small by (n_s/n)^2."""
    rng = np.random.default_rng(2)
    k = 8
    a, b, h, _ = _simulate(rng, k, 400)
    m, w = _matrices(k, a, b, h)
    ours = pairwise_win_rates(m, w).covariance
    published = _published_covariance(_units(a, b, h, NAMES), NAMES[:k])
    counts = m.sum(axis=1)
    np.testing.assert_allclose(ours, published * 400**2 / np.outer(counts, counts), rtol=1e-10, atol=1e-15)
    ratio = np.sqrt(np.diag(ours) / np.diag(published))
    assert np.all((ratio > 2.5) & (ratio < 6))  # about k/2 = 4 with 8 systems


def test_prediction_powered_estimate_and_lambda_equal_the_recomputation():
    rng = np.random.default_rng(3)
    k = 5
    a, b, h, f = _simulate(rng, k, 200, judge_agrees=0.7)
    au, bu, _, fu = _simulate(rng, k, 1500, judge_agrees=0.7)
    m_l, h_l = _matrices(k, a, b, h)
    _, f_l = _matrices(k, a, b, f)
    m_u, f_u = _matrices(k, au, bu, fu)
    got = prediction_powered_win_rates(m_l, h_l, f_l, m_u, f_u)
    labelled = [
        (NAMES[x], NAMES[y], float(v == 1), float(v == 2), float(g == 1), float(g == 2))
        for x, y, v, g in zip(a, b, h, f, strict=True)
    ]
    theta, cov, lam = _pp_ref(labelled, _units(au, bu, fu, NAMES))
    assert 0 < lam < 1
    assert got.lam == pytest.approx(lam, rel=1e-9)
    np.testing.assert_allclose(got.win_rate, [theta[s] for s in NAMES[:k]], rtol=1e-10)
    np.testing.assert_allclose(
        got.covariance, [[cov.get((s, t), 0.0) for t in NAMES[:k]] for s in NAMES[:k]], rtol=1e-8, atol=1e-15
    )
    # rank-sets: Algorithm 2 against the ellipsoid's support function
    names = NAMES[:k]
    for alpha in (0.05, 0.2, 0.5):
        want = _rank_sets_ref(theta, cov, alpha)
        assert rank_sets(got.win_rate, got.covariance, alpha).tolist() == [want[s] for s in names]
    # simultaneous intervals: theta -/+ sqrt(chi2_k S_ss)
    iv = simultaneous_intervals(got.win_rate, got.covariance, 0.05)
    half = np.sqrt(chi2.ppf(0.95, k) * np.array([cov[s, s] for s in names]))
    np.testing.assert_allclose(iv[:, 1] - iv[:, 0], 2 * half, rtol=1e-9)


def test_standardised_errors_have_sd_near_one_and_not_with_the_published_scale():
    """The derivation checked by simulation: 400 studies of 300 comparisons of 8 systems; the SD of
    (theta_hat - theta) / se is near 1 with Eq. (*), near k/2 = 4 with the published scale."""
    rng = np.random.default_rng(4)
    k, n, reps = 8, 300, 400
    strength = np.linspace(1.0, -1.0, k)
    truth = _true_win_rates(strength)
    z_ours = np.empty((reps, k))
    z_pub = np.empty((reps, k))
    z_pp = np.empty((reps, k))
    for r in range(reps):
        a, b, h, f = _simulate(rng, k, n, strength)
        m, w = _matrices(k, a, b, h)
        est = pairwise_win_rates(m, w)
        counts = m.sum(axis=1)
        pub_var = np.diag(est.covariance) * counts**2 / n**2
        z_ours[r] = (est.win_rate - truth) / np.sqrt(np.diag(est.covariance))
        z_pub[r] = (est.win_rate - truth) / np.sqrt(pub_var)
        au, bu, _, fu = _simulate(rng, k, 3 * n, strength)
        pp = prediction_powered_win_rates(m, w, _matrices(k, a, b, f)[1], *_matrices(k, au, bu, fu))
        z_pp[r] = (pp.win_rate - truth) / np.sqrt(np.diag(pp.covariance))
    sd_ours, sd_pub, sd_pp = z_ours.std(axis=0), z_pub.std(axis=0), z_pp.std(axis=0)
    assert np.all((sd_ours > 0.85) & (sd_ours < 1.15)), sd_ours
    assert np.all((sd_pp > 0.85) & (sd_pp < 1.15)), sd_pp
    assert np.all(sd_pub > 2.5), sd_pub


# ---- edge cases ----------------------------------------------------------------------------------


def _rows(spec: list[tuple[str, str, str, str, str]]) -> list[Comparison]:
    return [Comparison(*row) for row in spec]


def test_ties_only_rank_nothing():
    rows = _rows([(f"q{i}", "x", "y", r, "tie") for i in range(10) for r in ("p", "gpt")])
    rows += _rows([(f"u{i}", "y", "z", "gpt", "tie") for i in range(5)])
    rows += _rows([(f"q{i}", "x", "z", "p", "tie") for i in range(3)])
    rows += _rows([(f"q{i}", "x", "z", "gpt", "tie") for i in range(3)])
    rep, _ = rank_report(rows, judges=["gpt"])
    for m in rep["methods"].values():
        assert set(m["win_rate"].values()) == {0.0}
        assert all(v == [1, 3] for v in m["rank_sets"].values())
    assert rep["methods"]["prediction_powered"]["lambda"] == 0.0  # a constant judge cannot help


def test_a_system_only_the_judge_saw_has_no_human_estimate_and_is_said():
    rng = np.random.default_rng(6)
    rows = []
    for i in range(60):
        a, b = rng.choice(["x", "y", "z"], 2, replace=False)
        w = ["a", "b", "tie"][int(rng.integers(0, 3))]
        rows += _rows([(f"q{i}", a, b, "p1", w), (f"q{i}", a, b, "gpt", w)])
    rows += _rows([(f"j{i}", "x", "newbie", "gpt", "a") for i in range(20)])
    rows += _rows([(f"p{i}", "y", "solo", "p2", "b") for i in range(10)])  # people only
    rep, notes = rank_report(rows, judges=["gpt"])
    assert rep["systems"] == ["newbie", "solo", "x", "y", "z"]
    for method in ("human_only", "prediction_powered"):
        assert rep["methods"][method]["win_rate"]["newbie"] is None
        assert rep["methods"][method]["rank_sets"]["newbie"] == [1, 5]
        assert rep["methods"][method]["covariance"][0] == [None] * 5
    assert rep["methods"]["judge_only"]["win_rate"]["newbie"] == 0.0
    assert rep["methods"]["human_only"]["win_rate"]["solo"] == 1.0
    assert rep["methods"]["judge_only"]["win_rate"]["solo"] is None
    assert rep["methods"]["prediction_powered"]["win_rate"]["solo"] is None
    assert rep["methods"]["prediction_powered"]["rank_sets"]["solo"] == [1, 5]
    assert any("never by people" in n and "newbie" in n for n in notes)
    assert any("never by the judge" in n and "solo" in n for n in notes)
    assert any("never compared by both" in n and "solo" in n for n in notes)


def test_two_systems_one_clearly_better():
    rows = _rows([(f"q{i}", "good", "bad", "p", "a" if i % 10 else "b") for i in range(200)])
    rows += _rows([(f"q{i}", "good", "bad", "gpt", "a") for i in range(200)])
    rows += _rows([(f"u{i}", "bad", "good", "gpt", "b") for i in range(500)])
    rep, notes = rank_report(rows, judges=["gpt"])
    pp = rep["methods"]["prediction_powered"]
    assert pp["rank_sets"] == {"bad": [2, 2], "good": [1, 1]}
    assert pp["win_rate"]["good"] == pytest.approx(0.9, abs=1e-12)  # a constant judge: lambda 0
    assert rep["methods"]["human_only"]["win_rate"] == {"bad": pytest.approx(0.1), "good": pytest.approx(0.9)}
    assert any("lies within" in n for n in notes)


def test_alpha_extremes():
    rng = np.random.default_rng(7)
    k = 5
    a, b, h, _ = _simulate(rng, k, 2000, strength=np.linspace(3, -3, k))
    est = pairwise_win_rates(*_matrices(k, a, b, h))
    assert rank_sets(est.win_rate, est.covariance, 1e-300).tolist() == [[1, k]] * k  # chi2 -> inf
    exact = rank_sets(est.win_rate, est.covariance, 1 - 1e-12).tolist()
    order = np.argsort(-est.win_rate)
    assert [exact[i] for i in order] == [[r, r] for r in range(1, k + 1)]
    for bad in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match="alpha"):
            rank_sets(est.win_rate, est.covariance, bad)


def test_judge_outside_the_prediction_powered_rank_sets_is_said():
    """People rank x > y > z sharply; the judge says the reverse on every comparison."""
    rows = []
    flip = {"a": "b", "b": "a"}
    pairs = [("x", "y"), ("y", "z"), ("x", "z")]
    for i in range(300):
        a, b = pairs[i % 3]
        rows += _rows([(f"q{i}", a, b, "p", "a"), (f"q{i}", a, b, "gpt", flip["a"])])
    for i in range(900):
        a, b = pairs[i % 3]
        rows += _rows([(f"u{i}", a, b, "gpt", "b")])
    rep, notes = rank_report(rows, judges=["gpt"])
    assert rep["methods"]["prediction_powered"]["rank_sets"] == {"x": [1, 1], "y": [2, 2], "z": [3, 3]}
    assert rep["methods"]["judge_only"]["rank_sets"] == {"x": [3, 3], "y": [2, 2], "z": [1, 1]}
    note = next(n for n in notes if "falls outside" in n)
    assert "x (judge-only rank 3" in note and "z (judge-only rank 1" in note and "y (" not in note


def test_rated_study_per_system_ppi_means_equal_ppi_python():
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    rng = np.random.default_rng(8)
    k, n, big_n = 3, 80, 400
    truth = np.array([3.5, 3.0, 2.2])
    y = truth[:, None] + rng.normal(0, 1, (k, n))
    yh = y + rng.normal(0.3, 0.6, (k, n))
    yu = truth[:, None] + 0.3 + rng.normal(0, 1.1, (k, big_n))
    est = rated_prediction_powered_means(np.ones((k, n)), y, yh, np.ones((k, big_n)), yu)
    for s in range(k):
        point = float(np.ravel(ppi_mean_pointestimate(y[s], yh[s], yu[s], lam=None))[0])
        low, high = (float(np.ravel(v)[0]) for v in ppi_mean_ci(y[s], yh[s], yu[s], alpha=0.05, lam=None))
        assert est.win_rate[s] == pytest.approx(point, rel=1e-9)
        # ppi-python's interval is z * se; the diagonal of our covariance is se^2 (divisor = count)
        assert 2 * 1.959963984540054 * math.sqrt(est.covariance[s, s]) == pytest.approx(high - low, rel=2e-2)
    # the same items for every system: the means covary (off-diagonal from Eq. (*))
    assert est.covariance[0, 1] != 0.0
    assert rank_sets(est.win_rate, est.covariance, 0.05)[:, 0].tolist()[0] == 1


# ---- files and the command ---------------------------------------------------------------------


def _write(tmp_path, name: str, text: str):
    p = tmp_path / name
    p.write_text(text)
    return p


def _arena_file(tmp_path):
    rng = np.random.default_rng(9)
    lines = ["item,system_a,system_b,rater,winner"]
    a, b, h, f = _simulate(rng, 6, 150)
    for i, (x, y, v, g) in enumerate(zip(a, b, h, f, strict=True)):
        lines.append(f"q{i},{NAMES[x]},{NAMES[y]},person{i % 4},{['tie', 'a', 'b'][v]}")
        lines.append(f"q{i},{NAMES[x]},{NAMES[y]},gpt,{'tie' if g == 0 else 'ab'[g - 1]}")
    au, bu, _, fu = _simulate(rng, 6, 600)
    for i, (x, y, g) in enumerate(zip(au, bu, fu, strict=True)):
        lines.append(f"u{i},{NAMES[x]},{NAMES[y]},gpt,{['tie', 'model_a', 'model_b'][g]}")
    return _write(tmp_path, "cmp.csv", "\n".join(lines) + "\n")


def test_cli_json_schema_is_exactly_the_issue_s(tmp_path, capsys):
    path = _arena_file(tmp_path)
    assert main(["rank", str(path), "--judge", "gpt", "--format", "json", "--alpha", "0.1"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert set(out) == {"systems", "methods"}
    assert out["systems"] == NAMES[:6]
    assert set(out["methods"]) == {"human_only", "judge_only", "prediction_powered"}
    for m in out["methods"].values():
        assert set(m) == {"win_rate", "covariance", "rank_sets", "lambda"}
        assert set(m["win_rate"]) == set(m["rank_sets"]) == set(NAMES[:6])
        assert len(m["covariance"]) == 6 and all(len(row) == 6 for row in m["covariance"])
        assert all(len(v) == 2 and 1 <= v[0] <= v[1] <= 6 for v in m["rank_sets"].values())
        assert isinstance(m["lambda"], float)
    assert out["methods"]["human_only"]["lambda"] == 0.0
    assert out["methods"]["judge_only"]["lambda"] == 1.0
    assert "note: units (item and pair): 150 compared by people and the judge, 600 by the judge only" in captured.err
    assert main(["rank", str(path), "--judge", "gpt"]) == 0
    table = capsys.readouterr().out
    assert "prediction_powered" in table and "lambda (prediction-powered)" in table


def test_winner_spellings_give_the_same_ranking(tmp_path, capsys):
    spellings = {"a": ["a", "A", "model_a", "1"], "b": ["b", "B", "model_b", "2"], "tie": ["tie", "tie (bothbad)", "0"]}
    assert all(WINNERS[s.lower()] == w for w, ss in spellings.items() for s in ss)
    outs = []
    for variant in range(3):
        lines = []
        for i in range(40):
            w = ["a", "b", "tie", "a"][i % 4]
            opts = spellings[w]
            spelled = opts[variant % len(opts)]
            lines.append(
                json.dumps({"question_id": f"q{i}", "model_a": "m1", "model_b": "m2", "judge": "h", "winner": spelled})
            )
        path = _write(tmp_path, f"v{variant}.jsonl", "\n".join(lines) + "\n")
        assert main(["rank", str(path), "--format", "json"]) == 0
        outs.append(json.loads(capsys.readouterr().out)["methods"]["human_only"])
    assert outs[0] == outs[1] == outs[2]
    assert outs[0]["win_rate"] == {"m1": 0.5, "m2": 0.25}


def test_a_json_array_and_an_unnamed_jsonl_read_as_the_jsonl(tmp_path):
    records = [
        {"question_id": i, "model_a": "m1", "model_b": "m2", "judge": "h", "winner": "model_a" if i % 3 else "tie"}
        for i in range(9)
    ]
    as_jsonl = read_comparisons(_write(tmp_path, "c.jsonl", "\n".join(json.dumps(r) for r in records) + "\n"))
    assert read_comparisons(_write(tmp_path, "c.json", json.dumps(records, indent=1))) == as_jsonl
    assert read_comparisons(_write(tmp_path, "c.txt", "\n".join(json.dumps(r) for r in records))) == as_jsonl
    records[4]["winner"] = "???"
    with pytest.raises(RankingInputError, match=r"line 5: unknown winner '\?\?\?'"):
        read_comparisons(_write(tmp_path, "bad.json", json.dumps(records)))


def test_bad_rows_are_refused_with_their_line_numbers(tmp_path, capsys):
    text = "item,system_a,system_b,rater,winner\nq1,x,y,p,a\nq2,x,y,p,maybe\nq3,x,y,p,b\nq4,x,x,p,a\nq5,x,y,,a\n"
    path = _write(tmp_path, "bad.csv", text)
    with pytest.raises(RankingInputError) as info:
        read_comparisons(path)
    msg = str(info.value)
    assert "line 3: unknown winner 'maybe'" in msg
    assert "line 5: system_a and system_b are the same" in msg
    assert "line 6: missing rater" in msg
    assert "line 2" not in msg and "line 4" not in msg
    assert main(["rank", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "line 3" in captured.err  # all or nothing: no report
    bad_json = _write(
        tmp_path, "bad.jsonl", '{"item": 1, "system_a": "x", "system_b": "y", "rater": "p", "winner": "a"}\n{oops\n'
    )
    with pytest.raises(RankingInputError, match="line 2: not valid JSON"):
        read_comparisons(bad_json)


def test_bad_options_are_refused(tmp_path, capsys):
    path = _arena_file(tmp_path)
    assert main(["rank", str(path), "--alpha", "1.5"]) == 2
    assert "--alpha must be in (0, 1)" in capsys.readouterr().err
    assert main(["rank", str(path), "--judge", "nobody"]) == 2
    assert "--judge names no rater of the file: nobody" in capsys.readouterr().err
    assert main(["rank", str(tmp_path / "missing.csv")]) == 2
    assert "no such file" in capsys.readouterr().err
