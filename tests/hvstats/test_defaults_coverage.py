"""The defaults that keep coverage (issue 34; the figures: docs/benchmarks.md "Defaults that keep
coverage", ``perf/active_defaults_sim.py``), against independent code:

- PPI++ with fewer than 100 labels uses lambda = N / (n + N): ppi-python 0.2.3's ``ppi_mean_ci`` /
  ``ppi_mean_pointestimate`` with ``lam=N/(n+N)``; from 100 on (or with ``small_sample_labels=0``)
  its power-tuned ``lam=None``.
- The active estimate (Zrnic and Candès 2024) with fewer than 200 labels uses lambda = 1, the
  reference notebooks' estimator ``mean(lhat Yhat + (Y - lhat Yhat) xi / probs)``; from 200 on
  the power-tuned ``cov(A, B) / var(B)`` unclipped (``np.cov(..., bias=True)``), which exceeds
  1 for a judge on a narrower scale.
- The sampling rule's default uniform mix tau = 0.5: the notebooks' rule
  ``clip((1 - tau) eta u + tau budget, 0, 1)``.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from hvstats import ppi as ppi_module
from hvstats.active import DEFAULT_TAU, SMALL_SAMPLE_LABELS, active_mean, sampling_probabilities
from hvstats.ppi import ppi_mean
from hvstats.render import _active_lines, _ppi_lines

TOL = 1e-9


def _binary(n: int, N: int, seed: int, scale: float = 1.0, shift: float = 0.0):
    """A calibrated probability ``f`` of a 0/1 label; the judge reports ``shift + scale f``."""
    rng = np.random.default_rng(seed)
    f = rng.beta(0.6, 1.4, n + N)
    y = (rng.random(n + N) < f).astype(float)
    g = shift + scale * f
    return y[:n], g[:n], g[n:]


# ---- PPI++ ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "small"), [(12, True), (40, True), (99, True), (100, False), (250, False)])
def test_ppi_small_sample_rule_equals_ppi_python(n, small):
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    Y, Yh, Yu = _binary(n, 900, seed=n, scale=4.0, shift=1.0)  # a 1-5 judge: the tuned lambda is far from 1
    # below 100 labels the lambda fixed from the counts, N / (n + N) (hvstats.ppi "Small samples")
    lam = len(Yu) / (n + len(Yu)) if small else None
    got = ppi_mean(Y, Yh, Yu)
    assert got["estimate"] == pytest.approx(float(np.squeeze(ppi_mean_pointestimate(Y, Yh, Yu, lam=lam))), abs=TOL)
    lo, hi = ppi_mean_ci(Y, Yh, Yu, alpha=0.05, lam=lam)
    assert got["ci"] == pytest.approx([float(np.squeeze(lo)), float(np.squeeze(hi))], abs=TOL)
    if small:
        assert got["lambda"] == pytest.approx(lam, abs=1e-15)
        assert got["lambda_rule"] == "lambda = N/(n+N): fewer than 100 labels"
        # the rule can be switched off: then it is ppi-python's power tuning at every n
        off = ppi_mean(Y, Yh, Yu, small_sample_labels=0)
        lo0, hi0 = ppi_mean_ci(Y, Yh, Yu, alpha=0.05)
        assert off["ci"] == pytest.approx([float(np.squeeze(lo0)), float(np.squeeze(hi0))], abs=TOL)
        assert off["lambda_rule"] == "power-tuned" and off["lambda"] < 0.5
    else:
        assert got["lambda_rule"] == "power-tuned" and 0 <= got["lambda"] < 0.5


def test_ppi_given_lambda_wins_over_the_rule():
    from ppi_py import ppi_mean_ci

    Y, Yh, Yu = _binary(30, 300, seed=3)
    got = ppi_mean(Y, Yh, Yu, lam=0.4)
    lo, hi = ppi_mean_ci(Y, Yh, Yu, alpha=0.05, lam=0.4)
    assert got["lambda"] == 0.4 and got["lambda_rule"] == "given"
    assert got["ci"] == pytest.approx([float(np.squeeze(lo)), float(np.squeeze(hi))], abs=TOL)


def test_ppi_text_output_states_the_rule():
    Y, Yh, Yu = _binary(40, 300, seed=4)
    # 40 labels, 300 unlabelled items: lambda = 300 / 340
    assert "lambda=0.882 (lambda = N/(n+N): fewer than 100 labels)" in _ppi_lines("gpt", ppi_mean(Y, Yh, Yu))[0]
    Y, Yh, Yu = _binary(150, 300, seed=4)
    assert "fewer than" not in _ppi_lines("gpt", ppi_mean(Y, Yh, Yu))[0]


# ---- active ---------------------------------------------------------------------------------


def _ref_active(Y, Yhat, xi, probs, lhat):
    """The reference notebooks' active estimator with ``lhat`` (read, not copied)."""
    Y0 = np.where(xi == 1, Y, 0.0)
    incr = lhat * Yhat + (Y0 - lhat * Yhat) * xi / probs
    est, sd = np.mean(incr), np.std(incr) / np.sqrt(len(Y))
    w = norm.ppf(0.975) * sd
    return est, sd, (est - w, est + w)


