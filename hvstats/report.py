"""``agreement_report``: the full JSON-serialisable agreement report of a long table."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from .alt_test import DEFAULT_EPSILON, DEFAULT_Q, alt_test, alt_test_joint
from .analysis import analyse_matrix
from .answers import MIN_HUMANS_TESTED as MIN_HUMANS_TESTED
from .answers import degenerate_warnings, judge_answers
from .data import RatingTableError, infer_level, numeric_values, to_frame
from .notes import exact_share_interval, report_notes
from .options import VERDICTS
from .ppi import DEFAULT_ALPHA, attach_labels_saved, ppi_mean
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
    verdicts: Sequence[str] = (),
    epsilon: float = DEFAULT_EPSILON,
    half_width: float | None = None,
    joint_alt_test: bool = False,
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

    ``verdicts``: any of "alt_test" and "ppi", added to ``judges_vs_humans[judge]`` of every
    field and stratum where they apply: the alt-test (:mod:`.alt_test`; accuracy for nominal
    fields, negative RMSE otherwise, margin ``epsilon``) and the PPI++ mean of numeric or
    binary fields (:mod:`.ppi`; items with judge but no human ratings are the unlabelled
    ones; ``half_width`` adds the budget advice).  ``joint_alt_test``: also one alt-test
    per judge over all strata (or, without ``by``, all fields) with one BY correction,
    under the top-level key ``alt_test_joint``.
    """
    bad = [v for v in verdicts if v not in VERDICTS]
    if bad:
        raise ValueError(f"unknown verdict(s) {bad}; choose from {list(VERDICTS)}")
    if not 0 <= epsilon < 1:
        raise ValueError("epsilon must be in [0, 1)")
    if half_width is not None and half_width <= 0:
        raise ValueError("half_width must be positive")
    vopts = _VerdictOptions(tuple(verdicts), epsilon, half_width, joint_alt_test)
    with _single_thread_blas():
        return _report(table, fields, metrics, level, by, judges, bootstrap, seed, n_splits, positive, vopts)


class _VerdictOptions(NamedTuple):
    verdicts: tuple[str, ...]
    epsilon: float
    half_width: float | None
    joint: bool


