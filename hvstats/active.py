"""Active statistical inference for the mean of a field: sample items for human labelling with
probabilities that grow with the judge's uncertainty, correct with inverse-probability weights.

Zrnic and Candès, "Active Statistical Inference", ICML 2024 (arXiv:2403.03208); reference
code github.com/tijana-zrnic/active-inference (notebooks ``pew79-post-election-research*``,
``alphafold-ptm``, ``census-analysis*``).  Section names below are the paper's; equation numbers
are not cited because they differ between the arXiv versions.

Setting: ``N`` items, the judge's value ``f_i`` on every item, a sampling probability ``pi_i``
(known, > 0), the draw ``xi_i ~ Bernoulli(pi_i)`` and the human value ``Y_i`` where ``xi_i = 1``.

- **Sampling rule** (the paper's "optimal sampling rule" for a mean, batch setting):
  ``pi_i`` proportional to ``u_i``, an estimate of ``sqrt(E[(Y - f(X))^2 | X_i])`` (the root
  expected squared error of the judge on the item; for a calibrated 0/1 probability ``p``,
  ``sqrt(p (1 - p))``, :func:`binary_uncertainty`), scaled to the expected budget
  ``sum(pi) = n_b``; optionally mixed with the uniform rule as in the paper's experiments,
  ``(1 - tau) pi_active + tau n_b / N``; then clipped to ``[floor, 1]`` with the excess
  redistributed so that ``sum(pi) = n_b`` still holds (:func:`sampling_probabilities`).  The
  floor (default ``0.05 n_b / N``, a documented choice, not in the paper) keeps every item
  reachable: the estimator is unbiased only if ``pi_i > 0`` for every item, and a tiny
  ``pi_i`` makes a rare label weigh ``1 / pi_i``.
- **Estimator** (the paper's batch active estimator with power tuning, after PPI++):
  ``theta = mean_i(lambda f_i + (Y_i - lambda f_i) xi_i / pi_i)``.  Writing
  ``A_i = Y_i xi_i / pi_i`` and ``B_i = f_i (xi_i / pi_i - 1)``, the increment is
  ``Z_i = A_i - lambda B_i``, unbiased for ``E[Y]`` for every fixed ``lambda`` (``E[B] = 0``).
  ``lambda = cov_0(A, B) / var_0(B)`` (divisor ``N``), the value that minimises the estimated
  variance ``var_0(Z)``; 0 when ``var_0(B) = 0`` (every ``pi = 1``: then ``Z_i = Y_i`` whatever
  ``lambda``).  Not clipped to [0, 1] by default (issue 34): ``A`` and ``B`` are uncentred, so
  with a judge on a narrower scale than the human value the optimum is well above 1 (about 4
  for a judge reporting ``f / 4``), and clipping it widened the interval 1.18-1.25x with no
  gain in coverage (``perf/active_defaults_sim.py``, docs/benchmarks.md).  ``lambda = 0`` is
  the inverse-probability-weighted human-only estimate, 1 the reference code's active estimator.
- **Small samples** (issue 34, a documented choice from simulation, not in the paper): with
  fewer than :data:`SMALL_SAMPLE_LABELS` (200) labelled items, ``lambda = 1`` instead of the
  tuned value.  The tuned ``lambda`` is fitted on the same draws as the variance it minimises,
  which makes that variance optimistic, more so than in uniform PPI++ because the weights
  ``1 / pi`` vary: over 2,000 simulated studies per setting the tuned interval covered
  0.89-0.94 with 20-60 labels and 0.934-0.953 with 120-150 (below 0.94 in 5 of 8 settings),
  ``lambda = 1`` 0.94-0.96 and 0.942-0.956; with 200 labels the tuned one covered 0.939-0.950,
  with 300 0.943-0.958 (docs/benchmarks.md "Defaults that keep coverage").  The
  price: with a judge on another scale than the human value (1 + 4 f against a 0/1 label)
  ``lambda = 1`` is 3.5-5x wider; pass ``small_sample_labels=0`` to tune anyway.
- **Interval** (the paper's CLT, Theorem 1 for the mean): ``se = sd_0(Z) / sqrt(N)`` (as the
  reference's ``np.std(...) / np.sqrt(n)``), ``theta -/+ z_{1 - alpha/2} se``.
- **Comparisons at the same number of human labels ``n``** (population moments estimated from
  the active sample with Hajek weights ``xi / pi``; the judge's moments from all ``N`` items):
  uniform PPI++ (``n`` labelled items drawn uniformly, the rest judge-only, :mod:`.ppi`'s
  variance ``lambda^2 var(f) / (N - n) + var(Y - lambda f) / n`` with its optimal lambda) and
  humans alone (``var(Y) / n``).  **Effective sample size**: the number of uniformly drawn
  human labels that give the active variance, with PPI++ and with humans alone; labels saved
  = effective size - ``n``.
- **Sequential / batched** (the paper's sequential section): the items are split into rounds
  (at random, before labelling: :func:`plan_rounds`); round ``r`` uses probabilities (and
  possibly a judge value) computed from the labels of rounds ``< r`` only
  (:func:`refit_uncertainty`).  Each increment is then unbiased given the past, the
  increments form a martingale-difference sequence and the estimate is their average over
  all items with the same variance estimate (martingale CLT), as the reference's
  sequential notebooks do (``increments_active``).
- **Stopping at a target half-width**: the fixed-``N`` CLT interval does *not* cover when the
  number of rounds is chosen from the data.  :func:`active_sequential` with ``stop_half_width``
  uses, for the decision and the reported interval, the asymptotic confidence sequence of
  Waudby-Smith, Arbour, Sinha, Kennedy and Ramdas ("Time-uniform central limit theory and
  asymptotic confidence sequences", Annals of Statistics 2024, arXiv:2103.06476; the
  two-sided normal-mixture boundary, Theorem 2.2):
  ``sd_0(Z) sqrt(2 (t rho^2 + 1) / (t^2 rho^2) log(sqrt(t rho^2 + 1) / alpha))`` with ``t``
  the items processed so far and ``rho^2 = (-2 log alpha + log(-2 log alpha + 1)) / t_opt``
  tuned for ``t_opt`` = the planned number of items.  Its guarantee is asymptotic and
  time-uniform: coverage at the (data-dependent) stopping round tends to ``1 - alpha`` as the
  number of items grows, under the martingale condition that the increments' conditional
  variance stabilises; there is no finite-sample guarantee.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.stats import norm

from .ppi import SMALL_SAMPLE_LABELS as PPI_SMALL_SAMPLE_LABELS

DEFAULT_ALPHA = 0.05
DEFAULT_FLOOR_FRACTION = 0.05  # floor = DEFAULT_FLOOR_FRACTION * n_b / N
# Weight of the uniform rule (issue 34): with an uncertainty that carries no signal, tau = 0
# needed 41-130% more labels than uniform PPI++ and, with lambda tuned, covered 0.911-0.922
# (2,000 items, 200 labels); tau = 0.5 needed 3-19% more and covered 0.939-0.944, while an
# informative uncertainty still saves 11-12% (16-17% at tau = 0).  perf/active_defaults_sim.py,
# docs/benchmarks.md "Defaults that keep coverage".
DEFAULT_TAU = 0.5
# Fewer labelled items than this: lambda = 1, not power tuned (module docstring, "Small samples").
SMALL_SAMPLE_LABELS = 200

STOP_GUARANTEE = (
    "asymptotic confidence sequence (Waudby-Smith et al., 2024): the interval at a round chosen by "
    "the stopping rule covers with probability tending to 1 - alpha as items grow; not a finite-sample "
    "guarantee. The fixed-sample CLT interval ('ci') is valid only when the number of rounds was fixed in advance."
)


# ---- sampling -------------------------------------------------------------------------------


def binary_uncertainty(p: np.ndarray) -> np.ndarray:
    """``sqrt(p (1 - p))``: the root expected squared error of a calibrated probability ``p`` of
    a 0/1 outcome, the paper's optimal-rule input for the mean of a binary label."""
    q = np.clip(np.asarray(p, dtype=float), 0.0, 1.0)
    return np.sqrt(q * (1.0 - q))


