"""Spreadsheet formula injection (issue 12, finding 7): the one rule for every CSV the platform
writes (curation exports, the agreement report, validation tables, the study dashboard).

A text cell that a spreadsheet would read as a formula (starting with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return) is written with a leading single quote, so it shows as the
text it is and never runs. A plain number written as text (``-1``, ``+2.5``, ``1e-3``) is left as
it is, and numbers (int, float) are never touched: numbers stay numbers. JSONL, JSON and Parquet
keep every value raw; only CSV goes through here.

Pure standard library (no Django), so any layer may use it."""

from __future__ import annotations

import re
from typing import Any

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def defuse(value: Any) -> Any:
    """``value`` as a CSV cell may hold it: formula-like text prefixed with ``'``; anything else
    (numbers, None, plain text, numeric text) unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_START) and not PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def csv_cell(value: Any) -> Any:
    """:func:`defuse`, with None written as an empty cell."""
    return "" if value is None else defuse(value)
