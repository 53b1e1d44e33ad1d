"""What no stored value may hold, whatever its schema: NUL characters (PostgreSQL refuses them
in text and JSON, so they ended as server errors) and JSON nested deeper than :data:`MAX_DEPTH`
(issue 12). Pure; iterative, so a hostile value cannot exhaust the stack while it is checked."""

from __future__ import annotations

from typing import Any

#: the deepest nesting of lists / objects accepted in items, answers and API bodies
MAX_DEPTH = 32


def value_problem(value: Any, *, max_depth: int = MAX_DEPTH) -> str | None:
    """Why ``value`` (parsed JSON) cannot be stored, or None: a NUL character in a text or a
    key, or lists / objects nested deeper than ``max_depth``."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, str):
            if "\x00" in v:
                return "text holds a NUL character (\\u0000), which cannot be stored"
        elif isinstance(v, (dict, list, tuple)):
            if depth >= max_depth:
                return f"the value is nested too deeply (more than {max_depth} levels of lists / objects)"
            if isinstance(v, dict):
                for k, x in v.items():
                    if isinstance(k, str) and "\x00" in k:
                        return "a key holds a NUL character (\\u0000), which cannot be stored"
                    stack.append((x, depth + 1))
            else:
                stack.extend((x, depth + 1) for x in v)
    return None


__all__ = ["MAX_DEPTH", "value_problem"]