def sampling_probabilities(
    uncertainty: np.ndarray,
    budget: float,
    floor: float | None = None,
    tau: float = DEFAULT_TAU,
) -> np.ndarray:
    """Each item's sampling probability for an expected budget of ``budget`` human-labelled
    items (module docstring, "Sampling rule").

    ``uncertainty``: ``u_i >= 0`` per item (an estimate of the judge's root expected squared
    error); all zero = the uniform rule.  ``floor``: the smallest probability, default
    ``DEFAULT_FLOOR_FRACTION * budget / N``; must be in (0, budget / N].  ``tau`` in [0, 1]:
    weight of the uniform rule ``budget / N`` (default :data:`DEFAULT_TAU`).  The result ``pi`` is
    ``clip(c * p_i, floor, 1)`` with ``p`` the mixed rule and ``c`` the scale for which
    ``sum(pi) = budget`` (found by bisection, then solved exactly on the items strictly
    between the bounds), i.e. the excess above 1 and the deficit below the floor are
    redistributed over the other items in proportion to ``p``."""
    u = np.asarray(uncertainty, dtype=float).ravel()
    N = len(u)
    if N == 0:
        raise ValueError("no items")
    if not np.isfinite(u).all() or (u < 0).any():
        raise ValueError("uncertainty must be finite and >= 0")
    if not 0 < budget <= N:
        raise ValueError(f"budget must be in (0, {N}] (expected number of labelled items)")
    if not 0 <= tau <= 1:
        raise ValueError("tau must be in [0, 1]")
    base = budget / N
    fl = DEFAULT_FLOOR_FRACTION * base if floor is None else float(floor)
    if not 0 < fl <= base * (1 + 1e-12):
        raise ValueError(f"floor must be in (0, budget / N = {base:.6g}]")
    if budget >= N:
        return np.ones(N)
    total = u.sum()
    active = u * (budget / total) if total > 0 else np.full(N, base)
    p = (1 - tau) * active + tau * base
    if (p <= 0).all():
        p = np.full(N, base)

    def mass(c: float) -> float:
        return float(np.clip(c * p, fl, 1.0).sum())

    # the items with p = 0 stay at the floor; if the others at 1 cannot reach the budget, lift them
    reachable = float((p > 0).sum()) + fl * float((p == 0).sum())
    if reachable < budget:
        p = np.where(p > 0, p, p[p > 0].min())
    lo, hi = 0.0, 1.0
    while mass(hi) < budget:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mass(mid) < budget:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * hi:
            break
    c = hi
    pi = np.clip(c * p, fl, 1.0)
    free = (c * p > fl) & (c * p < 1.0)
    if free.any():  # exact sum on the free items
        rest = budget - float(pi[~free].sum())
        pi[free] = np.clip(p[free] * (rest / p[free].sum()), fl, 1.0)
    return pi


