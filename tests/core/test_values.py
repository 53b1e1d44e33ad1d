"""core.values.iter_array, the Label Studio reader's streaming parse (issue 37, M3): element by
element what ``json.loads`` reads (the reference), and its errors at the places ``json.loads`` names."""

from __future__ import annotations

import json

import pytest

from core import values


@pytest.mark.parametrize(
    "text",
    [
        "[]",
        " [ ] \n",
        '[{"id": 1, "data": {"x": [1, 2.5, null, true]}}, {"id": 2}]',
        '\n[\n  {"a": "\\u00e9"} ,\n  [1, [2, [3]]],\n  "s", 4, -0.5e3, false\n]\n',
    ],
)
def test_iter_array_yields_what_json_loads_reads(text):
    assert list(values.iter_array(text)) == json.loads(text)


@pytest.mark.parametrize(
    "text", ['[{"a": 1} {"b": 2}]', '[{"a": 1},]', '[{"a": 1}', '[{"a": 1}] x', '[{"a": 1},\n {"b": nope}]', "[1,,2]"]
)
def test_iter_array_raises_where_json_loads_does(text):
    with pytest.raises(json.JSONDecodeError) as loads_error:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as ours:
        list(values.iter_array(text))
    assert (ours.value.lineno, ours.value.colno) == (loads_error.value.lineno, loads_error.value.colno)


def test_iter_array_refuses_a_hostile_integer_at_its_place_and_a_non_array():
    text = '[{"a": 1},\n {"b": ' + "9" * 5000 + "}]"
    with pytest.raises(json.JSONDecodeError, match="digits") as exc:
        list(values.iter_array(text))
    assert (exc.value.lineno, exc.value.colno) == (2, 8)
    with pytest.raises(ValueError, match="not a JSON array"):
        list(values.iter_array('{"tasks": []}'))
