"""core.values.iter_array, the Label Studio reader's streaming parse (issue 37, M3): element by
element what ``json.loads`` reads (the reference), and its errors at the places ``json.loads`` names."""

from __future__ import annotations

import io
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


# ------------------------------------------------------------------- read from a file, in chunks
CHUNKED = [
    '[{"id": 1, "data": {"x": [1, 2.5, null, true]}}, {"id": 2}]',
    '\n[\n  {"a": "\\u00e9\\n"} ,\n  [1, [2, [3]]],\n  "s", 4, -0.5e3, false\n]\n',
    # numbers, literals and escapes a chunk's end can cut where the part read is itself valid JSON
    "[12345, 1.5e+10, -0.25, 1E5, true, false, null, 7]",
    '["\\ud83d\\ude00", "\\"q\\"", "tab\\there"]',
]


@pytest.mark.parametrize("text", CHUNKED)
@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 8, 13])
def test_iter_array_reads_a_file_in_chunks_as_json_loads_reads_it_whole(text, chunk):
    assert list(values.iter_array(io.StringIO(text), chunk=chunk)) == json.loads(text)


@pytest.mark.parametrize(
    "text",
    [
        '[{"a": 1} {"b": 2}]',
        '[{"a": 1},]',
        '[{"a": 1}',
        '[{"a": 1}] x',
        '[{"a": 1},\n {"b": nope}]',
        "[1,,2]",
        "[1,\n\n 2 3]",
        '[\n"ab\ncd"]',
        '[1, "abc',
        "[1, tru]",
        "[1]\n\n  ]",
    ],
)
@pytest.mark.parametrize("chunk", [1, 4, 7])
def test_iter_array_from_a_file_raises_at_the_place_json_loads_names(text, chunk):
    with pytest.raises(json.JSONDecodeError) as loads_error:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as ours:
        list(values.iter_array(io.StringIO(text), chunk=chunk))
    expected = (loads_error.value.lineno, loads_error.value.colno, loads_error.value.pos)
    assert (ours.value.lineno, ours.value.colno, ours.value.pos) == expected


def test_iter_array_from_a_file_keeps_a_chunk_not_the_file():
    """A file is read a chunk at a time, never the rest of it at once (the window a parse sees
    drops what was parsed), and every element still comes out as ``json.loads`` reads it."""
    text = json.dumps([{"id": i, "text": "x" * 50} for i in range(2000)])
    longest = 0

    class Watched(io.StringIO):
        def read(self, n=-1):
            nonlocal longest
            assert n is not None and 0 < n <= 64  # never the rest of the file at once
            piece = super().read(n)
            longest = max(longest, len(piece))
            return piece

    assert list(values.iter_array(Watched(text), chunk=64)) == json.loads(text)
    assert longest == 64


def test_iter_array_from_a_file_places_a_hostile_integer():
    text = '[{"a": 1},\n {"b": ' + "9" * 5000 + "}]"
    with pytest.raises(json.JSONDecodeError, match="digits") as exc:
        list(values.iter_array(io.StringIO(text), chunk=100))
    assert (exc.value.lineno, exc.value.colno) == (2, 8)
