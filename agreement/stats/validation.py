"""What a preset's ``validation_report`` receives, and the helpers its tables are built with.

:class:`ValidationInput` is plain data: the project's long ratings table (as
``agreement.selectors.ratings_frame`` builds it: ``item, item_pk, external_id, rater,
rater_kind, field, value, element`` and the strata / meta columns), who each rater is
(kind, profile attributes such as nationality, backend), the measurement level of each
rubric field, the bootstrap settings, and the order in which each rater was assigned each item
(``assignment_order``: ``(item_pk, rater) -> assignment id``, from which
:meth:`ValidationInput.by_slot` derives which *slot* a rating filled: first, second, ... rater
of its item, or a rater attribute such as nationality). A preset turns it into a list of
:class:`.tables.Table` with the functions of this package only, so the paper's tables are
computed by the same statistics core as the generic report.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .analysis import analyse_matrix
from .bootstrap import compress_rows, percentile_ci, resample_counts
from .outcomes import rate
from .reliability import alpha_features, krippendorff_alpha
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
    # (item_pk, rater) -> the rank key of the rater's assignment for the item (its id): the
    # slot a rating filled is derived from it at read time (see by_slot)
    assignment_order: Mapping[tuple[int, str], int] = field(default_factory=dict)
    # reads already made (a field's rows, its item x rater pivot, the assignment order as a
    # table): a report reads each field many times (every split, every table), and these
    # are its costliest reads
    memo: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

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
        found = self.memo.get(("rows", field_name))
        if found is None:
            found = self.memo[("rows", field_name)] = self.frame[self.frame["field"] == field_name]
        return found

    def wide(self, field_name: str, raters: Sequence[str] | None = None, numeric: bool = True) -> pd.DataFrame:
        """item x rater table of one field (``item`` index as in the frame; numbers, NaN =
        missing, unless ``numeric`` is false)."""
        w = self.memo.get(("wide", field_name, numeric))
        if w is None:
            sub = self.rows(field_name)
            vals = pd.to_numeric(sub["value"], errors="coerce") if numeric else sub["value"]
            w = pd.DataFrame({"item": sub["item"], "rater": sub["rater"], "v": vals}).pivot_table(
                index="item", columns="rater", values="v", aggfunc="first"
            )
            self.memo[("wide", field_name, numeric)] = w
        # a copy either way: callers may change what they get
        return w.reindex(columns=list(raters)) if raters is not None else w.copy()

    def by_slot(
        self, field_name: str, raters: Sequence[str] | None = None, attribute: str | None = None
    ) -> pd.DataFrame:
        """item x slot table of one field (numbers, NaN = the slot is empty for the item): the
        ratings of ``raters`` (default: the humans) placed by the slot each filled for its item.

        Without ``attribute`` the slot is the rank of the rater's assignment for the item among
        ``raters`` (columns 1, 2, ...: the first-assigned rater's rating, the second's, ...;
        raters without a known assignment come last, by name). With ``attribute`` the slot is
        the rater's value of that profile attribute (e.g. ``"nationality"``; "(none)" when
        unset), and two raters of one item with the same value keep the first-assigned one's
        rating. Feed it to :func:`.slots.slot_agreement` for the pooled slot-vs-slot coefficient."""
        raters = self.humans() if raters is None else list(raters)
        key = ("by_slot", field_name, tuple(raters), attribute)
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = self._by_slot(field_name, raters, attribute)
        return found.copy()  # callers may change what they get

    def _by_slot(self, field_name: str, raters: list[str], attribute: str | None) -> pd.DataFrame:
        sub = self.rows(field_name)
        if len(sub):
            sub = sub[sub["rater"].isin(raters)]
        if not len(sub):
            return pd.DataFrame(dtype=float)
        order = self.order_of(sub)
        d = pd.DataFrame(
            {
                "item": sub["item"].to_numpy(),
                "rater": sub["rater"].to_numpy(),
                "order": order,
                "v": pd.to_numeric(sub["value"], errors="coerce").to_numpy(dtype=float),
            }
        ).sort_values(["item", "order", "rater"], kind="mergesort")
        if attribute:
            d["slot"] = [self.attribute(r, attribute) or "(none)" for r in d["rater"]]
        else:
            d["slot"] = d.groupby("item", sort=False).cumcount() + 1
        return d.pivot_table(index="item", columns="slot", values="v", aggfunc="first", dropna=False)

    def order_of(self, rows: pd.DataFrame) -> np.ndarray:
        """The assignment order key of each rating row (inf where unknown), by a join on
        (item_pk, rater) rather than a lookup per row."""
        table = self.memo.get("order")
        if table is None:
            keys = list(self.assignment_order)
            table = pd.DataFrame(
                {
                    "item_pk": np.array([k[0] for k in keys], dtype=np.int64),
                    "rater": np.array([k[1] for k in keys], dtype=object),
                    "order": np.array(list(self.assignment_order.values()), dtype=float),
                }
            )
            self.memo["order"] = table
        if not len(table):
            return np.full(len(rows), np.inf)
        left = pd.DataFrame(
            {"item_pk": rows["item_pk"].to_numpy(dtype=np.int64), "rater": rows["rater"].to_numpy(dtype=object)}
        )
        joined = left.merge(table, on=["item_pk", "rater"], how="left", sort=False)
        return joined["order"].fillna(np.inf).to_numpy(dtype=float)

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
    shared bootstrap over items: :func:`.analysis.analyse_matrix`'s output, without the
    pairwise matrix and the split-half ceilings (not read here; see ``pairwise=False``)."""
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
        pairwise=False,
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


