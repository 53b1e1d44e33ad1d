"""Active estimates (:mod:`.active`) from a long-format rating table with a ``pi`` column.

The table is the agreement report's (``item``, ``rater``, ``value``, ``field``, ``rater_kind``,
strata columns) plus ``pi``: the probability with which each item was sampled for human
labelling, given on the item's rows (every row of an item carries the same value; rows
with it empty are ignored).  All items are listed, the unlabelled ones with the judge's
rating only (or with a human row whose value is empty).  Per field and judge: the item's
human value is the mean of its human ratings (numeric fields; a two-label nominal field is
coded 0/1, the second label in natural order = 1, as :mod:`.report` does for PPI), ``xi = 1``
where it has one, ``f`` the judge's value.  Items without the judge's value are left out of
that judge's estimate (counted in ``n_items_without_judge``): the estimate is then the mean
over the items the judge rated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .active import DEFAULT_ALPHA, active_mean
from .data import RatingTableError, to_frame
from .notes import exact_share_interval
from .report import field_codes
from .result import to_jsonable

METHOD = (
    "active inference (Zrnic and Candes, ICML 2024): mean_i(lambda f_i + (Y_i - lambda f_i) xi_i / pi_i), "
    "power-tuned lambda (1 below 200 labels), CLT interval; valid for a sample drawn with the given pi (fixed in advance)"
)


def _item_pi(df: pd.DataFrame) -> pd.Series:
    raw = df["pi"]
    miss = raw.isna() | raw.map(lambda v: isinstance(v, str) and v.strip() == "")
    num = pd.to_numeric(raw.where(~miss, None), errors="coerce")
    bad = num.isna() & ~miss
    if bad.any():
        i = int(np.argmax(bad.to_numpy()))
        line = df["_line"].iloc[i] if "_line" in df.columns else i + 1
        raise RatingTableError(f"line {line}: pi {raw.iloc[i]!r} is not a number")
    num = num.astype(float)
    out_of = num.notna() & ((num <= 0) | (num > 1))
    if out_of.any():
        i = int(np.argmax(out_of.to_numpy()))
        line = df["_line"].iloc[i] if "_line" in df.columns else i + 1
        raise RatingTableError(f"line {line}: pi must be in (0, 1], got {raw.iloc[i]!r}")
    g = pd.DataFrame({"item": df["item"], "pi": num}).dropna().groupby("item")["pi"]
    spread = g.max() - g.min()
    if (spread > 1e-12).any():
        raise RatingTableError(f"item {spread[spread > 1e-12].index[0]!r} has different pi values on its rows")
    pi = g.first().reindex(pd.unique(df["item"]))
    if pi.isna().any():
        raise RatingTableError(f"item {pi[pi.isna()].index[0]!r} has no pi (the probability it was sampled with)")
    return pi


def active_table(
    table: Any,
    fields: Sequence[str] | None = None,
    level: str | None = None,
    by: Sequence[str] = (),
    judges: Sequence[str] | None = None,
    alpha: float = DEFAULT_ALPHA,
) -> dict[str, Any]:
    """``{"method", "alpha", "fields": {field: {"level", "judges": {judge: active_mean result +
    n_items_without_judge}, "strata": {column: {value: {judge: result}}}} or {"reason"}}}``."""
    df = to_frame(table)
    if "pi" not in df.columns:
        raise RatingTableError("active estimates need a 'pi' column (the probability each item was sampled with)")
    for c in by:
        if c not in df.columns:
            raise RatingTableError(f"missing stratum column: {c!r}")
    pi_all = _item_pi(df)
    all_fields = list(dict.fromkeys(df["field"].tolist()))
    out: dict[str, Any] = {"method": METHOD, "alpha": alpha, "fields": {}}
    for f in fields or all_fields:
        if f not in all_fields:
            raise RatingTableError(f"unknown field {f!r}; fields present: {all_fields}")
        sub = df[df["field"] == f].reset_index(drop=True)
        out["fields"][f] = _field(sub, level, by, judges, pi_all, alpha)
    return to_jsonable(out)


def _field(sub, level, by, judges, pi_all, alpha) -> dict[str, Any]:
    fc = field_codes(sub, level, judges)
    binary = fc.level == "nominal" and fc.labels is not None and len(fc.labels) == 2
    if fc.level == "nominal" and not binary:
        return {"level": fc.level, "reason": "not applicable: a nominal field with more than two labels"}
    if not fc.judges:
        return {"level": fc.level, "reason": "no judge (rater_kind=model or --judge)"}
    items = list(fc.item_ids)
    nh = len(fc.humans)
    X = np.full((len(items), nh + len(fc.judges)), np.nan)
    keep = fc.rater_col >= 0
    X[fc.item_codes[keep], fc.rater_col[keep]] = fc.values[keep]
    H = X[:, :nh]
    cnt = (~np.isnan(H)).sum(axis=1)
    with np.errstate(invalid="ignore"):
        y = np.where(cnt > 0, np.nansum(H, axis=1) / np.maximum(cnt, 1), np.nan)
    pi = pi_all.reindex(items).to_numpy(dtype=float)
    res: dict[str, Any] = {"level": fc.level, "judges": {}}
    if binary:
        res["positive_label"] = fc.labels[1]
    groups = {c: sub.groupby("item")[c].first().reindex(items).astype(str).to_numpy() for c in by}
    for k, j in enumerate(fc.judges):
        fj = X[:, nh + k]
        has = ~np.isnan(fj)
        r = exact_at_bounds(active_mean(y[has], fj[has], pi[has], alpha=alpha), fc.zero_one, alpha)
        r["n_items_without_judge"] = int((~has).sum())
        res["judges"][j] = r
        for c, g in groups.items():
            st = res.setdefault("strata", {}).setdefault(c, {})
            for v in sorted(set(g[has].tolist())):
                m = has & (g == v)
                st.setdefault(v, {})[j] = exact_at_bounds(
                    active_mean(y[m], fj[m], pi[m], alpha=alpha), fc.zero_one, alpha
                )
    return res


def exact_at_bounds(r: dict[str, Any], zero_one: bool, alpha: float) -> dict[str, Any]:
    """A 0/1 field's active (and human-only) mean at exactly 0 or 1 with a zero-width CLT
    interval (every human label the same, lambda 0): the exact binomial interval over its human
    labels instead (Clopper and Pearson 1934; ``ci_method = "clopper_pearson"``), as
    :mod:`.report` does for PPI++."""
    n = int(r.get("n_labeled") or 0)
    for d in (r, r.get("human_only") or {}):
        ci = d.get("ci")
        if zero_one and ci is not None and ci[0] == ci[1]:
            exact = exact_share_interval(d.get("estimate"), n, alpha)
            if exact is not None:
                d["ci"] = [exact[0], exact[1]]
                d["ci_method"] = "clopper_pearson"
    return r