def draw_sample(pi: np.ndarray, seed: int | np.random.Generator | None) -> np.ndarray:
    """``xi_i ~ Bernoulli(pi_i)``, independent across items, from ``numpy.random.default_rng(seed)``
    (one uniform per item: ``xi = U < pi``).  Returns a 0/1 int array."""
    q = np.asarray(pi, dtype=float).ravel()
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    return (rng.random(len(q)) < q).astype(int)


# ---- estimator ------------------------------------------------------------------------------


def _inputs(y, yhat, xi, pi) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    f = np.asarray(yhat, dtype=float).ravel()
    Y = np.asarray(y, dtype=float).ravel()
    P = np.asarray(pi, dtype=float).ravel()
    N = len(f)
    if len(Y) != N or len(P) != N:
        raise ValueError("y, yhat and pi need one value per item (y NaN where not labelled)")
    X = (~np.isnan(Y)).astype(int) if xi is None else np.asarray(xi, dtype=float).ravel()
    if len(X) != N or not np.isin(X, (0, 1)).all():
        raise ValueError("xi must be 0/1, one per item")
    X = X.astype(int)
    if np.isnan(f).any():
        raise ValueError("the judge value is missing on some items")
    if np.isnan(P).any() or (P <= 0).any() or (P > 1).any():
        raise ValueError("pi must be in (0, 1] for every item (the probability it was sampled with)")
    if np.isnan(Y[X == 1]).any():
        raise ValueError("a sampled item (xi = 1) has no human value")
    return np.where(X == 1, Y, 0.0), f, X, P


def active_lambda(y: np.ndarray, yhat: np.ndarray, xi: np.ndarray | None, pi: np.ndarray, clip: bool = False) -> float:
    """Power-tuning parameter: ``cov_0(A, B) / var_0(B)`` with ``A = Y xi / pi`` and
    ``B = f (xi / pi - 1)`` (module docstring), clipped to [0, 1] only with ``clip``; 0 when
    ``var_0(B) = 0``.  The small-sample rule is :func:`active_mean`'s, not applied here."""
    Y, f, X, P = _inputs(y, yhat, xi, pi)
    return _lambda(Y * X / P, f * (X / P - 1.0), clip)


