"""The Alternative Annotator Test (alt-test) for an LLM judge against a panel of humans.

Calderon, Reichart and Dror (ACL 2025), "The Alternative Annotator Test for LLM-as-a-Judge:
How to Statistically Justify Replacing Human Annotators with LLMs", Section 3 (the procedure:
alignment scoring function, indicators, t-test, BY correction, winning rate omega and
advantage probability rho) and the reference implementation ``alt_test`` of github.com/nitaytech/AltTest
(``alt_test_example.ipynb``).  Pure numpy/scipy, vectorised over items and humans.

Procedure, for an items x humans matrix ``H`` (NaN = no rating) and the judge's vector ``y``:

1. Keep items with at least ``min_humans_per_item`` (2) human ratings *and* a judge rating;
   items with a human rating that fail this are dropped and counted.
2. Leave one human ``h`` out.  On each kept item ``i`` that ``h`` rated, score ``h`` and the
   judge against the remaining humans ``R_i = {h' != h rated i}`` with the alignment scoring
   function ``S`` (reference ``accuracy`` / ``neg_rmse``).  ``R_i`` holds every other human who
   rated ``i``, tested or not: the paper scores against ``H[i]`` minus the held-out annotator,
   and its minimum of ``min_items_per_human`` items (step 4) only decides whether a human's own
   t-test is run; the reference implementation does the same (issue 34's decision,
   ``tests/hvstats/test_answers.py``):

   - accuracy (categorical fields): ``S(x, R_i) = |{h' in R_i : x = x_h'}| / |R_i|``;
   - negative RMSE (numeric fields): ``S(x, R_i) = -sqrt(mean_{h' in R_i} (x - x_h')^2)``.

3. Indicators: ``W^f_{h,i} = 1[S(y_i) >= S(x_hi)]`` (judge wins or ties),
   ``W^h_{h,i} = 1[S(x_hi) >= S(y_i)]`` (human wins or ties); ``d_{h,i} = W^h - W^f``.
4. Per human a one-sided one-sample t-test of ``H0: E[d_h] >= epsilon`` against
   ``H1: E[d_h] < epsilon``: ``t = (mean(d_h) - epsilon) / (sd(d_h) / sqrt(n_h))`` with
   ``n_h - 1`` degrees of freedom, ``p_h = F_t(t)`` (scipy's ``ttest_1samp(...,
   alternative="less")``).  Humans with fewer than ``min_items_per_human`` (30, the paper's
   minimum for the t-test's normal approximation) kept items are skipped.
5. Benjamini-Yekutieli step-up correction over the humans' p-values at ``q = 0.05``:
   reject the ``k`` smallest p-values where ``k = max{i : p_(i) <= i / m * q / H_m}``,
   ``H_m = sum_{j<=m} 1/j`` (Benjamini and Yekutieli 2001, Theorem 1.3).
6. Winning rate ``omega = #rejected / m``; the judge passes when ``omega >= 0.5``.
   Advantage probability ``rho = mean_h mean_i W^f_{h,i}``.

``epsilon`` is the cost-benefit margin; the paper's guidance (Section 3): 0.2 for
expert annotators, 0.15 for skilled annotators, 0.1 for crowd workers (FAQ "How do I
select the epsilon value?" of the reference repository).

Across several fields or strata ("environments", FAQ: "How to test if the LLM can be used in
several environments"), :func:`alt_test_joint` applies one BY correction to the p-values of
every (environment, human) and reports a winning rate per environment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
from scipy.special import stdtr

# the margin's settings live in .options (no numpy: the command line's help reads them); the
# platform imports them from here
from .options import DEFAULT_EPSILON, EPSILON_GUIDANCE
from .options import EPSILON_RANGE as EPSILON_RANGE
from .options import valid_epsilon as valid_epsilon

SCORINGS = ("accuracy", "neg_rmse")
DEFAULT_Q = 0.05
MIN_HUMANS_PER_ITEM = 2
MIN_ITEMS_PER_HUMAN = 30
PASS_RATE = 0.5


_BLOCK_ELEMENTS = 4_000_000  # items x humans x humans elements per chunk of the leave-one-out scores


class HumanTests(NamedTuple):
    """Per-human leave-one-out statistics of one (judge, panel)."""

    humans: list[str]
    items: np.ndarray  # kept items each human rated
    p_values: np.ndarray  # NaN for a skipped human
    advantage: np.ndarray  # mean of the judge-wins indicator per human (NaN when skipped)
    tested: np.ndarray  # bool: has >= min_items_per_human items
    n_items: int  # kept items
    n_dropped: int  # items with a human rating but < min humans or no judge rating


def by_rejections(p_values: Sequence[float] | np.ndarray, q: float = DEFAULT_Q) -> np.ndarray:
    """Benjamini-Yekutieli step-up (Benjamini and Yekutieli 2001, Theorem 1.3): boolean mask of
    rejected hypotheses.  Threshold of rank ``i`` (1-based) among ``m``: ``i / m * q / H_m``,
    written as the reference ``by_procedure`` computes it; NaN p-values are never rejected.
    Same decisions as ``statsmodels.stats.multitest.multipletests(method="fdr_by")``."""
    p = np.asarray(p_values, dtype=float)
    m = len(p)
    rejected = np.zeros(m, dtype=bool)
    if m == 0:
        return rejected
    order = np.argsort(p)
    h_m = np.sum(1.0 / np.arange(1, m + 1))
    thresholds = (np.arange(1, m + 1) / m) * (q / h_m)
    below = p[order] <= thresholds
    if below.any():
        k = int(np.nonzero(below)[0].max())
        rejected[order[: k + 1]] = True
    return rejected


def _accuracy_hits(H: np.ndarray, obs: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Accuracy scoring for a block of items: per (item, held-out human) the number of
    remaining humans agreeing with the held-out human and with the judge.  Both scores share
    the denominator ``|R_i|``, so comparing the counts is comparing the accuracies exactly."""
    m = H.shape[1]
    others = obs[:, None, :] & ~np.eye(m, dtype=bool)[None, :, :]  # [i, h, h']: h' in R_i of h
    human_hits = ((H[:, :, None] == H[:, None, :]) & others).sum(axis=2)
    judge_same = (y[:, None] == H) & obs  # [i, h']
    judge_hits = (judge_same[:, None, :] & others).sum(axis=2)
    return human_hits.astype(float), judge_hits.astype(float)


