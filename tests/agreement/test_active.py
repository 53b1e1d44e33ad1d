"""Active statistical inference (Zrnic and Candès, ICML 2024; issue 27) against an independent
recomputation written here in plain numpy, on fixed seeded draws, to 1e-9.

What the recomputation mirrors in github.com/tijana-zrnic/active-inference (read, not copied):

- ``_ref_probs``: the batch notebooks' rule (``pew79-post-election-research.ipynb``,
  ``census-analysis.ipynb``): ``eta = budget / mean(uncertainty)``,
  ``probs = clip((1 - tau) * eta * uncertainty + tau * budget, 0, 1)`` with the budget as a
  fraction of the items; ours adds the floor and redistributes what the clip removes, so the
  two agree where nothing is clipped, and the clipped case is checked against the
  water-filling conditions instead.
- ``_ref_active``: ``pointest_active = mean(lhat * Yhat + (Y - lhat * Yhat) * xi / probs)`` and
  ``pointest_active_std = std(...) / sqrt(n)``, ``width = norm.ppf(1 - alpha / 2) * std``
  (``odds_ratio_ci`` of ``alphafold-ptm.ipynb`` with ``lhat``; ``lhat = 1`` in the pew79
  notebook, ``lhat = 0`` for its "classical" baseline).  The reference fixes ``lhat``; the
  power-tuned value is the paper's (the ``lhat`` minimising the estimated variance of the
  increments), recomputed here with ``np.cov(..., bias=True)``.
- ``_ref_sequential``: the sequential notebooks' loop (``pew79-post-election-research-
  sequential.ipynb``): one increment ``Yhat_i + (Y_i - Yhat_i) * xi_i / prob_i`` per item with
  that item's round probability, ``mean(increments)``, ``std(increments) / sqrt(n)``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from hvstats.active import (
    active_by_stratum,
    active_lambda,
    active_mean,
    active_rate,
    active_sequential,
    asymptotic_cs_half_width,
    binary_uncertainty,
    draw_sample,
    plan_rounds,
    population_moments,
    refit_uncertainty,
    sampling_probabilities,
)
from hvstats.ppi import ppi_mean

TOL = 1e-9


# ---- independent recomputation ----------------------------------------------------------------


def _ref_probs(uncertainty, budget_fraction, tau):
    eta = budget_fraction / np.mean(uncertainty)
    return np.clip((1 - tau) * eta * uncertainty + tau * budget_fraction, 0, 1)


def _ref_lambda(Y, Yhat, xi, probs, clip=False):
    Y0 = np.where(xi == 1, Y, 0.0)
    a = Y0 * xi / probs
    b = Yhat * (xi / probs - 1)
    c = np.cov(np.vstack([a, b]), bias=True)
    if c[1, 1] == 0:
        return 0.0
    lam = c[0, 1] / c[1, 1]
    return float(min(max(lam, 0.0), 1.0)) if clip else float(lam)


def _ref_active(Y, Yhat, xi, probs, lhat, alpha=0.05):
    Y0 = np.where(xi == 1, Y, 0.0)
    incr = lhat * Yhat + (Y0 - lhat * Yhat) * xi / probs
    n = len(Y)
    pointest = np.mean(incr)
    std = np.std(incr) / np.sqrt(n)
    width = norm.ppf(1 - alpha / 2) * std
    return pointest, std, (pointest - width, pointest + width)


def _ref_sequential(Y, Yhat, xi, probs, lhat=1.0):
    increments = []
    for i in range(len(Y)):
        yi = Y[i] if xi[i] == 1 else 0.0
        increments.append(lhat * Yhat[i] + (yi - lhat * Yhat[i]) * xi[i] / probs[i])
    return np.mean(increments), np.std(increments) / np.sqrt(len(Y))


def _study(N=3000, seed=7, informative=True, budget=300):
    """A judge giving a probability ``f`` of a 0/1 human outcome; the uncertainty is the
    judge's own (informative) or constant."""
    rng = np.random.default_rng(seed)
    f = np.clip(rng.beta(0.6, 0.6, N), 0.01, 0.99)
    y = (rng.random(N) < f).astype(float)
    u = binary_uncertainty(f) if informative else np.ones(N)
    pi = sampling_probabilities(u, budget)
    xi = draw_sample(pi, seed + 1)
    return y, f, u, pi, xi


# ---- sampling probabilities ------------------------------------------------------------------


