"""Spreadsheet-safe CSV (issue 12, finding 7; issue 23, finding 1): the one writer for every CSV
the platform writes (curation exports, the agreement report, validation tables, the study
dashboard, the AHEaD tables).

Two rules, both applied by :func:`writer` / :func:`dict_writer` to every cell, header included
(docs/security.md, "CSV exports", gives the reasoning):

- **Formulas, in every locale** (issue 37, M2). A spreadsheet does not only read the cells a
  comma cuts: German and most European locales split on ``;``, "tab-separated" on the tab, a
  naive reader on any line break; "trim spaces" (and Excel) drop blanks in front; a quote may open
  a cell; full-width ``＝＋－＠`` and other NFKC forms may be mapped to ``=+-@``. So a value is cut
  at every ``,``, ``;``, tab and line break (and the NFKC forms of ``,`` and ``;``), and in every
  piece the first character that is not a blank, an invisible (Cf), a control or a quote is
  looked at: when it is a formula sign (``=``, ``+``, ``-``, ``@`` or one that NFKC maps to
  them) and the piece is not a plain number, a ``'`` goes right before it, so however the piece
  is cut, trimmed or mapped, it starts with ``'`` (or a blank before it) and shows as the text it
  is. ``x;=1+1`` is written ``x;'=1+1``, ``  =1`` ``  '=1``. As before, a value starting with
  ``=``, ``+``, ``-``, ``@``, a tab or a CR gets a leading ``'``, and so does a tab that starts a
  piece. A plain number written as text (``-1``, ``+2.5``, ``1e-3``, also as a piece:
  ``1;-2``) is left as it is, and numbers (int, float) are never touched: numbers stay numbers.
  Text with nothing of this (``a=b``, ``x-1``, ``plain text``) is written unchanged.
- **Line breaks.** Rows end in ``\\r\\n`` and a value holding ``\\r`` or ``\\n`` is always quoted
  (``QUOTE_MINIMAL`` quotes any character of the line terminator), so a reader that honours
  quotes (Python's ``csv``, spreadsheets) keeps the value in its cell. For a reader that splits
  lines naively, each line is a piece as above: ``"fine\\r=cmd|' /C calc'!A0"`` is written
  ``"fine\\r'=cmd|' /C calc'!A0"``: no line, and no cell of any line, starts with ``=``.

JSONL, JSON and Parquet keep every value raw; only CSV goes through here.

Pure standard library (no Django), so any layer may use it."""

from __future__ import annotations

import csv
import io
import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import IO, Any

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
#: every row ends so; values holding any of its characters are quoted
LINE_END = "\r\n"
LINE_BREAKS = ("\r", "\n")
#: where a spreadsheet may end a cell inside a value: the separators of every locale's import
#: (comma, semicolon, tab), what a naive reader takes for a line end (CR, LF, VT, FF, the file,
#: group and record separators, NEL, U+2028, U+2029), and the forms of comma and semicolon that
#: NFKC maps to them (full-width, small, vertical, the Greek question mark); a test checks the
#: last list against the Unicode database
CELL_ENDS = ",;\t\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029\u037e\ufe10\ufe14\ufe50\ufe54\uff0c\uff1b"
#: the same less the tab: a tab that starts one of these cells is itself a formula start (OWASP)
_OUTER_ENDS = CELL_ENDS.replace("\t", "")
#: the characters NFKC maps to a formula start (``=``, ``+``, ``-``, ``@``): full-width, small,
#: superscript and subscript forms (checked against the Unicode database by a test)
FORMULA_LOOKALIKES = "\u207a\u207c\u208a\u208c\u2a75\u2a76\ufb29\ufe62\ufe63\ufe66\ufe6b\uff0b\uff0d\uff1d\uff20"
_FORMULA_CHARS = frozenset("=+-@" + FORMULA_LOOKALIKES)
#: the double quote and its full-width form: a naive reader may take either for a cell's
#: opening quote, so they are passed over like blanks
_QUOTES = frozenset('"\uff02')
_SEGMENT = re.compile(f"[^{re.escape(CELL_ENDS)}]+")
_TAB_LEAD = re.compile(f"(?:^|(?<=[{re.escape(_OUTER_ENDS)}]))\t")
#: a value needs the slow path only if it may hold a second cell or starts with a non-letter
_ANY_END = re.compile(f"[{re.escape(CELL_ENDS)}]")


