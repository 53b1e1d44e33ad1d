"""Turing-style pair judgements (CQ-Bench, Sec. 3.2): a rater sees a human-written and a
model-written utterance in random order and says which one is human, or "tie".

Scoring (our default, PROTOCOLS.md sec. 5): ``accuracy`` counts a tie as not correct;
``accuracy_non_tie`` is the accuracy over the non-tie answers; ``tie_rate`` the share of
ties.  ``p_value`` is the exact two-sided binomial test (scipy.stats.binomtest) of the
correct count among *non-tie* answers against 0.5 (a tie carries no direction);
``p_value_ties_incorrect`` tests correct / all answers against 0.5.
Results per rater, pooled over all answers, and the macro mean of per-rater accuracies.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from scipy.stats import binomtest

from .result import MetricResult, undefined

TIE_TOKENS = {"tie", "TIE", "Tie", "both", "equal", "same", "unsure"}


def _score(answers: Sequence[Any], truth: Sequence[Any] | None) -> np.ndarray:
    """1 = correct, 0 = incorrect, -1 = tie."""
    out = np.empty(len(answers))
    for i, a in enumerate(answers):
        if a is None or (isinstance(a, str) and a.strip() in TIE_TOKENS):
            out[i] = -1
        elif truth is None:
            if isinstance(a, str):
                s = a.strip().lower()
                out[i] = 1 if s in ("correct", "1", "true") else 0 if s in ("incorrect", "0", "false") else -1
            else:
                out[i] = 1 if float(a) == 1 else 0
        else:
            out[i] = 1 if a == truth[i] else 0
    return out


def _one(name: str, s: np.ndarray) -> MetricResult:
    n = len(s)
    if n == 0:
        return undefined(name, "no answers")
    correct = int((s == 1).sum())
    ties = int((s == -1).sum())
    nt = n - ties
    p_nt = float(binomtest(correct, nt, 0.5).pvalue) if nt else None
    p_all = float(binomtest(correct, n, 0.5).pvalue)
    return MetricResult(
        name,
        correct / n,
        None,
        p_nt,
        n,
        1,
        None,
        {
            "correct": correct,
            "ties": ties,
            "tie_rate": ties / n,
            "accuracy_non_tie": (correct / nt) if nt else None,
            "p_value_ties_incorrect": p_all,
        },
    )


def turing_accuracy(
    answers: Iterable[Any], truth: Iterable[Any] | None = None, raters: Iterable[Any] | None = None
) -> dict[str, Any]:
    """Accuracy of Turing-pair answers.

    ``answers``: the chosen option per judgement ("A"/"B"/"tie"), compared with ``truth``
    (the option that is human-written); or, with ``truth=None``, already-scored answers
    (1/"correct", 0/"incorrect", "tie").  ``raters`` (optional) gives per-rater results.
    """
    answers = list(answers)
    truth_l = list(truth) if truth is not None else None
    s = _score(answers, truth_l)
    out: dict[str, Any] = {"pooled": _one("turing_accuracy", s).to_dict()}
    if raters is not None:
        raters = np.asarray(list(raters), dtype=object)
        per = {}
        for r in sorted(set(raters.tolist()), key=str):
            per[str(r)] = _one("turing_accuracy", s[raters == r]).to_dict()
        out["per_rater"] = per
        accs = [v["value"] for v in per.values() if v["value"] is not None]
        out["macro_accuracy"] = float(np.mean(accs)) if accs else None
    return out