def test_probabilities_equal_reference_rule_when_nothing_is_clipped():
    rng = np.random.default_rng(1)
    u = rng.uniform(0.2, 1.0, 1000)
    for tau in (0.0, 0.3, 1.0):
        pi = sampling_probabilities(u, 100, floor=0.001, tau=tau)
        np.testing.assert_allclose(pi, _ref_probs(u, 0.1, tau), rtol=0, atol=1e-12)
        assert abs(pi.sum() - 100) < 1e-9


def test_probabilities_clipped_are_the_water_filling_solution():
    rng = np.random.default_rng(2)
    u = rng.lognormal(0, 2.0, 500)  # heavy tail: many above 1, many below the floor
    u[:20] = 0.0
    nb, N = 80, 500
    pi = sampling_probabilities(u, nb, tau=0.02)
    fl = 0.05 * nb / N
    assert abs(pi.sum() - nb) < 1e-9
    assert pi.min() >= fl - 1e-15 and pi.max() <= 1.0
    assert (pi == 1.0).any() and np.isclose(pi, fl).any()
    p = 0.98 * u * nb / u.sum() + 0.02 * nb / N
    free = (pi > fl + 1e-12) & (pi < 1 - 1e-12)
    c = pi[free] / p[free]
    assert np.ptp(c) < 1e-9 * c.mean()  # one scale on the free items
    c = c.mean()
    assert (c * p[pi == 1.0] >= 1 - 1e-9).all()  # capped ones wanted >= 1
    assert (c * p[np.isclose(pi, fl)] <= fl + 1e-9).all()  # floored ones wanted <= floor


def test_probabilities_uninformative_and_edges():
    np.testing.assert_allclose(sampling_probabilities(np.full(200, 3.0), 50), np.full(200, 0.25), atol=1e-15)
    np.testing.assert_allclose(sampling_probabilities(np.zeros(200), 50), np.full(200, 0.25), atol=1e-15)
    assert (sampling_probabilities(np.arange(10.0), 10) == 1).all()
    pi = sampling_probabilities(np.r_[np.zeros(5), np.ones(5)], 9)  # zeros must rise above the floor
    assert abs(pi.sum() - 9) < 1e-9 and (pi > 0).all()
    for bad in (dict(budget=0), dict(budget=11), dict(budget=5, tau=2), dict(budget=5, floor=0.9)):
        with pytest.raises(ValueError):
            sampling_probabilities(np.ones(10), **bad)
    with pytest.raises(ValueError):
        sampling_probabilities(np.r_[1.0, -1.0], 1)


def test_draw_is_seeded_bernoulli():
    pi = np.full(20000, 0.3)
    a, b = draw_sample(pi, 5), draw_sample(pi, 5)
    assert (a == b).all() and abs(a.mean() - 0.3) < 0.015
    assert (draw_sample(np.ones(10), 1) == 1).all()


# ---- estimator against the recomputation ------------------------------------------------------


@pytest.mark.parametrize("informative", [True, False])
def test_active_mean_matches_reference(informative):
    y, f, _u, pi, xi = _study(informative=informative)
    yy = np.where(xi == 1, y, np.nan)
    r = active_mean(yy, f, pi)
    lam = _ref_lambda(y, f, xi, pi)
    assert abs(r["lambda"] - lam) < TOL
    assert abs(active_lambda(yy, f, None, pi) - lam) < TOL
    est, se, ci = _ref_active(y, f, xi, pi, lam)
    assert abs(r["estimate"] - est) < TOL and abs(r["se"] - se) < TOL
    assert abs(r["variance"] - se**2) < TOL
    assert abs(r["ci"][0] - ci[0]) < TOL and abs(r["ci"][1] - ci[1]) < TOL
    # fixed lambda = 1 (the reference notebooks' active estimator) and 0 (their classical)
    for lhat in (1.0, 0.0):
        est, se, ci = _ref_active(y, f, xi, pi, lhat, alpha=0.1)
        r1 = active_mean(yy, f, pi, lam=lhat, alpha=0.1, compare=False)
        assert abs(r1["estimate"] - est) < TOL and abs(r1["se"] - se) < TOL and abs(r1["ci"][1] - ci[1]) < TOL
    est0, se0, _ = _ref_active(y, f, xi, pi, 0.0)
    assert abs(r["human_only"]["estimate"] - est0) < TOL and abs(r["human_only"]["se"] - se0) < TOL
    assert r["n_labeled"] == int(xi.sum()) and abs(r["expected_labels"] - 300) < 1e-9


