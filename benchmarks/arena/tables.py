"""The pairwise-preference validation table: agreement of votes as Zheng et al. (NeurIPS 2023,
MT-Bench and Chatbot Arena) Sec. 4.2 and Table 5 compute it. Imported only when a report is asked
for (the preset's ``validation_report`` is a ``LazyReport``): it needs numpy and pandas.

Ranking the systems is not here: ``hvstats/ranking.py`` and ``manage.py rank`` read the votes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations

from hvstats.tables import Cell, Row, Table
from hvstats.validation import ValidationInput

QUESTION = "preference"
TIE = "tie"


def vote_agreement(
    first: Mapping[object, Sequence[str]], second: Mapping[object, Sequence[str]] | None = None, *, ties: bool = True
) -> tuple[float | None, int]:
    """Zheng et al. Sec. 4.2: "the probability of randomly selected individuals (but not
    identical) of each type agreeing on a randomly selected question", estimated as the share of
    agreeing pairs of votes over every pair of votes on the same item: a vote of ``first`` with a
    vote of ``second`` (two types), or two distinct votes of ``first`` (``second`` None: one
    type). ``ties`` False is their setup S2: a pair where either vote is a tie is left out.
    (share, pairs counted); None when no pair is left."""
    agree = total = 0
    for item, votes in first.items():
        if second is None:
            pairs = combinations(votes, 2)
        else:
            pairs = ((a, b) for a in votes for b in second.get(item, ()))
        for a, b in pairs:
            if not ties and TIE in (a, b):
                continue
            total += 1
            agree += a == b
    return (agree / total if total else None), total


def _votes(inp: ValidationInput, raters: Sequence[str]) -> dict[object, list[str]]:
    """Item -> the raters' votes, each the item field picked (or ``tie``): the item's own order,
    whatever order a person was shown."""
    rows = inp.rows(QUESTION)
    out: dict[int, list[str]] = {}
    if not len(rows):
        return out
    rows = rows[rows["rater"].isin(list(raters))]
    for item, value in zip(rows["item"].tolist(), rows["value"].tolist(), strict=True):
        if isinstance(value, str) and value:
            out.setdefault(item, []).append(value)
    return out


def preference_validation_report(inp: ValidationInput) -> list[Table]:
    """One row for people with each other and one per judge with people: agreement with ties
    (S1) and without (S2), each with the pairs of votes it rests on."""
    humans = _votes(inp, inp.humans())
    if not humans:
        return []

    def cells(share_s1: tuple[float | None, int], share_s2: tuple[float | None, int]) -> tuple[Cell, ...]:
        return (
            Cell(share_s1[0], n=share_s1[1], fmt="%"),
            Cell(share_s2[0], n=share_s2[1], fmt="%"),
            Cell(share_s1[1], fmt="count"),
        )

    rows = [Row("Human vs human", cells(vote_agreement(humans), vote_agreement(humans, ties=False)))]
    for judge in inp.judges():
        votes = _votes(inp, [judge])
        rows.append(
            Row(
                f"{inp.judge_label(judge)} vs human",
                cells(vote_agreement(votes, humans), vote_agreement(votes, humans, ties=False)),
            )
        )
    return [
        Table(
            key="arena-agreement",
            title="Agreement on the votes, with and without ties",
            columns=("Agreement with ties (S1)", "Agreement without ties (S2)", "n pairs of votes"),
            rows=tuple(rows),
            caption="Zheng et al. Sec. 4.2: the share of agreeing pairs of votes on the same item, two people's, or "
            "a judge's and a person's. S1 counts a tie as a vote; S2 leaves out the pairs where either vote is a "
            "tie. Paper (MT-Bench, Table 5): GPT-4 vs human 0.66 (S1) and 0.85 (S2); human vs human 0.63 and 0.81.",
            row_header="Raters",
        )
    ]
