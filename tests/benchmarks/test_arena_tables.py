"""The pairwise-preference table's agreement (Zheng et al., NeurIPS 2023, Sec. 4.2 and Table 5),
checked against the paper's definition written out with counts: on an item with n votes, n_c of
them for outcome c, two distinct votes agree with probability sum_c n_c (n_c - 1) / (n (n - 1));
a judge's vote v agrees with a random person's with probability n_v / n; agreement is the mean
over items (a randomly selected question). S2 drops the tie votes first."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchmarks.arena.tables import preference_validation_report, vote_agreement
from hvstats.validation import RaterInfo, ValidationInput

A, B, T = "response_a", "response_b", "tie"
PEOPLE = {1: [A, A, B], 2: [T, T, A], 3: [B, B, B], 4: [A, T, B], 5: [T]}
JUDGE = {1: [A], 2: [T], 3: [A], 4: [B], 5: [T]}
OUTCOMES = (A, B, T)


def counts(votes: list[str], ties: bool) -> np.ndarray:
    kept = [v for v in votes if ties or v != T]
    return np.array([kept.count(c) for c in OUTCOMES], dtype=float)


def people_by_formula(ties: bool) -> tuple[float, int]:
    per_item = []
    for votes in PEOPLE.values():
        n_c = counts(votes, ties)
        n = n_c.sum()
        if n >= 2:
            per_item.append(float((n_c * (n_c - 1)).sum() / (n * (n - 1))))
    return float(np.mean(per_item)), len(per_item)


def judge_by_formula(ties: bool) -> tuple[float, int]:
    per_item = []
    for item, (vote,) in JUDGE.items():
        n_c = counts(PEOPLE[item], ties)
        if (ties or vote != T) and n_c.sum():
            per_item.append(float(n_c[OUTCOMES.index(vote)] / n_c.sum()))
    return float(np.mean(per_item)), len(per_item)


@pytest.mark.parametrize("ties", [True, False])
def test_agreement_between_people_is_the_papers_probability(ties):
    value, n = vote_agreement(PEOPLE, ties=ties)
    expected, n_expected = people_by_formula(ties)
    assert n == n_expected and value == pytest.approx(expected)


@pytest.mark.parametrize("ties", [True, False])
def test_agreement_of_a_judge_with_people_is_the_papers_probability(ties):
    value, n = vote_agreement(JUDGE, PEOPLE, ties=ties)
    expected, n_expected = judge_by_formula(ties)
    assert n == n_expected and value == pytest.approx(expected)


def test_no_pair_no_agreement():
    assert vote_agreement({1: [A]}) == (None, 0)
    assert vote_agreement({1: [T, T]}, ties=False) == (None, 0)


def test_the_report_reads_the_votes_in_the_items_order():
    rows = [(item, f"p{k}", "human", v) for item, votes in PEOPLE.items() for k, v in enumerate(votes)]
    rows += [(item, "gpt-4", "model", v) for item, (v,) in JUDGE.items()]
    frame = pd.DataFrame(rows, columns=["item", "rater", "rater_kind", "value"]).assign(field="preference")
    raters = {r: RaterInfo(name=r, kind=k) for _, r, k, _ in rows}
    (table,) = preference_validation_report(ValidationInput(frame=frame, raters=raters))
    people_s1, people_s2 = people_by_formula(True)[0], people_by_formula(False)[0]
    judge_s1, judge_s2 = judge_by_formula(True)[0], judge_by_formula(False)[0]
    assert table.cell("Human vs human", "Agreement with ties (S1)").value == pytest.approx(people_s1)
    assert table.cell("Human vs human", "Agreement without ties (S2)").value == pytest.approx(people_s2)
    judge_row = next(r.label for r in table.rows if r.label != "Human vs human")
    assert table.cell(judge_row, "Agreement with ties (S1)").value == pytest.approx(judge_s1)
    assert table.cell(judge_row, "Agreement without ties (S2)").value == pytest.approx(judge_s2)
