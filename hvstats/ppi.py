"""Prediction-powered inference (PPI++) for the mean of a field, with a judge as predictor.

Angelopoulos, Bates, Fannjiang, Jordan and Zrnic, "Prediction-powered inference", Science
382 (2023), Section 2 (mean estimation); power tuning from Angelopoulos, Duchi and Zrnic,
"PPI++: Efficient Prediction-Powered Inference" (arXiv:2311.01453, 2023), the power-tuned
estimator and its optimal lambda, specialised to the mean.  The formulas are those of ppi-python 0.2.3's
``ppi_mean_pointestimate`` / ``ppi_mean_ci`` with ``lam=None`` (power tuned, clipped to
[0, 1], ``lam_optim_mode="overall"``; from 100 labelled items on, ``lam=N/(n+N)`` below: "Small samples") and ``classical_mean_ci``, for one dimension and unit
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
than :data:`SMALL_SAMPLE_LABELS` (100) labelled items, ``lambda = N / (n + N)`` instead of the
power-tuned value (0 for a constant judge, whose lambda changes nothing).  The tuned ``lambda``
is fitted on the labels whose variance it minimises, so that variance is optimistic when ``n``
is small: over 2,000 simulated studies per setting (0/1 labels with mean 0.3, 200 or 2,000
items, four judges) the tuned interval covered 0.91-0.94 with 20-80 labels, a lambda fixed
before the labels about 0.01 more (``perf/active_defaults_sim.py``, docs/benchmarks.md
"Defaults that keep coverage").  ``N / (n + N)`` is PPI++'s optimal lambda
``cov(Y, Yh) / ((1 + n / N) var(Yh))`` for a calibrated judge (``cov(Y, Yh) = var(Yh)``), so it
depends on the counts only and keeps the interval's coverage like any fixed lambda; with many
unlabelled items it is plain PPI's ``lambda = 1``, and with few (the pool about as large as the
sample) it stops the judge's own noise on the unlabelled mean, ``lambda^2 var(Yu) / N``, from
costing more than the judge saves (``lambda = 1`` there made even a good judge cost labels).
The price: a judge on another scale than the label (1-5 against 0/1) gives a wider interval
than the tuned lambda; ``small_sample_labels=0`` tunes at every ``n``.  Below about 30 labels of
a rare 0/1 outcome no ``lambda`` reaches 94%: the normal approximation itself is the limit there.

Budget advice (documented choice, not in the papers): the labelled items needed for a CI
half-width ``w`` at the same ``lambda`` and the same unlabelled pool, from the PPI variance
``w^2 = z^2 (sigma_f^2 / N + sigma_D^2 / n)``:
``n_w = ceil(sigma_D^2 / ((w / z)^2 - sigma_f^2 / N))`` (unattainable when
``(w / z)^2 <= sigma_f^2 / N``: the unlabelled pool alone is too small); the classical
``n_w = ceil(sigma_Y^2 (z / w)^2)``.  Human ratings = items x the mean number of human
ratings per labelled item.

Human labels saved (HV's headline, from PPI++'s variance ratio): at the half-width the PPI++
interval has on the pool at hand, ``w = z se``, humans alone need ``ceil(sigma_Y^2 / se^2) =
ceil(n r)`` labelled items, ``r = (sigma_Y^2 / n) / se^2`` the ratio of the classical variance to
the PPI++ variance (PPI++, the power-tuned mean above: ``se^2 = sigma_D^2 / n + lambda^2 var(Yu) / N``);
with the judge the ``n`` items at hand suffice, so ``saved = ceil(n r) - n`` items (human
ratings: x the ratings per item). It is the budget advice above at ``w = z se``; zero when the
judge does not narrow the interval (lambda = 0), negative when it widens it (an estimated
lambda can).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy.stats import norm

DEFAULT_ALPHA = 0.05
# Fewer labelled items than this: lambda = N/(n+N), not power tuned (module docstring, "Small samples").
SMALL_SAMPLE_LABELS = 100


def ppi_lambda(y: np.ndarray, yhat: np.ndarray, yhat_unlabeled: np.ndarray) -> float:
    """Power-tuning parameter (PPI++ optimal lambda for the mean, as ppi-python's ``_calc_lam_glm``
    with ``clip=True``); 0 when the judge is constant."""
    n, N = len(y), len(yhat_unlabeled)
    if np.ptp(np.concatenate([yhat, yhat_unlabeled])) == 0:
        # a constant judge: its variance is zero, but computed around a rounded theta_1 it can be
        # a tiny positive number that would make the ratio anything
        return 0.0
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
    ``yhat_unlabeled``: the judge on the unlabelled items.  ``lam`` None = power tuned, or N/(n+N)
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
        # fixed before the labels are seen ("Small samples"): N / (n + N), 0 for a constant judge
        constant = np.ptp(np.concatenate([Yh, Yu])) == 0
        lam_v, rule = (0.0 if constant else N / (n + N)), f"lambda = N/(n+N): fewer than {small_sample_labels} labels"
    else:
        lam_v, rule = ppi_lambda(Y, Yh, Yu), "power-tuned"
    est = float((lam_v * Yu).mean() + (Y - lam_v * Yh).mean())
    var_f = float((lam_v * Yu).std() ** 2)
    var_d = float((Y - lam_v * Yh).std() ** 2)
    se = math.sqrt(var_f / N + var_d / n)
    out.update(estimate=est, se=se, ci=[est - z * se, est + z * se], lambda_rule=rule, **{"lambda": lam_v})
    out["labels_saved"] = labels_saved(n, float(Y.var()), se, z, ratings_per_item)
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


def labels_saved(n: int, var_y: float, se: float, z: float, ratings_per_item: float | None = None) -> dict[str, Any]:
    """Human labels the judge saves on the pool at hand (module docstring): the labelled items
    humans alone need for the PPI++ interval's half-width ``z se``, minus the ``n`` at hand."""
    rpi = ratings_per_item if ratings_per_item else 1.0
    if se <= 0:  # every label and judge value equal: no interval to match
        return {"items": None, "reason": "no spread: the interval has zero width"}
    ratio = (var_y / n) / se**2
    # the small tolerance keeps a ratio of exactly 1 (lambda = 0) from rounding up to one item
    human_only = math.ceil(n * ratio - 1e-9)
    saved = human_only - n
    return {
        "items": saved,
        "human_ratings": math.ceil(saved * rpi) if saved >= 0 else -math.ceil(-saved * rpi),
        "human_only_items": human_only,
        "labelled_items": n,
        "variance_ratio": ratio,
        "half_width": z * se,
        "ratings_per_item": rpi,
    }


