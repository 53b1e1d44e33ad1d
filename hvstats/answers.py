"""One answer per judge: can it replace the annotators, on which fields, and how sure is that.

The per-field verdicts are the alternative annotator test (Calderon, Reichart and Dror, ACL
2025, Sec. 3; :mod:`.alt_test`) of the judge on each field, on all its items (no stratum).
They are summarised here into one answer per judge:

- ``"replace"``: the judge passes on every field (every field could be tested);
- ``"some_fields"``: it passes on some fields (``fields_passed``) and fails on, or cannot be
  tested on, the others;
- ``"cannot"``: it passes on no field and fails on at least one;
- ``"cannot_tell"``: no field could be tested (the reason says why, per field).

A field cannot be tested ("undecided") when the alt-test gives no verdict (no human with
:data:`.alt_test.MIN_ITEMS_PER_HUMAN` items rated by another human and the judge), when fewer
than :data:`MIN_HUMANS_TESTED` humans were tested (the paper's minimum of three annotators,
Sec. 3 and its FAQ), or when there is no variation at all (every human and the judge give one
value: the test passes on it trivially).

**Multiplicity.** Within a field the humans' p-values go through the paper's
Benjamini-Yekutieli correction at ``q`` (0.05). Across fields nothing more is applied: each
field's verdict stands at its own level and the answer, their summary, claims no family-wise
guarantee across fields (:data:`MULTIPLICITY`). The joint alt-test (``alt_test_joint``, the
reference FAQ's "several environments"), one correction over every (field, human), is the
option for a guarantee across fields.

**How sure: leave-one-human-out stability** (HV's own robustness check, not part of the
paper). Each human of the judge's fields is removed in turn and the alt-test rerun on the
rest of every field (a field decided on the full data needs one tested human fewer in a
replicate, ``MIN_HUMANS_TESTED - 1``, so that a study at the paper's minimum of three humans
is not undecided in every replicate by construction); ``stability`` is the share of these replicates whose answer (the verdict
and the lists of passed and failed fields) is the same as the full data's, ``flipped_by``
names the humans whose removal changes it. The answer is ``borderline`` when ``stability < 1``
(one person decides it) or when a tested field's winning rate omega is exactly the pass
threshold 0.5.

**Who enters the references.** A human with fewer than 30 items is not tested (no t-test of
their own), but their ratings stay in the other humans' leave-one-out references: the paper
scores each held-out annotator ``j`` against every other annotator who rated the instance
(``H[i] \\ {j}``), and the 30-item minimum concerns only the normal approximation of ``j``'s
own t-test (FAQ "How many instances should I annotate?"); the reference implementation
(``alt_test`` of github.com/nitaytech/AltTest) does the same. A few ratings by such a person
can therefore move other people's tests on a small study; the leave-one-human-out stability
is what shows it (the person's removal is one of the replicates).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .alt_test import DEFAULT_Q, PASS_RATE, alt_test

#: the alt-test paper's least number of human annotators (Calderon, Reichart and Dror, ACL
#: 2025, Sec. 3: "at least three annotators"); with two, each is held out against one other
MIN_HUMANS_TESTED = 3
VERDICT_KINDS = ("replace", "some_fields", "cannot", "cannot_tell")
#: how multiple testing is handled, as the answer states it
MULTIPLICITY = {
    "across_humans": "Benjamini-Yekutieli step-up over each field's tested humans (Calderon, Reichart "
    "and Dror 2025, Sec. 3)",
    "across_fields": "none: each field's verdict stands at its own level q; the answer summarises them "
    "and claims no family-wise guarantee across fields (the joint alt-test applies one correction "
    "across fields)",
}
STABILITY_RULE = (
    "leave-one-human-out: share of the replicates (each human removed in turn, the alt-test rerun on "
    "the rest, a decided field needing one tested human fewer) with the same answer; borderline when below 1 or when a field's winning rate is exactly 0.5 "
    "(HV's own robustness check, not part of the alt-test paper)"
)

#: one field of one judge: (items x humans matrix, the judge's vector, the humans' names, scoring)
Environment = tuple[np.ndarray, np.ndarray, Sequence[str], str]


def degenerate_warnings(H: np.ndarray, y: np.ndarray, n_humans_tested: int) -> list[str]:
    """What makes an alt-test verdict uninformative, in the reader's words (the verdict itself
    stays the reference's): no variation at all on the tested items (every human and the judge
    give one value: the reference passes with omega = rho = 1 and p = 0), one category only among
    the humans (they never disagree), too few humans tested, and a judge that rated no item a
    human rated. ``H``: items x humans, ``y``: the judge (NaN = none)."""
    H = np.asarray(H, dtype=float)
    y = np.asarray(y, dtype=float)
    obs = ~np.isnan(H)
    has_y = ~np.isnan(y)
    out: list[str] = []
    if not (obs.any(1) & has_y).any():
        return ["the judge rated no item a human rated: the test cannot tell"]
    kept = (obs.sum(1) >= 2) & has_y  # the alt-test's items
    hv = H[kept][obs[kept]]
    if len(hv):
        human_values = np.unique(hv)
        if len(human_values) == 1 and (y[kept] == human_values[0]).all():
            out.append("no variation: the test cannot tell (every rating is the same value)")
        elif len(human_values) == 1:
            out.append("one category only: every human rating is the same value, the humans never disagree")
    if 0 < n_humans_tested < MIN_HUMANS_TESTED:
        out.append(f"too few humans: {n_humans_tested} tested (the alt-test asks for at least {MIN_HUMANS_TESTED})")
    return out


def field_status(
    result: Mapping[str, Any], warnings: Sequence[str], min_humans: int = MIN_HUMANS_TESTED
) -> tuple[str, str]:
    """``("passed" | "failed" | "undecided", why)`` of one field's alt-test ``result`` and its
    :func:`degenerate_warnings`; ``min_humans``: the least number of tested humans."""
    if result.get("passed") is None:
        blocking = [w for w in warnings if w.startswith("the judge rated no item")]
        why = blocking[0] if blocking else str(result.get("reason") or "undefined").removeprefix("undefined: ")
        return "undecided", why
    n = int(result.get("n_humans") or 0)
    if n < min_humans:
        return "undecided", f"too few humans: {n} tested (the alt-test asks for at least {min_humans})"
    for w in warnings:
        if w.startswith("no variation"):
            return "undecided", w
    return ("passed" if result["passed"] else "failed"), ""


def _field_results(
    env: Environment, epsilon: float, q: float, min_humans: int = MIN_HUMANS_TESTED
) -> tuple[dict[str, Any], str, str]:
    H, y, humans, scoring = env
    res = alt_test(H, y, humans, scoring, epsilon, q)
    status, why = field_status(res, degenerate_warnings(H, y, int(res.get("n_humans") or 0)), min_humans)
    return res, status, why


def _verdict(statuses: Mapping[str, str]) -> tuple[str, list[str], list[str], list[str]]:
    passed = [f for f, s in statuses.items() if s == "passed"]
    failed = [f for f, s in statuses.items() if s == "failed"]
    undecided = [f for f, s in statuses.items() if s == "undecided"]
    if not passed and not failed:
        kind = "cannot_tell"
    elif not failed and not undecided:
        kind = "replace"
    elif passed:
        kind = "some_fields"
    else:
        kind = "cannot"
    return kind, passed, failed, undecided


def _reason(kind: str, passed: list[str], failed: list[str], undecided: Mapping[str, str], epsilon: float) -> str:
    parts = []
    if kind == "replace":
        parts.append(f"passes the alt-test at epsilon {epsilon:g} on every field ({', '.join(passed)})")
    else:
        if passed:
            parts.append(f"passes on {', '.join(passed)}")
        if failed:
            parts.append(f"fails on {', '.join(failed)}")
    parts += [f"cannot tell on {f}: {why}" for f, why in undecided.items()]
    return "; ".join(parts)


def judge_answer(
    judge: str,
    environments: Mapping[str, Environment],
    epsilon: float,
    q: float = DEFAULT_Q,
) -> dict[str, Any]:
    """The answer of one judge over its fields. ``environments``: field -> ``(H, y, humans,
    scoring)`` (all items of the field: H items x humans with NaN for no rating, ``y`` the
    judge's ratings). See the module's docstring for the verdict, the multiplicity statement
    and the leave-one-human-out stability."""
    full = {f: _field_results(env, epsilon, q) for f, env in environments.items()}
    statuses = {f: s for f, (_, s, _) in full.items()}
    kind, passed, failed, undecided = _verdict(statuses)
    key = (kind, tuple(passed), tuple(failed))

    # leave-one-human-out replicates (HV's robustness check; not in the paper)
    everyone = sorted({h for (_, _, hs, _) in environments.values() for h in hs})
    flipped: list[str] = []
    for h in everyone:
        rep: dict[str, str] = {}
        for f, (H, y, hs, sc) in environments.items():
            if h not in hs:
                rep[f] = statuses[f]
                continue
            keep = [k for k, name in enumerate(hs) if name != h]
            sub = (np.asarray(H, dtype=float)[:, keep], y, [hs[k] for k in keep], sc)
            # a replicate has one human fewer: a field decided on the full data needs one tested
            # human fewer there, so that a study at the paper's minimum of three is not
            # undecided in every replicate by construction
            least = MIN_HUMANS_TESTED - 1 if statuses[f] != "undecided" else MIN_HUMANS_TESTED
            rep[f] = _field_results(sub, epsilon, q, least)[1]
        rk, rp, rf, _ = _verdict(rep)
        if (rk, tuple(rp), tuple(rf)) != key:
            flipped.append(h)
    n_rep = len(everyone)
    stability = (n_rep - len(flipped)) / n_rep if n_rep else 1.0

    at_threshold = [
        f for f, (res, s, _) in full.items() if s in ("passed", "failed") and res.get("winning_rate") == PASS_RATE
    ]
    borderline_why = []
    if flipped:
        borderline_why.append(f"the answer changes when {_one_of(flipped)} is left out")
    if at_threshold:
        borderline_why.append(f"winning rate exactly {PASS_RATE:g} on {', '.join(at_threshold)}")
    tested = sorted({h for res, _, _ in full.values() for h in res.get("per_human", {})})
    items = {f: int(res.get("n_items") or 0) for f, (res, _, _) in full.items()}
    why_undecided = {f: full[f][2] for f in undecided}
    return {
        "judge": judge,
        "verdict": kind,
        "fields_passed": passed,
        "fields_failed": failed,
        "fields_undecided": undecided,
        "reason": _reason(kind, passed, failed, why_undecided, epsilon),
        "stability": stability,
        "borderline": bool(borderline_why),
        "borderline_reasons": borderline_why,
        "replicates": n_rep,
        "flipped_by": flipped,
        "humans": tested,
        "n_humans": len(tested),
        "items": items,
        "n_items": max(items.values(), default=0),
        "per_field": {
            f: {
                "status": s,
                "winning_rate": res.get("winning_rate"),
                "n_humans": int(res.get("n_humans") or 0),
                "n_items": int(res.get("n_items") or 0),
                "reason": why,
            }
            for f, (res, s, why) in full.items()
        },
        "epsilon": epsilon,
        "q": q,
        "multiplicity": dict(MULTIPLICITY),
        "stability_rule": STABILITY_RULE,
    }


def judge_answers(
    environments: Mapping[str, Mapping[str, Environment]], epsilon: float, q: float = DEFAULT_Q
) -> list[dict[str, Any]]:
    """One :func:`judge_answer` per judge (in name order); ``environments``: judge -> field ->
    ``(H, y, humans, scoring)``."""
    return [judge_answer(j, environments[j], epsilon, q) for j in sorted(environments)]


#: the verdict in the reader's words (the JSON keeps the codes)
VERDICT_WORDS = {
    "replace": "can replace the annotators",
    "some_fields": "can replace the annotators on these fields only",
    "cannot": "cannot replace the annotators",
    "cannot_tell": "cannot tell",
}


def answer_sentence(a: Mapping[str, Any]) -> str:
    """One line per answer, for the text outputs: the verdict, the fields, how sure, what it
    rests on."""
    words = VERDICT_WORDS[a["verdict"]]
    if a["verdict"] == "some_fields":
        words += f" ({', '.join(a['fields_passed'])})"
    sure = f"stability {a['stability']:.2f} over {a['replicates']} leave-one-human-out replicates"
    if a["borderline"]:
        sure += "; BORDERLINE: " + "; ".join(a["borderline_reasons"])
    rests = f"{a['n_humans']} humans tested, up to {a['n_items']} items per field, epsilon {a['epsilon']:g}"
    return f"{a['judge']}: {words}. {a['reason']}. {rests}; {sure}."


def _one_of(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else "any one of " + ", ".join(names)
