"""What no stored value may hold, whatever its schema: NUL characters (PostgreSQL refuses them
in text and JSON, so they ended as server errors), lone UTF-16 surrogates (issue 37, H2: JSON's
``"\\udc00"`` escape parses to a Python text that is no valid Unicode; SQLite stored it as the
escape and every export of the project then failed to encode it, PostgreSQL's JSONB refuses it)
JSON nested deeper than :data:`MAX_DEPTH` (issue 12) and numbers that are not finite (issue 37,
M6: ``Infinity``, ``NaN``, ``1e400``, which Python's JSON reads but no stored JSON may hold: SQLite's
JSON_VALID check and PostgreSQL's JSONB both refuse them). :func:`loads` reads uploaded JSON so an
integer longer than Python converts is a :class:`json.JSONDecodeError` at its place, not a bare
ValueError. Pure; iterative, so a hostile value cannot exhaust the stack while it is checked."""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterator
from typing import Any

#: the deepest nesting of lists / objects accepted in items, answers and API bodies
MAX_DEPTH = 32

#: a code point in U+D800..U+DFFF: Python texts may hold one (from JSON's \\ud800 escapes, or
#: bytes decoded with ``surrogateescape``), UTF-8 cannot encode it
SURROGATE = re.compile("[\ud800-\udfff]")

#: what a surrogate becomes where a stored text is repaired (the Unicode replacement character)
REPLACEMENT = "\ufffd"

_BAD = re.compile("[\x00\ud800-\udfff]")

#: the most digits an integer in uploaded JSON may have: Python's own limit for turning text into
#: an int (``sys.int_info.default_max_str_digits``, 4,300), past which ``int()`` raises a bare
#: ValueError that every reader took for a server error (issue 37, M6: a 5,000-digit id)
MAX_INT_DIGITS = sys.int_info.default_max_str_digits

_LONG_INTEGER = re.compile(rf"-?\d{{{MAX_INT_DIGITS + 1},}}")


class _IntegerTooLong(ValueError):
    pass


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _IntegerTooLong(text)
    return int(text)


def loads(text: str | bytes, **kwargs: Any) -> Any:
    """``json.loads(text)``, except that an integer of more than :data:`MAX_INT_DIGITS` digits is
    a :class:`json.JSONDecodeError` pointing at it (so callers' line and column messages name the
    place), like any other text that is not JSON."""
    try:
        return json.loads(text, parse_int=_parse_int, **kwargs)
    except _IntegerTooLong:
        doc = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        found = _LONG_INTEGER.search(doc)
        raise json.JSONDecodeError(
            f"a number of more than {MAX_INT_DIGITS} digits", doc, found.start() if found else 0
        ) from None


_DECODER = json.JSONDecoder(parse_int=_parse_int)
_SPACE = re.compile(r"[ \t\n\r]*")


def iter_array(text: str) -> Iterator[Any]:
    """The elements of the JSON array ``text`` (a top-level ``[...]``), one at a time, each
    parsed as :func:`loads` parses: a file of 10^6 Label Studio tasks never exists as one list
    of dicts (``json.loads`` of a 145 MB export held ~1 GB of them; issue 37, M3). Raises
    :class:`json.JSONDecodeError` (with the line and column in ``text``) where the text stops
    being a JSON array, after the elements before it were yielded; :class:`ValueError` when
    ``text`` does not start with ``[``."""
    pos = _SPACE.match(text, 0).end()
    if not text.startswith("[", pos):
        raise ValueError("not a JSON array")
    pos = _SPACE.match(text, pos + 1).end()
    if text.startswith("]", pos):
        pos = _SPACE.match(text, pos + 1).end()
    else:
        while True:
            try:
                value, pos = _DECODER.raw_decode(text, pos)
            except _IntegerTooLong:
                found = _LONG_INTEGER.search(text, pos)
                raise json.JSONDecodeError(
                    f"a number of more than {MAX_INT_DIGITS} digits", text, found.start() if found else pos
                ) from None
            yield value
            pos = _SPACE.match(text, pos).end()
            if text.startswith(",", pos):
                pos = _SPACE.match(text, pos + 1).end()
                continue
            if text.startswith("]", pos):
                pos = _SPACE.match(text, pos + 1).end()
                break
            raise json.JSONDecodeError("Expecting ',' delimiter", text, pos)
    if pos != len(text):
        raise json.JSONDecodeError("Extra data", text, pos)


def shown(value: Any, *, limit: int = 40) -> str:
    """``repr(value)`` cut to ``limit`` characters, for a message that names a value from a file:
    a hostile number may have thousands of digits, and a problem list is read by a person."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def text_problem(text: str, *, what: str = "text") -> str | None:
    """Why the text ``text`` cannot be stored, or None (a NUL or a lone surrogate)."""
    found = _BAD.search(text)
    if found is None:
        return None
    if found.group() == "\x00":
        return f"{what} holds a NUL character (\\u0000), which cannot be stored"
    return (
        f"{what} holds a lone UTF-16 surrogate (\\u{ord(found.group()):04x}), which is not valid Unicode "
        "and cannot be stored"
    )


def value_problem(value: Any, *, max_depth: int = MAX_DEPTH) -> str | None:
    """Why ``value`` (parsed JSON) cannot be stored, or None: a NUL character or a lone UTF-16
    surrogate in a text or a key, a number that is not finite, or lists / objects nested deeper
    than ``max_depth``."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, str):
            problem = text_problem(v)
            if problem:
                return problem
        elif isinstance(v, float) and not math.isfinite(v):
            return f"a number is not finite ({v!r}: Infinity, NaN or beyond 1e308), which JSON cannot store"
        elif isinstance(v, (dict, list, tuple)):
            if depth >= max_depth:
                return f"the value is nested too deeply (more than {max_depth} levels of lists / objects)"
            if isinstance(v, dict):
                for k, x in v.items():
                    if isinstance(k, str):
                        problem = text_problem(k, what="a key")
                        if problem:
                            return problem
                    stack.append((x, depth + 1))
            else:
                stack.extend((x, depth + 1) for x in v)
    return None


def without_surrogates(value: Any) -> Any:
    """``value`` (parsed JSON) with every lone surrogate in its texts and keys replaced by
    :data:`REPLACEMENT`: for text the app did not take from a person (a model's output) and for
    repairing rows stored before surrogates were refused. Values without one come back as they
    are (the same object)."""
    if isinstance(value, str):
        return SURROGATE.sub(REPLACEMENT, value) if SURROGATE.search(value) else value
    if isinstance(value, dict):
        return {without_surrogates(k): without_surrogates(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [without_surrogates(v) for v in value]
    return value


__all__ = [
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "REPLACEMENT",
    "SURROGATE",
    "loads",
    "shown",
    "text_problem",
    "value_problem",
    "without_surrogates",
]