def test_power_tuning_minimises_the_estimated_variance():
    y, f, _u, pi, xi = _study(seed=11)
    yy = np.where(xi == 1, y, np.nan)
    r = active_mean(yy, f, pi, clip_lambda=False, compare=False)
    for lam in np.linspace(r["lambda"] - 0.5, r["lambda"] + 0.5, 21):
        assert active_mean(yy, f, pi, lam=lam, compare=False)["se"] >= r["se"] - 1e-15


def test_uniform_comparison_matches_recomputation():
    y, f, _u, pi, xi = _study(seed=3)
    yy = np.where(xi == 1, y, np.nan)
    r = active_mean(yy, f, pi)
    u = r["uniform"]
    N, n = len(y), int(xi.sum())
    w = xi / pi
    my = np.sum(w * np.where(xi == 1, y, 0)) / w.sum()
    lab = xi == 1
    yl, fl, wl = y[lab], f[lab], w[lab]
    var_y = np.sum(wl * (yl - my) ** 2) / wl.sum()
    mf = np.sum(wl * fl) / wl.sum()
    cov = np.sum(wl * (yl - my) * (fl - mf)) / wl.sum()
    vfw = np.sum(wl * (fl - mf) ** 2) / wl.sum()
    vf = np.var(f)

    def se_ppi(m):
        # uniform PPI++ as hvstats.ppi computes it: lambda = N / (n + N) below 100 labels
        lam = (N - m) / N if m < 100 else min(max(cov / ((1 + m / (N - m)) * vf), 0), 1)
        return math.sqrt(lam**2 * vf / (N - m) + (var_y - 2 * lam * cov + lam**2 * vfw) / m)

    assert abs(u["ppi_se"] - se_ppi(n)) < TOL
    assert abs(u["human_only_se"] - math.sqrt(var_y / n)) < TOL
    m = next(m for m in range(2, N) if se_ppi(m) ** 2 <= r["se"] ** 2 * (1 + 1e-12))
    assert u["ppi_effective_labels"] == m and u["ppi_labels_saved"] == m - n
    assert abs(u["human_only_effective_labels"] - var_y / r["se"] ** 2) < 1e-6
    assert u["ppi_labels_saved"] > 0 and u["human_only_labels_saved"] > 0  # informative judge
    mom = population_moments(yy, f, pi)
    assert abs(mom["var_y"] - var_y) < TOL and abs(mom["cov_yf"] - cov) < TOL


# ---- edge cases --------------------------------------------------------------------------------


def test_all_pi_one_is_the_classical_estimate_on_full_labels():
    rng = np.random.default_rng(4)
    y, f = rng.normal(size=200), rng.normal(size=200)
    r = active_mean(y, f, np.ones(200))
    c = ppi_mean(y, f, np.array([]))
    assert r["lambda"] == 0.0
    assert abs(r["estimate"] - c["classical_estimate"]) < TOL and abs(r["se"] - c["classical_se"]) < TOL
    assert abs(r["ci"][0] - c["classical_ci"][0]) < TOL
    for lam in (0.3, 1.0):  # lambda has no effect when every item is labelled
        assert abs(active_mean(y, f, np.ones(200), lam=lam)["estimate"] - y.mean()) < TOL


def test_uninformative_uncertainty_gives_uniform_pi_and_the_reference_uniform_estimator():
    y, f, _u, pi, xi = _study(informative=False, seed=5)
    np.testing.assert_allclose(pi, 0.1, atol=1e-15)
    est, se, _ = _ref_active(y, f, xi, np.full(len(y), 0.1), 1.0)  # the notebooks' "uniform"
    r = active_mean(np.where(xi == 1, y, np.nan), f, pi, lam=1.0)
    assert abs(r["estimate"] - est) < TOL and abs(r["se"] - se) < TOL


def test_stratum_without_labels_is_undefined_with_a_reason():
    y, f, _u, pi, xi = _study(seed=6)
    strata = np.where(np.arange(len(y)) % 3 == 0, "a", "b")
    xi = xi.copy()
    xi[strata == "a"] = 0
    yy = np.where(xi == 1, y, np.nan)
    out = active_by_stratum(yy, f, pi, strata, xi)
    assert out["a"]["estimate"] is None and "0 labelled items" in out["a"]["reason"]
    m = strata == "b"
    lam = _ref_lambda(y[m], f[m], xi[m], pi[m])
    est, se, _ = _ref_active(y[m], f[m], xi[m], pi[m], lam)
    assert abs(out["b"]["estimate"] - est) < TOL and abs(out["b"]["se"] - se) < TOL


