"""Binary decisions of a rater (e.g. a model judge) against a reference (e.g. the human
majority): confusion matrix, accuracy, precision, recall, F1, Cohen's kappa, and agreement
restricted to the positives (or negatives) of one side.

CQ-Bench (App. A.3) reports "94.5% alignment after removing values the model judged
negative": that is :func:`restricted_agreement` with ``given="pred", side="positive"`` (the
share of model-positive items on which the human also says positive, i.e. precision of the
model against the human reference).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .kappa import cohen_kappa
from .result import MetricResult, undefined

#: a vector of decisions: any labels, None / NaN = missing
Labels = Sequence[Any] | np.ndarray


def _binarise(v: Labels, positive: Any) -> np.ndarray:
    """1.0 where a decision equals ``positive``, 0.0 where it differs, NaN where it is missing."""
    arr = np.asarray(v)
    if arr.dtype.kind in "biuf" and isinstance(positive, (int, float, np.number)) and not isinstance(positive, str):
        # numeric decisions (the report's matrices): one vectorised comparison; a Python loop
        # here cost 11 s of a 100k-item validation report
        a = arr.astype(float)
        return np.where(np.isnan(a), np.nan, (a == positive).astype(float))
    v = np.asarray(v, dtype=object)
    out = np.full(len(v), np.nan)
    for i, a in enumerate(v):
        if a is None or (isinstance(a, float) and np.isnan(a)):
            continue
        out[i] = 1.0 if a == positive else 0.0
    return out


def confusion(pred: Labels, ref: Labels, positive: Any = 1) -> dict[str, Any]:
    """Confusion counts and rates of ``pred`` against the reference ``ref``."""
    p = _binarise(pred, positive)
    r = _binarise(ref, positive)
    m = ~np.isnan(p) & ~np.isnan(r)
    p, r = p[m], r[m]
    tp = int(((p == 1) & (r == 1)).sum())
    fp = int(((p == 1) & (r == 0)).sum())
    fn = int(((p == 0) & (r == 1)).sum())
    tn = int(((p == 0) & (r == 0)).sum())
    n = tp + fp + fn + tn

    def ratio(a: float, b: float) -> float | None:
        return a / b if b else None

    prec = ratio(tp, tp + fp)
    rec = ratio(tp, tp + fn)
    f1 = (2 * prec * rec / (prec + rec)) if prec is not None and rec is not None and (prec + rec) > 0 else None
    return {
        "n_items": n,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
        "accuracy": ratio(tp + tn, n),
        "precision": prec,
        "recall": rec,
        "f1": f1,
        "pred_positive_rate": ratio(tp + fp, n),
        "ref_positive_rate": ratio(tp + fn, n),
    }


def restricted_agreement(
    pred: Labels, ref: Labels, given: str = "pred", side: str = "positive", positive: Any = 1
) -> MetricResult:
    """Agreement among items where ``given`` ("pred" or "ref") says ``side``
    ("positive"/"negative").  given=pred, side=positive = precision; given=ref,
    side=positive = recall; negatives: NPV / specificity."""
    c = confusion(pred, ref, positive)
    if given == "pred":
        num, den = (c["tp"], c["tp"] + c["fp"]) if side == "positive" else (c["tn"], c["tn"] + c["fn"])
    elif given == "ref":
        num, den = (c["tp"], c["tp"] + c["fn"]) if side == "positive" else (c["tn"], c["tn"] + c["fp"])
    else:
        raise ValueError("given must be 'pred' or 'ref'")
    name = f"agreement_{given}_{side}"
    if den == 0:
        return undefined(name, f"no item where {given} is {side}", 0, 2)
    return MetricResult(name, num / den, None, None, den, 2, None, {"agree": num})


def binary_report(pred: Labels, ref: Labels, positive: Any = 1) -> dict[str, Any]:
    """Confusion matrix, accuracy/precision/recall/F1, kappa and all restricted agreements."""
    c = confusion(pred, ref, positive)
    p = _binarise(pred, positive)
    r = _binarise(ref, positive)
    out: dict[str, Any] = {"confusion": c, "cohen_kappa": cohen_kappa(p, r).to_dict()}
    for g in ("pred", "ref"):
        for s in ("positive", "negative"):
            res = restricted_agreement(pred, ref, g, s, positive)
            out[res.metric] = res.to_dict()
    return out