def alpha_bootstrap(X: np.ndarray, level: str, n_boot: int, seed: int) -> tuple[MetricResult, np.ndarray]:
    """Krippendorff's alpha of an items x raters matrix with its percentile bootstrap CI over
    items, and the bootstrap values (empty without a bootstrap or bootstrap features), e.g. to
    combine independent strata with :func:`over_strata`."""
    X = np.asarray(X, dtype=float)
    res = krippendorff_alpha(X, level)
    if not n_boot or res.value is None:
        return res, np.zeros(0)
    P, cnt, _ = compress_rows(X)
    feats = alpha_features(P, level)
    if feats is None:
        return res, np.zeros(0)
    F, fin = feats
    chunks = []
    for W in resample_counts(cnt, n_boot, np.random.default_rng(seed)):
        S = np.asarray((F.T @ W.T).T) if hasattr(F, "tocsr") else W @ F
        chunks.append(np.asarray(fin(S), dtype=float).reshape(-1))
    boot = np.concatenate(chunks)
    res.ci = percentile_ci(boot)[0]
    return res, boot


def over_strata(
    values: Sequence[float | None], boots: Sequence[np.ndarray], stat: str = "mean", metric: str = ""
) -> MetricResult:
    """The mean (``stat="mean"``) or the standard deviation (``"sd"``, ddof=1) over strata of a
    per-stratum statistic (e.g. Krippendorff's alpha per country), with a stratified bootstrap
    CI: the same summary of the strata's b-th bootstrap values, each stratum's units resampled
    within it (independent ``boots``, one per stratum, of equal length). Strata whose value is
    undefined are left out; ``n_items`` is the number of strata used."""
    name = metric or stat
    keep = [k for k, v in enumerate(values) if v is not None and np.isfinite(v)]
    need = 2 if stat == "sd" else 1
    if len(keep) < need:
        return undefined(name, f"fewer than {need} strata with a value")
    v = np.array([values[k] for k in keep], dtype=float)

    def summary(A: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.nanmean(A, axis=-1) if stat == "mean" else np.nanstd(A, axis=-1, ddof=1)

    ci = None
    lens = {len(boots[k]) for k in keep}
    if len(lens) == 1 and lens.pop() > 0:
        ci = percentile_ci(summary(np.column_stack([boots[k] for k in keep])))[0]
    return MetricResult(name, float(summary(v)), ci, None, len(keep), 0, None)
