"""Pure statistics core of the inter-rater agreement module (no Django imports).

Public API::

    from hvstats import (agreement_report, krippendorff_alpha, cohen_kappa, fleiss_kappa,
        gwet_ac, percent_agreement, pearson, spearman, kendall, correlation, leave_one_rater_out,
        split_half, judge_vs_humans, binary_report, confusion, restricted_agreement,
        turing_accuracy, majority_vote, flag_rates, pairwise_matrix, MetricResult,
        alt_test, alt_test_joint, by_rejections, ppi_mean)

Matrices are items x raters with NaN for a missing rating.

The DataFrame API (long ratings in, dicts and DataFrames out) is :mod:`hvstats.frame`; the
``hv-stats`` command is :mod:`hvstats.cli`. The package is also published alone as the
``hv-stats`` wheel (``packaging/hv-stats``, docs/library.md). Names are imported on first use,
so importing the package (and the command's help) costs no numpy, scipy or pandas.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: public name -> the submodule defining it. Imported on first use (PEP 562), so that
#: ``import hvstats.cli`` (``hv-stats --help``) and the platform's preset loading do not pay for
#: numpy, scipy and pandas (about 0.5 s); ``from hvstats import agreement_report`` works as before.
_EXPORTS = {
    "alt_test": "alt_test",
    "alt_test_joint": "alt_test",
    "by_rejections": "alt_test",
    "analyse_matrix": "analysis",
    "judge_vs_humans": "analysis",
    "leave_one_rater_out": "analysis",
    "split_half": "analysis",
    "binary_report": "binary",
    "confusion": "binary",
    "restricted_agreement": "binary",
    "bootstrap_statistic": "bootstrap",
    "compress_rows": "bootstrap",
    "percentile_ci": "bootstrap",
    "correlation": "correlation",
    "kendall": "correlation",
    "pearson": "correlation",
    "spearman": "correlation",
    "RatingTableError": "data",
    "infer_level": "data",
    "to_frame": "data",
    "cohen_kappa": "kappa",
    "fleiss_kappa": "kappa",
    "gwet_ac": "kappa",
    "percent_agreement": "kappa",
    "flag_rates": "outcomes",
    "majority_vote": "outcomes",
    "rate": "outcomes",
    "ppi_mean": "ppi",
    "krippendorff_alpha": "reliability",
    "agreement_report": "report",
    "MetricResult": "result",
    "to_jsonable": "result",
    "undefined": "result",
    "turing_accuracy": "turing",
    "read_ratings": "io",
}
#: submodules reachable as attributes without an import statement (``hvstats.frame.agreement``)
_SUBMODULES = {"frame", "cli", "tables", "validation", "latent", "ranking"}

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time __getattr__ imports lazily
    import numpy as np

    from .alt_test import alt_test, alt_test_joint, by_rejections
    from .analysis import analyse_matrix, judge_vs_humans, leave_one_rater_out, split_half
    from .binary import binary_report, confusion, restricted_agreement
    from .bootstrap import bootstrap_statistic, compress_rows, percentile_ci
    from .correlation import correlation, kendall, pearson, spearman
    from .data import RatingTableError, infer_level, to_frame
    from .io import read_ratings
    from .kappa import cohen_kappa, fleiss_kappa, gwet_ac, percent_agreement
    from .outcomes import flag_rates, majority_vote, rate
    from .ppi import ppi_mean
    from .reliability import krippendorff_alpha
    from .report import agreement_report
    from .result import MetricResult, to_jsonable, undefined
    from .turing import turing_accuracy


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return import_module(f".{name}", __name__)  # the import binds it on the package
    module = _EXPORTS.get(name)
    if module is None:
        # AttributeError (not ImportError) so that ``from hvstats import frame`` falls back to
        # importing the submodule
        raise AttributeError(f"module 'hvstats' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS, *_SUBMODULES})


class _Package(ModuleType):
    """``hvstats.alt_test`` and ``hvstats.correlation`` are both a submodule and the function it
    defines. Importing a submodule binds it on the package; the eager ``__init__`` of old then
    rebound the function over it. Lazily, the binding happens whenever the submodule is first
    imported, so the function is put in its place here, keeping ``hvstats.alt_test`` the
    function as it always was."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, ModuleType) and _EXPORTS.get(name) == name:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def pairwise_matrix(
    data: np.ndarray | Sequence[Sequence[float]],
    metric: str = "cohen_kappa",
    raters: Sequence[str] | None = None,
    level: str = "interval",
    n_boot: int = 0,
    seed: int = 0,
) -> dict[str, Any]:
    """Pairwise rater matrix of ``metric`` (any two-rater metric or krippendorff_alpha) for an
    items x raters matrix: ``{"raters", "matrix", "pairs"}``."""
    import numpy as np

    from .analysis import analyse_matrix
    from .result import to_jsonable

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
    "frame",
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
    "read_ratings",
    "restricted_agreement",
    "spearman",
    "split_half",
    "to_frame",
    "to_jsonable",
    "turing_accuracy",
    "undefined",
]
