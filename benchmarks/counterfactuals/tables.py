"""The Cultural Counterfactuals validation tables: the paper's tables computed from a project's ratings. Imported
only when a report is asked for (the preset's ``validation_report`` is a ``LazyReport``), because
they need numpy and the statistics core."""

from __future__ import annotations

import numpy as np

from hvstats import cohen_kappa, majority_vote
from hvstats.bootstrap import percentile_ci
from hvstats.tables import Cell, Row, Table
from hvstats.validation import EXACT_SHARE_NOTE, ValidationInput, cohen_kappa_resampled, share, unit_resamples

from . import FLAGS


# --------------------------------------------------------------------------- validation report
# App. A.4 / Table 4: the rate of each failure flag (9.7%, 4.3%, 1.7%, 0.3%, 0%, 0% in the paper),
# the share of images with any failure, per dimension; and, new here, each model judge against
# the humans on the flags it decides.
def _flag_rows(inp: ValidationInput) -> list[tuple[str, str]]:
    return [(label, did) for _, label, did in FLAGS] + [("Any failure flag", "any_failure")]


def validation_report(inp: ValidationInput) -> list[Table]:
    humans = inp.humans()
    if not humans or not len(inp.frame):
        return []
    hf = inp.frame[inp.frame["rater_kind"] == "human"]
    dims = sorted(d for d in hf["dimension"].unique() if d)
    groups = [("All", hf), *((d, hf[hf["dimension"] == d]) for d in dims)]
    rows = []
    for k, (label, did) in enumerate(_flag_rows(inp)):
        cells = []
        for g, (_, sub) in enumerate(groups):
            v = sub.loc[sub["field"] == did, "value"].astype(float).to_numpy()
            cells.append(Cell.of(share(v, inp.bootstrap, inp.seed + 100 * k + g), "%"))
        rows.append(Row(label, tuple(cells)))
    n_row = []
    for _, sub in groups:
        n_row.append(Cell(int((sub["field"] == "any_failure").sum()), fmt="count"))
    rows.append(Row("n judgements", tuple(n_row)))
    tables = [
        Table(
            key="counterfactuals-flags",
            title="Failure flags: share of judgements with each flag, overall and per dimension",
            columns=tuple("All dimensions" if g == "All" else g for g, _ in groups),
            rows=tuple(rows),
            caption="Share of human judgements that tick each failure flag (a flag never ticked is 0%); "
            "95% bootstrap CIs over judgements. Paper: 9.7%, 4.3%, 1.7%, 0.3%, 0%, 0%.",
            row_header="Flag",
            notes=(EXACT_SHARE_NOTE,),
        )
    ]
    judges = inp.judges()
    jrows = []
    for j in judges:
        for v, label, _ in FLAGS:
            W = inp.wide(f"flags:{v}")
            if j not in W.columns or W[j].notna().sum() == 0:
                continue  # a flag this judge does not decide
            H = W.reindex(columns=humans).to_numpy(dtype=float)
            maj = majority_vote(H)
            jv = W[j].to_numpy(dtype=float)
            ok = ~np.isnan(maj) & ~np.isnan(jv)
            a, b = jv[ok], maj[ok]
            units = np.arange(len(a))
            kappa = cohen_kappa(a, b)
            # every resample's kappa at once (the same draws as the per-resample loop)
            counts = unit_resamples(len(units), inp.bootstrap, inp.seed)
            kci = None if counts is None else percentile_ci(cohen_kappa_resampled(a, b, counts))[0]
            agree = share(a == b, inp.bootstrap, inp.seed)
            jrows.append(
                Row(
                    f"{inp.judge_label(j)}: {label}",
                    (
                        Cell(
                            kappa.value,
                            kci if kappa.value is not None else None,
                            int(ok.sum()),
                            "r",
                            kappa.reason or "",
                        ),
                        Cell.of(agree, "%"),
                        Cell.of(share(a, 0), "%"),
                        Cell.of(share(b, 0), "%"),
                        Cell(int(ok.sum()), fmt="count"),
                    ),
                )
            )
    if jrows:
        tables.append(
            Table(
                key="counterfactuals-judges",
                title="Model judges vs the humans on the flags each judge decides",
                columns=("Cohen's κ vs human majority", "Agreement", "Judge flag rate", "Human flag rate", "n images"),
                rows=tuple(jrows),
                caption="Each judge's flag against the human majority flag of the same image (images without a "
                "majority left out); 95% bootstrap CIs over images. The paper compared none of its judges with people.",
                row_header="Judge: flag",
                notes=(EXACT_SHARE_NOTE,),
            )
        )
    return tables
