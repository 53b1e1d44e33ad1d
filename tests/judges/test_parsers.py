"""Each preset's output contract: "score is 4" (CULTIVate), JSON per rubric (ValueGround,
CQ-Bench), a label from a closed list (Cultural Counterfactuals Table 3)."""

import pytest

from annotation.rubric import Rubric
from benchmarks.counterfactuals import CONTEXT_CHOICES
from benchmarks.registry import get_preset
from judges.parsers import (
    ParseError,
    parse_choice,
    parse_json,
    parse_question_choice,
    parse_score_is,
)

FAITH = Rubric.from_schema(get_preset("cultivate.faithfulness").rubric)
VG = Rubric.from_schema(get_preset("valueground.pair_quality").rubric)
BLEND = Rubric.from_schema(get_preset("blendvis.image").rubric)


@pytest.mark.parametrize("text", ["score is 4", "Score is <4>", "score is < 4 >", "  score is 4.\n", "score is: 4"])
def test_score_is_reads_the_cultivate_contract(text):
    assert parse_score_is(text, FAITH.question("faith")) == {"faith": 4}


@pytest.mark.parametrize(
    "text,why",
    [
        ("I would say four", 'no "score is'),
        ("score is 7", "not one of"),
        ("score is 3.5", "not one of"),
        ("score is 2 ... actually score is 5", "different scores"),
    ],
)
def test_score_is_failures_say_why(text, why):
    with pytest.raises(ParseError, match=why):
        parse_score_is(text, FAITH.question("faith"))


def test_json_answers_are_read_from_fences_and_typed_leniently():
    text = 'Here you go:\n```json\n{"q1": "2", "q2": 1.0, "q3": 0, "q4": 1}\n```'
    assert parse_json(text, VG, ["q1", "q2", "q3", "q4"]) == {"q1": 2, "q2": 1, "q3": 0, "q4": 1}


@pytest.mark.parametrize(
    "text,why",
    [
        ("no json here", "no JSON object"),
        ('{"q1": 2, "q2": }', "invalid JSON"),
        ('{"q1": 2}', "lacks q2"),
    ],
)
def test_json_failures_say_why(text, why):
    with pytest.raises(ParseError, match=why):
        parse_json(text, VG, ["q1", "q2"])


def test_closed_choice_picks_one_label_from_the_paper_list():
    choices = CONTEXT_CHOICES["socioeconomic"][1]
    assert parse_choice("middle income", choices) == "middle income"
    assert parse_choice("'High income'.", choices) == "high income"
    assert parse_choice("The area looks like a middle income area.", choices) == "middle income"
    religions = CONTEXT_CHOICES["religion"][1]
    assert parse_choice("Mosque", religions) == "Mosque"
    with pytest.raises(ParseError, match="several"):
        parse_choice("Mosque or Synagogue", religions)
    with pytest.raises(ParseError, match="not one of"):
        parse_choice("A cathedral", religions)


def test_closed_choice_maps_labels_to_rubric_option_values():
    assert parse_question_choice("G", BLEND.question("verdict")) == {"verdict": "G"}