def _report(
    table, fields, metrics, level, by, judges, bootstrap, seed, n_splits, positive, vopts: _VerdictOptions
) -> dict[str, Any]:
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
    if vopts.verdicts:
        out["settings"].update(
            verdicts=list(vopts.verdicts),
            epsilon=vopts.epsilon,
            alt_test_q=DEFAULT_Q,
            ppi_alpha=DEFAULT_ALPHA,
            half_width=vopts.half_width,
            joint_alt_test=vopts.joint,
        )
    envs: dict[str, dict[str, tuple]] = {}
    whole: dict[str, dict[str, tuple]] = {}
    for fi, f in enumerate(fields):
        sub = df[df["field"] == f].reset_index(drop=True)
        out["fields"][f] = _field_report(
            sub, f, fi, level, by, judges, metrics, bootstrap, seed, n_splits, positive, vopts, envs, whole
        )
    if vopts.joint and "alt_test" in vopts.verdicts:
        out["alt_test_joint"] = {j: alt_test_joint(e, epsilon=vopts.epsilon) for j, e in envs.items()}
    if "alt_test" in vopts.verdicts:
        # one answer per judge over the fields' whole-field alt-tests (hvstats/answers.py)
        out["answers"] = judge_answers(whole, vopts.epsilon)
        if "ppi" in vopts.verdicts:  # each answer's headline of human labels saved (.ppi)
            ppi = {
                f: {j: v.get("ppi") for j, v in (fr.get("judges_vs_humans") or {}).items()}
                for f, fr in out["fields"].items()
                if any(f in e for e in whole.values())  # the fields the answers are over
            }
            attach_labels_saved(out["answers"], ppi)
    out = to_jsonable(out)
    # what makes a number uninformative or rough, once for every output (hvstats/notes.py)
    out["notes"] = report_notes(out)
    return out


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
    vopts: _VerdictOptions,
    envs: dict[str, dict[str, tuple]],
    whole: dict[str, dict[str, tuple]],
) -> dict[str, Any]:
    """Report of field ``f`` (the ``fi``-th; its rows ``sub``): the whole field and every
    stratum of every ``by`` column.  Seeds: ``[seed, fi]`` for the field, ``[seed, fi, column
    + 1, group]`` for a stratum."""
    fc = field_codes(sub, level, judges)
    lv, labels, hl, jl, cols = fc.level, fc.labels, fc.humans, fc.judges, fc.humans + fc.judges
    item_codes, item_ids, rcol, vals = fc.item_codes, fc.item_ids, fc.rater_col, fc.values

    def run(rows: np.ndarray | None, sseq: np.random.SeedSequence, env: str | None) -> dict[str, Any]:
        if rows is None:
            X = _matrix(item_codes, len(item_ids), rcol, vals, cols, item_ids, f)
        else:
            X = _matrix(item_codes[rows], None, rcol[rows], vals[rows], cols, item_ids, f)
        res = analyse_matrix(
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
        _exact_percent_agreement(res)
        if vopts.verdicts:
            _add_verdicts(res, X, hl, jl, lv, labels, vopts, fc.zero_one)
            scoring = "accuracy" if lv == "nominal" else "neg_rmse"
            if env is not None and vopts.joint:
                for k, j in enumerate(jl):
                    envs.setdefault(j, {})[env] = (X[:, : len(hl)], X[:, len(hl) + k], hl, scoring)
            if rows is None and hl and "alt_test" in vopts.verdicts:
                for k, j in enumerate(jl):
                    whole.setdefault(j, {})[f] = (X[:, : len(hl)], X[:, len(hl) + k], hl, scoring)
        return res

    fo = run(None, np.random.SeedSequence([seed, fi]), None if by else f)
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
            cs[g] = run(rows, np.random.SeedSequence([seed, fi, ci + 1, gi]), f"{f}/{col}={g}")
        strata[col] = cs
    if by:
        fo["strata"] = strata
    return fo


class FieldCodes(NamedTuple):
    """One field's rows as integer codes: the level, numeric values (nominal labels coded in
    ``labels`` order), the human and judge columns, each row's item code and column."""

    level: str
    values: np.ndarray
    labels: np.ndarray | None
    humans: list[str]
    judges: list[str]
    item_codes: np.ndarray
    item_ids: Any
    rater_col: np.ndarray
    #: every value is 0 or 1 (a two-label field, or numbers that are all 0 or 1): its means are shares
    zero_one: bool


def field_codes(sub: pd.DataFrame, level: str | None, judges: Sequence[str] | None) -> FieldCodes:
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
    seen = vals[~np.isnan(vals)]
    zero_one = bool(len(seen)) and ((labels is not None and len(labels) == 2) or bool(np.isin(seen, (0.0, 1.0)).all()))
    return FieldCodes(lv, vals, labels, hl, jl, item_codes, item_ids, rcol, zero_one)


def judge_verdicts(
    table: Any,
    levels: dict[str, str] | None = None,
    epsilon: float = DEFAULT_EPSILON,
    half_width: float | None = None,
) -> dict[str, dict[str, dict[str, Any]]]:
    """The verdicts alone (no coefficients, no bootstrap), ``{field: {judge: {"alt_test",
    "ppi"}}}`` for every field of a long table with humans and judges: exactly the entries
    :func:`agreement_report` adds with ``verdicts=("alt_test", "ppi")`` (same matrices, same
    functions), at the cost of the verdicts only. ``levels`` per field (None: inferred)."""
    if not 0 <= epsilon < 1:
        raise ValueError("epsilon must be in [0, 1)")
    df = to_frame(table)
    vopts = _VerdictOptions(VERDICTS, epsilon, half_width, False)
    out: dict[str, dict[str, dict[str, Any]]] = {}
    groups = df.groupby("field", sort=False).indices
    for f, rows in groups.items():
        fc = field_codes(df.iloc[rows].reset_index(drop=True), (levels or {}).get(f), None)
        if not fc.humans or not fc.judges:
            continue
        cols = fc.humans + fc.judges
        X = _matrix(fc.item_codes, len(fc.item_ids), fc.rater_col, fc.values, cols, fc.item_ids, f)
        res: dict[str, Any] = {"judges_vs_humans": {}}
        _add_verdicts(res, X, fc.humans, fc.judges, fc.level, fc.labels, vopts, fc.zero_one)
        out[f] = to_jsonable(res["judges_vs_humans"])
    return out


def verdict_answers(
    table: Any,
    levels: dict[str, str] | None = None,
    epsilon: float = DEFAULT_EPSILON,
) -> list[dict[str, Any]]:
    """One answer per judge (:func:`.answers.judge_answers`) of a long table with humans and
    judges: the ``"answers"`` :func:`agreement_report` adds with ``verdicts`` including
    "alt_test" (same whole-field matrices), without the rest of the report."""
    if not 0 <= epsilon < 1:
        raise ValueError("epsilon must be in [0, 1)")
    df = to_frame(table)
    whole: dict[str, dict[str, tuple]] = {}
    for f, rows in df.groupby("field", sort=False).indices.items():
        fc = field_codes(df.iloc[rows].reset_index(drop=True), (levels or {}).get(f), None)
        if not fc.humans or not fc.judges:
            continue
        cols = fc.humans + fc.judges
        X = _matrix(fc.item_codes, len(fc.item_ids), fc.rater_col, fc.values, cols, fc.item_ids, f)
        scoring = "accuracy" if fc.level == "nominal" else "neg_rmse"
        for k, j in enumerate(fc.judges):
            whole.setdefault(j, {})[f] = (X[:, : len(fc.humans)], X[:, len(fc.humans) + k], fc.humans, scoring)
    return to_jsonable(judge_answers(whole, epsilon))


def joint_alt_tests(
    table: Any,
    levels: dict[str, str] | None = None,
    by: str | None = None,
    epsilon: float = DEFAULT_EPSILON,
) -> dict[str, dict[str, Any]]:
    """Per judge, one alt-test over several environments with one Benjamini-Yekutieli
    correction (:func:`.alt_test.alt_test_joint`): the fields, or with ``by`` every field's
    strata of that column. The same matrices as :func:`agreement_report`; environments are
    named ``field`` or ``field/by=value``."""
    if not 0 <= epsilon < 1:
        raise ValueError("epsilon must be in [0, 1)")
    df = to_frame(table)
    if by is not None and by not in df.columns:
        raise ValueError(f"missing stratum column: {by!r}")
    envs: dict[str, dict[str, tuple]] = {}
    for f, rows in df.groupby("field", sort=False).indices.items():
        sub = df.iloc[rows].reset_index(drop=True)
        fc = field_codes(sub, (levels or {}).get(f), None)
        if not fc.humans or not fc.judges:
            continue
        cols = fc.humans + fc.judges
        scoring = "accuracy" if fc.level == "nominal" else "neg_rmse"
        parts = (
            [(f, None)]
            if by is None
            else [(f"{f}/{by}={g}", r) for g, r in sub.groupby(sub[by].astype(str), sort=True).indices.items()]
        )
        for name, r in parts:
            if r is None:
                X = _matrix(fc.item_codes, len(fc.item_ids), fc.rater_col, fc.values, cols, fc.item_ids, f)
            else:
                X = _matrix(fc.item_codes[r], None, fc.rater_col[r], fc.values[r], cols, fc.item_ids, f)
            for k, j in enumerate(fc.judges):
                envs.setdefault(j, {})[name] = (X[:, : len(fc.humans)], X[:, len(fc.humans) + k], fc.humans, scoring)
    return to_jsonable({j: alt_test_joint(e, epsilon=epsilon) for j, e in envs.items()})


def _add_verdicts(
    res: dict[str, Any],
    X: np.ndarray,
    hl: list[str],
    jl: list[str],
    level: str,
    labels: np.ndarray | None,
    vopts: _VerdictOptions,
    zero_one: bool = False,
) -> None:
    """Add ``alt_test`` and/or ``ppi`` to ``res["judges_vs_humans"][judge]`` for the items x
    (humans + judges) matrix ``X`` of one field or stratum.  PPI applies to numeric fields and
    to nominal fields with two labels (coded 0/1 in label order, the second label = 1).

    The alt-test carries ``warnings`` (:func:`.answers.degenerate_warnings`: no variation, one
    category, too few humans, no common item). A ``zero_one`` field's PPI++ and human-only
    means at exactly 0 or 1 get the exact binomial interval (``ci_method`` /
    ``classical_ci_method`` = ``"clopper_pearson"``): there every human label is the same, the
    power-tuned lambda is 0 (no covariance), so the PPI++ estimate is the human-only mean and
    both normal (Wald) intervals have zero width."""
    jout = res.get("judges_vs_humans")
    if jout is None:
        return
    H = X[:, : len(hl)]
    obs = ~np.isnan(H)
    cnt = obs.sum(axis=1)
    binary = level == "nominal" and labels is not None and len(labels) == 2
    for k, j in enumerate(jl):
        y = X[:, len(hl) + k]
        jd = jout.setdefault(j, {})
        if "alt_test" in vopts.verdicts:
            scoring = "accuracy" if level == "nominal" else "neg_rmse"
            a = jd["alt_test"] = alt_test(H, y, hl, scoring, vopts.epsilon)
            a["warnings"] = degenerate_warnings(H, y, int(a.get("n_humans") or 0))
        if "ppi" in vopts.verdicts and (level != "nominal" or binary):
            has_y = ~np.isnan(y)
            lab = (cnt > 0) & has_y
            with np.errstate(invalid="ignore"):
                Y = np.nansum(H[lab], axis=1) / cnt[lab]
            rpi = float(cnt[lab].mean()) if lab.any() else None
            p = ppi_mean(Y, y[lab], y[(cnt == 0) & has_y], half_width=vopts.half_width, ratings_per_item=rpi)
            p["n_labeled_without_judge"] = int(((cnt > 0) & ~has_y).sum())
            if binary:
                p["positive_label"] = labels[1]
            if zero_one:
                _exact_ppi_intervals(p)
            jd["ppi"] = p


def _exact_ppi_intervals(p: dict[str, Any]) -> None:
    """Clopper-Pearson (Clopper and Pearson 1934) on the ``n_labeled`` human-labelled items for
    a 0/1 mean at 0 or 1 (see :func:`_add_verdicts`)."""
    n = int(p.get("n_labeled") or 0)
    for est, ci, method in (
        ("classical_estimate", "classical_ci", "classical_ci_method"),
        ("estimate", "ci", "ci_method"),
    ):
        exact = exact_share_interval(p.get(est), n, p.get("alpha", DEFAULT_ALPHA))
        if exact is not None and p.get(ci) is not None:
            p[ci] = [exact[0], exact[1]]
            p[method] = "clopper_pearson"


def _exact_percent_agreement(res: dict[str, Any]) -> None:
    """Percent agreement at exactly 0% or 100% has a zero-width bootstrap interval (every
    resample agrees, or none does): replace it with the Clopper-Pearson interval over its items
    (each item's agreement counted as one unit; ``ci_method = "clopper_pearson"``)."""
    blocks = [res.get("humans_vs_humans") or {}] + [
        jd.get("vs_human_majority") or {} for jd in (res.get("judges_vs_humans") or {}).values()
    ]
    for b in blocks:
        d = b.get("percent_agreement")
        if isinstance(d, dict) and d.get("ci") is not None:
            exact = exact_share_interval(d.get("value"), int(d.get("n_items") or 0))
            if exact is not None:
                d["ci"] = [exact[0], exact[1]]
                d["ci_method"] = "clopper_pearson"


def item_rater_matrix(
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


_matrix = item_rater_matrix  # the name this module's callers use
