"""``agreement_report``: the full JSON-serialisable agreement report of a long table."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .analysis import analyse_matrix
from .data import infer_level, numeric_values, pivot, to_frame
from .result import to_jsonable

STRATUM_MIN_ITEMS = 2


def agreement_report(table: Any, fields: Sequence[str] | None = None, metrics: Sequence[str] | None = None,
                     level: str | None = None, by: Sequence[str] = (), judges: Sequence[str] | None = None,
                     bootstrap: int = 1000, seed: int = 0, n_splits: int = 100,
                     positive: float | None = None) -> dict[str, Any]:
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
    df = to_frame(table)
    for c in by:
        if c not in df.columns:
            raise ValueError(f"missing stratum column: {c!r}")
    all_fields = list(dict.fromkeys(df["field"].tolist()))
    fields = list(fields) if fields else all_fields
    for f in fields:
        if f not in all_fields:
            raise ValueError(f"unknown field {f!r}; fields present: {all_fields}")
    ss = np.random.SeedSequence(seed)
    out: dict[str, Any] = {"settings": {"fields": fields, "metrics": list(metrics) if metrics else None,
                                        "by": list(by), "bootstrap": bootstrap, "seed": seed,
                                        "ci_level": 0.95 if bootstrap else None}, "fields": {}}
    for fi, f in enumerate(fields):
        sub = df[df["field"] == f].reset_index(drop=True)
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
        seeds = ss.spawn(1 + len(by))[0:1 + len(by)]  # noqa: F841 (deterministic per field below)
        fseed = np.random.SeedSequence([seed, fi])

        def run(rows, sseq):
            X, items = pivot(sub.iloc[rows] if rows is not None else sub,
                             vals[rows] if rows is not None else vals, cols)
            return analyse_matrix(X, cols, hl, jl, lv, metrics, bootstrap, np.random.default_rng(sseq),
                                  n_splits=n_splits, seed=seed, positive=positive)
        fo = run(None, fseed)
        if labels is not None:
            fo["labels"] = list(labels)
        strata: dict[str, Any] = {}
        for ci, col in enumerate(by):
            groups = sub.groupby(sub[col].astype(str), sort=True).indices
            cs: dict[str, Any] = {}
            for gi, (g, rows) in enumerate(groups.items()):
                if len(np.unique(sub["item"].to_numpy()[rows])) < STRATUM_MIN_ITEMS:
                    cs[g] = {"reason": f"undefined: fewer than {STRATUM_MIN_ITEMS} items", "n_items": int(len(np.unique(sub['item'].to_numpy()[rows])))}
                    continue
                cs[g] = run(rows, np.random.SeedSequence([seed, fi, ci + 1, gi]))
            strata[col] = cs
        if by:
            fo["strata"] = strata
        out["fields"][f] = fo
    return to_jsonable(out)
