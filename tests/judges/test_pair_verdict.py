"""The MT-Bench pairwise verdict (Zheng et al., NeurIPS 2023, Fig. 5): "[[A]]" if assistant A is
better, "[[B]]" if B is, "[[C]]" for a tie, read as the side shown (A is shown first)."""

from __future__ import annotations

import pytest

from annotation.rubric import Rubric
from benchmarks.registry import get_preset
from judges.parsers import ParseError, parse_question_choice

PREFERENCE = Rubric.from_schema(get_preset("arena.preference").rubric).question("preference")
NO_TIE = Rubric.from_schema(
    {"questions": [{"id": "better", "type": "pairwise", "label": "Better", "pair": ["x", "y"]}]}
).question("better")


@pytest.mark.parametrize(
    "reply, side",
    [
        ("Assistant A answers directly and correctly. [[A]]", "left"),
        ("B is more thorough.\n\nFinal verdict: [[B]]", "right"),
        ("Both are equally good. [[C]]", "tie"),
        ("[[ a ]]", "left"),  # spacing and case as models write them
        ("A restates the question; B answers it. A is worse.\n[[B]]", "right"),  # "A" in prose is no verdict
        ("The verdict [[B]] ... to be clear: [[B]]", "right"),  # the same verdict twice
        ("right", "right"),  # no [[ ]]: the closed choice as before
        ("Tie", "tie"),
    ],
)
def test_the_mt_bench_verdict_is_the_side_shown(reply, side):
    assert parse_question_choice(reply, PREFERENCE) == {"preference": side}


@pytest.mark.parametrize(
    "reply, why",
    [
        ("At first [[A]], on reflection [[B]]", "several verdicts"),
        ("I cannot decide.", "not one of"),
        ("", "empty reply"),
    ],
)
def test_a_reply_without_one_verdict_is_a_parse_failure(reply, why):
    with pytest.raises(ParseError, match=why):
        parse_question_choice(reply, PREFERENCE)


def test_a_tie_where_the_question_allows_none_is_refused():
    with pytest.raises(ParseError, match="allows no tie"):
        parse_question_choice("Equal. [[C]]", NO_TIE)
    assert parse_question_choice("[[A]]", NO_TIE) == {"better": "left"}
