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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from .alt_test import MIN_ITEMS_PER_HUMAN
from .bootstrap import compress_rows, percentile_ci, resample_counts
from .outcomes import rate
from .pair_groups import WHOLE, PairGroupResult, pair_group_bootstrap
from .reliability import alpha_features, krippendorff_alpha
from .result import MetricResult, undefined

#: The least number of items a rater must have rated in a field to enter the human agreement
#: ceilings and the rater slots of a validation table (issue 22). The alt-test's minimum
#: (Calderon, Reichart and Dror, ACL 2025, Sec. 3: ``MIN_ITEMS_PER_HUMAN`` = 30, the sample size
#: at which the per-human t-test's normal approximation is trusted), so that the ceilings and the
#: alt-test stand on the same people: below it, a rater's own coefficient (the leave-one-out
#: ceiling averages one per rater, with equal weight) has a standard error near 1/sqrt(n - 3) >=
#: 0.2, larger than the differences the tables are read for, and a rater with 3 identical
#: answers makes a whole column undefined. Settable per report (``min_rater_items``).
MIN_RATER_ITEMS = MIN_ITEMS_PER_HUMAN


@dataclass(frozen=True)
class RaterInfo:
    name: str  # as in the frame's ``rater`` column
    kind: str  # "human" or "model"
    attributes: Mapping[str, Any] = field(default_factory=dict)
    backend: str = ""
    label: str = ""  # what tables call the rater (a judge's short label); empty: its name


@dataclass(frozen=True)
class FrameCodes:
    """The ratings table as integer codes, made once per report: per frame row its item,
    rater and field code and its number (NaN when not a number); items sorted by label,
    raters by name; ``first_row`` is each item's first frame row (to read item-level
    columns such as strata)."""

    item: np.ndarray
    items: np.ndarray
    item_pk: np.ndarray
    first_row: np.ndarray
    rater: np.ndarray
    raters: list[str]
    field: np.ndarray
    fields: list[str]
    value: np.ndarray

    @classmethod
    def of(cls, frame: pd.DataFrame) -> FrameCodes:
        item, items = pd.factorize(frame["item"], sort=True)
        rater, raters = pd.factorize(frame["rater"], sort=True)
        fld, fields = pd.factorize(frame["field"], sort=True)
        first_row = np.full(len(items), -1, dtype=np.int64)
        first_row[item[::-1]] = np.arange(len(item) - 1, -1, -1)  # the smallest row wins
        pk = frame["item_pk"].to_numpy() if "item_pk" in frame.columns else np.zeros(len(frame), dtype=np.int64)
        return cls(
            item.astype(np.int64),
            np.asarray(items, dtype=object),
            np.asarray(pk, dtype=np.int64)[first_row] if len(frame) else np.zeros(0, dtype=np.int64),
            first_row,
            rater.astype(np.int64),
            [str(r) for r in raters],
            fld.astype(np.int64),
            [str(f) for f in fields],
            pd.to_numeric(frame["value"], errors="coerce").to_numpy(dtype=float),
        )


