"""``agreement_report``: the full JSON-serialisable agreement report of a long table."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any

import numpy as np
import pandas as pd

from .analysis import analyse_matrix
from .data import RatingTableError, infer_level, numeric_values, to_frame
from .result import to_jsonable

STRATUM_MIN_ITEMS = 2


def _single_thread_blas():
    """Run the report with one BLAS thread.  Its matrix products are small (resamples x
    patterns x tens of columns); on a shared 2-core machine OpenBLAS worker threads
    spin-waiting between them cost more CPU than they save (measured: 5.1-5.5 s CPU and
    11 s wall with the default threads vs 3.2-3.5 s CPU and 6-9 s wall with one, same run,
    load average 3-5).  threadpoolctl ships with scikit-learn; without it, a no-op."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover
        return nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def agreement_report(
    table: Any,
    fields: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    level: str | None = None,
    by: Sequence[str] = (),
    judges: Sequence[str] | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    n_splits: int = 100,
    positive: float | None = None,
) -> dict[str, Any]:
    """Agreement report of a long-format rating table.

    Per field: humans vs humans (multi-rater coefficients, pairwise matrix,
    leave-one-rater-out and split-half ceilings), each judge vs the humans, and the same
    per stratum of every ``by`` column (rows are filtered by the column's value, so rater-
    level columns work as well as item-level ones).

    ``level``: nominal / ordinal / interval / ratio; None infers it per field (non-numeric
    -> nominal, <= 10 distinct integers -> ordinal, else interval).  ``judges``: rater ids
    treated as judges; default: raters whose ``rater_kind`` is "model".  ``bootstrap``:
    number of item resamples for the 95% percentile CIs (0 = none).  The resamples of a
    (field, stratum) are shared by all its coefficients; seeds are derived from ``seed``.
    """
    with _single_thread_blas():
        return _report(table, fields, metrics, level, by, judges, bootstrap, seed, n_splits, positive)


def _report(table, fields, metrics, level, by, judges, bootstrap, seed, n_splits, positive) -> dict[str, Any]:
    df = to_frame(table)
    for c in by:
        if c not in df.columns:
            raise ValueError(f"missing stratum column: {c!r}")
    all_fields = list(dict.fromkeys(df["field"].tolist()))
    fields = list(fields) if fields else all_fields
    for f in fields:
        if f not in all_fields:
            raise ValueError(f"unknown field {f!r}; fields present: {all_fields}")
    out: dict[str, Any] = {
        "settings": {
            "fields": fields,
            "metrics": list(metrics) if metrics else None,
            "by": list(by),
            "bootstrap": bootstrap,
            "seed": seed,
            "ci_level": 0.95 if bootstrap else None,
        },
        "fields": {},
    }
    for fi, f in enumerate(fields):
        sub = df[df["field"] == f].reset_index(drop=True)
        out["fields"][f] = _field_report(sub, f, fi, level, by, judges, metrics, bootstrap, seed, n_splits, positive)
    return to_jsonable(out)


def _field_report(
    sub: pd.DataFrame,
    f: str,
    fi: int,
    level: str | None,
    by: Sequence[str],
    judges: Sequence[str] | None,
    metrics: Sequence[str] | None,
    bootstrap: int,
    seed: int,
    n_splits: int,
    positive: float | None,
) -> dict[str, Any]:
    """Report of field ``f`` (the ``fi``-th; its rows ``sub``): the whole field and every
    stratum of every ``by`` column.  Seeds: ``[seed, fi]`` for the field, ``[seed, fi, column
    + 1, group]`` for a stratum."""
    lv = level or infer_level(sub["value"].tolist())
    vals, labels = numeric_values(sub, lv)
    kinds = sub.groupby("rater")["rater_kind"].first()
    raters = sorted(kinds.index.tolist())
    if judges:
        jl = [r for r in raters if r in set(judges)]
        hl = [r for r in raters if r not in set(judges) and kinds[r] == "human"]
    else:
        jl = [r for r in raters if kinds[r] == "model"]
        hl = [r for r in raters if kinds[r] == "human"]
    cols = hl + jl
    # integer codes once per field; every stratum's matrix is then built from them
    item_codes, item_ids = pd.factorize(sub["item"], sort=False)
    rater_codes, rater_ids = pd.factorize(sub["rater"], sort=False)
    colpos = {r: k for k, r in enumerate(cols)}
    rcol = np.array([colpos.get(r, -1) for r in rater_ids], dtype=np.int64)[rater_codes]

    def run(rows: np.ndarray | None, sseq: np.random.SeedSequence) -> dict[str, Any]:
        if rows is None:
            X = _matrix(item_codes, len(item_ids), rcol, vals, cols, item_ids, f)
        else:
            X = _matrix(item_codes[rows], None, rcol[rows], vals[rows], cols, item_ids, f)
        return analyse_matrix(
            X,
            cols,
            hl,
            jl,
            lv,
            metrics,
            bootstrap,
            np.random.default_rng(sseq),
            n_splits=n_splits,
            seed=seed,
            positive=positive,
        )

    fo = run(None, np.random.SeedSequence([seed, fi]))
    if labels is not None:
        fo["labels"] = list(labels)
    strata: dict[str, Any] = {}
    for ci, col in enumerate(by):
        groups = sub.groupby(sub[col].astype(str), sort=True).indices
        cs: dict[str, Any] = {}
        for gi, (g, rows) in enumerate(groups.items()):
            n_g = len(np.unique(item_codes[rows]))
            if n_g < STRATUM_MIN_ITEMS:
                cs[g] = {"reason": f"undefined: fewer than {STRATUM_MIN_ITEMS} items", "n_items": int(n_g)}
                continue
            cs[g] = run(rows, np.random.SeedSequence([seed, fi, ci + 1, gi]))
        strata[col] = cs
    if by:
        fo["strata"] = strata
    return fo


def _matrix(
    item_codes: np.ndarray,
    n_items: int | None,
    rater_col: np.ndarray,
    values: np.ndarray,
    cols: list[str],
    item_ids,
    field: str,
) -> np.ndarray:
    """items x raters matrix from integer codes (``rater_col`` -1: rater not analysed; its
    items still count).  ``n_items``: codes are already 0..n_items-1, all present.
    Row order is irrelevant to every statistic (rows are collapsed into sorted patterns)."""
    if n_items is None:
        items, ii = np.unique(item_codes, return_inverse=True)
        n_items = len(items)
    else:
        items, ii = None, item_codes
    R = len(cols)
    keep = rater_col >= 0
    ii, rr, v = ii[keep], rater_col[keep], values[keep]
    key = ii.astype(np.int64) * R + rr
    cnt = np.bincount(key, minlength=n_items * R)
    if (cnt > 1).any():
        k = int(np.argmax(cnt > 1))
        row = k // R if items is None else int(items[k // R])
        raise RatingTableError(
            f"duplicate rating for item {str(item_ids[row])!r}, rater {cols[k % R]!r} in field {field!r}"
        )
    X = np.full((n_items, R), np.nan)
    X[ii, rr] = v
    return X
