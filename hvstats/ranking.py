"""Prediction-powered ranking: rank-sets of systems from pairwise comparisons by people and a judge.

Chatzi, Straitouri, Thejaswi and Gomez-Rodriguez, "Prediction-Powered Ranking of Large Language
Models", NeurIPS 2024 (arXiv:2402.17826; code: github.com/Networks-Learning/prediction-powered-ranking):
the win-rate estimator and its covariance (Sec. 3, the estimation step), the prediction-powered
combination of a few comparisons by people with many by a judge, and the rank-sets read off the
confidence ellipsoid (Sec. 3, Algorithm 2). The tuning of lambda is PPI++'s (Angelopoulos, Duchi
and Zrnic, "PPI++: Efficient Prediction-Powered Inference", 2023, Sec. 2: the lambda that
minimises the trace of the estimate's covariance). The same construction ranks systems of a
rated study from their per-system PPI++ means (:func:`rated_prediction_powered_means`).

Notation. A *unit* is one comparison: an item and the two systems compared on it (the paper's
``(q, m, m')``). Units are independent draws from one distribution. For system ``s`` and unit
``j``, ``M[s, j]`` is 1 when ``s`` takes part in ``j``; ``h[s, j]`` is 1 when people prefer ``s``
(their share when several people compared the unit), ``f[s, j]`` the same for the judge. A tie is
no win for either system, as in the paper. The target is the human win-rate of each system,

    theta_s = E[M_s h_s] / E[M_s] = E[M_s h_s] / p_s,

the probability that people prefer ``s`` in a comparison ``s`` takes part in. ``n`` units were
compared by people and the judge (the labelled set L; ``n_s`` of them involve ``s``), ``N`` by the
judge only (the unlabelled set U; ``N_s``).

Estimator (Sec. 3; the published code's estimate.py):

    theta_hat_s = lambda * fbar_U[s] + (hbar_L[s] - lambda * fbar_L[s]),
    xbar_X[s]   = sum_{j in X} M[s, j] x[s, j] / X_s       (the wins over the comparisons s took part in).

lambda = 0 is the human-only estimate; the judge-only estimate is ``fbar`` over L and U together.

Covariance: the derivation, and where it differs from the published code
--------------------------------------------------------------------------
Each ``xbar_X[s]`` is a ratio of two means over the units of X, ``(1/|X|) sum_j M[s,j] x[s,j]``
over ``(1/|X|) sum_j M[s,j]``. By the delta method (first order in the two means, around
``(p_s mu_s, p_s)``)

    xbar_X[s] - mu_s = (1 / (|X| p_s)) sum_{j in X} M[s, j] (x[s, j] - mu_s) + o_p(|X|^-1/2),

so, with the residuals ``R[s, j] = M[s, j] (x[s, j] - mu_s)``, which have mean zero,

    Cov(xbar_X[s], xbar_X[t]) = E[R_s R_t] / (|X| p_s p_t).

Replacing ``E[R_s R_t]`` by ``(1/|X|) sum_j R[s, j] R[t, j]`` (``mu`` by ``xbar``) and ``p_s`` by
``X_s / |X|`` gives the plug-in

    Sigma_X[s, t] = sum_{j in X} R[s, j] R[t, j] / (X_s X_t)                      (*)

whose diagonal is the familiar ``var_0(x_s over the comparisons of s) / X_s``. L and U are
independent, so the prediction-powered estimate has

    Sigma = lambda^2 Sigma_U[f] + Sigma_L[h - lambda f],

``Sigma_U[f]`` of (*) with ``x = f`` over U and ``Sigma_L[h - lambda f]`` with
``x = h - lambda f`` over L (the paper's Sec. 3 covariance, with (*) for each part). The published
code (``src/estimate.py``, ``sample_avg`` and ``estimate``) divides the same sums by ``|X|^2``
instead of ``X_s X_t``: that is the covariance of the *per-comparison* averages
``(1/|X|) sum_j M[s,j] x[s,j]``, not of the win-rates ``xbar`` it estimates (wins over the
comparisons a system took part in). With ``k`` systems compared evenly, ``X_s ~ 2|X|/k``, so its
variances are too small by ``(2/k)^2`` and its standard errors by ``2/k`` (a factor of 10 with 20
systems): standardised errors ``(theta_hat - theta) / sqrt(Sigma_ss)`` then have SD near ``k/2``
instead of 1. (*) gives SD near 1; checked by simulation in
``tests/hvstats/test_ranking.py`` and ``perf/ranking_sim.py`` (docs/ranking.md).

Lambda (PPI++ power tuning, on (*)): the trace of ``Sigma`` is a quadratic in ``lambda``,

    tr Sigma(lambda) = lambda^2 sum_s (Sigma_U[f]_ss + Sigma_L[f]_ss)
                       - 2 lambda sum_s Sigma_L[h, f]_ss + sum_s Sigma_L[h]_ss,

``Sigma_L[h, f]_ss = sum_{j in L} M[s, j] (h - hbar_L)(f - fbar_L) / n_s^2``; its minimiser,
clipped to [0, 1] (0 when the denominator is 0),

    lambda = sum_s Sigma_L[h, f]_ss / sum_s (Sigma_U[f]_ss + Sigma_L[f]_ss).

The published ``lhat_opt`` is PPI++'s ``tr Cov(h, f) / ((1 + n/N) tr Var(f))`` with both traces
on the published scale (unweighted over systems) and ``Var(f)`` from U only; the two agree up to
the per-system weights ``1/p_s^2`` that (*) puts on each system's terms and the judge's variance
on L estimated from L rather than from U.

Rank-sets (Algorithm 2): the confidence ellipsoid
``{theta: (theta - theta_hat)' Sigma^-1 (theta - theta_hat) <= chi2_{k, 1-alpha}}`` holds the true
win-rates with probability -> 1 - alpha. Over that ellipsoid ``theta_s - theta_t`` ranges over
``theta_hat_s - theta_hat_t -/+ sqrt(chi2_{k, 1-alpha} (Sigma_ss + Sigma_tt - 2 Sigma_st))``;
when that interval excludes 0, ``s`` and ``t`` are ordered. The rank-set of ``s`` (rank 1 = the
highest win-rate) is ``[1 + #(systems surely above s), k - #(systems surely below s)]``, and all
rank-sets cover the true ranks at once whenever the ellipsoid covers theta. The projections on
each axis, ``theta_hat_s -/+ sqrt(chi2_{k, 1-alpha} Sigma_ss)``, are simultaneous intervals.
A system without an estimate (no comparisons in a set it needs) gets no win-rate and the
rank-set ``[1, k]``, and orders no other system; ``k`` in the chi-square is the number of systems
with an estimate.

Reading a file of comparisons and the report of the ``rank`` command live here too
(:func:`read_comparisons`, :func:`rank_report`); ``hvstats.cli`` only parses arguments.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import chi2

DEFAULT_ALPHA = 0.05
METHODS = ("human_only", "judge_only", "prediction_powered")

# ------------------------------------------------------------------------------ the estimators


@dataclass(frozen=True)
class WinRates:
    """Per-system estimates (``nan`` where a system has no estimate) and their covariance
    (``nan`` rows and columns there), with the lambda they were made with."""

    win_rate: np.ndarray
    covariance: np.ndarray
    lam: float | np.ndarray


def _means_and_residuals(participation: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-system means over the units each takes part in, the residuals ``M (x - mean)`` and the
    counts; ``nan`` means where a system takes part in no unit (its residuals are 0)."""
    m = np.asarray(participation, dtype=float)
    x = np.where(m > 0, np.asarray(values, dtype=float), 0.0)
    counts = m.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = (m * x).sum(axis=1) / counts
    resid = m * (x - np.nan_to_num(means)[:, None])
    return means, resid, counts