def _present(codes: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The codes in use (sorted) and each code's position among them."""
    used = np.bincount(codes, minlength=size) > 0
    return np.flatnonzero(used), np.cumsum(used) - 1


@dataclass(frozen=True)
class Grid:
    """One field's ratings as arrays: ``values[i, r]`` is rater ``raters[r]``'s number for
    item ``items[i]`` (NaN = none), items sorted by their frame label and raters by name,
    ``item_pk`` the item's primary key and ``codes`` its :class:`FrameCodes` item code. Items
    and raters without a number are left out; a duplicate (item, rater) keeps its first number
    in frame order."""

    items: np.ndarray
    item_pk: np.ndarray
    codes: np.ndarray
    raters: list[str]
    values: np.ndarray

    @classmethod
    def of(cls, fc: FrameCodes, field_name: str) -> Grid:
        k = fc.fields.index(field_name) if field_name in fc.fields else -1
        rows = np.flatnonzero((fc.field == k) & ~np.isnan(fc.value))
        if not len(rows):
            return cls(
                np.array([], dtype=object),
                np.zeros(0, dtype=np.int64),
                np.zeros(0, dtype=np.int64),
                [],
                np.zeros((0, 0)),
            )
        item_codes, item_pos = _present(fc.item[rows], len(fc.items))
        rater_codes, rater_pos = _present(fc.rater[rows], len(fc.raters))
        i, r, v = item_pos[fc.item[rows]], rater_pos[fc.rater[rows]], fc.value[rows]
        cell = i * len(rater_codes) + r
        if (np.bincount(cell) > 1).any():  # a repeated (item, rater): keep its first number
            _, first = np.unique(cell, return_index=True)
            i, r, v = i[first], r[first], v[first]
        values = np.full((len(item_codes), len(rater_codes)), np.nan)
        values[i, r] = v
        return cls(
            fc.items[item_codes], fc.item_pk[item_codes], item_codes, [fc.raters[c] for c in rater_codes], values
        )


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
    # the least number of rated items (units) in a field for a rater to enter the human
    # agreement ceilings and slots (:meth:`agreement_raters`)
    min_rater_items: int = MIN_RATER_ITEMS
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
        found = self.memo.get(("kind", kind))
        if found is None:
            fc = self.codes()
            # the kind of each rater's first row (a rater has one kind)
            first = np.full(len(fc.raters), -1, dtype=np.int64)
            first[fc.rater[::-1]] = np.arange(len(fc.rater) - 1, -1, -1)
            kinds = self.frame["rater_kind"].iloc[first].to_numpy(dtype=object) if len(first) else []
            found = self.memo[("kind", kind)] = [r for r, k in zip(fc.raters, kinds, strict=True) if k == kind]
        return list(found)

    def attribute(self, rater: str, key: str) -> str | None:
        info = self.raters.get(rater)
        v = (info.attributes or {}).get(key) if info else None
        return None if v in (None, "") else str(v)

    def judge_label(self, judge: str) -> str:
        """The researcher's name for a judge: its label (a short label, issue 35), "LLM
        ensemble (<label>)" for an ensemble rater."""
        info = self.raters.get(judge)
        if info is None:
            return judge_label(judge)
        return judge_label(info.label or judge, info.backend)

    def agreement_raters(
        self, field_name: str, raters: Sequence[str] | None = None
    ) -> tuple[list[str], dict[str, int]]:
        """``raters`` (default: the humans) split by :attr:`min_rater_items` in the field: the
        ones with at least that many rated items (units: rows of :meth:`grid`), in the given
        order, and the ones left out with their item counts, ``{name: n}``. Raters who rated
        nothing in the field are in neither."""
        raters = self.humans() if raters is None else list(raters)
        g = self.grid(field_name)
        counts = (~np.isnan(g.values)).sum(0) if g.values.size else np.zeros(len(g.raters), dtype=int)
        n = {r: int(c) for r, c in zip(g.raters, counts, strict=True)}
        kept = [r for r in raters if n.get(r, 0) >= max(self.min_rater_items, 1)]
        small = {r: n[r] for r in raters if 0 < n.get(r, 0) < self.min_rater_items}
        return kept, small

    def human_items(self) -> set[Any]:
        """The frame's items with at least one human rating (of any field): the units of every
        humans-only figure, whatever the judges rated besides."""
        found = self.memo.get("human_items")
        if found is None:
            f = self.frame
            found = self.memo["human_items"] = set(f.loc[f["rater_kind"] == "human", "item"]) if len(f) else set()
        return set(found)

    def human_rated(self, field_name: str) -> np.ndarray:
        """Per row of :meth:`grid`: whether a human rated the item in this field."""
        g = self.grid(field_name)
        humans = [g.raters.index(h) for h in self.humans() if h in g.raters]
        return ~np.isnan(g.values[:, humans]).all(1) if humans else np.zeros(len(g.items), dtype=bool)

    # ---- data
    def rows(self, field_name: str) -> pd.DataFrame:
        if not len(self.frame):
            return self.frame
        found = self.memo.get(("rows", field_name))
        if found is None:
            found = self.memo[("rows", field_name)] = self.frame[self.frame["field"] == field_name]
        return found

    def grid(self, field_name: str) -> Grid:
        """The field's ratings as an item x rater array (see :class:`Grid`), built once."""
        found = self.memo.get(("grid", field_name))
        if found is None:
            found = self.memo[("grid", field_name)] = Grid.of(self.codes(), field_name)
        return found

    def codes(self) -> FrameCodes:
        found = self.memo.get("codes")
        if found is None:
            found = self.memo["codes"] = FrameCodes.of(self.frame)
        return found

    def item_values(self, field_name: str, column: str) -> np.ndarray:
        """An item-level column (a stratum, a meta key) for the rows of :meth:`grid`, as
        objects (None where the frame has no value)."""
        key = ("item_values", field_name, column)
        found = self.memo.get(key)
        if found is None:
            every = self.memo.get(("item_values", column))
            if every is None:  # the column for every item, read once
                if column in self.frame.columns:
                    col = self.frame[column].iloc[self.codes().first_row]
                    every = col.to_numpy(dtype=object, na_value=None)
                else:
                    every = np.full(len(self.codes().items), None, dtype=object)
                self.memo[("item_values", column)] = every
            found = self.memo[key] = every[self.grid(field_name).codes]
        return found

    def wide(self, field_name: str, raters: Sequence[str] | None = None) -> pd.DataFrame:
        """item x rater table of one field (``item`` index as in the frame, sorted; numbers,
        NaN = missing; items and raters without a number left out)."""
        g = self.grid(field_name)
        w = pd.DataFrame(
            g.values.copy(), index=pd.Index(g.items, name="item"), columns=pd.Index(g.raters, name="rater")
        )
        # a copy either way: callers may change what they get
        return w.reindex(columns=list(raters)) if raters is not None else w

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
        rows, columns, S = self.slots(field_name, raters, attribute)
        g = self.grid(field_name)
        return pd.DataFrame(S, index=pd.Index(g.items[rows], name="item"), columns=pd.Index(columns, name="slot"))

    def slots(
        self, field_name: str, raters: Sequence[str] | None = None, attribute: str | None = None
    ) -> tuple[np.ndarray, list[Any], np.ndarray]:
        """:meth:`by_slot` as arrays: ``(rows, slot names, values)``, ``rows`` the positions in
        :meth:`grid` of the items with a rating by ``raters``."""
        raters = self.humans() if raters is None else list(raters)
        key = ("slots", field_name, tuple(raters), attribute)
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = self._slots(field_name, raters, attribute)
        rows, columns, S = found
        return rows, list(columns), S.copy()  # callers may change what they get

    def _slots(
        self, field_name: str, raters: list[str], attribute: str | None
    ) -> tuple[np.ndarray, list[Any], np.ndarray]:
        g = self.grid(field_name)
        cols = [g.raters.index(r) for r in sorted(set(raters)) if r in g.raters]  # by name: ties
        X = g.values[:, cols]
        present = ~np.isnan(X)
        rows = np.flatnonzero(present.any(1))
        X, present = X[rows], present[rows]
        order = self.order_grid(field_name)[rows][:, cols]
        # the assignment order of each present rating; unknown after every known one (then by
        # name: the columns are in name order and the sorts are stable), absent after all
        key = np.where(present, np.where(np.isfinite(order), order, np.finfo(float).max), np.inf)
        if not attribute:
            rank = np.argsort(key, axis=1, kind="stable")
            S = np.take_along_axis(X, rank, axis=1)
            k = int(present.sum(1).max()) if len(rows) else 0
            return rows, list(range(1, k + 1)), S[:, :k]
        names = [g.raters[c] for c in cols]
        slot_of = [self.attribute(r, attribute) or "(none)" for r in names]
        columns = sorted(set(slot_of))
        S = np.full((len(rows), len(columns)), np.nan)
        for j, value in enumerate(columns):
            mine = [i for i, v in enumerate(slot_of) if v == value]
            first = np.argmin(key[:, mine], axis=1)  # the first-assigned present rating
            picked = X[:, mine][np.arange(len(rows)), first]
            S[:, j] = np.where(present[:, mine].any(1), picked, np.nan)
        return rows, columns, S

    def order_grid(self, field_name: str) -> np.ndarray:
        """The assignment order key of each cell of :meth:`grid` (inf where unknown)."""
        key = ("order", field_name)
        found = self.memo.get(key)
        if found is not None:
            return found
        g = self.grid(field_name)
        order = np.full(g.values.shape, np.inf)
        table = self._order_table()
        if len(table) and len(g.items):
            raters = table["rater"].cat
            col = pd.Index(g.raters).get_indexer(raters.categories)[raters.codes]
            pk, value = table["item_pk"].to_numpy()[col >= 0], table["order"].to_numpy()[col >= 0]
            col = col[col >= 0]
            pks = pd.Index(g.item_pk)
            if pks.is_unique:
                row = pks.get_indexer(pk)
                order[row[row >= 0], col[row >= 0]] = value[row >= 0]
            else:  # several rows share an item pk (pooled repeat fields "<pk>#<n>")
                at = pd.DataFrame({"row": np.arange(len(g.items)), "item_pk": g.item_pk}).merge(
                    pd.DataFrame({"item_pk": pk, "col": col, "order": value}), on="item_pk"
                )
                order[at["row"].to_numpy(), at["col"].to_numpy()] = at["order"].to_numpy()
        self.memo[key] = order
        return order

    def _order_table(self) -> pd.DataFrame:
        """``assignment_order`` as a table (item_pk, rater, order), made once."""
        table = self.memo.get("order_table")
        if table is None:
            keys = list(self.assignment_order)
            table = self.memo["order_table"] = pd.DataFrame(
                {
                    "item_pk": np.fromiter((k[0] for k in keys), dtype=np.int64, count=len(keys)),
                    "rater": pd.Categorical([k[1] for k in keys]),
                    "order": np.fromiter(self.assignment_order.values(), dtype=float, count=len(keys)),
                }
            )
        return table

    def item_column(self, field_name: str, column: str) -> pd.Series:
        """One item-level column (a stratum, a meta key) of a field's items, by frame item."""
        sub = self.rows(field_name)
        return sub.drop_duplicates("item").set_index("item")[column]


# ------------------------------------------------------------------------------ helpers
def judge_label(name: str, backend: str = "") -> str:
    """How a judge is named to researchers: an ensemble rater is "LLM ensemble (<name>)"."""
    return f"LLM ensemble ({name})" if backend == "ensemble" else name


_THREADS = 2


@dataclass
class HumanAgreement:
    """One row of a judge-vs-humans table (ValueGround Table 4): each judge vs the per-item
    mean human (``judges[judge][metric]``), the leave-one-out human ceiling (``ceiling``: the
    mean over humans of each human vs the mean of the others), the pooled slot-vs-slot
    ceiling (``slots``, see :mod:`.slots`) and the items with a rating (``n_items``)."""

    judges: dict[str, dict[str, MetricResult]]
    ceiling: dict[str, MetricResult]
    slots: dict[str, MetricResult]
    n_items: int


def judge_and_ceiling(
    H: np.ndarray,
    J: np.ndarray,
    S: np.ndarray,
    judges: Sequence[str],
    n_boot: int,
    seed: int,
    strata: Sequence[Any] | np.ndarray | None = None,
    metrics: Sequence[str] = ("pearson", "spearman"),
    per_stratum: bool = True,
    human_names: Sequence[str] | None = None,
    ceiling_humans: Sequence[int] | None = None,
) -> dict[Any, HumanAgreement]:
    """Each judge vs the mean human and the two human ceilings, on aligned item rows: ``H``
    (items x humans), ``J`` (items x ``judges``), ``S`` (items x slots, as
    :meth:`ValidationInput.slots`), NaN = missing. Only the items with a human rating count
    (``n_items`` is their number): what a judge alone rated moves no human figure. ``{stratum: HumanAgreement}`` with the whole
    under :data:`.pair_groups.WHOLE` and, with ``strata`` (a stratum per item), every stratum:
    the resamples are then drawn within strata (:mod:`.pair_groups`), so a table and its split
    by the stratum share them (``per_stratum=False``: the whole only, still resampled within
    strata).

    Bootstraps (all over the same items, each over the distinct rows of what it reads, which
    keeps them cheap): the leave-one-out ceiling (its value in a resample is the mean of the
    per-human values in that resample), the slot ceiling (likewise over slot pairs), and the
    judges vs the mean human.

    ``human_names`` names the columns of ``H`` (a leave-one-out undefined for a rater names
    them); ``ceiling_humans`` the columns that enter the leave-one-out ceiling (default: all;
    the mean human that the judges are compared with always averages every column)."""
    H, J, S = (np.asarray(A, dtype=float).reshape(len(A), -1) for A in (H, J, S))
    names = list(human_names) if human_names is not None else [f"rater {k}" for k in range(H.shape[1])]
    # every statistic stands on the items a human rated: the ceilings are the humans' alone,
    # and a judge is compared with the mean human, undefined where no human rated; an item
    # only a judge rated is no unit of any of them (nor of the resamples, nor of ``n_items``)
    human_rated = ~np.isnan(H).all(1) if H.shape[1] else np.zeros(len(H), dtype=bool)
    H, J, S = H[human_rated], J[human_rated], S[human_rated]
    if strata is not None:
        strata = np.asarray(strata, dtype=object)[human_rated]
    mean = _nanmean_rows(H)
    if ceiling_humans is not None:
        cols = list(ceiling_humans)
        H, names = H[:, cols], [names[c] for c in cols]
    nh, ns = H.shape[1], S.shape[1]

    def loo_means(V: np.ndarray) -> np.ndarray:  # functions of the humans' row: derived on distinct rows
        return np.column_stack([_nanmean_rows(np.delete(V, h, axis=1)) for h in range(nh)]) if nh >= 2 else V[:, :0]

    # the two ceilings resample the same items but over their own distinct rows: jointly,
    # humans x slots would be nearly one distinct row per item (the slot order varies)
    with ThreadPoolExecutor(_THREADS) as pool:
        ceiling_f = pool.submit(
            pair_group_bootstrap,
            H,
            {"ceiling": [(h, nh + h) for h in range(nh)] if nh >= 2 else []},
            metrics,
            n_boot,
            seed,
            strata,
            derived=loo_means,
            per_stratum=per_stratum,
        )
        slots_f = pool.submit(
            pair_group_bootstrap,
            S,
            {"slots": list(combinations(range(ns), 2))},
            metrics,
            n_boot,
            seed + 1,
            strata,
            per_stratum=per_stratum,
        )
        # each judge against the mean human: its own resample over its (judge, mean) rows, few
        # distinct ones however many items there are (jointly, the judges' rows multiply)
        judged_f = {
            j: pool.submit(
                pair_group_bootstrap,
                np.column_stack([J[:, k], mean]),
                {j: [(0, 1)]},
                metrics,
                n_boot,
                seed + 7919 * (k + 1),
                strata,
                per_stratum=per_stratum,
            )
            for k, j in enumerate(judges)
        }
        ceiling, slots = ceiling_f.result(), slots_f.result()
        judged = {j: f.result() for j, f in judged_f.items()}
    rated = np.ones(len(H), dtype=bool)  # every row left has a human rating
    out: dict[Any, HumanAgreement] = {}
    for key in ceiling:
        mask = rated if key is WHOLE else rated & (np.asarray(strata, dtype=object) == key)
        out[key] = HumanAgreement(
            judges={
                j: {m: _with_ci(judged[j][key][j][m].pairs[0], judged[j][key][j][m].boot[:, 0]) for m in metrics}
                for j in judges
            },
            ceiling={m: _ceiling(ceiling[key]["ceiling"][m], nh, int(mask.sum()), names) for m in metrics},
            slots={m: _slot_mean(slots[key]["slots"][m], S[mask]) for m in metrics},
            n_items=int(mask.sum()),
        )
    return out


def _with_ci(r: MetricResult, boot: np.ndarray) -> MetricResult:
    """``r`` with the percentile CI of its bootstrap values (and the count of undefined ones)."""
    if r.value is not None and len(boot):
        r.ci, bad = percentile_ci(boot)
        if bad:
            r.extra["bootstrap_undefined"] = bad
    return r


def _ceiling(g: PairGroupResult, nh: int, n_items: int, names: Sequence[str] | None = None) -> MetricResult:
    """Leave-one-rater-out: the mean of the per-human values (each human vs the mean of the
    others), undefined when any is (the reason names those raters)."""
    if nh < 2:
        return undefined(g.metric, "fewer than two human raters", n_items, nh)
    bad = [k for k, r in enumerate(g.pairs) if r.value is None]
    if bad:
        who = ", ".join(str(names[k]) if names is not None else f"rater {k}" for k in bad)
        why = "; ".join(dict.fromkeys(g.pairs[k].reason for k in bad if g.pairs[k].reason))
        return undefined(g.metric, f"leave-one-out undefined for {who}" + (f" ({why})" if why else ""), n_items, nh)
    res = MetricResult(
        g.metric, float(np.mean([r.value for r in g.pairs])), None, None, max(r.n_items for r in g.pairs), nh, None
    )
    return _with_ci(res, g.mean_of_all() if len(g.boot) else np.zeros(0))


def _slot_mean(g: PairGroupResult, S: np.ndarray) -> MetricResult:
    """Pooled slot-vs-slot (as :func:`.slots.slot_agreement`): two filled slots, their pair;
    more, the mean over the slot pairs defined."""
    filled = np.flatnonzero(~np.isnan(S).all(0)) if S.size else np.zeros(0, dtype=int)
    k = len(filled)
    n_items = int(((~np.isnan(S)).sum(1) >= 2).sum()) if S.size else 0
    if k < 2:
        return undefined(g.metric, "fewer than two filled slots", n_items, k)
    live = [k2 for k2, r in enumerate(g.pairs) if r.value is not None]
    if not live:
        return undefined(
            g.metric, next((r.reason for r in g.pairs if r.reason), "undefined for every slot pair"), n_items, k
        )
    if k == 2:
        return _with_ci(g.pairs[live[0]], g.boot[:, live[0]] if len(g.boot) else np.zeros(0))
    res = MetricResult(
        g.metric,
        float(np.mean([g.pairs[i].value for i in live])),
        None,
        None,
        n_items,
        k,
        None,
        {"slot_pairs": len(live)},
    )
    return _with_ci(res, g.mean_of_defined() if len(g.boot) else np.zeros(0))


def _nanmean_rows(A: np.ndarray) -> np.ndarray:
    m = ~np.isnan(A)
    c = m.sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(c > 0, np.where(m, A, 0.0).sum(1) / np.maximum(c, 1), np.nan)


#: the captions' sentence on the intervals of shares at 0% and 100% (see :func:`share`)
EXACT_SHARE_NOTE = (
    "A share of 0% or 100% gets the exact binomial (Clopper-Pearson) 95% interval, since the "
    "bootstrap's has zero width there."
)


def clopper_pearson(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """The exact binomial interval of ``k`` events in ``n`` trials (Clopper and Pearson 1934,
    Biometrika 26(4)): ``[B(alpha/2; k, n-k+1), B(1-alpha/2; k+1, n-k)]`` with ``B`` the beta
    quantile, 0 at ``k = 0`` and 1 at ``k = n`` (statsmodels' ``proportion_confint(method="beta")``)."""
    from scipy.stats import beta

    lo = 0.0 if k == 0 else float(beta.ppf(alpha / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - alpha / 2, k + 1, n - k))
    return lo, hi


def share(values: Sequence[Any] | np.ndarray, n_boot: int = 0, seed: int = 0, metric: str = "share") -> MetricResult:
    """Share of true (non-zero) values among the non-missing ones, with a percentile bootstrap
    CI over the units (exact resampling of Bernoulli units, see ``outcomes.rate``). With no
    event or only events the bootstrap's interval has zero width (every resample is 0 or 1),
    which a reader takes for certainty: there the interval is the exact binomial one
    (:func:`clopper_pearson`; ``extra["ci_method"] = "clopper_pearson"``)."""
    res = rate(values, n_boot, seed, metric)
    if n_boot and res.value is not None and res.value in (0.0, 1.0):
        n = int(res.n_items)
        res.ci = clopper_pearson(n if res.value == 1.0 else 0, n)
        res.extra["ci_method"] = "clopper_pearson"
    return res


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


def unit_resamples(n_units: int, n_boot: int, seed: int) -> np.ndarray | None:
    """How often each of ``n_units`` units is drawn in each of ``n_boot`` resamples, a (n_boot x
    n_units) count matrix, drawn exactly as :func:`statistic_ci` draws them (one
    ``integers(0, n, n)`` call per resample of ``default_rng(seed)``), so a statistic computed
    from these counts has the CI the per-resample loop gives, and cells that use one seed share
    one set of resamples. None where :func:`statistic_ci` has no interval (no bootstrap, fewer
    than two units). A statistic that is a function of count-weighted sums over the units is then
    one matrix product per resample set instead of a Python call per resample."""
    if not n_boot or n_units < 2:
        return None
    rng = np.random.default_rng(seed)
    idx = np.stack([rng.integers(0, n_units, size=n_units) for _ in range(n_boot)])
    flat = (idx + (np.arange(n_boot) * n_units)[:, None]).ravel()
    return np.bincount(flat, minlength=n_boot * n_units).reshape(n_boot, n_units).astype(float)


def cohen_kappa_resampled(x: np.ndarray, y: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Cohen's (1960, Educ. Psychol. Meas. 20(1), Eq. 1) unweighted kappa ``(p_o - p_e) / (1 -
    p_e)`` of two raters' labels over units resampled with ``counts`` (:func:`unit_resamples`):
    one value per resample, NaN where :func:`hvstats.cohen_kappa` of that resample is undefined
    (fewer than two units rated by both, chance agreement 1). The resample's contingency table
    is the counts times the units' (x, y) indicator, so all resamples are two matrix products;
    labels absent from a resample add nothing to ``p_o`` or ``p_e``."""
    from .kappa import MAX_CATEGORIES
    from .pairs import PairTable

    B = counts.shape[0]
    t = PairTable(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    if t.G == 0:
        return np.full(B, np.nan)
    if len(np.union1d(t.xu, t.yu)) > MAX_CATEGORIES:
        return np.full(B, np.nan)  # not categorical data: cohen_kappa is undefined on every resample
    T = np.asarray((t.onehot().T @ counts.T).T)  # (B x G) counts of each distinct (x, y) pair
    v = np.asarray(t.compute(T, ["cohen_kappa"])["cohen_kappa"], dtype=float)
    v[T.sum(axis=1) < 2] = np.nan
    v[~np.isfinite(v)] = np.nan
    return v


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