def _lambda(A: np.ndarray, B: np.ndarray, clip: bool) -> float:
    Bc = B - B.mean()
    vb = float(Bc @ Bc)
    if not np.isfinite(vb) or vb <= 1e-300:
        return 0.0
    lam = float((A - A.mean()) @ Bc) / vb
    return float(np.clip(lam, 0.0, 1.0)) if clip else lam


def active_mean(
    y: np.ndarray,
    yhat: np.ndarray,
    pi: np.ndarray,
    xi: np.ndarray | None = None,
    alpha: float = DEFAULT_ALPHA,
    lam: float | None = None,
    clip_lambda: bool = False,
    compare: bool = True,
    small_sample_labels: int = SMALL_SAMPLE_LABELS,
) -> dict[str, Any]:
    """Active (inverse-probability-weighted, power-tuned) estimate of the mean of ``Y`` over
    all items, with its CLT interval (module docstring).

    ``y``: human value per item, NaN (or anything) where ``xi = 0``; ``yhat``: the judge on
    every item; ``pi``: each item's sampling probability; ``xi``: 0/1 sampled, default
    ``~isnan(y)``.  ``lam`` None = power tuned (unclipped unless ``clip_lambda``), or 1 with
    fewer than ``small_sample_labels`` labelled items (module docstring, "Small samples").
    Returns ``estimate``, ``se``, ``ci``, ``half_width``, ``lambda``, ``lambda_rule`` (how
    ``lambda`` was chosen, in words), ``variance`` (of the estimate), ``n_items``, ``n_labeled``,
    ``expected_labels`` (``sum(pi)``), ``alpha``; ``human_only`` (the same draws with
    ``lambda = 0``: Horvitz-Thompson); with ``compare``, ``uniform`` (projections at the same
    number of labels and effective sample sizes, :func:`compare_uniform`).  Fewer than 2
    labelled items: ``estimate`` None with a ``reason``."""
    Y, f, X, P = _inputs(y, yhat, xi, pi)
    N, n = len(f), int(X.sum())
    z = float(norm.ppf(1 - alpha / 2))
    out: dict[str, Any] = {
        "estimate": None,
        "se": None,
        "ci": None,
        "half_width": None,
        "lambda": None,
        "lambda_rule": None,
        "variance": None,
        "n_items": N,
        "n_labeled": n,
        "expected_labels": float(P.sum()),
        "alpha": alpha,
    }
    if n < 2:
        out["reason"] = f"undefined: {n} labelled item{'s' if n != 1 else ''} (at least 2 needed)"
        return out
    A = Y * X / P
    B = f * (X / P - 1.0)
    lam_v, rule = lambda_choice(lam, n, small_sample_labels, lambda: _lambda(A, B, clip_lambda))
    Z = A - lam_v * B
    est = float(Z.mean())
    se = float(Z.std() / math.sqrt(N))
    hse = float(A.std() / math.sqrt(N))
    ha = float(A.mean())
    out.update(
        estimate=est,
        se=se,
        ci=[est - z * se, est + z * se],
        half_width=z * se,
        variance=se**2,
        lambda_rule=rule,
        human_only={"estimate": ha, "se": hse, "ci": [ha - z * hse, ha + z * hse], "lambda": 0.0},
        **{"lambda": lam_v},
    )
    if compare:
        out["uniform"] = compare_uniform(y, yhat, pi, xi, se, alpha)
    return out


def lambda_choice(
    lam: float | None, n_labeled: int, small_sample_labels: int, tuned: Callable[[], float]
) -> tuple[float, str]:
    """``(lambda, rule)``: the given ``lam``; 1 with fewer than ``small_sample_labels``
    labelled items (module docstring, "Small samples"); else ``tuned()``.  ``rule`` says which,
    in the words the outputs show ("lambda = 1: fewer than 100 labels")."""
    if lam is not None:
        return float(lam), "given"
    if n_labeled < small_sample_labels:
        return 1.0, f"lambda = 1: fewer than {small_sample_labels} labels"
    return tuned(), "power-tuned"


