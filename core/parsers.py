"""The API's JSON parser: DRF's, refusing a body whose texts are not valid Unicode (issue 37,
H2). JSON's ``\\udc00`` escape parses to a lone UTF-16 surrogate, which no database column can
hold as text (SQLite kept it as an escape in JSON columns and every export of the project then
failed to encode it; PostgreSQL refuses it with a server error). Refused here, with a 400, every
API writer is covered at once; the lean annotate path parses its own body and refuses the same
through ``core.values.value_problem``."""

from __future__ import annotations

from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError

from core.values import SURROGATE, text_problem


def surrogate_problem(value: Any) -> str | None:
    """Why a parsed JSON value holds text that is not valid Unicode (a lone surrogate in a text
    or a key), or None. A valid pair (an emoji written as two escapes) parses to one character."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if SURROGATE.search(v):
                return text_problem(v)
        elif isinstance(v, dict):
            for k, x in v.items():
                if isinstance(k, str) and SURROGATE.search(k):
                    return text_problem(k, what="a key")
                stack.append(x)
        elif isinstance(v, list):
            stack.extend(v)
    return None


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser; a body holding a lone surrogate is answered 400 with what is wrong."""

    def parse(self, stream, media_type=None, parser_context=None) -> Any:
        data = super().parse(stream, media_type, parser_context)
        # walked whatever the body's charset: a UTF-16 body escapes surrogates too
        problem = surrogate_problem(data)
        if problem:
            raise ParseError(f"JSON parse error - {problem}")
        return data


__all__ = ["JSONParser", "surrogate_problem"]
