"""What no stored value may hold, whatever its schema: NUL characters (PostgreSQL refuses them
in text and JSON, so they ended as server errors), lone UTF-16 surrogates (issue 37, H2: JSON's
``"\\udc00"`` escape parses to a Python text that is no valid Unicode; SQLite stored it as the
escape and every export of the project then failed to encode it, PostgreSQL's JSONB refuses it)
and JSON nested deeper than :data:`MAX_DEPTH` (issue 12). Pure; iterative, so a hostile value
cannot exhaust the stack while it is checked."""

from __future__ import annotations

import re
from typing import Any

#: the deepest nesting of lists / objects accepted in items, answers and API bodies
MAX_DEPTH = 32

#: a code point in U+D800..U+DFFF: Python texts may hold one (from JSON's \\ud800 escapes, or
#: bytes decoded with ``surrogateescape``), UTF-8 cannot encode it
SURROGATE = re.compile("[\ud800-\udfff]")

#: what a surrogate becomes where a stored text is repaired (the Unicode replacement character)
REPLACEMENT = "\ufffd"

_BAD = re.compile("[\x00\ud800-\udfff]")


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
    surrogate in a text or a key, or lists / objects nested deeper than ``max_depth``."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, str):
            problem = text_problem(v)
            if problem:
                return problem
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


__all__ = ["MAX_DEPTH", "REPLACEMENT", "SURROGATE", "text_problem", "value_problem", "without_surrogates"]