def population_moments(
    y: np.ndarray, yhat: np.ndarray, pi: np.ndarray, xi: np.ndarray | None = None
) -> dict[str, float]:
    """Moments of ``Y`` and ``f`` over the items, estimated from the active sample with Hajek
    weights ``xi / pi`` (``var_f`` from all items): ``mean_y``, ``var_y``, ``cov_yf``,
    ``var_f_weighted`` (the pair's moments under the same weights) and ``var_f``."""
    Y, f, X, P = _inputs(y, yhat, xi, pi)
    w = X / P
    sw = w.sum()
    if sw <= 0:
        raise ValueError("no labelled items")
    my = float(w @ Y / sw)
    mf = float(w @ f / sw)
    return {
        "mean_y": my,
        "var_y": float(w @ (Y - my) ** 2 / sw),
        "cov_yf": float(w @ ((Y - my) * (f - mf)) / sw),
        "var_f_weighted": float(w @ (f - mf) ** 2 / sw),
        "var_f": float(f.var()),
    }


def uniform_ppi_se(m: np.ndarray | float, N: int, mom: dict[str, float]) -> np.ndarray:
    """Standard error of uniform PPI++ (:mod:`.ppi`) with ``m`` uniformly drawn labelled items
    and ``N - m`` judge-only ones, at its optimal (clipped) lambda, or ``N_u / (m + N_u)`` with fewer than
    :data:`.ppi.SMALL_SAMPLE_LABELS` labels as :func:`.ppi.ppi_mean` does, from :func:`population_moments`."""
    m = np.asarray(m, dtype=float)
    Nu = N - m
    vf = mom["var_f"]
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(vf > 0, mom["cov_yf"] / ((1 + m / Nu) * vf), 0.0)
    lam = np.clip(np.nan_to_num(lam), 0.0, 1.0)
    # below the small-sample count, ppi_mean's lambda fixed from the counts (0 for a constant judge)
    lam = np.where(m < PPI_SMALL_SAMPLE_LABELS, np.where(vf > 0, Nu / (m + Nu), 0.0), lam)
    var_d = np.maximum(mom["var_y"] - 2 * lam * mom["cov_yf"] + lam**2 * mom["var_f_weighted"], 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        v = lam**2 * vf / Nu + var_d / m
    return np.sqrt(v)


def compare_uniform(
    y: np.ndarray,
    yhat: np.ndarray,
    pi: np.ndarray,
    xi: np.ndarray | None,
    se_active: float,
    alpha: float = DEFAULT_ALPHA,
) -> dict[str, Any]:
    """What uniform sampling would give (module docstring, "Comparisons"): at the same number
    ``n`` of labels, the standard error and half-width of uniform PPI++ and of humans alone;
    the effective sample sizes (uniform labels for the active standard error ``se_active``)
    and the labels saved.  ``ppi_effective_labels`` None = uniform PPI++ would need more
    than ``N - 1`` labels."""
    _, f, X, _ = _inputs(y, yhat, xi, pi)
    N, n = len(f), int(X.sum())
    z = float(norm.ppf(1 - alpha / 2))
    mom = population_moments(y, yhat, pi, xi)
    out: dict[str, Any] = {"moments": mom}
    ppi_se = float(uniform_ppi_se(n, N, mom)) if n < N else None
    cl_se = math.sqrt(mom["var_y"] / n)
    out.update(
        ppi_se=ppi_se,
        ppi_half_width=None if ppi_se is None else z * ppi_se,
        human_only_se=cl_se,
        human_only_half_width=z * cl_se,
    )
    target = se_active**2
    if se_active <= 1e-12 * max(1.0, abs(mom["mean_y"])):  # zero up to rounding
        out.update(
            ppi_effective_labels=None,
            ppi_labels_saved=None,
            human_only_effective_labels=None,
            human_only_labels_saved=None,
            reason="undefined: the active estimate has zero estimated variance",
        )
        return out
    ms = np.arange(2, N)
    ok = uniform_ppi_se(ms, N, mom) ** 2 <= target * (1 + 1e-12)
    m_ppi = int(ms[np.argmax(ok)]) if ok.any() else None
    m_cl = mom["var_y"] / target
    out.update(
        ppi_effective_labels=m_ppi,
        ppi_labels_saved=None if m_ppi is None else m_ppi - n,
        human_only_effective_labels=m_cl,
        human_only_labels_saved=m_cl - n,
    )
    return out


# ---- strata and rates -----------------------------------------------------------------------


def active_by_stratum(
    y: np.ndarray,
    yhat: np.ndarray,
    pi: np.ndarray,
    strata: np.ndarray,
    xi: np.ndarray | None = None,
    alpha: float = DEFAULT_ALPHA,
    compare: bool = True,
) -> dict[str, dict[str, Any]]:
    """:func:`active_mean` within each stratum (its own lambda), keyed by ``str(stratum)``.
    ``pi`` stays the probability each item was sampled with (whatever rule drew it).  A
    stratum with fewer than 2 labelled items gets ``estimate`` None and a ``reason``."""
    Y, f, X, P = _inputs(y, yhat, xi, pi)
    s = np.asarray(strata, dtype=object).ravel()
    if len(s) != len(f):
        raise ValueError("strata needs one value per item")
    keys = [str(k) for k in s]
    out: dict[str, dict[str, Any]] = {}
    for g in sorted(set(keys)):
        m = np.array([k == g for k in keys])
        out[g] = active_mean(Y[m], f[m], P[m], X[m], alpha=alpha, compare=compare)
    return out


def active_rate(
    outcome: np.ndarray,
    judge: np.ndarray,
    pi: np.ndarray,
    xi: np.ndarray | None = None,
    alpha: float = DEFAULT_ALPHA,
    compare: bool = True,
) -> dict[str, Any]:
    """Active estimate of an acceptance rate: :func:`active_mean` of a 0/1 human outcome with
    the judge's 0/1 verdict or its probability in [0, 1] as ``f``."""
    Y, f, X, _ = _inputs(outcome, judge, xi, pi)
    if not np.isin(Y[X == 1], (0.0, 1.0)).all():
        raise ValueError("the outcome must be 0/1 on labelled items")
    if (f < 0).any() or (f > 1).any():
        raise ValueError("the judge's value must be in [0, 1]")
    return active_mean(outcome, judge, pi, xi, alpha=alpha, compare=compare)


# ---- sequential / batched -------------------------------------------------------------------


def plan_rounds(n_items: int, n_rounds: int, seed: int | np.random.Generator | None) -> np.ndarray:
    """Random split of the items into ``n_rounds`` rounds of (nearly) equal size, fixed before
    any labelling; returns the round index (0-based) of each item."""
    if n_rounds < 1 or n_rounds > n_items:
        raise ValueError("n_rounds must be in [1, n_items]")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    r = np.arange(n_items) * n_rounds // n_items
    return r[rng.permutation(n_items)]


def refit_uncertainty(
    prior_done: np.ndarray,
    yhat: np.ndarray,
    y: np.ndarray,
    xi: np.ndarray,
    pi: np.ndarray,
    prior_next: np.ndarray,
    bins: int = 5,
    min_labels: int = 5,
) -> np.ndarray:
    """Uncertainty for the items of a later round, refitted on the labels of the rounds done.

    ``prior_done`` / ``prior_next``: a prior uncertainty (e.g. the judge's own) of the items
    already processed and of the items to sample next; ``yhat``, ``y``, ``xi``, ``pi``: the
    processed items.  The items are grouped in ``bins`` quantile bins of the prior (edges from
    both sets) and each bin gets ``sqrt(mean of (Y - f)^2)`` over its labelled items with Hajek
    weights ``xi / pi`` (an estimate of the root expected squared error, the optimal rule's
    input), shrunk towards the overall value as if ``min_labels`` more labels had it (so a bin
    whose few labels all agree with the judge does not get an uncertainty near 0 and weights
    ``1 / pi`` near the cap); a bin with fewer than ``min_labels`` labels gets the overall value.  It uses past
    labels only, so the next round's probabilities are fixed given the past, as the
    sequential guarantee requires."""
    Y, f, X, P = _inputs(y, yhat, xi, pi)
    ud = np.asarray(prior_done, dtype=float).ravel()
    un = np.asarray(prior_next, dtype=float).ravel()
    if len(ud) != len(f):
        raise ValueError("prior_done needs one value per processed item")
    w = X / P
    r2 = (Y - f) ** 2
    overall = math.sqrt(float(w @ r2 / w.sum())) if w.sum() > 0 else 1.0
    edges = np.unique(np.quantile(np.concatenate([ud, un]), np.linspace(0, 1, bins + 1)))
    nb = max(len(edges) - 1, 1)

    def bin_of(v: np.ndarray) -> np.ndarray:
        return np.clip(np.searchsorted(edges, v, side="right") - 1, 0, nb - 1)

    bd = bin_of(ud)
    val = np.full(nb, overall)
    for j in range(nb):
        m = (bd == j) & (X == 1)
        k = int(m.sum())
        if k >= min_labels:  # shrunk towards the overall value with min_labels pseudo-labels
            v = float(w[m] @ r2[m] / w[m].sum())
            val[j] = math.sqrt((k * v + min_labels * overall**2) / (k + min_labels))
    return val[bin_of(un)]


def asymptotic_cs_half_width(sd: float, t: int, alpha: float = DEFAULT_ALPHA, t_opt: int | None = None) -> float:
    """Half-width of the two-sided asymptotic confidence sequence at time ``t`` (module
    docstring, "Stopping"): ``sd sqrt(2 (t rho^2 + 1) / (t^2 rho^2) log(sqrt(t rho^2 + 1) / alpha))``,
    ``rho^2 = (-2 log alpha + log(-2 log alpha + 1)) / t_opt`` (default ``t_opt = t``)."""
    t_opt = t if t_opt is None else t_opt
    la = -2 * math.log(alpha)
    rho2 = (la + math.log(la + 1)) / t_opt
    return sd * math.sqrt(2 * (t * rho2 + 1) / (t**2 * rho2) * math.log(math.sqrt(t * rho2 + 1) / alpha))


def active_sequential(
    y: np.ndarray,
    yhat: np.ndarray,
    pi: np.ndarray,
    rounds: np.ndarray,
    xi: np.ndarray | None = None,
    alpha: float = DEFAULT_ALPHA,
    lam: float | None = None,
    stop_half_width: float | None = None,
    planned_items: int | None = None,
    compare: bool = True,
) -> dict[str, Any]:
    """Active estimate over the rounds done so far (module docstring, "Sequential"): ``pi`` and
    ``yhat`` of each item are those its round used (computed from earlier rounds only);
    ``rounds``: the round index of each item (only the rounds done are passed).  The estimate
    is the average of all increments (:func:`active_mean` on the rounds' items, one lambda),
    with ``rounds_summary`` per round (items, labels, expected labels, the round's own mean
    increment).  With ``stop_half_width``: ``cs`` / ``cs_half_width`` (the asymptotic
    confidence sequence, tuned for ``planned_items``, default the items so far), ``stop``
    (``cs_half_width <= stop_half_width``) and ``stop_guarantee`` (:data:`STOP_GUARANTEE`);
    report ``cs``, not ``ci``, once the rule has been used to decide."""
    Y, f, X, P = _inputs(y, yhat, xi, pi)
    r = np.asarray(rounds).ravel()
    if len(r) != len(f):
        raise ValueError("rounds needs one value per item")
    out = active_mean(Y, f, P, X, alpha=alpha, lam=lam, compare=compare)
    lam_v = out["lambda"] if out["lambda"] is not None else 0.0
    Z = Y * X / P - lam_v * f * (X / P - 1.0)
    summary = []
    for g in sorted(set(r.tolist())):
        m = r == g
        summary.append(
            {
                "round": g,
                "n_items": int(m.sum()),
                "n_labeled": int(X[m].sum()),
                "expected_labels": float(P[m].sum()),
                "mean_increment": float(Z[m].mean()),
            }
        )
    out["method"] = "sequential"
    out["rounds_summary"] = summary
    if stop_half_width is not None:
        if stop_half_width <= 0:
            raise ValueError("stop_half_width must be positive")
        if out["estimate"] is None:
            out.update(cs=None, cs_half_width=None, stop=False, stop_guarantee=STOP_GUARANTEE)
            return out
        N = len(f)
        hw = asymptotic_cs_half_width(float(Z.std()), N, alpha, planned_items or N)
        est = out["estimate"]
        out.update(
            cs=[est - hw, est + hw],
            cs_half_width=hw,
            stop=bool(hw <= stop_half_width),
            stop_half_width=stop_half_width,
            stop_guarantee=STOP_GUARANTEE,
        )
    return out