def judge_labels_saved(ppi_by_field: Mapping[str, Mapping[str, Any] | None]) -> dict[str, Any] | None:
    """One judge's headline over its fields (``{field: ppi_mean result}``): the fewest labels it
    saves on any field with a PPI++ estimate (the saving that holds on every one of them), the
    field that sets it, and each field's. None when no field has one."""
    per = {
        f: p["labels_saved"]
        for f, p in ppi_by_field.items()
        if p and (p.get("labels_saved") or {}).get("items") is not None
    }
    if not per:
        return None
    field = min(per, key=lambda f: (per[f]["items"], f))
    return {
        "items": per[field]["items"],
        "human_ratings": per[field]["human_ratings"],
        "field": field,
        "per_field": {f: v["items"] for f, v in per.items()},
        "rule": "the fewest human-labelled items saved over the judge's fields with a PPI++ mean, at the "
        "half-width PPI++ reaches on the pool at hand (labels humans alone need for it, minus those at hand)",
    }


def attach_labels_saved(
    answers: list[dict[str, Any]], ppi: Mapping[str, Mapping[str, Mapping[str, Any] | None]]
) -> list[dict[str, Any]]:
    """Each judge's answer (``hvstats.answers``) with its headline ``labels_saved`` (None where no
    field has a PPI++ mean); ``ppi``: ``{field: {judge: ppi_mean result}}``."""
    for a in answers:
        a["labels_saved"] = judge_labels_saved({f: per.get(a["judge"]) for f, per in ppi.items()})
    return answers
