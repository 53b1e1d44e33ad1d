"""The judge verdicts as a paper-ready table: can each judge replace the annotators on each
field (the alternative annotator test, Calderon, Reichart and Dror, ACL 2025), and what is the
field's mean over every item when the judge fills in the items people did not rate (PPI++,
Angelopoulos, Duchi and Zrnic 2023), beside the human-only mean.

:func:`verdicts_table` turns :func:`.report.judge_verdicts` (or the ``alt_test`` / ``ppi``
entries of a full report) into a :class:`.tables.Table`, so the verdicts travel with the
protocol's tables: the agreement page, ``/api/projects/<id>/validation-report/`` in every
format, the ``validation_report`` command and the dataset card.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .notes import EXACT_TABLE_NOTE
from .tables import Cell, Row, Table

COLUMNS = (
    "Alt-test",
    "Winning rate ω",
    "Advantage probability ρ",
    "Humans tested",
    "PPI mean",
    "Human-only mean",
    "λ",
    "Human-rated items",
    "Judge-only items",
    "Human labels saved (PPI++)",
)
#: what the labels-saved column means (a note under both tables; hvstats.ppi.labels_saved)
SAVED_NOTE = (
    "Human labels saved (PPI++): the human-rated items people alone would need for the half-width of the "
    "PPI++ interval on this pool (the ratio of the human-only to the PPI++ variance), minus those at hand."
)
SAVED_FEWEST_NOTE = "A judge's human labels saved is the fewest over its fields with a PPI++ mean."
SAVED_NONE = "none: the judge does not narrow the interval"
SAVED_COST = "a cost: with the judge the interval is wider"


def saved_cell(saved: Mapping[str, Any] | None) -> Cell:
    """Human labels saved (:func:`.ppi.labels_saved` or a judge's headline), said in words when
    there are none (zero) or the judge costs labels (negative)."""
    items = (saved or {}).get("items")
    if items is None:
        return Cell(None, fmt="count")
    return Cell(items, fmt="count", note=SAVED_NONE if items == 0 else (SAVED_COST if items < 0 else ""))


def _alt_cells(a: Mapping[str, Any] | None) -> list[Cell]:
    if not a:
        return [Cell("not tested", fmt="text"), Cell(None), Cell(None), Cell(None, fmt="count")]
    n = a.get("n_items")
    warn = "; ".join(a.get("warnings") or ())
    if a.get("passed") is None:
        why = str(a.get("reason") or "undefined").removeprefix("undefined: ")
        why = "; ".join(x for x in (warn, why) if x)
        return [Cell("no verdict", fmt="text", note=why), Cell(None), Cell(None), Cell(None, fmt="count")]
    return [
        Cell("passes" if a["passed"] else "fails", fmt="text", note=warn),
        Cell(a.get("winning_rate"), n=n, fmt="num"),
        Cell(a.get("advantage_probability"), n=n, fmt="num"),
        Cell(a.get("n_humans"), fmt="count"),
    ]


def _ppi_cells(p: Mapping[str, Any] | None) -> list[Cell]:
    if not p:
        return [Cell(None, note="PPI applies to numeric and two-label fields"), Cell(None), Cell(None)] + [
            Cell(None, fmt="count")
        ] * 3

    def ci(key: str) -> tuple[float, float] | None:
        v = p.get(key)
        return (float(v[0]), float(v[1])) if v else None

    return [
        Cell(p.get("estimate"), ci("ci"), p.get("n_labeled"), "num", p.get("reason") or ""),
        Cell(p.get("classical_estimate"), ci("classical_ci"), p.get("n_labeled"), "num"),
        Cell(p.get("lambda"), fmt="num"),
        Cell(p.get("n_labeled"), fmt="count"),
        Cell(p.get("n_unlabeled"), fmt="count"),
        saved_cell(p.get("labels_saved")),
    ]


def verdicts_table(
    verdicts: Mapping[str, Mapping[str, Mapping[str, Any]]],
    label: Callable[[str], str] = str,
    epsilon: float | None = None,
) -> Table | None:
    """``verdicts``: ``{field: {judge: {"alt_test": ..., "ppi": ...}}}``; one row per judge and
    field (judges in name order, fields in the given order); ``label`` names a judge in the
    researcher's words. None when there is no judge."""
    judges = sorted({j for per in verdicts.values() for j in per})
    if not judges:
        return None
    rows = tuple(
        Row(f"{label(j)}: {f}", (*_alt_cells(per[j].get("alt_test")), *_ppi_cells(per[j].get("ppi"))))
        for j in judges
        for f, per in verdicts.items()
        if j in per
    )
    eps = f" at epsilon {epsilon:g}" if epsilon is not None else ""
    # a verdict the data cannot support is said under the table too, not only in its cell
    warnings = tuple(f"{r.label}: {r.cells[0].note}." for r in rows if r.cells[0].note)
    # a 0/1 mean at 0% or 100% carries the exact interval (hvstats.report._add_verdicts): say so
    for j in judges:
        for f, per in verdicts.items():
            p = (per.get(j) or {}).get("ppi") or {}
            if p.get("classical_ci_method") == "clopper_pearson":
                pct = f"{100 * p['classical_estimate']:.0f}%"
                warnings += (EXACT_TABLE_NOTE % {"row": f"{label(j)}: {f}", "percent": pct, "n": p["n_labeled"]},)
    return Table(
        key="judge-verdicts",
        title="Judge verdicts: alternative annotator test and prediction-powered mean",
        columns=COLUMNS,
        rows=rows,
        caption=(
            f"Alt-test{eps} (Calderon, Reichart and Dror 2025): the judge passes when it is as good as "
            "or better than at least half of the humans (winning rate ω ≥ 0.5; Benjamini-Yekutieli at "
            "q = 0.05); ρ = share of items where it scores at least as well as the held-out human "
            "(accuracy for categorical fields, negative RMSE otherwise). The alt-test uses the items with "
            "at least two human ratings and a judge rating; humans with fewer than 30 such items are not "
            "tested (Humans tested). PPI mean (PPI++, power-tuned λ, 95% CI): the field's mean over every "
            "item the judge rated, the human-rated ones labelled by the mean of their human ratings "
            "(Human-rated items) and the judge-only ones by the judge (Judge-only items); the human-only "
            "mean beside it covers only the human-rated items the judge also rated (items no judge rated "
            "are in neither). Two-label fields count the second label as 1. A note in a verdict cell (no "
            "variation, one category only, too few humans, no overlap) says when the test cannot tell."
        ),
        row_header="Judge: field",
        notes=(*warnings, SAVED_NOTE),
    )


#: the verdict of :mod:`.answers` in the tables' words
ANSWER_WORDS = {
    "replace": "can replace the annotators",
    "some_fields": "on some fields only",
    "cannot": "cannot replace the annotators",
    "cannot_tell": "cannot tell",
}
FIELD_WORDS = {"passed": "passes", "failed": "fails", "undecided": "cannot tell"}


def answers_table(answers: Sequence[Mapping[str, Any]], label: Callable[[str], str] = str) -> Table | None:
    """One answer per judge (:mod:`.answers`) as a table: a row per judge with its answer, the
    word of each field (passes, fails, cannot tell, with the reason as a note), the
    leave-one-human-out stability (n = replicates), borderline, the humans tested and the most
    items a field's test used. Who flips it and a winning rate at the threshold are notes under
    the table. None without answers."""
    if not answers:
        return None
    fields = list(dict.fromkeys(f for a in answers for f in a["per_field"]))
    rows = []
    notes = []
    for a in answers:
        name = label(a["judge"])
        per = [
            Cell(FIELD_WORDS[pf["status"]], fmt="text", note=pf.get("reason") or "")
            if (pf := a["per_field"].get(f)) is not None
            else Cell(None, fmt="text")
            for f in fields
        ]
        rows.append(
            Row(
                name,
                (
                    Cell(ANSWER_WORDS[a["verdict"]], fmt="text"),
                    *per,
                    Cell(a["stability"], n=a["replicates"], fmt="num"),
                    Cell("yes" if a["borderline"] else "no", fmt="text"),
                    Cell(a["n_humans"], fmt="count"),
                    Cell(a["n_items"], fmt="count"),
                    saved_cell(a.get("labels_saved")),
                ),
            )
        )
        if a["flipped_by"]:
            notes.append(f"{name}: the answer changes without one of {', '.join(a['flipped_by'])}.")
        at = [f for f, pf in a["per_field"].items() if pf["status"] != "undecided" and pf["winning_rate"] == 0.5]
        if at:
            notes.append(f"{name}: winning rate exactly 0.5 on {', '.join(at)}.")
    return Table(
        key="judge-answers",
        title="One answer per judge: can it replace the annotators",
        columns=("Answer", *fields, "Stability", "Borderline", "Humans tested", "Items", "Human labels saved (PPI++)"),
        rows=tuple(rows),
        caption=(
            f"Alternative annotator test (Calderon, Reichart and Dror 2025) at epsilon {answers[0]['epsilon']:g} "
            "on all items of each field: passes, fails, or cannot tell (the note says why). Within a field, "
            "Benjamini-Yekutieli over the tested humans at q = 0.05; across fields no further correction: "
            "each field's verdict stands at its own level and the answer claims no family-wise guarantee. "
            "Stability: the share of leave-one-human-out replicates (each human removed in turn, the test "
            "rerun on the others; n = replicates) with the same answer; borderline when it is below 1 or a "
            "winning rate is exactly 0.5 (HV's own check, not part of the paper). Items: the most items any "
            "field's test used."
        ),
        row_header="Judge",
        notes=(*notes, SAVED_NOTE, SAVED_FEWEST_NOTE),
    )
