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
from typing import Any, TextIO

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


#: characters read from a file per step of :func:`iter_array` (the buffer holds about one step
#: plus the element being parsed, whatever the file's size)
ARRAY_CHUNK_CHARS = 1 << 18
#: how close to the end of what was read a parse may stop, or fail, and still be a cut element
#: rather than a bad one: ``1.`` / ``1e+`` cut from ``1.5`` / ``1e+5``, ``\\u00`` from ``\\u00e9``,
#: ``tr`` from ``true``
_CUT_MARGIN = 8


class _Window:
    """The part of a JSON text :func:`iter_array` is parsing: all of a ``str``, or a file's text
    read ``chunk`` characters at a time with what was parsed dropped; it knows the line and
    column where it starts, so an error is placed where it is in the whole text."""

    def __init__(self, source: str | TextIO, chunk: int) -> None:
        self.chunk = chunk
        if isinstance(source, str):
            self.text, self.read, self.eof = source, None, True
        else:
            self.text, self.read, self.eof = "", source.read, False
        self.lines = 0  # newlines before the window
        self.column = 0  # characters between the last of them and the window
        self.offset = 0  # characters before the window

    def more(self) -> bool:
        """Read the next chunk into the window; False at the end of the file."""
        if self.eof or self.read is None:
            return False
        piece = self.read(self.chunk)
        if not piece:
            self.eof = True
            return False
        self.text += piece
        return True

    def drop(self, pos: int) -> int:
        """Forget the text before ``pos`` (parsed): the new position of ``pos``, 0."""
        if pos:
            gone = self.text[:pos]
            newlines = gone.count("\n")
            if newlines:
                self.lines += newlines
                self.column = len(gone) - gone.rfind("\n") - 1
            else:
                self.column += len(gone)
            self.offset += pos
            self.text = self.text[pos:]
        return 0

    def skip_space(self, pos: int) -> int:
        while True:
            pos = _SPACE.match(self.text, pos).end()
            if pos < len(self.text) or not self.more():
                return pos

    def error(self, message: str, pos: int) -> json.JSONDecodeError:
        """The error at ``pos`` of the window, with the line and column of the whole text."""
        exc = json.JSONDecodeError(message, self.text, pos)
        if exc.lineno == 1:
            exc.colno += self.column
        exc.lineno += self.lines
        exc.pos += self.offset
        return exc


def iter_array(source: str | TextIO, *, chunk: int = ARRAY_CHUNK_CHARS) -> Iterator[Any]:
    """The elements of the JSON array ``source`` (a top-level ``[...]``: a text, or a text file
    read ``chunk`` characters at a time), one at a time, each parsed as :func:`loads` parses: a
    file of 10^6 Label Studio tasks never exists as one list of dicts (``json.loads`` of a 145 MB
    export held ~1 GB of them), and read from a file it never exists as one text either: memory
    is one chunk and the element being parsed, whatever the file's size (issue 37, M3). Raises
    :class:`json.JSONDecodeError` (with the line and column in the whole text) where the text
    stops being a JSON array, after the elements before it were yielded; :class:`ValueError` when
    it does not start with ``[``."""
    window = _Window(source, chunk)
    pos = window.skip_space(0)
    if not window.text.startswith("[", pos):
        raise ValueError("not a JSON array")
    pos = window.skip_space(pos + 1)
    if window.text.startswith("]", pos):
        pos = window.skip_space(pos + 1)
    else:
        while True:
            if window.read is not None and pos > chunk:
                pos = window.drop(pos)
            text = window.text
            try:
                value, end = _DECODER.raw_decode(text, pos)
            except _IntegerTooLong:
                found = _LONG_INTEGER.search(text, pos)
                raise window.error(
                    f"a number of more than {MAX_INT_DIGITS} digits", found.start() if found else pos
                ) from None
            except json.JSONDecodeError as exc:
                # an element cut by the end of a chunk fails near that end (a string: where it
                # starts): read on and parse it again; at the end of the file it is the file's error
                cut = exc.pos >= len(text) - _CUT_MARGIN or exc.msg.startswith("Unterminated string")
                if cut and window.more():
                    continue
                raise window.error(exc.msg, exc.pos) from None
            if end >= len(text) - 2 and isinstance(value, (int, float)) and window.more():
                continue  # a number that may go on in the next chunk (``12`` of ``1234``, ``1`` of ``1.5``)
            yield value
            pos = window.skip_space(end)
            if window.text.startswith(",", pos):
                pos = window.skip_space(pos + 1)
                continue
            if window.text.startswith("]", pos):
                pos = window.skip_space(pos + 1)
                break
            raise window.error("Expecting ',' delimiter", pos)
    if pos != len(window.text):
        raise window.error("Extra data", pos)


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
    "ARRAY_CHUNK_CHARS",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "REPLACEMENT",
    "SURROGATE",
    "iter_array",
    "loads",
    "shown",
    "text_problem",
    "value_problem",
    "without_surrogates",
]
