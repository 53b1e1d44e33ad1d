"""Majority vote, acceptance outcomes and flag rates (BLEnD-Vis 2-of-3 majority,
ValueGround acceptance rule, Cultural Counterfactuals failure-flag rates).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .bootstrap import percentile_ci
from .result import MetricResult, undefined


def majority_vote(data: np.ndarray, min_votes: int = 1) -> np.ndarray:
    """Per-item most frequent value of an items x raters matrix (NaN = missing).

    Ties between the top categories, and items with fewer than ``min_votes`` ratings,
    give NaN (no majority).  With 3 raters and 2 categories this is the 2-of-3 rule.
    """
    X = np.asarray(data, dtype=float)
    mask = ~np.isnan(X)
    if not mask.any():
        return np.full(X.shape[0], np.nan)
    cats = np.unique(X[mask])
    codes = np.searchsorted(cats, np.where(mask, X, cats[0]))
    cnt = np.zeros((X.shape[0], len(cats)))
    rows = np.repeat(np.arange(X.shape[0])[:, None], X.shape[1], 1)
    np.add.at(cnt, (rows[mask], codes[mask]), 1.0)
    top = cnt.max(1)
    arg = cnt.argmax(1)
    tie = (cnt == top[:, None]).sum(1) > 1
    out = cats[arg].astype(float)
    out[tie | (mask.sum(1) < max(min_votes, 1))] = np.nan
    return out


def rate(flags: Iterable[Any], n_boot: int = 0, seed: int = 0, metric: str = "rate") -> MetricResult:
    """Share of truthy values (NaN/None ignored) with an optional bootstrap CI."""
    v = np.array([np.nan if f is None else float(f) for f in flags], dtype=float)
    v = v[~np.isnan(v)]
    if len(v) == 0:
        return undefined(metric, "no decisions")
    v = (v != 0).astype(float)
    ci = None
    if n_boot:
        rng = np.random.default_rng(seed)
        k = rng.binomial(len(v), v.mean(), size=n_boot) / len(v)  # = resampling Bernoulli items
        ci, _ = percentile_ci(k)
    return MetricResult(metric, float(v.mean()), ci, None, len(v), 0, None, {"count": int(v.sum())})


def flag_rates(
    table: Any,
    flags: list[str] | None = None,
    by: list[str] | None = None,
    unit: str = "judgement",
    n_boot: int = 0,
    seed: int = 0,
) -> dict[str, Any]:
    """Rate of each binary flag field, overall and per stratum.

    ``table``: long-format DataFrame (item, rater, field, value, strata...).  ``unit``:
    "judgement" (share of ratings with the flag set) or "item" (share of items whose
    majority sets the flag; ties count as not flagged).
    """
    import pandas as pd  # local: keep module import light

    df = table if isinstance(table, pd.DataFrame) else pd.DataFrame(list(table))
    if "field" not in df.columns:
        df = df.assign(field="value")
    flags = flags or sorted(df["field"].astype(str).unique())

    def one(d: pd.DataFrame) -> dict[str, Any]:
        res = {}
        for f in flags:
            s = d[d["field"].astype(str) == f]
            vals = pd.to_numeric(s["value"], errors="coerce")
            if unit == "item":
                piv = pd.DataFrame({"item": s["item"], "rater": s["rater"], "v": vals}).pivot_table(
                    index="item", columns="rater", values="v", aggfunc="first"
                )
                mv = majority_vote(piv.to_numpy(dtype=float))
                mv = np.where(np.isnan(mv), 0.0, mv)
                res[f] = rate(mv, n_boot, seed, "flag_rate").to_dict()
            else:
                res[f] = rate(vals.to_numpy(dtype=float), n_boot, seed, "flag_rate").to_dict()
        return res

    out: dict[str, Any] = {"overall": one(df), "unit": unit}
    for col in by or []:
        out.setdefault("strata", {})[col] = {str(k): one(g) for k, g in df.groupby(col, sort=True)}
    return out
