"""Prediction-powered inference (PPI++) for the mean of a field, with a judge as predictor.

Angelopoulos, Bates, Fannjiang, Jordan and Zrnic, "Prediction-powered inference", Science
382 (2023), Section 2 (mean estimation); power tuning from Angelopoulos, Duchi and Zrnic,
"PPI++: Efficient Prediction-Powered Inference" (arXiv:2311.01453, 2023), the power-tuned
estimator and its optimal lambda, specialised to the mean.  The formulas are those of ppi-python 0.2.3's
``ppi_mean_pointestimate`` / ``ppi_mean_ci`` with ``lam=None`` (power tuned, clipped to
[0, 1], ``lam_optim_mode="overall"``; from 100 labelled items on, ``lam=1`` below: "Small samples") and ``classical_mean_ci``, for one dimension and unit
weights; tests compare with the package itself (test-only dependency).

With ``n`` labelled items (human label ``Y``, judge ``Yh``) and ``N`` unlabelled items (judge
``Yu`` only):

- initial estimate (lambda = 1): ``theta_1 = mean(Yu) + mean(Y - Yh)``;
- lambda (PPI++ optimal power tuning for the mean; ppi-python ``_calc_lam_glm``): ``lambda = cov_n(Y, Yh) / ((1 + n / N) var(Yh ++ Yu))``,
  ``cov_n`` the mean of the products of the centred ``Y`` and ``Yh`` (divisor ``n``),
  ``var`` the sample variance (divisor ``n + N - 1``) of all judge values; clipped to [0, 1]
  (a constant judge gives lambda = 0, the classical estimate);
- estimate: ``theta = lambda mean(Yu) + mean(Y - lambda Yh)``;
- standard error: ``se^2 = sigma_f^2 / N + sigma_D^2 / n`` with ``sigma_f^2 = var_0(lambda Yu)``
  and ``sigma_D^2 = var_0(Y - lambda Yh)`` (divisor = count);
- CI: ``theta -/+ z_{1 - alpha/2} se``; classical (human-only): ``mean(Y) -/+ z sd_0(Y)/sqrt(n)``.

Small samples (issue 34; a documented choice from simulation, not in the papers): with fewer
than :data:`SMALL_SAMPLE_LABELS` (100) labelled items, ``lambda = 1`` (plain PPI, ppi-python's
``lam=1``) instead of the power-tuned value.  The tuned ``lambda`` is fitted on the labels whose
variance it minimises, so that variance is optimistic when ``n`` is small: over 2,000 simulated
studies per setting (0/1 labels with mean 0.3, 200 or 2,000 items, four judges) the tuned
interval covered 0.91-0.94 with 20-80 labels, ``lambda = 1`` about 0.01 more
(``perf/active_defaults_sim.py``, docs/benchmarks.md "Defaults that keep coverage").  The price:
a judge on another scale than the label (1-5 against 0/1) gives a 2.4-3x wider interval with
``lambda = 1``; ``small_sample_labels=0`` tunes at every ``n``.  Below about 30 labels of a rare
0/1 outcome no ``lambda`` reaches 94%: the normal approximation itself is the limit there.

Budget advice (documented choice, not in the papers): the labelled items needed for a CI
half-width ``w`` at the same ``lambda`` and the same unlabelled pool, from the PPI variance
``w^2 = z^2 (sigma_f^2 / N + sigma_D^2 / n)``:
``n_w = ceil(sigma_D^2 / ((w / z)^2 - sigma_f^2 / N))`` (unattainable when
``(w / z)^2 <= sigma_f^2 / N``: the unlabelled pool alone is too small); the classical
``n_w = ceil(sigma_Y^2 (z / w)^2)``.  Human ratings = items x the mean number of human
ratings per labelled item.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.stats import norm

DEFAULT_ALPHA = 0.05
# Fewer labelled items than this: lambda = 1, not power tuned (module docstring, "Small samples").
SMALL_SAMPLE_LABELS = 100


def ppi_lambda(y: np.ndarray, yhat: np.ndarray, yhat_unlabeled: np.ndarray) -> float:
    """Power-tuning parameter (PPI++ optimal lambda for the mean, as ppi-python's ``_calc_lam_glm``
    with ``clip=True``); 0 when the judge is constant."""
    n, N = len(y), len(yhat_unlabeled)
    theta1 = yhat_unlabeled.mean() + (y - yhat).mean()
    g = y - theta1
    gh = yhat - theta1
    gc = g - g.mean()
    ghc = gh - gh.mean()
    cov = (1 / n) * (2 * float(gc @ ghc))
    var = float(np.var(np.concatenate([gh, yhat_unlabeled - theta1]), ddof=1))
    denom = 2 * (1 + (n / N)) * var
    if not np.isfinite(denom) or denom <= 0:
        return 0.0
    return float(np.clip(cov / denom, 0.0, 1.0))


def ppi_mean(
    y: np.ndarray,
    yhat: np.ndarray,
    yhat_unlabeled: np.ndarray,
    alpha: float = DEFAULT_ALPHA,
    lam: float | None = None,
    half_width: float | None = None,
    ratings_per_item: float | None = None,
    small_sample_labels: int = SMALL_SAMPLE_LABELS,
) -> dict[str, Any]:
    """PPI++ estimate of the mean of ``Y`` over labelled and unlabelled items.

    ``y``: human label of each labelled item; ``yhat``: the judge on the same items;
    ``yhat_unlabeled``: the judge on the unlabelled items.  ``lam`` None = power tuned, or 1
    with fewer than ``small_sample_labels`` labelled items (module docstring, "Small samples").
    Returns ``estimate``, ``ci`` [low, high], ``se``, ``classical_estimate``,
    ``classical_ci``, ``classical_se``, ``n_labeled``, ``n_unlabeled``, ``lambda``,
    ``lambda_rule`` (how ``lambda`` was chosen, in words), ``alpha`` and, with ``half_width``, ``budget`` (see the module docstring)."""
    Y = np.asarray(y, dtype=float).ravel()
    Yh = np.asarray(yhat, dtype=float).ravel()
    Yu = np.asarray(yhat_unlabeled, dtype=float).ravel()
    if Y.shape != Yh.shape:
        raise ValueError("y and yhat must have one value per labelled item")
    if np.isnan(Y).any() or np.isnan(Yh).any() or np.isnan(Yu).any():
        raise ValueError("ppi_mean needs complete values (drop missing ones first)")
    n, N = len(Y), len(Yu)
    z = float(norm.ppf(1 - alpha / 2))
    out: dict[str, Any] = {
        "estimate": None,
        "ci": None,
        "se": None,
        "classical_estimate": None,
        "classical_ci": None,
        "classical_se": None,
        "n_labeled": n,
        "n_unlabeled": N,
        "lambda": None,
        "lambda_rule": None,
        "alpha": alpha,
    }
    if n >= 2:
        c_mean = float(Y.mean())
        c_se = float(Y.std() / np.sqrt(n))
        out.update(classical_estimate=c_mean, classical_se=c_se, classical_ci=[c_mean - z * c_se, c_mean + z * c_se])
    if n < 2 or N < 1:
        out["reason"] = (
            "undefined: fewer than 2 labelled items" if n < 2 else "undefined: no unlabelled items (judge-only items)"
        )
        if half_width is not None and n >= 2:  # human-only advice still applies
            out["budget"] = budget(half_width, z, math.inf, 0.0, float(Y.var()), n, 1, ratings_per_item)
            out["budget"]["reason"] = out["reason"]
        return out
    if lam is not None:
        lam_v, rule = float(lam), "given"
    elif n < small_sample_labels:
        lam_v, rule = 1.0, f"lambda = 1: fewer than {small_sample_labels} labels"
    else:
        lam_v, rule = ppi_lambda(Y, Yh, Yu), "power-tuned"
    est = float((lam_v * Yu).mean() + (Y - lam_v * Yh).mean())
    var_f = float((lam_v * Yu).std() ** 2)
    var_d = float((Y - lam_v * Yh).std() ** 2)
    se = math.sqrt(var_f / N + var_d / n)
    out.update(estimate=est, se=se, ci=[est - z * se, est + z * se], lambda_rule=rule, **{"lambda": lam_v})
    if half_width is not None:
        out["budget"] = budget(half_width, z, var_f, var_d, float(Y.var()), n, N, ratings_per_item)
    return out


def budget(
    half_width: float,
    z: float,
    var_f: float,
    var_d: float,
    var_y: float,
    n: int,
    N: int,
    ratings_per_item: float | None = None,
) -> dict[str, Any]:
    """Labelled items (and human ratings) needed for a CI half-width ``half_width`` with PPI
    (same lambda, same unlabelled pool) and with humans only (module docstring)."""
    if half_width <= 0:
        raise ValueError("half_width must be positive")
    target = (half_width / z) ** 2
    room = target - var_f / N
    ppi_items = math.ceil(var_d / room) if room > 0 else None
    classical_items = math.ceil(var_y / target)
    rpi = ratings_per_item if ratings_per_item else 1.0
    out: dict[str, Any] = {
        "half_width": half_width,
        "ppi_items": ppi_items,
        "ppi_additional_items": None if ppi_items is None else max(0, ppi_items - n),
        "ppi_human_ratings": None if ppi_items is None else math.ceil(ppi_items * rpi),
        "classical_items": classical_items,
        "classical_human_ratings": math.ceil(classical_items * rpi),
        "ratings_per_item": rpi,
        "formula": "n = ceil(var(Y - lambda*Yhat) / ((w/z)^2 - var(lambda*Yhat_unlabeled)/N))",
    }
    if ppi_items is None:
        out["reason"] = (
            f"unattainable with {N} unlabelled items: the judge-only part alone gives a half-width of "
            f"{z * math.sqrt(var_f / N):.4g}"
        )
    return out
