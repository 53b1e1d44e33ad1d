"""The BLEnD-Vis validation tables: the paper's tables computed from a project's ratings. Imported
only when a report is asked for (the preset's ``validation_report`` is a ``LazyReport``), because
they need numpy and the statistics core."""

from __future__ import annotations

import numpy as np

from hvstats import majority_vote
from hvstats.tables import Cell, Row, Table
from hvstats.validation import EXACT_SHARE_NOTE, ValidationInput, share

# --------------------------------------------------------------------------- validation report
# App. D: three annotators per item, decided by a 2-of-3 majority (27/500 = 5.4% Bad images,
# 39/320 Bad templates); the Bad reasons by category (images).
REASON_LABELS = {
    "wrong_subject": "Clearly Wrong Subject",
    "misleading": "Misleading or Ambiguous Representation",
    "distorted": "Unusably Distorted",
    "regional": "Inaccurate Regional Representation",
}


def majority_table(inp: ValidationInput, key: str, title: str, unit: str) -> Table | None:
    """Good / Bad by the human majority of the derived ``good`` field, the Bad rate with its CI."""
    # the items with a human vote only: an item only a judge rated is no unit of this
    # humans-only table (it would otherwise count as a tie)
    W = inp.wide("good", inp.humans()).dropna(how="all")
    if not len(W):
        return None
    maj = majority_vote(W.to_numpy(dtype=float), min_votes=2)
    decided = maj[~np.isnan(maj)]
    bad = share(decided == 0, inp.bootstrap, inp.seed, "bad_rate")
    return Table(
        key=key,
        title=title,
        columns=("Good", "Bad", "Bad rate", f"{unit} with a majority", f"{unit} without (tie)"),
        rows=(
            Row(
                "Majority of the annotators",
                (
                    Cell(int((decided == 1).sum()), fmt="count"),
                    Cell(int((decided == 0).sum()), fmt="count"),
                    Cell.of(bad, "%"),
                    Cell(len(decided), fmt="count"),
                    Cell(int(np.isnan(maj).sum()), fmt="count"),
                ),
            ),
        ),
        caption="Each item is Good or Bad by the majority of its annotators (2 of 3); 95% bootstrap CI "
        f"of the Bad rate over {unit.lower()}. Items with a tied vote or fewer than two votes have no majority.",
        row_header="Decision",
        notes=(EXACT_SHARE_NOTE,),
    )


def image_validation_report(inp: ValidationInput) -> list[Table]:
    t = majority_table(inp, "blendvis-images", "Image validation: Good / Bad by 2-of-3 majority", "Images")
    if t is None:
        return []
    rows = inp.rows("reason_category")
    rows = rows[rows["rater_kind"] == "human"] if len(rows) else rows
    cats = rows["value"].astype(str).tolist() if len(rows) else []
    out = []
    for k, (value, label) in enumerate(REASON_LABELS.items()):
        sh = share([c == value for c in cats], inp.bootstrap, inp.seed + 1 + k)
        out.append(Row(label, (Cell(sum(c == value for c in cats), fmt="count"), Cell.of(sh, "%"))))
    reasons = Table(
        key="blendvis-bad-reasons",
        title="Image validation: reasons given for Bad",
        columns=("Bad judgements", "Share of Bad judgements"),
        rows=tuple(out),
        caption="Every annotator's Bad judgement with its failure category; 95% bootstrap CIs over judgements.",
        row_header="Failure category",
        notes=(EXACT_SHARE_NOTE,),
    )
    return [t, reasons]


def template_validation_report(inp: ValidationInput) -> list[Table]:
    t = majority_table(inp, "blendvis-templates", "Template validation: Good / Bad by 2-of-3 majority", "Templates")
    return [] if t is None else [t]