def ignorable(ch: str) -> bool:
    """Whether a spreadsheet may drop ``ch`` in front of a cell's text: blanks (space, NBSP, the
    ideographic space, every Unicode space and line break: "trim spaces" and Excel's own
    trimming), controls (category Cc), invisible format characters (category Cf: zero-width
    space and joiners, the BOM, bidi marks) and quotes."""
    return ch.isspace() or ch in _QUOTES or unicodedata.category(ch) in ("Cc", "Cf")


def _first_significant(segment: str) -> int:
    """Index of the first character of ``segment`` that is not :func:`ignorable`, or -1."""
    for i, ch in enumerate(segment):
        if not ignorable(ch):
            return i
    return -1


def _is_number(text: str) -> bool:
    """A plain number however it may be read: NFKC-mapped, blanks and quotes trimmed."""
    text = unicodedata.normalize("NFKC", text)
    start, end = 0, len(text)
    while start < end and ignorable(text[start]):
        start += 1
    while end > start and ignorable(text[end - 1]):
        end -= 1
    return PLAIN_NUMBER.fullmatch(text[start:end]) is not None


def _apostrophes(value: str) -> list[int]:
    """Where ``value`` needs a ``'`` (positions in it, ascending): see :func:`defuse`."""
    at: set[int] = set()
    if value.startswith(FORMULA_START) and not PLAIN_NUMBER.fullmatch(value):
        at.add(0)  # the whole value, as since issue 12 (a leading tab or CR included)
    for m in _TAB_LEAD.finditer(value):
        at.add(m.start())  # a cell that a comma/semicolon/line split starts with a tab
    for m in _SEGMENT.finditer(value):
        segment = m.group()
        i = _first_significant(segment)
        if i >= 0 and segment[i] in _FORMULA_CHARS and not _is_number(segment[i:]):
            at.add(m.start() + i)  # right before the sign: every reading of this cell starts with '
    return sorted(at)


def defuse(value: Any) -> Any:
    """``value`` as a CSV cell may hold it; anything but text (numbers, None) unchanged.

    A ``'`` goes in front of the value if it starts with ``=``, ``+``, ``-``, ``@``, a tab or a CR
    (unless it is a plain number such as ``-1``), and in front of the first significant
    character of every cell a spreadsheet could cut out of it (split on ``,``, ``;``, tab or a
    line break, blanks, invisible characters and quotes passed over, full-width and other NFKC
    forms mapped) when that character is a formula sign and the cell is not a plain number; a
    tab that starts such a cell gets one too. ``x;=1+1`` is written ``x;'=1+1``, ``a, -b``
    ``a, '-b``, ``\u200b＝1`` ``\u200b'＝1``. Text with none of these (``a=b``, ``x-1``,
    ``1;-2``) is left as it is; :func:`defuse` of its own result changes nothing."""
    if not isinstance(value, str) or not value:
        return value
    if value[0].isalnum() and _ANY_END.search(value) is None:
        return value  # one cell that starts with a letter or digit: nothing can run (fast path)
    at = _apostrophes(value)
    if not at:
        return value
    parts, prev = [], 0
    for p in at:
        parts += [value[prev:p], "'"]
        prev = p
    parts.append(value[prev:])
    return "".join(parts)


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


def record_text(record: Any, first: Sequence[str] = ()) -> str:
    """CSV text (header and one row, through the one writer) of a status or error body, the
    ``{"detail": ..., "code": ...}`` an API answers with, in the format the client asked for: the
    keys named in ``first`` (where present) then the others in their order; lists and dicts as
    JSON text; anything but a dict as one ``detail`` cell. Error text can echo what the client
    sent (``?field=x,=HYPERLINK(...)``), so it is written as carefully as an export."""
    if not isinstance(record, dict):
        record = {"detail": record}
    keys = [k for k in first if k in record] + [k for k in record if k not in first]
    cells = [
        json.dumps(v, ensure_ascii=False, default=str) if isinstance(v, dict | list | tuple) else v
        for v in (record[k] for k in keys)
    ]
    buf = io.StringIO()
    w = Writer(buf)
    w.writerow([str(k) for k in keys])
    w.writerow(["" if v is None else v if isinstance(v, str | int | float) else str(v) for v in cells])
    return buf.getvalue()
