"""Bias checks of a model judge (pure, no Django): position bias, pass stability, verbosity.

Position (order) bias. A pairwise judge shown the same pair in both orders should give the same
verdict; Zheng et al. (2023, "Judging LLM-as-a-Judge with MT-Bench and Chatbot Arena", NeurIPS
Datasets and Benchmarks, Sec. 3.3 and Table 2) call the share of pairs whose verdict survives
the swap the judge's *consistency*, and split the inconsistent pairs into those where the judge
chose the first-shown answer in both orders ("biased toward first") and the second-shown in
both. Verdicts here are in the pair's own terms (``A``: the pair's declared first member,
``B``: its second, ``TIE``), the swapped order's verdict already mapped back, so that

- :func:`position_consistency` is the share of items whose two verdicts are equal (ties count
  when both are ties), with a percentile bootstrap CI over items;
- :func:`first_position_rate` is the share of decisive judgements (both orders pooled, ties
  left out) that chose whichever member was shown first: ``A`` in the original order, ``B`` in
  the swapped one, with the exact binomial test against 0.5 (``scipy.stats.binomtest``) and
  its Clopper-Pearson interval. Only items judged in both orders count (a counterbalanced
  design: each member is first once, so a judge that always picks the true answer scores 0.5).

Stability across repeated passes (:func:`pass_stability`): the items x passes matrix of one
question's answers, percent agreement (share of agreeing pass pairs per item, averaged) and
Krippendorff's alpha (``hvstats.reliability``), nominal for categories and ordinal for
scale points, each with a bootstrap CI over items.

Verbosity (length) bias (:func:`verbosity`): LLM judges tend to prefer longer answers (Saito et
al. 2023, "Verbosity Bias in Preference Labeling by Large Language Models"; Dubois et al. 2024,
"Length-Controlled AlpacaEval"). The judge's Spearman correlation of score with length is
reported beside the humans' (their mean score per item) on the same items: a judge correlation
above the humans' is a length preference the humans do not share.

Bootstrap: items are resampled with replacement (percentile intervals) through
:func:`hvstats.bootstrap.resample_counts` over the distinct item rows, each resample a
count vector ``w``; the statistic of a resample is that of the rows repeated ``w`` times."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
from scipy.stats import binomtest

from .bootstrap import compress_rows, percentile_ci, resample_counts
from .correlation import spearman
from .kappa import percent_agreement, percent_agreement_features
from .pairs import PairTable
from .reliability import alpha_features, krippendorff_alpha
from .result import MetricResult, undefined

A, B, TIE = "a", "b", "tie"
VERDICTS = (A, B, TIE)


def _boot_ci(
    X: np.ndarray, stat: Any, n_boot: int, seed: int, level: float
) -> tuple[tuple[float, float] | None, np.ndarray]:
    """Percentile CI of ``stat(P, W) -> (b,) values`` over item resamples: ``P`` the distinct rows
    of ``X``, ``W`` (b x len(P)) bootstrap multiplicities (:func:`resample_counts`, seeded)."""
    if not n_boot or X.shape[0] < 2:
        return None, np.zeros(0)
    P, cnt, _ = compress_rows(X)
    boot = np.concatenate(
        [
            np.asarray(stat(P, W), dtype=float).reshape(-1)
            for W in resample_counts(cnt, n_boot, np.random.default_rng(seed))
        ]
    )
    return percentile_ci(boot, level)[0], boot


def _check_verdicts(name: str, values: Sequence[Hashable | None]) -> None:
    bad = sorted({repr(v) for v in values if v is not None and v not in VERDICTS})
    if bad:
        raise ValueError(f"{name}: verdicts are {', '.join(VERDICTS)} or None, not {', '.join(bad)}")


def _paired(original: Sequence[Any], swapped: Sequence[Any]) -> tuple[list[Any], list[Any], int]:
    if len(original) != len(swapped):
        raise ValueError("one verdict per item in each order")
    _check_verdicts("original", original)
    _check_verdicts("swapped", swapped)
    keep = [i for i, (o, s) in enumerate(zip(original, swapped, strict=True)) if o is not None and s is not None]
    return [original[i] for i in keep], [swapped[i] for i in keep], len(original) - len(keep)


def position_consistency(
    original: Sequence[str | None],
    swapped: Sequence[str | None],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> MetricResult:
    """Share of items whose verdict in the swapped order (mapped back) equals the original-order
    verdict (Zheng et al. 2023). Items without both verdicts (``None``) are left out and counted
    in ``n_missing``; ``first_both`` / ``second_both``: items where the judge chose the member
    shown first (second) in both orders; ``other_inconsistent``: the rest (a tie in one order)."""
    o, s, missing = _paired(original, swapped)
    n = len(o)
    if n == 0:
        return undefined("position_consistency", "no item was judged in both orders", 0, 1, n_missing=missing)
    same = np.array([x == y for x, y in zip(o, s, strict=True)], dtype=float)
    first_both = sum(x == A and y == B for x, y in zip(o, s, strict=True))
    second_both = sum(x == B and y == A for x, y in zip(o, s, strict=True))
    ci, _ = _boot_ci(same[:, None], lambda P, W: (W @ P[:, 0]) / W.sum(1), n_boot, seed, level)
    return MetricResult(
        "position_consistency",
        float(same.mean()),
        ci,
        None,
        n,
        1,
        None,
        {
            "consistent": int(same.sum()),
            "first_both": int(first_both),
            "second_both": int(second_both),
            "other_inconsistent": int(n - same.sum() - first_both - second_both),
            "n_missing": int(missing),
        },
    )


def first_position_rate(
    original: Sequence[str | None], swapped: Sequence[str | None], *, level: float = 0.95
) -> MetricResult:
    """Share of decisive judgements choosing the member shown first, both orders pooled over the
    items judged in both (``A`` first in the original order, ``B`` first in the swapped one);
    ``p_value``: two-sided exact binomial test of that share against 0.5; ``ci``: Clopper-Pearson.
    Ties are left out of the share and counted in ``n_ties``."""
    o, s, missing = _paired(original, swapped)
    shown_first = [v == A for v in o if v != TIE] + [v == B for v in s if v != TIE]
    ties = sum(v == TIE for v in o) + sum(v == TIE for v in s)
    k, n = int(sum(shown_first)), len(shown_first)
    extra = {"n_first": k, "n_second": n - k, "n_ties": int(ties), "n_judgements": n + ties, "n_missing": missing}
    if n == 0:
        reason = "no item was judged in both orders" if not o else "every judgement is a tie"
        return undefined("first_position_rate", reason, len(o), 1, **extra)
    test = binomtest(k, n, 0.5)
    ci = test.proportion_ci(confidence_level=level, method="exact")
    return MetricResult(
        "first_position_rate", k / n, (float(ci.low), float(ci.high)), float(test.pvalue), len(o), 1, None, extra
    )


def pass_stability(
    matrix: np.ndarray, *, level: str = "nominal", n_boot: int = 1000, seed: int = 0, ci_level: float = 0.95
) -> dict[str, MetricResult]:
    """Agreement of a judge with itself over repeated passes: ``matrix`` is items x passes (one
    question's answers as numbers, NaN where a pass has none). ``percent_agreement``: the share
    of agreeing pass pairs per item, averaged over items with two answers or more;
    ``krippendorff_alpha`` at ``level`` ("nominal" for categories, "ordinal" for scale points).
    Both with percentile bootstrap CIs over items."""
    X = np.asarray(matrix, dtype=float)
    if X.ndim != 2:
        raise ValueError("an items x passes matrix")
    pa = percent_agreement(X)
    if pa.value is not None:
        pa.ci, _ = _boot_ci(X, lambda P, W: _finalise(percent_agreement_features(P), W), n_boot, seed, ci_level)
    alpha = krippendorff_alpha(X, level)
    if alpha.value is not None:
        feats = alpha_features(X, level)  # None: no bootstrap features (too many ordinal values)
        if feats is not None:
            alpha.ci, _ = _boot_ci(X, lambda P, W: _finalise(alpha_features(P, level), W), n_boot, seed + 1, ci_level)
    return {"percent_agreement": pa, "krippendorff_alpha": alpha}


def _finalise(features: Any, W: np.ndarray) -> np.ndarray:
    F, fin = features
    S = np.asarray((F.T @ W.T).T) if hasattr(F, "tocsr") else W @ F
    return np.asarray(fin(S), dtype=float)


def _spearman_with_ci(lengths: np.ndarray, scores: np.ndarray, n_boot: int, seed: int, level: float) -> MetricResult:
    res = spearman(lengths, scores)
    if res.value is None:
        return res
    keep = ~np.isnan(lengths) & ~np.isnan(scores)
    X = np.column_stack([lengths[keep], scores[keep]])

    res.ci, _ = _boot_ci(X, lambda P, W: _weighted_spearman(P[:, 0], P[:, 1], W), n_boot, seed, level)
    return res


def _weighted_spearman(x: np.ndarray, y: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Spearman's rho (mid-ranks) of the rows ``(x, y)`` repeated ``W[b]`` times, per row of ``W``."""
    t = PairTable(x, y)
    T = np.asarray((t.onehot().T @ W.T).T)  # row multiplicities -> counts of the distinct (x, y) pairs
    return t.compute(T, ["spearman"])["spearman"]


def verbosity(
    lengths: Sequence[float],
    judge_scores: Sequence[float | None],
    human_scores: Sequence[float | None],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, Any]:
    """Spearman's rho of score vs length for the judge and for the humans' mean score, on the
    items both scored (one entry per item; None / NaN = no score), each with a percentile
    bootstrap CI over those items; ``difference`` (judge minus humans) has its own CI, both
    correlations computed on each resample of the items."""
    L = np.asarray(lengths, dtype=float)
    J = np.asarray([np.nan if v is None else v for v in judge_scores], dtype=float)
    H = np.asarray([np.nan if v is None else v for v in human_scores], dtype=float)
    if not (len(L) == len(J) == len(H)):
        raise ValueError("one length, judge score and human score per item")
    both = ~np.isnan(L) & ~np.isnan(J) & ~np.isnan(H)
    L, J, H = L[both], J[both], H[both]
    judge = _spearman_with_ci(L, J, n_boot, seed, level)
    humans = _spearman_with_ci(L, H, n_boot, seed, level)
    diff = undefined("spearman_difference", "a correlation is undefined", int(both.sum()), 2)
    if judge.value is not None and humans.value is not None:
        X = np.column_stack([L, J, H])

        def stat(P: np.ndarray, W: np.ndarray) -> np.ndarray:
            return _weighted_spearman(P[:, 0], P[:, 1], W) - _weighted_spearman(P[:, 0], P[:, 2], W)

        ci, _ = _boot_ci(X, stat, n_boot, seed, level)
        diff = MetricResult("spearman_difference", judge.value - humans.value, ci, None, int(both.sum()), 2, None)
    return {"judge": judge, "humans": humans, "difference": diff, "n_items": int(both.sum())}


def longer_choice_rate(chose_longer: Sequence[bool | None], *, level: float = 0.95) -> MetricResult:
    """Share of decisive pair judgements that chose the longer member of a pair of texts: the
    length (verbosity) bias of pairwise judges (Zheng et al. 2023, Sec. 3.3; Saito et al. 2023).
    One entry per judgement: True = chose the longer, False = the shorter, None = left out (a
    tie, no answer, or two members of equal length). ``p_value``: two-sided exact binomial test
    against 0.5; ``ci``: Clopper-Pearson. Whether 0.5 is the unbiased rate depends on the data
    (in a Turing test where humans write longer, a perfect judge chooses the longer more often),
    so read it beside the humans' rate on the same pairs."""
    decided = [bool(v) for v in chose_longer if v is not None]
    k, n = sum(decided), len(decided)
    extra = {"n_longer": k, "n_shorter": n - k, "n_left_out": len(chose_longer) - n}
    if n == 0:
        return undefined("longer_choice_rate", "no decisive judgement of a pair of unequal length", 0, 1, **extra)
    test = binomtest(k, n, 0.5)
    ci = test.proportion_ci(confidence_level=level, method="exact")
    return MetricResult(
        "longer_choice_rate", k / n, (float(ci.low), float(ci.high)), float(test.pvalue), n, 1, None, extra
    )


__all__ = [
    "TIE",
    "A",
    "B",
    "first_position_rate",
    "longer_choice_rate",
    "pass_stability",
    "position_consistency",
    "verbosity",
]