def test_zero_variance_y():
    N = 400
    rng = np.random.default_rng(8)
    pi = sampling_probabilities(rng.uniform(0.1, 1, N), 80)
    xi = draw_sample(pi, 9)
    y = np.full(N, 0.7)
    # a perfect (constant) judge: every increment is 0.7, zero variance, no effective size
    r = active_mean(np.where(xi == 1, y, np.nan), y, pi)
    assert abs(r["estimate"] - 0.7) < TOL and r["se"] < TOL and r["lambda"] == 1.0
    assert r["uniform"]["human_only_effective_labels"] is None and "zero" in r["uniform"]["reason"]
    # an uninformative judge: the IPW noise remains; still matches the recomputation
    f = rng.random(N)
    r = active_mean(np.where(xi == 1, y, np.nan), f, pi)
    lam = 1.0 if xi.sum() < 200 else _ref_lambda(y, f, xi, pi)  # about 80 labels: the small-sample rule
    est, se, _ = _ref_active(y, f, xi, pi, lam)
    assert abs(r["estimate"] - est) < TOL and abs(r["se"] - se) < TOL
    tuned = active_mean(np.where(xi == 1, y, np.nan), f, pi, small_sample_labels=0)
    est, se, _ = _ref_active(y, f, xi, pi, _ref_lambda(y, f, xi, pi))
    assert abs(tuned["estimate"] - est) < TOL and abs(tuned["se"] - se) < TOL
    # every item labelled: exactly 0.7 with se 0
    r = active_mean(y, f, np.ones(N))
    assert r["estimate"] == pytest.approx(0.7, abs=1e-12) and r["se"] == pytest.approx(0.0, abs=1e-12)


def test_input_errors_and_too_few_labels():
    f = np.linspace(0, 1, 10)
    with pytest.raises(ValueError, match="pi must be in"):
        active_mean(np.full(10, np.nan), f, np.zeros(10))
    with pytest.raises(ValueError, match="no human value"):
        active_mean(np.full(10, np.nan), f, np.full(10, 0.5), xi=np.ones(10))
    r = active_mean(np.r_[1.0, np.full(9, np.nan)], f, np.full(10, 0.5))
    assert r["estimate"] is None and "1 labelled item " in r["reason"] + " "


def test_active_rate():
    y, f, _u, pi, xi = _study(seed=12)
    yy = np.where(xi == 1, y, np.nan)
    r = active_rate(yy, f, pi)
    est, se, _ = _ref_active(y, f, xi, pi, _ref_lambda(y, f, xi, pi))
    assert abs(r["estimate"] - est) < TOL and abs(r["se"] - se) < TOL
    with pytest.raises(ValueError, match="0/1"):
        active_rate(np.where(xi == 1, 2.0, np.nan), f, pi)


# ---- sequential rounds and stopping -----------------------------------------------------------


def test_sequential_rounds_match_the_reference_loop():
    rng = np.random.default_rng(13)
    N = 2400
    f = np.clip(rng.beta(0.6, 0.6, N), 0.01, 0.99)
    y = (rng.random(N) < f).astype(float)
    rounds = plan_rounds(N, 4, 14)
    assert sorted(np.bincount(rounds).tolist()) == [600] * 4
    pi = np.zeros(N)
    xi = np.zeros(N, dtype=int)
    prior = binary_uncertainty(f)
    for r in range(4):
        m, done = rounds == r, rounds < r
        u = prior[m] if r == 0 else refit_uncertainty(prior[done], f[done], y[done], xi[done], pi[done], prior[m])
        pi[m] = sampling_probabilities(u, 60, tau=0.2)
        xi[m] = draw_sample(pi[m], 100 + r)
    yy = np.where(xi == 1, y, np.nan)
    out = active_sequential(yy, f, pi, rounds, lam=1.0, stop_half_width=0.03, planned_items=N)
    order = np.argsort(rounds, kind="stable")  # the loop visits the items round by round
    est, se = _ref_sequential(y[order], f[order], xi[order], pi[order])
    assert abs(out["estimate"] - est) < TOL and abs(out["se"] - se) < TOL
    assert [s["n_items"] for s in out["rounds_summary"]] == [600] * 4
    assert abs(sum(s["mean_increment"] * s["n_items"] for s in out["rounds_summary"]) / N - est) < TOL
    # the asymptotic confidence sequence: wider than the CLT interval, formula recomputed
    sd = se * math.sqrt(N)
    a = -2 * math.log(0.05)
    rho2 = (a + math.log(a + 1)) / N
    hw = sd * math.sqrt((2 * (N * rho2 + 1) / (N**2 * rho2)) * math.log(math.sqrt(N * rho2 + 1) / 0.05))
    assert abs(out["cs_half_width"] - hw) < TOL and hw > out["half_width"]
    assert out["stop"] == (hw <= 0.03) and "asymptotic" in out["stop_guarantee"]
    assert asymptotic_cs_half_width(sd, N, 0.05, N) == pytest.approx(hw, abs=TOL)