def _neg_rmse_scores(H: np.ndarray, obs: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Negative-RMSE scoring: per (item, held-out human) ``(human_score, judge_score)``.

    Items are grouped by their number of human ratings ``c``; the remaining ``c - 1`` ratings
    are packed in column order (the reference's order) so each sum of squares is the same
    floating-point sum as the reference's ``np.mean`` of a list of that length (ties between
    the two scores are decided exactly as there)."""
    n, m = H.shape
    hs = np.full((n, m), np.nan)
    js = np.full((n, m), np.nan)
    cnt = obs.sum(axis=1)
    for c in np.unique(cnt):
        if c < 2:
            continue
        rows = np.nonzero(cnt == c)[0]
        cols = np.argsort(~obs[rows], axis=1, kind="stable")[:, :c]  # observed columns, in order
        V = np.take_along_axis(H[rows], cols, axis=1)
        yc = y[rows]
        for s in range(c):
            rest = V[:, [k for k in range(c) if k != s]]
            dh = ((V[:, s, None] - rest) ** 2).sum(axis=1)
            dj = ((yc[:, None] - rest) ** 2).sum(axis=1)
            hs[rows, cols[:, s]] = -np.sqrt(dh / (c - 1))
            js[rows, cols[:, s]] = -np.sqrt(dj / (c - 1))
    return hs, js


def human_tests(
    H: np.ndarray,
    y: np.ndarray,
    humans: Sequence[str] | None = None,
    scoring: str = "accuracy",
    epsilon: float = DEFAULT_EPSILON,
    min_humans_per_item: int = MIN_HUMANS_PER_ITEM,
    min_items_per_human: int = MIN_ITEMS_PER_HUMAN,
) -> HumanTests:
    """Steps 1-4 of the procedure: per held-out human the kept items, the one-sided t-test
    p-value against ``epsilon`` and the judge's advantage share."""
    if scoring not in SCORINGS:
        raise ValueError(f"unknown scoring {scoring!r}; choose from {SCORINGS}")
    H = np.asarray(H, dtype=float)
    y = np.asarray(y, dtype=float)
    if H.ndim != 2 or y.shape != (H.shape[0],):
        raise ValueError("H must be items x humans and y one value per item")
    m = H.shape[1]
    names = list(humans) if humans is not None else [f"h{k}" for k in range(m)]
    obs_all = ~np.isnan(H)
    cnt = obs_all.sum(axis=1)
    keep = (cnt >= min_humans_per_item) & ~np.isnan(y)
    n_dropped = int((cnt >= 1).sum() - keep.sum())
    Hk, yk, obs = H[keep], y[keep], obs_all[keep]
    n = Hk.shape[0]
    n_h = obs.sum(axis=0)
    if scoring == "accuracy":
        hs, js = np.zeros((n, m)), np.zeros((n, m))
        step = max(1, _BLOCK_ELEMENTS // max(1, m * m))
        for s in range(0, n, step):
            sl = slice(s, s + step)
            hs[sl], js[sl] = _accuracy_hits(Hk[sl], obs[sl], yk[sl])
    else:
        hs, js = _neg_rmse_scores(Hk, obs, yk)
    judge_wins = (js >= hs) & obs
    human_wins = (hs >= js) & obs
    diffs = human_wins.astype(float) - judge_wins.astype(float)
    w_sum = judge_wins.sum(axis=0)
    d_sum = diffs.sum(axis=0)
    tested = n_h >= min_items_per_human
    p = np.full(m, np.nan)
    adv = np.full(m, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = d_sum / n_h
        # sample variance (ddof = 1) of d over the human's items, as scipy's ttest_1samp
        centred = np.where(obs, diffs - mean[None, :], 0.0)
        var = (centred**2).sum(axis=0) / (n_h - 1)
        t = (mean - epsilon) / np.sqrt(var / n_h)
        pv = stdtr(n_h - 1, t)
    p[tested] = pv[tested]
    adv[tested] = (w_sum / np.maximum(n_h, 1))[tested]
    return HumanTests(names, n_h.astype(int), p, adv, tested, int(n), n_dropped)


def _summary(
    tests: HumanTests, rejected: np.ndarray, scoring: str, epsilon: float, q: float, min_items: int
) -> dict[str, Any]:
    """JSON-ready result of one (judge, panel) given the BY decisions of its tested humans."""
    m_tested = int(tests.tested.sum())
    per_human: dict[str, Any] = {}
    skipped: dict[str, int] = {}
    k = 0
    for j, name in enumerate(tests.humans):
        if not tests.tested[j]:
            skipped[name] = int(tests.items[j])
            continue
        per_human[name] = {
            "items": int(tests.items[j]),
            "p_value": float(tests.p_values[j]) if np.isfinite(tests.p_values[j]) else None,
            "rejected": bool(rejected[k]),
            "advantage_probability": float(tests.advantage[j]),
        }
        k += 1
    out: dict[str, Any] = {
        "winning_rate": None,
        "advantage_probability": None,
        "passed": None,
        "epsilon": epsilon,
        "epsilon_guidance": dict(EPSILON_GUIDANCE),
        "scoring": scoring,
        "q": q,
        "correction": "benjamini_yekutieli",
        "n_items": tests.n_items,
        "n_items_dropped": tests.n_dropped,
        "n_humans": m_tested,
        "per_human": per_human,
        "skipped_humans": skipped,
    }
    if m_tested == 0:
        out["reason"] = f"undefined: no human with at least {min_items} items rated by another human and the judge"
        return out
    omega = int(rejected.sum()) / m_tested
    out["winning_rate"] = omega
    out["advantage_probability"] = float(np.mean(tests.advantage[tests.tested]))
    out["passed"] = bool(omega >= PASS_RATE)
    return out


def alt_test(
    H: np.ndarray,
    y: np.ndarray,
    humans: Sequence[str] | None = None,
    scoring: str = "accuracy",
    epsilon: float = DEFAULT_EPSILON,
    q: float = DEFAULT_Q,
    min_humans_per_item: int = MIN_HUMANS_PER_ITEM,
    min_items_per_human: int = MIN_ITEMS_PER_HUMAN,
) -> dict[str, Any]:
    """Alt-test of judge ``y`` against the humans of ``H`` (items x humans, NaN missing;
    categorical values as codes for ``scoring="accuracy"``).

    Returns ``winning_rate`` (omega), ``advantage_probability`` (rho), ``passed``
    (omega >= 0.5), ``epsilon``, ``scoring``, ``per_human`` {name: {items, p_value, rejected,
    advantage_probability}}, ``skipped_humans`` {name: items} (fewer than
    ``min_items_per_human``), ``n_items`` and ``n_items_dropped``."""
    t = human_tests(H, y, humans, scoring, epsilon, min_humans_per_item, min_items_per_human)
    rejected = by_rejections(t.p_values[t.tested], q)
    return _summary(t, rejected, scoring, epsilon, q, min_items_per_human)


def alt_test_joint(
    environments: Mapping[str, tuple[np.ndarray, np.ndarray, Sequence[str] | None, str]],
    epsilon: float = DEFAULT_EPSILON,
    q: float = DEFAULT_Q,
    min_humans_per_item: int = MIN_HUMANS_PER_ITEM,
    min_items_per_human: int = MIN_ITEMS_PER_HUMAN,
) -> dict[str, Any]:
    """Alt-test of one judge in several environments (fields, strata) with one BY correction
    over the p-values of every (environment, human) (paper, FAQ "several environments or
    domains").  ``environments``: name -> ``(H, y, humans, scoring)``.  Returns
    ``{"environments": {name: alt_test result}, "passed_in", "of", "q", "epsilon"}``; each
    environment's winning rate counts its humans rejected by the joint correction."""
    tests = {
        name: human_tests(H, y, hs, sc, epsilon, min_humans_per_item, min_items_per_human)
        for name, (H, y, hs, sc) in environments.items()
    }
    pooled = np.concatenate([t.p_values[t.tested] for t in tests.values()]) if tests else np.zeros(0)
    rejected = by_rejections(pooled, q)
    out: dict[str, Any] = {}
    at = 0
    for name, t in tests.items():
        k = int(t.tested.sum())
        out[name] = _summary(t, rejected[at : at + k], environments[name][3], epsilon, q, min_items_per_human)
        out[name]["correction"] = "benjamini_yekutieli_joint"
        at += k
    defined = [r for r in out.values() if r["passed"] is not None]
    return {
        "environments": out,
        "passed_in": sum(bool(r["passed"]) for r in defined),
        "of": len(defined),
        "n_hypotheses": len(pooled),
        "epsilon": epsilon,
        "q": q,
    }
