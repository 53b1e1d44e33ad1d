"""The CQ-Bench validation tables: the paper's tables computed from a project's ratings. Imported
only when a report is asked for (the preset's ``validation_report`` is a ``LazyReport``), because
they need numpy and the statistics core."""

from __future__ import annotations

import warnings
from itertools import combinations

import numpy as np

from hvstats import cohen_kappa, restricted_agreement, turing_accuracy
from hvstats.bootstrap import percentile_ci
from hvstats.slots import slot_agreement
from hvstats.tables import Cell, Row, Table, raters_note
from hvstats.validation import (
    EXACT_SHARE_NOTE,
    ValidationInput,
    cohen_kappa_resampled,
    mean,
    share,
    statistic_ci,
    unit_resamples,
)

# --------------------------------------------------------------------------- validation report
# App. A.3: Cohen's kappa between the two annotators for reflection and consistency, pooled over
# the (story, value) units; alignment with the model after removing the values the model judged
# negative (agreement restricted to the model's positive values, against the model rater);
# mean rewrite improvement (and the share rated >= 4); naturalness mean and share natural (>= 4).
STORY_VALUE_FIELDS = (("Reflection", "reflection[*]"), ("Consistency", "consistency[*]"))


def _mean_pairwise_kappa(M: np.ndarray) -> float | None:
    """Cohen's kappa of the human columns of ``M`` (units x humans), averaged over pairs
    (two annotators: their kappa)."""
    vals = [cohen_kappa(M[:, a], M[:, b]).value for a, b in combinations(range(M.shape[1]), 2)]
    vals = [v for v in vals if v is not None]
    return float(np.mean(vals)) if vals else None


def _model_positive_agreement(M: np.ndarray, j: np.ndarray):
    """Share of the human judgements that say 1 on the units the model says 1 (every annotator's
    judgement of such a unit counts once)."""
    k = M.shape[1]
    return restricted_agreement(np.tile(j, k), M.T.reshape(-1), given="pred", side="positive")


