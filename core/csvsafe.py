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
#: what a spreadsheet may drop in front of a cell's text: blanks (every Unicode space and line
#: break: "trim spaces", Excel's own trimming), controls (Cc), invisible format characters (Cf:
#: zero-width space and joiners, the BOM, bidi marks) and the quote (ASCII and full-width), which
#: a naive reader may take for a cell's opening quote; as ranges, checked against the Unicode
#: database by a test
IGNORABLE = (
    r"\x00-\x20\x22\x7f-\xa0\xad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u1680"
    r"\u180e\u2000-\u200f\u2028-\u202f\u205f-\u2064\u2066-\u206f\u3000\ufeff\uff02\ufff9-\ufffb"
    r"\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    r"\U000e0001\U000e0020-\U000e007f"
)
_IGNORABLE = re.compile(f"[{IGNORABLE}]")
_ENDS = re.escape(CELL_ENDS)
_SIGNS = re.escape("=+-@" + FORMULA_LOOKALIKES)
#: a piece that starts (past ignorable characters) with a formula sign: the start of the value or
#: just past a cell end, the ignorable run, then the sign and the rest of the piece. The run stops
#: at a cell end (a new piece starts there and is matched from there), so a long run of blanks
#: and breaks is scanned once, not once per break
_PIECE = re.compile(f"(?:^|(?<=[{_ENDS}]))((?:(?![{_ENDS}])[{IGNORABLE}])*)([{_SIGNS}][^{_ENDS}]*)")
#: a formula sign anywhere: without one, only a leading tab or CR needs a look
_ANY_SIGN = re.compile(f"[{_SIGNS}]")
#: a tab that starts a piece cut by anything but a tab
_TAB_LEAD = re.compile(f"(?:^|(?<=[{re.escape(_OUTER_ENDS)}]))\\t")


def ignorable(ch: str) -> bool:
    """Whether a spreadsheet may drop ``ch`` in front of a cell's text (see :data:`IGNORABLE`)."""
    return _IGNORABLE.fullmatch(ch) is not None


def _is_number(text: str) -> bool:
    """A plain number however it may be read: NFKC-mapped, ignorable characters trimmed."""
    text = unicodedata.normalize("NFKC", text)
    start, end = 0, len(text)
    while start < end and ignorable(text[start]):
        start += 1
    while end > start and ignorable(text[end - 1]):
        end -= 1
    return PLAIN_NUMBER.fullmatch(text[start:end]) is not None


def _piece(match: re.Match[str]) -> str:
    blanks, rest = match.group(1), match.group(2)
    return match.group(0) if _is_number(rest) else blanks + "'" + rest


def defuse(value: Any) -> Any:
    """``value`` as a CSV cell may hold it; anything but text (numbers, None) unchanged.

    A ``'`` goes in front of the first significant character of every piece a spreadsheet could
    cut out of the value (split on ``,``, ``;``, tab or a line break, blanks, invisible
    characters and quotes passed over, full-width and other NFKC forms mapped) when that
    character is a formula sign and the piece is not a plain number; in front of a tab that
    starts a piece; and in front of a value that starts with ``=``, ``+``, ``-``, ``@``, a tab or
    a CR (unless it is a plain number such as ``-1``). ``x;=1+1`` is written ``x;'=1+1``,
    ``a, -b`` ``a, '-b``, ``\\u200b＝1`` ``\\u200b'＝1``. Text with none of these (``a=b``,
    ``x-1``, ``1;-2``) is left as it is; :func:`defuse` of its own result changes nothing."""
    if not isinstance(value, str) or not value:
        return value
    if _ANY_SIGN.search(value) is None and not value.startswith(("\t", "\r")):
        return value  # nothing that could start a formula (most cells: one scan, in C)
    out = value
    if "\t" in out:
        out = _TAB_LEAD.sub("'\t", out)
    out = _PIECE.sub(_piece, out)
    if out.startswith(FORMULA_START) and not PLAIN_NUMBER.fullmatch(out):
        out = "'" + out  # a leading CR (the pieces are past it), or a number-like start: "-1,-2"
    return out


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
