"""The declarative rubric engine and its safe expression language."""

import pytest

from annotation.expressions import Expression, ExpressionError
from annotation.rubric import AnswerError, Rubric, RubricError

SCHEMA = {
    "title": "t",
    "questions": [
        {
            "id": "score",
            "type": "scale",
            "options": [{"value": 1, "label": "low"}, {"value": 2, "label": "mid"}, {"value": 3, "label": "high"}],
        },
        {
            "id": "verdict",
            "type": "choice",
            "options": [{"value": "G", "label": "Good"}, {"value": "B", "label": "Bad"}],
        },
        {"id": "reason", "type": "text", "required_if": "verdict == 'B'"},
        {"id": "flags", "type": "checklist", "options": [{"value": "x", "label": "X"}, {"value": "y", "label": "Y"}]},
        {
            "id": "per_value",
            "type": "binary",
            "options": [{"value": 0, "label": "no"}, {"value": 1, "label": "yes"}],
            "repeat": {"over": "values"},
        },
        {"id": "which", "type": "pairwise", "pair": ["human", "model"], "allow_tie": True},
    ],
    "derived": [
        {"id": "rate", "expr": "mean(per_value)"},
        {"id": "correct", "expr": "1 if which_field == 'human' else 0"},
    ],
    "acceptance": {"expr": "score >= 2 and verdict == 'G'"},
}
ITEM = {"values": [{"statement": "a"}, {"statement": "b"}], "human": "h", "model": "m"}


def answers(**over):
    base = {"score": 3, "verdict": "G", "flags": ["y", "x"], "per_value": [1, 0], "which": "left"}
    base.update(over)
    return base


def test_valid_answers_are_cleaned_and_derived():
    r = Rubric.from_schema(SCHEMA)
    cleaned = r.validate(answers(), item=ITEM)
    assert cleaned["flags"] == ["x", "y"]  # canonical order
    assert cleaned["reason"] is None
    assert r.derive(cleaned) == {"rate": 0.5, "correct": 1, "accepted": True}


def test_pair_order_of_the_assignment_decides_which_field_was_picked():
    r = Rubric.from_schema(SCHEMA)
    presentation = {"pair_order": {"which": ["model", "human"]}}
    cleaned = r.validate(answers(which="left"), item=ITEM, presentation=presentation)
    assert r.derive(cleaned, presentation=presentation)["correct"] == 0
    cleaned = r.validate(answers(which="tie"), item=ITEM, presentation=presentation)
    assert r.derive(cleaned, presentation=presentation)["correct"] == 0


@pytest.mark.parametrize(
    "bad, field",
    [
        ({"score": 4}, "score"),  # out of range
        ({"score": "3"}, "score"),  # wrong type
        ({"score": True}, "score"),  # bool is not an int point
        ({"score": None}, "score"),  # missing required
        ({"verdict": "X"}, "verdict"),
        ({"flags": ["z"]}, "flags"),
        ({"flags": ["x", "x"]}, "flags"),
        ({"per_value": [1]}, "per_value"),  # one answer per element
        ({"per_value": [1, 2]}, "per_value"),
        ({"which": "tie2"}, "which"),
        ({"verdict": "B"}, "reason"),  # required_if
        ({"verdict": "B", "reason": "   "}, "reason"),
        ({"nonsense": 1}, "nonsense"),  # unknown question
    ],
)
def test_invalid_answers_name_the_question(bad, field):
    r = Rubric.from_schema(SCHEMA)
    with pytest.raises(AnswerError) as exc:
        r.validate(answers(**bad), item=ITEM)
    assert field in exc.value.errors


def test_text_is_limited():
    r = Rubric.from_schema(SCHEMA)
    with pytest.raises(AnswerError):
        r.validate(answers(verdict="B", reason="x" * 5001), item=ITEM)


def test_form_parsing_maps_strings_back_to_typed_values():
    class Form(dict):
        def getlist(self, k):
            v = self.get(k)
            return v if isinstance(v, list) else ([] if v is None else [v])

    r = Rubric.from_schema(SCHEMA)
    parsed = r.parse_form(
        Form({"score": "2", "verdict": "G", "flags": ["x"], "per_value.0": "1", "per_value.1": "0", "which": "right"}),
        item=ITEM,
    )
    assert parsed == {"score": 2, "verdict": "G", "reason": None, "flags": ["x"], "per_value": [1, 0], "which": "right"}


@pytest.mark.parametrize(
    "schema_patch, message",
    [
        ({"questions": []}, "non-empty"),
        ({"questions": [{"id": "Bad Id", "type": "text"}]}, "lower_snake_case"),
        ({"questions": [{"id": "a", "type": "essay"}]}, "type must be"),
        ({"questions": [{"id": "a", "type": "scale", "options": [{"value": 2}, {"value": 1}]}]}, "ascending"),
        ({"questions": [{"id": "a", "type": "binary", "options": [{"value": 1}, {"value": 2}]}]}, "0 and 1"),
        ({"questions": [{"id": "a", "type": "text"}, {"id": "a", "type": "text"}]}, "duplicate"),
        ({"questions": [{"id": "a", "type": "text", "required_if": "b == 1"}]}, "unknown name"),
        ({"derived": [{"id": "d", "expr": "__import__('os')"}]}, "only the functions"),
        ({"acceptance": {"expr": "score.__class__"}}, "not allowed"),
        ({"extra": 1}, "unknown rubric keys"),
    ],
)
def test_malformed_rubrics_are_refused(schema_patch, message):
    schema = dict(SCHEMA, **schema_patch)
    with pytest.raises(RubricError, match=message):
        Rubric.from_schema(schema)


@pytest.mark.parametrize(
    "source",
    [
        "__import__('os').system('true')",
        "open('/etc/passwd')",
        "x.y",
        "x[0]",
        "lambda: 1",
        "[i for i in x]",
        "(1).__class__",
        "f'{x}'",
        "x := 1",
        "eval('1')",
    ],
)
def test_expressions_refuse_anything_outside_the_whitelist(source):
    with pytest.raises(ExpressionError):
        Expression(source)


def test_expressions_evaluate_and_missing_values_give_none():
    e = Expression("(q1/2 + q2/2 + q3/2 + q4) / 4")
    assert e.evaluate({"q1": 2, "q2": 2, "q3": 2, "q4": 1}) == 1.0
    assert e.evaluate({"q1": 2, "q2": None, "q3": 2, "q4": 1}) is None
    assert Expression("q1 + q2 >= 3 and q3 == 2").evaluate({"q1": 1, "q2": 2, "q3": 2}) is True
    assert Expression("x in ('a', 'b')").evaluate({"x": "b"}) is True
    assert Expression("mean(v)").evaluate({"v": []}) is None
    assert Expression("1 / 0").evaluate({}) is None