def _mean_pairwise_kappa_resampled(M: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """:func:`_mean_pairwise_kappa` of every resample (``counts``: ``unit_resamples``), NaN
    where no pair has a kappa."""
    pairs = [cohen_kappa_resampled(M[:, a], M[:, b], counts) for a, b in combinations(range(M.shape[1]), 2)]
    if not pairs:
        return np.full(counts.shape[0], np.nan)
    P = np.column_stack(pairs)
    defined = np.isfinite(P).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(defined > 0, np.nansum(P, axis=1) / np.maximum(defined, 1), np.nan)


def _model_positive_agreement_resampled(M: np.ndarray, j: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """:func:`_model_positive_agreement` of every resample: a ratio of two sums over the units
    (the human judgements that say 1, and all human judgements, on the units the model says 1),
    so each resample is one product with the unit counts."""
    said = (j == 1)[:, None] & ~np.isnan(M)
    agree = (said & (M == 1)).sum(axis=1).astype(float)
    judged = said.sum(axis=1).astype(float)
    num, den = counts @ agree, counts @ judged
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.nan)


def story_validation_report(inp: ValidationInput) -> list[Table]:
    humans, judges = inp.humans(), inp.judges()
    if not humans:
        return []
    cols = ["Cohen's κ between annotators", "Cohen's κ, annotator 1 vs annotator 2 (pooled slots)"]
    cols += [f"Agreement with {inp.judge_label(j)} on its positive values" for j in judges]
    cols += ["n (story, value) units"]
    rows = []
    left: dict[str, list[str]] = {}
    for k, (label, field) in enumerate(STORY_VALUE_FIELDS):
        W = inp.wide(field)
        W = W[inp.human_rated(field)]  # the units a human judged: a judge's extra units move nothing
        H = W.reindex(columns=humans).to_numpy(dtype=float)
        # the annotators' agreement: those with at least min_rater_items units in the field
        kept, small = inp.agreement_raters(field, humans)
        for name, n in small.items():
            left.setdefault(name, []).append(f"{n} units of {label}")
        HK = W.reindex(columns=kept).to_numpy(dtype=float)
        units = np.arange(len(W))
        kappa = _mean_pairwise_kappa(HK)
        # one set of resamples for every cell of the row (the per-resample loop drew the same
        # ones: same seed), each cell's statistic evaluated on all of them at once
        counts = unit_resamples(len(units), inp.bootstrap, inp.seed + k)
        ci = None if counts is None else percentile_ci(_mean_pairwise_kappa_resampled(HK, counts))[0]
        n_pairs = int(((~np.isnan(HK)).sum(1) >= 2).sum())
        cells = [Cell(kappa, ci, n_pairs, "r", "" if kappa is not None else "undefined: fewer than two annotators")]
        # the paper's 50 volunteers: the first vs the second annotator of each story, pooled
        cells.append(Cell.of(slot_agreement(inp.by_slot(field, kept), "cohen_kappa", inp.bootstrap, inp.seed + k)))
        for j in judges:
            jv = W.reindex(columns=[j]).to_numpy(dtype=float)[:, 0]
            res = _model_positive_agreement(H, jv)
            ci = None if counts is None else percentile_ci(_model_positive_agreement_resampled(H, jv, counts))[0]
            cells.append(Cell(res.value, ci if res.value is not None else None, res.n_items, "%", res.reason or ""))
        cells.append(Cell(len(W), fmt="count"))
        rows.append(Row(label, tuple(cells)))
    tables = [
        Table(
            key="cqbench-story-values",
            title="Human validation of the stories: reflection and consistency of the values",
            columns=tuple(cols),
            rows=tuple(rows),
            caption="Cohen's κ between the annotators over all (story, value) units (the mean over pairs "
            "of annotators when there are more than two), and pooled over slots: the rating of each "
            "story's first-assigned annotator vs its second's, whoever they are (the paper's setting: "
            "50 volunteers, two per story). Agreement with the model: the share of human "
            "judgements that are positive on the values the model judged positive (the paper's 94.5% / "
            "92.5%), each annotator's judgement counted. 95% bootstrap CIs over (story, value) units.",
            row_header="Value judgement",
            notes=(_small_raters_note(inp, left),),
        )
    ]
    human_rows = inp.frame[inp.frame["rater_kind"] == "human"] if len(inp.frame) else inp.frame
    quality = []
    for k, (label, field, share_label) in enumerate(
        (
            ("Rewrite improvement (0-5)", "rewrite_improvement[*]", "rated ≥ 4"),
            ("Naturalness (1-5)", "naturalness", "natural (≥ 4)"),
        )
    ):
        v = human_rows.loc[human_rows["field"] == field, "value"].astype(float).to_numpy() if len(human_rows) else []
        m = mean(v, inp.bootstrap, inp.seed + 10 + k)
        sh = share([x >= 4 for x in v], inp.bootstrap, inp.seed + 20 + k)
        quality.append(
            Row(label, (Cell.of(m, "num"), Cell.of(sh, "%"), Cell(len(v), fmt="count"), Cell(share_label, fmt="text")))
        )
    tables.append(
        Table(
            key="cqbench-story-quality",
            title="Human ratings of the rewrites and of naturalness",
            columns=("Mean", "Share", "n judgements", "Share of"),
            rows=tuple(quality),
            caption="Means and shares over the human judgements (one per rewrite, one per story); 95% "
            "bootstrap CIs over judgements. Paper: mean rewrite improvement 3.28, naturalness mean 3.63.",
            row_header="Rating",
            notes=(EXACT_SHARE_NOTE,),
        )
    )
    return tables


def _small_raters_note(inp: ValidationInput, left: dict[str, list[str]]) -> str:
    """The minimum number of units per annotator for the agreement between annotators, and
    who was left out by name."""
    head = (
        f"Agreement between annotators uses the annotators with at least {inp.min_rater_items} judged units "
        "in the field (the alt-test's minimum; report setting min_rater_items)"
    )
    if not left:
        return head + "; no annotator was left out."
    return head + "; left out: " + "; ".join(f"{r} ({', '.join(v)})" for r, v in left.items()) + "."


def _turing_cells(answers: list, inp: ValidationInput, seed: int) -> tuple[Cell, ...]:
    res = turing_accuracy(answers, truth=["human_utterance"] * len(answers))["pooled"]
    correct = [a == "human_utterance" for a in answers]
    non_tie = [a == "human_utterance" for a in answers if a != "tie"]
    ties = [a == "tie" for a in answers]
    acc = share(correct, inp.bootstrap, seed)
    acc_nt = share(non_tie, inp.bootstrap, seed + 1)
    tie = share(ties, inp.bootstrap, seed + 2)
    p = res.get("p_value")
    return (
        Cell.of(acc, "%"),
        Cell.of(acc_nt, "%"),
        Cell.of(tie, "%"),
        Cell(p, None, len(non_tie), "p", res.get("reason") or ""),
        Cell(len(answers), fmt="count"),
    )


def turing_validation_report(inp: ValidationInput) -> list[Table]:
    """Accuracy with tie = 0 (the paper's 44.8%), accuracy over non-tie answers, the tie rate and
    the exact two-sided binomial test of the correct non-tie answers against 0.5; pooled, then
    per annotator."""
    rows = inp.rows("human_written")
    if not len(rows):
        return []
    rows = rows[rows["rater_kind"] == "human"]
    out = [Row("All annotators", _turing_cells(rows["value"].tolist(), inp, inp.seed))]
    for k, (r, g) in enumerate(sorted(rows.groupby("rater"), key=lambda x: x[0])):
        out.append(Row(r, _turing_cells(g["value"].tolist(), inp, inp.seed + 3 * (k + 1))))
    return [
        Table(
            key="cqbench-turing",
            title="Turing-style test: can annotators tell the human-written utterance?",
            columns=(
                "Accuracy (tie = 0)",
                "Accuracy over non-ties",
                "Tie rate",
                "Binomial p (non-ties vs 0.5)",
                "n answers",
            ),
            rows=tuple(out),
            caption="A tie scores 0 (paper: 44.8%, below the 50% chance level). p: exact two-sided binomial "
            "test of the correct answers among the non-tie answers against 0.5. 95% bootstrap CIs over answers.",
            row_header="Annotators",
            notes=(EXACT_SHARE_NOTE,),
        )
    ]


VALUE_EXTRACTION_FIELD = "value_extraction[*]"  # pooled (story, ground-truth value) units


def exact_agreement(H: np.ndarray, j: np.ndarray) -> float | None:
    """Share of the people's scores (units x people, NaN = none) equal to the judge's score of
    the same unit (``j``), each person's score counted once."""
    both = ~np.isnan(H) & ~np.isnan(j)[:, None]
    return float((j[:, None] == H)[both].mean()) if both.any() else None


def people_exact_agreement(H: np.ndarray) -> float | None:
    """Share of agreeing pairs of people over every pair of people who scored the same unit."""
    agree = total = 0
    for a, b in combinations(range(H.shape[1]), 2):
        both = ~np.isnan(H[:, a]) & ~np.isnan(H[:, b])
        agree += int((H[both, a] == H[both, b]).sum())
        total += int(both.sum())
    return agree / total if total else None


def _story_pearson(h: np.ndarray, j: np.ndarray) -> float | None:
    both = ~np.isnan(h) & ~np.isnan(j)
    if both.sum() < 3 or np.std(h[both]) == 0 or np.std(j[both]) == 0:
        return None
    return float(np.corrcoef(h[both], j[both])[0, 1])


def value_extraction_validation_report(inp: ValidationInput) -> list[Table]:
    """The value-extraction judge against the people who graded the same predictions (Sec. 4.1:
    "The agreement score is 0.864"), then the story scores by extracting model (Table 3, VE)."""
    humans, judges = inp.humans(), inp.judges()
    if not humans:
        return []
    # the units and stories a person scored: the judges are compared with people on them, and
    # what a judge alone scored moves no figure of the people
    W = inp.wide(VALUE_EXTRACTION_FIELD)
    W = W[inp.human_rated(VALUE_EXTRACTION_FIELD)]
    H = W.reindex(columns=humans).to_numpy(dtype=float)
    units = np.arange(len(W))
    S = inp.wide("ve_score")
    scored = inp.human_rated("ve_score")  # the stories a person scored
    SH = S.reindex(columns=humans).to_numpy(dtype=float)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        # a story only judges scored has no person's mean (NaN): the judge-only part of the pool
        warnings.simplefilter("ignore", RuntimeWarning)
        person_story = np.nanmean(SH, axis=1) if SH.size else np.zeros(0)
    stories = np.flatnonzero(scored)  # the units of the Pearson r's bootstrap
    cols = (
        "Exact agreement with people (per ground-truth value)",
        "Pearson r of the story score with the mean person",
        "Mean story score",
        "n (story, ground-truth value) units",
    )
    rows = []
    for k, j in enumerate(judges):
        jv = W.reindex(columns=[j]).to_numpy(dtype=float)[:, 0]
        value = exact_agreement(H, jv)
        ci, _ = statistic_ci(units, lambda u, jv=jv: exact_agreement(H[u], jv[u]), inp.bootstrap, inp.seed + k)
        js = S.reindex(columns=[j]).to_numpy(dtype=float)[:, 0]
        r = _story_pearson(person_story, js)
        r_ci, _ = statistic_ci(
            stories, lambda u, js=js: _story_pearson(person_story[u], js[u]), inp.bootstrap, inp.seed + 100 + k
        )
        judged = int((~np.isnan(jv)).sum())
        rows.append(
            Row(
                inp.judge_label(j),
                (
                    Cell(
                        value,
                        ci if value is not None else None,
                        judged,
                        "r",
                        "" if value is not None else "no unit scored by the judge and a person",
                    ),
                    Cell(
                        r,
                        r_ci if r is not None else None,
                        int((~np.isnan(js) & ~np.isnan(person_story)).sum()),
                        "r",
                        "" if r is not None else "fewer than three stories or no variation",
                    ),
                    Cell.of(mean(js, inp.bootstrap, inp.seed + 200 + k), "num"),
                    Cell(judged, fmt="count"),
                ),
            )
        )
    # pooled over every pair of people who scored a unit (each pair's unit counted once): no
    # rater's own coefficient is averaged in, so every person counts (no min_rater_items)
    HK = H
    people = people_exact_agreement(HK)
    ci, _ = statistic_ci(units, lambda u: people_exact_agreement(HK[u]), inp.bootstrap, inp.seed + 300)
    rows.append(
        Row(
            "People (pairs of annotators)",
            (
                Cell(
                    people,
                    ci if people is not None else None,
                    int(((~np.isnan(HK)).sum(1) >= 2).sum()),  # the units two people scored
                    "r",
                    "" if people is not None else "no unit scored by two people",
                ),
                Cell(None, fmt="r", note="the people are the reference"),
                Cell.of(mean(person_story, inp.bootstrap, inp.seed + 301), "num"),
                Cell(int((~np.isnan(H)).any(1).sum()), fmt="count"),
            ),
        )
    )
    tables = [
        Table(
            key="cqbench-value-extraction-judge",
            title="Value extraction: the LLM judge vs people grading the same predictions",
            columns=cols,
            rows=tuple(rows),
            caption="Each ground-truth value scored 1 (fully presented), 0.5 (partially presented) or 0 (not "
            "mentioned) in the predicted values (Sec. 4.1, S(v_i, V^)); the story score is their mean (recall). "
            "Exact agreement: the share of the people's scores that equal the judge's score of the same (story, "
            "ground-truth value), each person's score counted once; for people, over pairs of annotators. Paper: "
            "GPT-4o vs human annotators on 25 stories, agreement score 0.864 (the paper does not define the "
            "measure; exact agreement of the scores is ours). 95% bootstrap CIs over (story, value) units, and over "
            "stories for Pearson r.",
            row_header="Grader",
            notes=(raters_note(len(humans), len(judges)),),
        )
    ]
    model_rows = []
    if len(inp.frame) and "generator" in inp.frame.columns and len(S):
        models = inp.item_values("ve_score", "generator")
        for k, m in enumerate(sorted({v for v in models if v})):
            mine = np.array([v == m for v in models])
            cells = [Cell.of(mean(person_story[mine], inp.bootstrap, inp.seed + 400 + k), "num")]
            for i, j in enumerate(judges):
                js = S.reindex(columns=[j]).to_numpy(dtype=float)[:, 0][mine]
                cells.append(Cell.of(mean(js, inp.bootstrap, inp.seed + 500 + 10 * k + i), "num"))
            cells.append(Cell(int((mine & scored).sum()), fmt="count"))  # the stories people scored
            model_rows.append(Row(m, tuple(cells)))
    if model_rows:
        tables.append(
            Table(
                key="cqbench-value-extraction-by-model",
                title="Value-extraction score by extracting model (Table 3, VE)",
                columns=(
                    "People: mean story score",
                    *(f"{inp.judge_label(j)}: mean story score" for j in judges),
                    "n stories",
                ),
                rows=tuple(model_rows),
                caption="The mean story score (mean S(v_i, V^) over a story's ground-truth values) of each "
                "extracting model (the items' generator), as graded by the people (their mean per story) and "
                "by each judge. Paper, Table 3 VE row: e.g. Qwen 2.5 32B 0.629, o3-mini 0.598, o3 0.732. 95% "
                "bootstrap CIs over stories.",
                row_header="Extracting model",
            )
        )
    return tables
