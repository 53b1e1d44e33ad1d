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
    """Zheng et al. Sec. 4.2: agreement is "the probability of randomly selected individuals (but
    not identical) of each type agreeing on a randomly selected question": per item, the share of
    agreeing pairs among the pairs of a vote of ``first`` and a vote of ``second`` (two types), or
    of two distinct votes of ``first`` (``second`` None: one type); then the mean over the items
    that have a pair, each item weighing the same (a randomly selected question). ``ties`` False
    is their setup S2: tie votes are left out before pairing. (agreement, items counted); None
    when no item has a pair."""
    shares: list[float] = []
    for item, votes in first.items():
        mine = [v for v in votes if ties or v != TIE]
        if second is None:
            pairs = list(combinations(mine, 2))
        else:
            theirs = [v for v in second.get(item, ()) if ties or v != TIE]
            pairs = [(a, b) for a in mine for b in theirs]
        if pairs:
            shares.append(sum(a == b for a, b in pairs) / len(pairs))
    return (sum(shares) / len(shares) if shares else None), len(shares)


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
    (S1) and without (S2), each with the items it rests on (n items: those of S1)."""
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
            columns=("Agreement with ties (S1)", "Agreement without ties (S2)", "n items"),
            rows=tuple(rows),
            caption="Zheng et al. Sec. 4.2: the probability that two raters, two people or a judge and a person, "
            "agree on a randomly chosen item: per item the share of agreeing pairs of votes, averaged over the "
            "items. S1 counts a tie as a vote; S2 leaves the tie votes out. Paper (MT-Bench, Table 5): GPT-4 vs "
            "human 0.66 (S1) and 0.85 (S2); human vs human 0.63 and 0.81.",
            row_header="Raters",
        )
    ]