def test_refit_uses_only_past_labels_and_tracks_the_error():
    rng = np.random.default_rng(15)
    n = 4000
    prior = rng.random(n)
    f = np.zeros(n)
    y = rng.normal(scale=1 + 3 * prior)  # the error grows with the prior
    pi = np.full(n, 0.5)
    xi = draw_sample(pi, 16)
    u = refit_uncertainty(prior, f, np.where(xi == 1, y, np.nan), xi, pi, np.array([0.05, 0.95]))
    assert u[0] < u[1] and 1.0 < u[0] < 2.0 and 3.0 < u[1] < 4.6


# ---- the agreement command's --active -----------------------------------------------------------


def _active_csv(tmp_path, with_pi=True):
    rng = np.random.default_rng(21)
    N = 240
    f = np.clip(rng.beta(0.6, 1.4, N), 0.01, 0.99)
    y = (rng.random(N) < f).astype(float)
    pi = sampling_probabilities(binary_uncertainty(f), 60)
    xi = draw_sample(pi, 22)
    country = np.where(np.arange(N) % 2 == 0, "DE", "CN")
    head = "item,rater,value,field,rater_kind,country" + (",pi" if with_pi else "")
    lines = [head]
    for i in range(N):
        tail = f",{country[i]}" + (f",{float(pi[i])!r}" if with_pi else "")
        lines.append(f"i{i},judge,{float(f[i])!r},acc,model{tail}")
        if xi[i]:
            lines.append(f"i{i},h1,{int(y[i])},acc,human{tail}")
        elif i % 2:  # an unlabelled item with an empty human value (the others: judge row only)
            lines.append(f"i{i},h1,,acc,human{tail}")
    p = tmp_path / "active.csv"
    p.write_text("\n".join(lines) + "\n")
    return p, f, np.where(xi == 1, y, np.nan), pi, country


def test_command_active_json(django_ready, tmp_path):
    import io
    import json

    from django.core.management import call_command

    p, f, yy, pi, country = _active_csv(tmp_path)
    buf = io.StringIO()
    call_command("agreement", str(p), "--format", "json", "--active", "--bootstrap", "0", "--by", "country", stdout=buf)
    rep = json.loads(buf.getvalue())
    a = rep["active"]["fields"]["acc"]["judges"]["judge"]
    want = active_mean(yy, f, pi)
    assert abs(a["estimate"] - want["estimate"]) < TOL and abs(a["ci"][1] - want["ci"][1]) < TOL
    assert a["n_items"] == 240 and a["n_labeled"] == int((~np.isnan(yy)).sum()) and a["n_items_without_judge"] == 0
    assert a["uniform"]["ppi_effective_labels"] == want["uniform"]["ppi_effective_labels"]
    m = country == "DE"
    de = rep["active"]["fields"]["acc"]["strata"]["country"]["DE"]["judge"]
    assert abs(de["estimate"] - active_mean(yy[m], f[m], pi[m])["estimate"]) < TOL
    assert "Zrnic" in rep["active"]["method"]
    buf = io.StringIO()
    call_command("agreement", str(p), "--format", "table", "--active", "--bootstrap", "0", stdout=buf)
    assert "active all judge judge: mean" in buf.getvalue()


def test_command_active_errors(django_ready, tmp_path):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    p, *_ = _active_csv(tmp_path, with_pi=False)
    with pytest.raises(CommandError, match="'pi' column"):
        call_command("agreement", str(p), "--active", "--bootstrap", "0")
    bad = tmp_path / "bad.csv"
    bad.write_text("item,rater,value,rater_kind,pi\n1,j,0.5,model,0.5\n1,h,1,human,0.4\n")
    with pytest.raises(CommandError, match="different pi"):
        call_command("agreement", str(bad), "--active", "--bootstrap", "0")
    bad.write_text("item,rater,value,rater_kind,pi\n1,j,0.5,model,0\n")
    with pytest.raises(CommandError, match=r"pi must be in \(0, 1\]"):
        call_command("agreement", str(bad), "--active", "--bootstrap", "0")
