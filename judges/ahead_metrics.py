"""The AHEaD metrics of CULTIVate (cultivate-ahead.txt, Sec. 3.2 and App. A.3), as pure functions.

Notation of the paper: ``x_{r,a}`` is an activity ``a`` in a region (country) ``r`` with its N
generated images; ``D^ref`` the reference descriptors, ``D^pred`` the descriptors an MLLM
extracted from the images, both per cultural dimension; ``s_ij = sim(pred_i, ref_j)`` the cosine
similarity of their sentence embeddings; ``tau`` the match threshold.

- :func:`align`, Eq. 1: the share of reference descriptors whose best match exceeds tau;
- :func:`hal`, Eq. 2: the share of predicted descriptors whose best match is at most tau;
- :func:`dimension_mean`: "the final score is the average of scores across five cultural
  dimensions" (Eq. 1); "we measure this for each cultural dimension separately and report the
  average" (Eq. 2);
- :func:`exag_baseline`, Eq. 3 and :func:`exag`, Eq. 4: the largest positive excess of an
  image-text alignment score over the real images' mean, per stereotype candidate;
- :func:`faith`, Eq. 5: the arithmetic mean of ALIGN, 1 - HAL and 1 - EXAG;
- :func:`ddiv`, Eq. 6 and :func:`sdiv`, Eq. 7: descriptor and semantic diversity over N images;
- :func:`tau_candidates`, App. A.3: Q1, median and Q3 of the descriptor similarities on real
  images (the paper keeps Q3).

No Django, no models: arrays and numbers in, numbers out. ``None`` is a value the definition
leaves undefined (a share of an empty set)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

# the paper's dimensions and taus live where loading the models can read them without numpy
from .ahead_paper import DIMENSIONS, TAU_INTERNVL3, TAU_QWEN25_VL


def _matrix(sim: np.ndarray | Sequence[Sequence[float]], n_pred: int, n_ref: int) -> np.ndarray:
    """``sim`` as a (predicted x reference) float array; ValueError when the shape is not that."""
    S = np.asarray(sim, dtype=float)
    if S.size == 0 and n_pred * n_ref == 0:  # an empty side: any empty array stands for it
        S = S.reshape(n_pred, n_ref)
    if S.shape != (n_pred, n_ref):
        raise ValueError(f"the similarity matrix is {S.shape}, not (predicted, reference) = {(n_pred, n_ref)}")
    return S


def reference_best(sim: np.ndarray, n_pred: int, n_ref: int) -> np.ndarray:
    """``max_i s_ij`` for every reference descriptor ``d_j`` (-inf when nothing was predicted:
    no predicted descriptor can match it)."""
    S = _matrix(sim, n_pred, n_ref)
    return S.max(axis=0) if n_pred else np.full(n_ref, -np.inf)


def predicted_best(sim: np.ndarray, n_pred: int, n_ref: int) -> np.ndarray:
    """``max_j s_ij`` for every predicted descriptor (-inf when there is no reference)."""
    S = _matrix(sim, n_pred, n_ref)
    return S.max(axis=1) if n_ref else np.full(n_pred, -np.inf)


def align(ref_best: Sequence[float] | np.ndarray, tau: float) -> float | None:
    """Eq. 1: ``1/|D^ref| * sum_j 1[max_i s_ij > tau]`` from the reference descriptors' best
    similarities; None without reference descriptors (the share of an empty set)."""
    best = np.asarray(ref_best, dtype=float)
    if not best.size:
        return None
    return float((best > tau).mean())


def hal(pred_best: Sequence[float] | np.ndarray, tau: float) -> float | None:
    """Eq. 2: ``1/|D^pred| * sum_i 1[max_j s_ij <= tau]`` from the predicted descriptors' best
    similarities; None when nothing was predicted."""
    best = np.asarray(pred_best, dtype=float)
    if not best.size:
        return None
    return float((best <= tau).mean())


def dimension_mean(per_dimension: Mapping[str, float | None]) -> float | None:
    """The average over the cultural dimensions where the score is defined (Eq. 1-2: "the
    average of scores across five cultural dimensions"); None when it is defined in none.
    The paper does not say what happens to an empty dimension; leaving it out is the only
    reading that keeps the score a share."""
    values = [float(v) for v in per_dimension.values() if v is not None]
    return float(np.mean(values)) if values else None


def exag_baseline(real_scores: np.ndarray | Sequence[Sequence[float]]) -> np.ndarray:
    """Eq. 3: ``f_gt(d_k) = 1/n_gt * sum_m f(I_gt^m, d_k)``, the mean image-text score of each
    stereotype candidate over the real images; ``real_scores`` is (real images x candidates).
    ValueError without a real image (Eq. 3 needs at least one)."""
    R = np.asarray(real_scores, dtype=float)
    if R.ndim != 2 or R.shape[0] == 0:
        raise ValueError("the exaggeration baseline (Eq. 3) needs the scores of at least one real image")
    return R.mean(axis=0)


def exag(generated_scores: np.ndarray | Sequence[Sequence[float]], baseline: Sequence[float] | np.ndarray) -> float:
    """Eq. 4: ``1/N * sum_n max_k max(0, f(I_n, d_k) - f_gt(d_k))`` for ``generated_scores``
    (N generated images x candidates) and the Eq. 3 ``baseline`` (one per candidate)."""
    G = np.asarray(generated_scores, dtype=float)
    b = np.asarray(baseline, dtype=float)
    if G.ndim != 2 or G.shape[0] == 0:
        raise ValueError("EXAG (Eq. 4) needs the scores of at least one generated image")
    if G.shape[1] == 0 or G.shape[1] != b.shape[0]:
        raise ValueError(
            f"EXAG (Eq. 4) needs one score per stereotype candidate: {G.shape[1]} scores, {b.shape[0]} baselines"
        )
    return float(np.maximum(G - b[None, :], 0.0).max(axis=1).mean())


def faith(align_score: float, hal_score: float, exag_score: float) -> float:
    """Eq. 5: ``FAITH = g(ALIGN, 1 - HAL, 1 - EXAG)``, ``g`` the arithmetic mean."""
    return (align_score + (1.0 - hal_score) + (1.0 - exag_score)) / 3.0


def align_hal(align_score: float, hal_score: float) -> float:
    """The "ALIGN+HAL" column of Table 3: Eq. 5 without EXAG, ``mean(ALIGN, 1 - HAL)``."""
    return (align_score + (1.0 - hal_score)) / 2.0


def ddiv(hit_counts: Sequence[int] | np.ndarray) -> float | None:
    """Eq. 6: ``-1/log|D^ref| * sum_{q(d)>0} q(d) log q(d)``, ``q(d)`` the normalised frequency
    with which each reference descriptor appears (is matched) across the N images;
    ``hit_counts`` has one count per reference descriptor (zeros included: they set |D^ref|).
    None when it is undefined: fewer than two reference descriptors (log 1 = 0) or none matched
    in any image (no frequencies to normalise)."""
    counts = np.asarray(hit_counts, dtype=float)
    if counts.size < 2 or counts.sum() <= 0:
        return None
    q = counts[counts > 0] / counts.sum()
    return float(-(q * np.log(q)).sum() / math.log(counts.size))


def sdiv(align_n: float, align_single: Sequence[float]) -> float:
    """Eq. 7: ``SDIV = ALIGN_N - E[ALIGN_1]``, the alignment of the N images' descriptors
    together minus the mean single-image alignment."""
    if not len(align_single):
        raise ValueError("SDIV (Eq. 7) needs the alignment of at least one single image")
    return float(align_n - float(np.mean(align_single)))


@dataclass(frozen=True)
class TauCandidates:
    """App. A.3: the candidate thresholds, the quartiles of the similarities on real images."""

    q1: float
    median: float
    q3: float
    n: int

    @property
    def chosen(self) -> float:
        """The paper's pick: "Q3 offers the best trade-off by reducing false positives while
        maintaining recall" (App. A.3, Table 5)."""
        return self.q3


def tau_candidates(similarities: Sequence[float] | np.ndarray) -> TauCandidates:
    """App. A.3: "we compute descriptor-descriptor similarities between LLM-provided ground-truth
    descriptors and MLLM-extracted descriptors from real images, then consider candidate
    thresholds at the lower quartile (Q1), median, and upper quartile (Q3)". ValueError without
    a finite similarity."""
    s = np.asarray(similarities, dtype=float)
    s = s[np.isfinite(s)]
    if not s.size:
        raise ValueError("no descriptor similarities on real images to calibrate tau with")
    q1, med, q3 = np.quantile(s, [0.25, 0.5, 0.75])
    return TauCandidates(float(q1), float(med), float(q3), int(s.size))


def to_likert(score: float) -> float:
    """A score on [0, 1] on the 1-5 scale of the rubric question it stands in for: 1 + 4 x,
    clipped to [1, 5]. Monotone, so every rank statistic (Spearman with GT-FAITH, Table 2) is
    the score's own."""
    return float(min(5.0, max(1.0, 1.0 + 4.0 * float(score))))


def from_likert(value: float) -> float:
    """The inverse of :func:`to_likert` (the score behind a stored 1-5 value)."""
    return (float(value) - 1.0) / 4.0


__all__ = [
    "DIMENSIONS",
    "TAU_INTERNVL3",
    "TAU_QWEN25_VL",
    "TauCandidates",
    "align",
    "align_hal",
    "ddiv",
    "dimension_mean",
    "exag",
    "exag_baseline",
    "faith",
    "from_likert",
    "hal",
    "predicted_best",
    "reference_best",
    "sdiv",
    "tau_candidates",
    "to_likert",
]
