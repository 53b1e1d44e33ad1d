"""The one flattener of stored answers (annotation.answers.flatten_answers): its cells and the
options its three readers use (long export, ratings frame, policy context). Pure: no database."""

from __future__ import annotations

from annotation.answers import flatten_answers
from annotation.rubric import Rubric

RUBRIC = Rubric.from_schema(
    {
        "title": "t",
        "questions": [
            {"id": "q1", "type": "scale", "options": [{"value": 1}, {"value": 2}, {"value": 3}]},
            {"id": "ok", "type": "binary", "options": [{"value": 0}, {"value": 1}]},
            {"id": "verdict", "type": "choice", "options": [{"value": "G"}, {"value": "B"}]},
            {"id": "flags", "type": "checklist", "options": [{"value": "f1"}, {"value": "f2"}]},
            {"id": "human", "type": "pairwise", "pair": ["a", "b"], "allow_tie": True},
            {"id": "why", "type": "text"},
            {
                "id": "consistency",
                "type": "binary",
                "options": [{"value": 0}, {"value": 1}],
                "repeat": {"over": "values"},
            },
        ],
        "derived": [{"id": "total", "expr": "q1 + ok"}],
        "acceptance": {"expr": "q1 >= 2"},
    }
)
ANSWERS = {
    "q1": 2,
    "ok": 1,
    "verdict": "G",
    "flags": ["f2"],
    "human": "left",
    "why": "fine",
    "consistency": [1, None, 0],
}
SWAPPED = {"pair_order": {"human": ["b", "a"]}}
DERIVED = {
    "total": 3,
    "accepted": True,
    "judge_exact": {"answers": {"q1": 2.5, "verdict": "B"}, "derived": {"total": 3.5}},
}


def fields(cells):
    return [(name, element, value) for name, element, value, _ in cells]


def test_default_cells_are_the_long_export_rows():
    cells = flatten_answers(RUBRIC, ANSWERS, DERIVED, SWAPPED)
    assert fields(cells) == [
        ("q1", None, 2),
        ("ok", None, 1),
        ("verdict", None, "G"),
        ("flags", None, ["f2"]),
        ("human", None, "b"),  # the item field shown on the left for this assignment, not "left"
        ("why", None, "fine"),
        ("consistency[1]", 1, 1),
        ("consistency[3]", 3, 0),  # element 2 missing
        ("total", None, 3),
        ("accepted", None, True),
    ]
    sources = [src for *_, src in cells]
    assert sources[0] is RUBRIC.question("q1") and sources[-2] is RUBRIC.derived[0] and sources[-1] is None


def test_exact_means_replace_only_numeric_answers_and_derived_fields():
    """The agreement report reads an ensemble judge's exact means; the export keeps the stored,
    rounded answer (the known discrepancy, chosen by this one parameter)."""
    exported = {n: v for n, _, v, _ in flatten_answers(RUBRIC, ANSWERS, DERIVED, None)}
    analysed = {n: v for n, _, v, _ in flatten_answers(RUBRIC, ANSWERS, DERIVED, None, exact=True)}
    assert (exported["q1"], exported["total"]) == (2, 3)
    assert (analysed["q1"], analysed["total"]) == (2.5, 3.5)
    assert analysed["verdict"] == "G" and analysed["accepted"] is True  # choice and accepted: stored


def test_missing_text_and_element_options():
    answers = {"q1": None, "consistency": [None, 1]}
    cells = fields(flatten_answers(RUBRIC, answers, {}, None, text=False, missing=True))
    assert ("why", None, None) not in cells and ("q1", None, None) in cells
    assert ("consistency[1]", 1, None) in cells and ("accepted", None, None) in cells
    assert fields(flatten_answers(RUBRIC, answers, {}, None)) == [("consistency[2]", 2, 1)]
    whole = fields(flatten_answers(RUBRIC, answers, {}, None, elements=False))
    assert whole == [("consistency", None, [None, 1])]


def test_policy_context_names_keep_the_side_and_the_field():
    ctx = {
        n: v
        for n, _, v, _ in flatten_answers(
            RUBRIC, ANSWERS, DERIVED, SWAPPED, elements=False, missing=True, pair_sides=True
        )
    }
    assert ctx["human"] == "left" and ctx["human_field"] == "b"
    assert ctx["consistency"] == [1, None, 0] and ctx["accepted"] is True
    assert "judge_exact" not in ctx


def test_none_stored_json_is_empty():
    assert flatten_answers(RUBRIC, None, None, None) == []