def _scaled_covariance(r1: np.ndarray, r2: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Eq. (*) of the module docstring: ``sum_j r1[s, j] r2[t, j] / (X_s X_t)``; ``nan`` for systems
    without units."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return (r1 @ r2.T) / np.outer(counts, counts)


def pairwise_win_rates(participation: np.ndarray, wins: np.ndarray) -> WinRates:
    """Win-rates of one set of comparisons (the human-only or the judge-only estimate) and their
    covariance (module docstring, Eq. (*)).

    ``participation`` and ``wins`` are ``k x n`` (systems x comparisons): 1 where the system takes
    part, and its win (1, 0, or a share of raters) in that comparison."""
    means, resid, counts = _means_and_residuals(participation, wins)
    return WinRates(means, _scaled_covariance(resid, resid, counts), 0.0)


def prediction_powered_means(
    labelled_participation: np.ndarray,
    human: np.ndarray,
    judge: np.ndarray,
    unlabelled_participation: np.ndarray,
    unlabelled_judge: np.ndarray,
    lam: float | np.ndarray,
) -> WinRates:
    """``lambda fbar_U + (hbar_L - lambda fbar_L)`` per system and its covariance
    ``lambda^2 Sigma_U[f] + Sigma_L[h - lambda f]`` (module docstring). ``lam`` is one number or
    one per system. A system without labelled units has no estimate; one without unlabelled
    units is estimated from L alone (its lambda is 0)."""
    k = np.asarray(labelled_participation).shape[0]
    lam_s = np.broadcast_to(np.asarray(lam, dtype=float), (k,)).copy()
    n_u = np.asarray(unlabelled_participation, dtype=float).sum(axis=1)
    lam_s[n_u == 0] = 0.0  # nothing to add from U: the classical estimate for that system
    fu_mean, fu_resid, fu_counts = _means_and_residuals(unlabelled_participation, unlabelled_judge)
    rect = np.asarray(human, dtype=float) - lam_s[:, None] * np.asarray(judge, dtype=float)
    r_mean, r_resid, r_counts = _means_and_residuals(labelled_participation, rect)
    estimate = lam_s * np.nan_to_num(fu_mean) + r_mean
    sigma_u = np.nan_to_num(_scaled_covariance(fu_resid, fu_resid, fu_counts))
    cov = np.outer(lam_s, lam_s) * sigma_u + _scaled_covariance(r_resid, r_resid, r_counts)
    return WinRates(estimate, cov, lam_s if np.ndim(lam) else float(lam))


def tuned_lambda(
    labelled_participation: np.ndarray,
    human: np.ndarray,
    judge: np.ndarray,
    unlabelled_participation: np.ndarray,
    unlabelled_judge: np.ndarray,
) -> float:
    """The lambda in [0, 1] minimising the trace of the prediction-powered covariance (module
    docstring; PPI++ Sec. 2 power tuning on Eq. (*)); systems lacking L or U units are left out."""
    _, h_res, n_s = _means_and_residuals(labelled_participation, human)
    _, f_res, _ = _means_and_residuals(labelled_participation, judge)
    _, u_res, big_n_s = _means_and_residuals(unlabelled_participation, unlabelled_judge)
    both = (n_s > 0) & (big_n_s > 0)
    if not both.any():
        return 0.0
    cross = (h_res[both] * f_res[both]).sum(axis=1) / n_s[both] ** 2
    var_l = (f_res[both] ** 2).sum(axis=1) / n_s[both] ** 2
    var_u = (u_res[both] ** 2).sum(axis=1) / big_n_s[both] ** 2
    denom = float(var_u.sum() + var_l.sum())
    if not math.isfinite(denom) or denom <= 0:
        return 0.0  # a constant judge: it cannot help
    return float(np.clip(cross.sum() / denom, 0.0, 1.0))


def prediction_powered_win_rates(
    labelled_participation: np.ndarray,
    human_wins: np.ndarray,
    judge_wins: np.ndarray,
    unlabelled_participation: np.ndarray,
    unlabelled_judge_wins: np.ndarray,
    lam: float | None = None,
) -> WinRates:
    """The prediction-powered win-rates (Sec. 3) with lambda tuned (``lam=None``) or given.
    All arrays are ``k x units``: L's participation, people's and the judge's wins on L; U's
    participation and the judge's wins on U."""
    if lam is None:
        lam = tuned_lambda(
            labelled_participation, human_wins, judge_wins, unlabelled_participation, unlabelled_judge_wins
        )
    elif not 0.0 <= lam <= 1.0:
        raise ValueError("lambda must be in [0, 1]")
    return prediction_powered_means(
        labelled_participation, human_wins, judge_wins, unlabelled_participation, unlabelled_judge_wins, float(lam)
    )


def rated_prediction_powered_means(
    labelled_participation: np.ndarray,
    human_ratings: np.ndarray,
    judge_ratings: np.ndarray,
    unlabelled_participation: np.ndarray,
    unlabelled_judge_ratings: np.ndarray,
) -> WinRates:
    """A rated study: each system's PPI++ mean rating (the estimate and lambda of
    :func:`hvstats.ppi.ppi_mean`, one lambda per system) and the covariance of the means across
    systems (Eq. (*); systems rated on the same items covary). Arrays are ``k x items`` as in
    :func:`prediction_powered_means`, ratings in place of wins; rank with :func:`rank_sets`."""
    from .ppi import ppi_lambda

    m_l = np.asarray(labelled_participation, dtype=bool)
    m_u = np.asarray(unlabelled_participation, dtype=bool)
    h, f, fu = (np.asarray(a, dtype=float) for a in (human_ratings, judge_ratings, unlabelled_judge_ratings))
    lam = np.zeros(m_l.shape[0])
    for s in range(m_l.shape[0]):
        if m_l[s].sum() >= 1 and m_u[s].sum() >= 1:
            lam[s] = ppi_lambda(h[s, m_l[s]], f[s, m_l[s]], fu[s, m_u[s]])
    return prediction_powered_means(m_l, h, f, m_u, fu, lam)


def _estimated(win_rates: np.ndarray, covariance: np.ndarray) -> np.ndarray:
    return np.isfinite(win_rates) & np.isfinite(np.diag(covariance))


def _critical_value(k: int, alpha: float) -> float:
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha must be in (0, 1)")
    return float(chi2.ppf(1.0 - alpha, k)) if k else math.inf


def rank_sets(win_rates: np.ndarray, covariance: np.ndarray, alpha: float = DEFAULT_ALPHA) -> np.ndarray:
    """Algorithm 2: ``k x 2`` rank-sets ``[low, high]`` (1 = the highest win-rate) that cover the
    true ranking with probability -> 1 - alpha (module docstring). Systems with a ``nan`` estimate
    get ``[1, k]`` and order no one."""
    theta = np.asarray(win_rates, dtype=float)
    sigma = np.asarray(covariance, dtype=float)
    k = theta.size
    ok = _estimated(theta, sigma)
    q = _critical_value(int(ok.sum()), alpha)
    d = np.diag(sigma)
    var_diff = d[:, None] + d[None, :] - 2 * sigma
    gap = theta[:, None] - theta[None, :]
    with np.errstate(invalid="ignore"):
        ordered = (np.abs(gap) > np.sqrt(np.clip(var_diff, 0, None) * q)) & ok[:, None] & ok[None, :]
    above = (ordered & (gap < 0)).sum(axis=1)  # t surely above s
    below = (ordered & (gap > 0)).sum(axis=1)
    return np.stack([1 + above, k - below], axis=1).astype(int)


def simultaneous_intervals(win_rates: np.ndarray, covariance: np.ndarray, alpha: float = DEFAULT_ALPHA) -> np.ndarray:
    """The ellipsoid's projections ``theta_hat_s -/+ sqrt(chi2_{k, 1-alpha} Sigma_ss)``: ``k x 2``
    intervals that hold all true win-rates at once with probability -> 1 - alpha."""
    theta = np.asarray(win_rates, dtype=float)
    sigma = np.asarray(covariance, dtype=float)
    q = _critical_value(int(_estimated(theta, sigma).sum()), alpha)
    half = np.sqrt(np.clip(np.diag(sigma), 0, None) * q)
    return np.stack([theta - half, theta + half], axis=1)


# ------------------------------------------------------------------------------ comparison files

#: winner spellings (lower case, surrounding spaces removed) -> a, b or tie
WINNERS: dict[str, str] = {
    **dict.fromkeys(("a", "model_a", "system_a", "1", "left"), "a"),
    **dict.fromkeys(("b", "model_b", "system_b", "2", "right"), "b"),
    **dict.fromkeys(
        ("tie", "draw", "tie (bothbad)", "tie(bothbad)", "bothbad", "both_bad", "both bad", "both-bad", "0", "="),
        "tie",
    ),
}
#: accepted column names -> the canonical ones (Chatbot Arena / MT-Bench human judgments files)
COLUMN_ALIASES = {
    "item": ("item", "question_id", "prompt_id", "id"),
    "system_a": ("system_a", "model_a"),
    "system_b": ("system_b", "model_b"),
    "rater": ("rater", "judge", "annotator", "user"),
    "winner": ("winner",),
}
MAX_ERRORS = 20


class RankingInputError(ValueError):
    """A file of comparisons that cannot be read; the message names the lines."""


@dataclass(frozen=True)
class Comparison:
    """One rater's verdict on one unit; ``winner`` is ``a``, ``b`` or ``tie``."""

    item: str
    system_a: str
    system_b: str
    rater: str
    winner: str
    rater_kind: str = ""


def _records(path: Path) -> Iterable[tuple[int, Mapping[str, Any]]]:
    """(line number, row) of a CSV (line 1 is the header), JSONL, or JSON array file (its records
    numbered from 1). JSON is told by the suffix or by a first character ``{`` or ``[``."""
    text = path.read_text(encoding="utf-8-sig")
    first = text.lstrip()[:1]
    if first == "[":  # one JSON array of records
        try:
            records = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RankingInputError(f"line {exc.lineno}: not valid JSON ({exc.msg})") from exc
        for no, obj in enumerate(records, start=1):
            if not isinstance(obj, dict):
                raise RankingInputError(f"record {no}: a JSON object expected")
            yield no, obj
        return
    if path.suffix.lower() in (".jsonl", ".json", ".ndjson") or first == "{":
        for no, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise RankingInputError(f"line {no}: not valid JSON ({exc.msg})") from exc
            if not isinstance(obj, dict):
                raise RankingInputError(f"line {no}: a JSON object expected")
            yield no, obj
        return
    reader = csv.DictReader(io.StringIO(text, newline=""))
    for row in reader:
        yield reader.line_num, row


def _column(row: Mapping[str, Any], name: str) -> Any:
    for alias in COLUMN_ALIASES[name]:
        if alias in row and row[alias] not in (None, ""):
            return row[alias]
    return None


def parse_winner(value: Any, system_a: str, system_b: str) -> str | None:
    """``a``, ``b`` or ``tie`` for a winner cell (:data:`WINNERS`, or a system's own name); None
    when it is none of these."""
    text = str(value).strip()
    low = text.lower()
    if low in WINNERS:
        return WINNERS[low]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and float(value) in (0.0, 1.0, 2.0):
        return {0.0: "tie", 1.0: "a", 2.0: "b"}[float(value)]
    if text == system_a:
        return "a"
    if text == system_b:
        return "b"
    return None


def read_comparisons(path: str | Path) -> list[Comparison]:
    """The comparisons of a CSV or JSONL file (columns ``item, system_a, system_b, rater, winner``;
    aliases in :data:`COLUMN_ALIASES`, an optional ``turn`` is part of the item, an optional
    ``rater_kind``). All or nothing: any bad row raises :class:`RankingInputError` naming the
    lines (the first :data:`MAX_ERRORS`)."""
    p = Path(path)
    if not p.is_file():
        raise RankingInputError(f"no such file: {p}")
    out: list[Comparison] = []
    errors: list[str] = []
    try:
        for no, row in _records(p):
            vals = {name: _column(row, name) for name in COLUMN_ALIASES}
            missing = [name for name, v in vals.items() if v is None]
            if missing:
                errors.append(f"line {no}: missing {', '.join(missing)}")
            else:
                a, b = str(vals["system_a"]).strip(), str(vals["system_b"]).strip()
                winner = parse_winner(vals["winner"], a, b)
                if a == b:
                    errors.append(f"line {no}: system_a and system_b are the same system ({a!r})")
                elif winner is None:
                    errors.append(
                        f"line {no}: unknown winner {str(vals['winner'])[:40]!r} "
                        "(a, b, tie; model_a, model_b, tie (bothbad); A, B; 1, 2, 0; or a system's name)"
                    )
                else:
                    item = str(vals["item"]).strip()
                    if row.get("turn") not in (None, ""):
                        item = f"{item}#turn{row['turn']}"
                    kind = str(row.get("rater_kind") or "").strip().lower()
                    out.append(Comparison(item, a, b, str(vals["rater"]).strip(), winner, kind))
            if len(errors) >= MAX_ERRORS:
                break
    except UnicodeDecodeError as exc:
        raise RankingInputError(f"{p.name} is not UTF-8 text") from exc
    except csv.Error as exc:
        raise RankingInputError(f"{p.name}: not a valid CSV file ({exc})") from exc
    if errors:
        raise RankingInputError("; ".join(errors))
    if not out:
        raise RankingInputError(f"{p.name} holds no comparisons")
    return out


# ------------------------------------------------------------------------------ the report


def _unit_matrices(
    units: Sequence[tuple[str, str, str]], verdicts: Mapping[tuple[str, str, str], list[str]], index: Mapping[str, int]
) -> tuple[np.ndarray, np.ndarray]:
    """``k x len(units)`` participation and wins; a unit judged by several raters gets each
    system's share of their verdicts (a tie is no win for either)."""
    k = len(index)
    m = np.zeros((k, len(units)))
    w = np.zeros((k, len(units)))
    for j, unit in enumerate(units):
        _, a, b = unit
        v = verdicts[unit]
        ia, ib = index[a], index[b]
        m[ia, j] = m[ib, j] = 1.0
        w[ia, j] = v.count("a") / len(v)
        w[ib, j] = v.count("b") / len(v)
    return m, w


def _method_json(systems: Sequence[str], est: WinRates, alpha: float, lam: float | None) -> dict[str, Any]:
    def num(x: float) -> float | None:
        return float(x) if math.isfinite(x) else None

    sets = rank_sets(est.win_rate, est.covariance, alpha)
    return {
        "win_rate": {s: num(est.win_rate[i]) for i, s in enumerate(systems)},
        "covariance": [[num(v) for v in row] for row in est.covariance],
        "rank_sets": {s: [int(sets[i, 0]), int(sets[i, 1])] for i, s in enumerate(systems)},
        "lambda": lam,
    }


def _point_ranks(values: Mapping[str, float | None]) -> dict[str, int]:
    """1 + the number of systems with a strictly higher estimate (ties share the better rank)."""
    known = {s: v for s, v in values.items() if v is not None}
    return {s: 1 + sum(1 for w in known.values() if w > v) for s, v in known.items()}


def rank_report(
    comparisons: Sequence[Comparison], judges: Sequence[str] | None = None, alpha: float = DEFAULT_ALPHA
) -> tuple[dict[str, Any], list[str]]:
    """The ``rank`` command's report and its notes (what a reader must know: systems without an
    estimate, judge-only ranks outside the prediction-powered rank-sets).

    Raters named in ``judges`` (or, when none are named, rows with ``rater_kind`` model or judge)
    are the judge; every other rater is a person. A unit is an item and an unordered pair of
    systems; units compared by people and the judge form L, those compared by the judge only U;
    units compared by people only count for the human-only ranking alone."""
    if not 0.0 < alpha < 1.0:
        raise ValueError("--alpha must be in (0, 1)")
    judge_names = set(judges or ())
    if judge_names:
        unknown = sorted(judge_names - {c.rater for c in comparisons})
        if unknown:
            raise ValueError(f"--judge names no rater of the file: {', '.join(unknown)}")

    def is_judge(c: Comparison) -> bool:
        return c.rater in judge_names if judge_names else c.rater_kind in ("model", "judge")

    human: dict[tuple[str, str, str], list[str]] = {}
    judge: dict[tuple[str, str, str], list[str]] = {}
    for c in comparisons:
        a, b, winner = c.system_a, c.system_b, c.winner
        if b < a:  # one orientation per unordered pair
            a, b, winner = b, a, {"a": "b", "b": "a"}.get(winner, winner)
        (judge if is_judge(c) else human).setdefault((c.item, a, b), []).append(winner)
    systems = sorted({c.system_a for c in comparisons} | {c.system_b for c in comparisons})
    index = {s: i for i, s in enumerate(systems)}
    labelled = sorted(u for u in human if u in judge)
    unlabelled = sorted(u for u in judge if u not in human)
    human_units = sorted(human)
    k = len(systems)
    nan = WinRates(np.full(k, np.nan), np.full((k, k), np.nan), 0.0)
    notes: list[str] = []

    if human_units:
        m_h, w_h = _unit_matrices(human_units, human, index)
        human_only = pairwise_win_rates(m_h, w_h)
    else:
        human_only = nan
        notes.append("no comparisons by people: no human-only or prediction-powered ranking")
    if judge:
        m_j, w_j = _unit_matrices(sorted(judge), judge, index)
        judge_only = pairwise_win_rates(m_j, w_j)
    else:
        judge_only = nan
        notes.append(
            "no comparisons by a judge (name the judge with --judge): no judge-only or prediction-powered ranking"
        )
    if labelled:
        m_l, h_l = _unit_matrices(labelled, human, index)
        _, f_l = _unit_matrices(labelled, judge, index)
        if unlabelled:
            m_u, f_u = _unit_matrices(unlabelled, judge, index)
        else:
            m_u, f_u = np.zeros((k, 0)), np.zeros((k, 0))
        pp = prediction_powered_win_rates(m_l, h_l, f_l, m_u, f_u)
        pp_lambda: float | None = float(pp.lam)
    else:
        pp, pp_lambda = nan, None
        if human_units and judge:
            notes.append("no item and pair compared by both people and the judge: no prediction-powered ranking")

    report = {
        "systems": systems,
        "methods": {
            "human_only": _method_json(systems, human_only, alpha, 0.0 if human_units else None),
            "judge_only": _method_json(systems, judge_only, alpha, 1.0 if judge else None),
            "prediction_powered": _method_json(systems, pp, alpha, pp_lambda),
        },
    }
    by_people = {c.system_a for c in comparisons if not is_judge(c)} | {
        c.system_b for c in comparisons if not is_judge(c)
    }
    judge_seen = sorted(set(systems) - by_people)
    if human_units and judge_seen:
        notes.append(
            "compared by the judge only, never by people (no human-only or prediction-powered "
            f"win-rate; rank-set [1, {k}]): {', '.join(judge_seen)}"
        )
    pp_missing = [
        s for s in systems if s not in judge_seen and report["methods"]["prediction_powered"]["win_rate"][s] is None
    ]
    if labelled and pp_missing:
        notes.append(
            "never compared by both people and the judge on one item (no prediction-powered "
            f"win-rate; rank-set [1, {k}]): {', '.join(pp_missing)}"
        )
    by_judge = {x for u in judge for x in u[1:]}
    people_seen = [s for s in systems if s not in by_judge]
    if judge and people_seen:
        notes.append(f"compared by people only, never by the judge (no judge-only win-rate): {', '.join(people_seen)}")
    in_u = {x for u in unlabelled for x in u[1:]}
    no_u = [s for s in systems if s not in judge_seen and s not in pp_missing and s not in in_u]
    if labelled and unlabelled and no_u:
        notes.append(f"no comparisons by the judge alone (prediction-powered = human-only there): {', '.join(no_u)}")
    if human_units and judge and labelled:
        pp_sets = report["methods"]["prediction_powered"]["rank_sets"]
        judge_ranks = _point_ranks(report["methods"]["judge_only"]["win_rate"])
        outside = [
            f"{s} (judge-only rank {r}, prediction-powered rank-set {pp_sets[s][0]}-{pp_sets[s][1]})"
            for s, r in judge_ranks.items()
            if not pp_sets[s][0] <= r <= pp_sets[s][1]
        ]
        if outside:
            notes.append("the judge-only ranking falls outside the prediction-powered rank-sets: " + "; ".join(outside))
        else:
            notes.append("the judge-only ranking lies within the prediction-powered rank-sets")
    notes.append(
        f"units (item and pair): {len(labelled)} compared by people and the judge, {len(unlabelled)} by the "
        f"judge only, {len(human_units) - len(labelled)} by people only (human-only ranking alone)"
    )
    return report, notes


def format_rank_table(report: Mapping[str, Any], notes: Sequence[str], alpha: float) -> str:
    """The report as plain text: one row per system, win-rate and rank-set per method."""
    systems = report["systems"]
    methods = report["methods"]

    def sort_key(s: str) -> float:
        for m in ("prediction_powered", "human_only", "judge_only"):
            if methods[m]["win_rate"][s] is not None:
                return -methods[m]["win_rate"][s]
        return 1.0

    order = sorted(systems, key=sort_key)
    width = max([len("system"), *(len(s) for s in systems)])
    head = f"{'system':<{width}}" + "".join(f"  {m:>26}" for m in METHODS)
    lines = [f"rank-sets at alpha = {alpha} (rank 1 = highest win-rate; win-rate [rank-set])", head, "-" * len(head)]
    for s in order:
        cells = []
        for m in METHODS:
            v = methods[m]["win_rate"][s]
            lo, hi = methods[m]["rank_sets"][s]
            cells.append(f"  {('-' if v is None else f'{v:.3f}'):>16} [{lo:>3},{hi:>3}]")
        lines.append(f"{s:<{width}}" + "".join(f"{c:>28}" for c in cells))
    lam = methods["prediction_powered"]["lambda"]
    lines.append(f"lambda (prediction-powered): {'-' if lam is None else f'{lam:.3f}'}")
    lines += [f"note: {n}" for n in notes]
    return "\n".join(lines) + "\n"