def _active_study(N: int, budget: float, seed: int, scale: float = 1.0):
    rng = np.random.default_rng(seed)
    f = rng.beta(0.6, 1.4, N)
    y = (rng.random(N) < f).astype(float)
    u = np.sqrt(f * (1 - f))
    pi = sampling_probabilities(u, budget)
    xi = (rng.random(N) < pi).astype(int)
    return y, scale * f, pi, xi


def test_active_small_sample_rule_is_the_reference_lambda_one():
    y, g, pi, xi = _active_study(1000, 150, seed=8, scale=0.25)
    assert 2 <= xi.sum() < SMALL_SAMPLE_LABELS
    r = active_mean(np.where(xi == 1, y, np.nan), g, pi)
    est, se, ci = _ref_active(y, g, xi, pi, 1.0)
    assert r["lambda"] == 1.0 and r["lambda_rule"] == "lambda = 1: fewer than 200 labels"
    assert abs(r["estimate"] - est) < TOL and abs(r["se"] - se) < TOL and r["ci"] == pytest.approx(ci, abs=TOL)
    text = _active_lines({"judges": {"gpt": r}})[0]
    assert "lambda=1.000 (lambda = 1: fewer than 200 labels)" in text


def test_active_lambda_is_not_clipped_for_a_judge_on_a_narrower_scale():
    # the judge reports f / 4: the variance-minimising lambda is about 4
    y, g, pi, xi = _active_study(3000, 400, seed=9, scale=0.25)
    assert xi.sum() >= SMALL_SAMPLE_LABELS
    A = np.where(xi == 1, y, 0.0) * xi / pi
    B = g * (xi / pi - 1)
    c = np.cov(np.vstack([A, B]), bias=True)
    lam = c[0, 1] / c[1, 1]
    assert lam > 2
    yy = np.where(xi == 1, y, np.nan)
    r = active_mean(yy, g, pi)
    est, se, _ = _ref_active(y, g, xi, pi, lam)
    assert r["lambda_rule"] == "power-tuned" and abs(r["lambda"] - lam) < TOL
    assert abs(r["estimate"] - est) < TOL and abs(r["se"] - se) < TOL
    clipped = active_mean(yy, g, pi, clip_lambda=True)
    _, se1, _ = _ref_active(y, g, xi, pi, 1.0)
    assert clipped["lambda"] == 1.0 and abs(clipped["se"] - se1) < TOL
    assert r["se"] < 0.95 * clipped["se"]  # what clipping cost here


# ---- the uniform mix --------------------------------------------------------------------------


def test_the_thresholds_are_the_documented_ones():
    # docs/benchmarks.md "Defaults that keep coverage": PPI++ 100 labels, active 200
    assert ppi_module.SMALL_SAMPLE_LABELS == 100 and SMALL_SAMPLE_LABELS == 200


def test_default_tau_is_the_reference_rule_with_tau_one_half():
    assert DEFAULT_TAU == 0.5
    rng = np.random.default_rng(10)
    u = rng.uniform(0.2, 1.0, 1000)
    eta = 0.1 / np.mean(u)
    want = np.clip((1 - 0.5) * eta * u + 0.5 * 0.1, 0, 1)
    np.testing.assert_allclose(sampling_probabilities(u, 100), want, rtol=0, atol=1e-12)
