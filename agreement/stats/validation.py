"""What a preset's ``validation_report`` receives, and the helpers its tables are built with.

:class:`ValidationInput` is plain data: the project's long ratings table (as
``agreement.selectors.ratings_frame`` builds it: ``item, item_pk, external_id, rater,
rater_kind, field, value, element`` and the strata / meta columns), who each rater is
(kind, profile attributes such as nationality, backend), the measurement level of each
rubric field, and the bootstrap settings. A preset turns it into a list of
:class:`.tables.Table` with the functions of this package only, so the paper's tables are
computed by the same statistics core as the generic report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .analysis import analyse_matrix
from .bootstrap import percentile_ci
from .outcomes import rate
from .result import MetricResult, undefined


@dataclass(frozen=True)
class RaterInfo:
    name: str  # as in the frame's ``rater`` column
    kind: str  # "human" or "model"
    attributes: Mapping[str, Any] = field(default_factory=dict)
    backend: str = ""


@dataclass(frozen=True)
class ValidationInput:
    frame: pd.DataFrame
    raters: Mapping[str, RaterInfo] = field(default_factory=dict)
    levels: Mapping[str, str] = field(default_factory=dict)
    bootstrap: int = 1000
    seed: int = 0

    # ---- raters
    def humans(self) -> list[str]:
        return self._of_kind("human")

    def judges(self) -> list[str]:
        return self._of_kind("model")

    def _of_kind(self, kind: str) -> list[str]:
        if not len(self.frame):
            return []
        return sorted(self.frame.loc[self.frame["rater_kind"] == kind, "rater"].unique().tolist())

    def attribute(self, rater: str, key: str) -> str | None:
        info = self.raters.get(rater)
        v = (info.attributes or {}).get(key) if info else None
        return None if v in (None, "") else str(v)

    def judge_label(self, judge: str) -> str:
        """The researcher's name for a judge: "LLM ensemble (<name>)" for an ensemble rater."""
        info = self.raters.get(judge)
        return judge_label(judge, info.backend if info is not None else "")

    # ---- data
    def rows(self, field_name: str) -> pd.DataFrame:
        if not len(self.frame):
            return self.frame
        return self.frame[self.frame["field"] == field_name]

    def wide(self, field_name: str, raters: Sequence[str] | None = None, numeric: bool = True) -> pd.DataFrame:
        """item x rater table of one field (``item`` index as in the frame; numbers, NaN =
        missing, unless ``numeric`` is false)."""
        sub = self.rows(field_name)
        vals = pd.to_numeric(sub["value"], errors="coerce") if numeric else sub["value"]
        w = pd.DataFrame({"item": sub["item"], "rater": sub["rater"], "v": vals}).pivot_table(
            index="item", columns="rater", values="v", aggfunc="first"
        )
        if raters is not None:
            w = w.reindex(columns=list(raters))
        return w

    def item_column(self, field_name: str, column: str) -> pd.Series:
        """One item-level column (a stratum, a meta key) of a field's items, by frame item."""
        sub = self.rows(field_name)
        return sub.drop_duplicates("item").set_index("item")[column]


# ------------------------------------------------------------------------------ helpers
def judge_label(name: str, backend: str = "") -> str:
    """How a judge is named to researchers: an ensemble rater is "LLM ensemble (<name>)"."""
    return f"LLM ensemble ({name})" if backend == "ensemble" else name


def judge_and_ceiling(
    W: pd.DataFrame, humans: Sequence[str], judges: Sequence[str], n_boot: int, seed: int
) -> dict[str, Any]:
    """Each judge vs the mean human and the humans' leave-one-out ceiling (Pearson and
    Spearman at the interval level, as ValueGround Table 4) of one item x rater table, one
    shared bootstrap over items: :func:`.analysis.analyse_matrix`'s output."""
    humans = [h for h in humans if h in W.columns]
    judges = [j for j in judges if j in W.columns]
    cols = [*humans, *judges]
    X = W.reindex(columns=cols).to_numpy(dtype=float) if cols else np.zeros((len(W), 0))
    X = X[~np.isnan(X).all(1)] if X.size else X
    return analyse_matrix(
        X,
        cols,
        humans,
        judges,
        "interval",
        ["pearson", "spearman", "leave_one_rater_out"],
        n_boot,
        np.random.default_rng(seed),
        seed=seed,
    )


def share(values: Sequence[Any] | np.ndarray, n_boot: int = 0, seed: int = 0, metric: str = "share") -> MetricResult:
    """Share of true (non-zero) values among the non-missing ones, with a percentile bootstrap
    CI over the units (exact resampling of Bernoulli units, see ``outcomes.rate``)."""
    return rate(values, n_boot, seed, metric)


def mean(values: Sequence[Any] | np.ndarray, n_boot: int = 0, seed: int = 0, metric: str = "mean") -> MetricResult:
    """Mean of the non-missing values with a percentile bootstrap CI over the units."""
    v = np.asarray([np.nan if x is None else float(x) for x in values], dtype=float)
    v = v[~np.isnan(v)]
    if not len(v):
        return undefined(metric, "no values")
    ci = None
    if n_boot:
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, len(v), size=(n_boot, len(v)))
        ci, _ = percentile_ci(v[idx].mean(1))
    return MetricResult(metric, float(v.mean()), ci, None, len(v), 0, None)


def statistic_ci(
    units: Sequence[Any], stat: Any, n_boot: int, seed: int
) -> tuple[tuple[float, float] | None, np.ndarray]:
    """Percentile bootstrap CI of ``stat(list_of_units)`` over resampled units (for statistics
    with no feature form, e.g. a kappa over (item, element) units); returns (ci, boot values)."""
    units = list(units)
    if not n_boot or len(units) < 2:
        return None, np.zeros(0)
    rng = np.random.default_rng(seed)
    boot = np.empty(n_boot)
    for b in range(n_boot):
        idx = rng.integers(0, len(units), size=len(units))
        v = stat([units[i] for i in idx])
        boot[b] = np.nan if v is None else v
    return percentile_ci(boot)[0], boot
