"""Spreadsheet-safe CSV (issue 12, finding 7; issue 23, finding 1): the one writer for every CSV
the platform writes (curation exports, the agreement report, validation tables, the study
dashboard, the AHEaD tables).

Two rules, both applied by :func:`writer` / :func:`dict_writer` to every cell, header included:

- **Formulas.** A text cell that a spreadsheet would read as a formula (starting with ``=``,
  ``+``, ``-``, ``@``, a tab or a carriage return) is written with a leading single quote, so it
  shows as the text it is and never runs. A plain number written as text (``-1``, ``+2.5``,
  ``1e-3``) is left as it is, and numbers (int, float) are never touched: numbers stay numbers.
- **Line breaks.** Rows end in ``\\r\\n`` and a value holding ``\\r`` or ``\\n`` is always quoted
  (``QUOTE_MINIMAL`` quotes any character of the line terminator), so a reader that honours
  quotes (Python's ``csv``, spreadsheets) keeps the value in its cell. For a reader that splits
  lines naively, the text after each line break inside a value is defused as a cell of its own:
  wherever a new line, or a comma on such a line, is followed (past any ``"``) by a formula
  start, a ``'`` goes before it. ``"fine\\r=cmd|' /C calc'!A0"`` is written
  ``"fine\\r'=cmd|' /C calc'!A0"``: no line, and no cell of any line, starts with ``=``.

JSONL, JSON and Parquet keep every value raw; only CSV goes through here.

Pure standard library (no Django), so any layer may use it."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Sequence
from typing import IO, Any

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
#: every row ends so; values holding any of its characters are quoted
LINE_END = "\r\n"
LINE_BREAKS = ("\r", "\n")
#: past a line break inside a value: the start of a line or of a comma-separated cell (after any
#: quote characters a naive reader may take for a cell's opening quote), then a formula start and
#: the rest of that would-be cell
_INNER_CELL = re.compile(r'(?<=[\r\n,])("*)([=+\-@\t][^,\r\n"]*)')


def _inner(match: re.Match[str]) -> str:
    quotes, cell = match.group(1), match.group(2)
    if PLAIN_NUMBER.fullmatch(cell):
        return match.group(0)
    return quotes + "'" + cell


def defuse(value: Any) -> Any:
    """``value`` as a CSV cell may hold it: formula-like text prefixed with ``'``, and so is any
    formula-like line (or cell of a line) that follows a line break inside it; anything else
    (numbers, None, plain text, numeric text) unchanged."""
    if not isinstance(value, str):
        return value
    if value.startswith(FORMULA_START) and not PLAIN_NUMBER.fullmatch(value):
        value = "'" + value
    breaks = [i for i in (value.find("\r"), value.find("\n")) if i >= 0]
    if breaks:
        first = min(breaks)
        value = value[:first] + _INNER_CELL.sub(_inner, value[first:])
    return value


def csv_cell(value: Any) -> Any:
    """:func:`defuse`, with None written as an empty cell."""
    return "" if value is None else defuse(value)


class Writer:
    """``csv.writer`` with the platform's dialect (``\\r\\n`` rows, ``QUOTE_MINIMAL``) whose every
    cell goes through :func:`csv_cell`."""

    def __init__(self, fh: IO[str]) -> None:
        self._w = csv.writer(fh, lineterminator=LINE_END, quoting=csv.QUOTE_MINIMAL)

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._w.writerow([csv_cell(v) for v in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        self._w.writerows([csv_cell(v) for v in row] for row in rows)


class DictWriter:
    """``csv.DictWriter`` with the platform's dialect and :func:`csv_cell` on every cell (header
    names included); keys outside ``fieldnames`` are ignored, missing ones written empty."""

    def __init__(self, fh: IO[str], fieldnames: Sequence[str]) -> None:
        self.fieldnames = list(fieldnames)
        self._w = Writer(fh)

    def writeheader(self) -> Any:
        return self._w.writerow(self.fieldnames)

    def writerow(self, row: dict[str, Any]) -> Any:
        return self._w.writerow([row.get(k) for k in self.fieldnames])

    def writerows(self, rows: Iterable[dict[str, Any]]) -> None:
        self._w.writerows([row.get(k) for k in self.fieldnames] for row in rows)


def writer(fh: IO[str]) -> Writer:
    """The one CSV writer: see the module's rules."""
    return Writer(fh)


def dict_writer(fh: IO[str], fieldnames: Sequence[str]) -> DictWriter:
    """The one CSV writer, for rows as dicts."""
    return DictWriter(fh, fieldnames)
