"""Pure statistics core of the inter-rater agreement module (no Django imports).

Public API::

    from hvstats import (agreement_report, krippendorff_alpha, cohen_kappa, fleiss_kappa,
        gwet_ac, percent_agreement, pearson, spearman, kendall, correlation, leave_one_rater_out,
        split_half, judge_vs_humans, binary_report, confusion, restricted_agreement,
        turing_accuracy, majority_vote, flag_rates, pairwise_matrix, MetricResult,
        alt_test, alt_test_joint, by_rejections, ppi_mean)

Matrices are items x raters with NaN for a missing rating.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .alt_test import alt_test, alt_test_joint, by_rejections
from .analysis import analyse_matrix, judge_vs_humans, leave_one_rater_out, split_half
from .binary import binary_report, confusion, restricted_agreement
from .bootstrap import bootstrap_statistic, compress_rows, percentile_ci
from .correlation import correlation, kendall, pearson, spearman
from .data import RatingTableError, infer_level, to_frame
from .kappa import cohen_kappa, fleiss_kappa, gwet_ac, percent_agreement
from .outcomes import flag_rates, majority_vote, rate
from .ppi import ppi_mean
from .reliability import krippendorff_alpha
from .report import agreement_report
from .result import MetricResult, to_jsonable, undefined
from .turing import turing_accuracy


def pairwise_matrix(
    data: np.ndarray,
    metric: str = "cohen_kappa",
    raters: Sequence[str] | None = None,
    level: str = "interval",
    n_boot: int = 0,
    seed: int = 0,
) -> dict[str, Any]:
    """Pairwise rater matrix of ``metric`` (any two-rater metric or krippendorff_alpha) for an
    items x raters matrix: ``{"raters", "matrix", "pairs"}``."""
    X = np.asarray(data, dtype=float)
    names = list(raters) if raters is not None else [f"r{i}" for i in range(X.shape[1])]
    r = analyse_matrix(X, names, names, [], level, [metric], n_boot, np.random.default_rng(seed), seed=seed)
    missing = {"raters": names, "matrix": None, "reason": f"undefined: {metric} not applicable"}
    return to_jsonable(r["humans_vs_humans"]["pairwise"].get(metric, missing))


__all__ = [
    "MetricResult",
    "RatingTableError",
    "agreement_report",
    "alt_test",
    "alt_test_joint",
    "analyse_matrix",
    "binary_report",
    "bootstrap_statistic",
    "by_rejections",
    "cohen_kappa",
    "compress_rows",
    "confusion",
    "correlation",
    "flag_rates",
    "fleiss_kappa",
    "gwet_ac",
    "infer_level",
    "judge_vs_humans",
    "kendall",
    "krippendorff_alpha",
    "leave_one_rater_out",
    "majority_vote",
    "pairwise_matrix",
    "pearson",
    "percent_agreement",
    "percentile_ci",
    "ppi_mean",
    "rate",
    "restricted_agreement",
    "spearman",
    "split_half",
    "to_frame",
    "to_jsonable",
    "turing_accuracy",
    "undefined",
]
