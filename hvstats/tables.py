"""Paper-ready tables: one value type for the cells of a protocol's validation tables and the
renderers that write them as Markdown, LaTeX (booktabs), CSV and JSON.

A :class:`Table` is what a preset's ``validation_report`` returns (a list of them); the page,
the API, the management command and the dataset card all show the same objects, and every
number is formatted here (:func:`format_cell`), so the page and the exports agree digit for
digit. JSON keeps the full-precision values; the text formats round them.

Cell formats (``Cell.fmt``):

- ``"r"``: a coefficient (correlation, kappa), 3 decimals;
- ``"%"``: a share in [0, 1], shown as a percentage with 1 decimal;
- ``"count"``: a whole number;
- ``"num"``: any other number (means), 2 decimals;
- ``"p"``: a p-value, 3 significant digits;
- ``"text"``: a label, shown as is.
"""

from __future__ import annotations

import csv
import io
import math
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import IO, Any

FORMATS = ("r", "%", "count", "num", "p", "text")
MISSING = "–"
CSV_COLUMNS = ("table", "row", "column", "value", "ci_low", "ci_high", "n", "format", "display", "note")


def _finite(v: Any) -> float | None:
    if v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


@dataclass(frozen=True)
class Cell:
    """One number of a table: the value, its 95% bootstrap interval (or none), the number of
    units it rests on, how it is shown, and why it is missing when it is."""

    value: float | str | None
    ci: tuple[float, float] | None = None
    n: int | None = None
    fmt: str = "r"
    note: str = ""  # e.g. the reason a value is undefined

    def __post_init__(self) -> None:
        if self.fmt not in FORMATS:
            raise ValueError(f"unknown cell format {self.fmt!r}; one of {FORMATS}")

    @classmethod
    def of(cls, result: Any, fmt: str = "r", n: int | None = None) -> Cell:
        """A cell from a :class:`MetricResult` or its ``to_dict()``."""
        d = result.to_dict() if hasattr(result, "to_dict") else dict(result or {})
        ci = d.get("ci")
        return cls(
            _finite(d.get("value")),
            (float(ci[0]), float(ci[1])) if ci else None,
            d.get("n_items") if n is None else n,
            fmt,
            d.get("reason") or "",
        )

    def to_dict(self) -> dict[str, Any]:
        v = self.value if self.fmt == "text" else _finite(self.value)
        return {
            "value": v,
            "ci": [self.ci[0], self.ci[1]] if self.ci else None,
            "n": self.n,
            "format": self.fmt,
            "note": self.note,
            "display": format_cell(self),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Cell:
        ci = d.get("ci")
        return cls(d.get("value"), (ci[0], ci[1]) if ci else None, d.get("n"), d.get("format", "r"), d.get("note", ""))


@dataclass(frozen=True)
class Row:
    label: str
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class Table:
    """A protocol table: ``key`` (stable, for files and anchors), ``title`` and ``caption`` in
    the paper's words, ``columns`` (headers of the value columns, after the row label column
    headed ``row_header``), ``rows`` and ``notes`` (printed under the table)."""

    key: str
    title: str
    columns: tuple[str, ...]
    rows: tuple[Row, ...]
    caption: str = ""
    row_header: str = ""
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for r in self.rows:
            if len(r.cells) != len(self.columns):
                raise ValueError(
                    f"row {r.label!r} of table {self.key!r} has {len(r.cells)} cells, not {len(self.columns)}"
                )

    def cell(self, row: str, column: str) -> Cell:
        j = self.columns.index(column)
        return next(r for r in self.rows if r.label == row).cells[j]

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "title": self.title,
            "caption": self.caption,
            "row_header": self.row_header,
            "columns": list(self.columns),
            "rows": [{"label": r.label, "cells": [c.to_dict() for c in r.cells]} for r in self.rows],
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Table:
        return cls(
            key=d["key"],
            title=d["title"],
            caption=d.get("caption", ""),
            row_header=d.get("row_header", ""),
            columns=tuple(d["columns"]),
            rows=tuple(Row(r["label"], tuple(Cell.from_dict(c) for c in r["cells"])) for r in d["rows"]),
            notes=tuple(d.get("notes", ())),
        )


# ------------------------------------------------------------------------------ formatting
def raters_note(n_humans: int, n_judges: int) -> str:
    """The note under a judge-vs-human table, in English with proper plurals ("1 annotator,
    2 judges."); the pages translate it (``agreement.table_strings``), the downloads keep it."""
    humans = f"{n_humans} annotator" + ("" if n_humans == 1 else "s")
    judges = f"{n_judges} judge" + ("" if n_judges == 1 else "s")
    return f"{humans}, {judges}."


def format_number(v: float | None, fmt: str) -> str:
    """The one way a number is written (page, Markdown, LaTeX, CSV ``display``)."""
    if v is None:
        return MISSING
    if fmt == "%":
        return f"{100 * v:.1f}%"
    if fmt == "count":
        return f"{round(v):d}"
    if fmt == "num":
        return f"{v:.2f}"
    if fmt == "p":
        return f"{v:.3g}"
    return f"{v:.3f}"


def format_value(cell: Cell) -> str:
    if cell.fmt == "text":
        return MISSING if cell.value in (None, "") else str(cell.value)
    return format_number(_finite(cell.value), cell.fmt)


def format_ci(cell: Cell) -> str:
    if not cell.ci or cell.fmt == "text":
        return ""
    return f"[{format_number(cell.ci[0], cell.fmt)}, {format_number(cell.ci[1], cell.fmt)}]"


def format_cell(cell: Cell) -> str:
    """Value and interval, e.g. ``0.633 [0.41, 0.79]``; the undefined show a dash."""
    ci = format_ci(cell)
    return f"{format_value(cell)} {ci}" if ci else format_value(cell)


# ------------------------------------------------------------------------------ renderers
def _md_escape(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def to_markdown(tables: Iterable[Table]) -> str:
    """GitHub-flavoured Markdown: a heading, the table (values with their 95% CI), the caption
    and notes below."""
    out: list[str] = []
    for t in tables:
        out.append(f"### {_md_escape(t.title)}")
        out.append("")
        head = [t.row_header or " ", *t.columns]
        out.append("| " + " | ".join(_md_escape(h) for h in head) + " |")
        out.append("|" + "|".join(["---"] + ["---:"] * len(t.columns)) + "|")
        for r in t.rows:
            out.append("| " + " | ".join([_md_escape(r.label), *(_md_escape(format_cell(c)) for c in r.cells)]) + " |")
        out.append("")
        for line in (t.caption, *t.notes):
            if line:
                out.append(_md_escape(line))
                out.append("")
    return "\n".join(out).rstrip() + "\n"


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}

# Greek letters by Unicode name: a math command where LaTeX has one, else the Latin capital
# that looks the same (there is no \Alpha).
_GREEK = {
    "alpha": r"\alpha", "beta": r"\beta", "gamma": r"\gamma", "delta": r"\delta",
    "epsilon": r"\epsilon", "zeta": r"\zeta", "eta": r"\eta", "theta": r"\theta",
    "iota": r"\iota", "kappa": r"\kappa", "lamda": r"\lambda", "mu": r"\mu", "nu": r"\nu",
    "xi": r"\xi", "omicron": "o", "pi": r"\pi", "rho": r"\rho", "final sigma": r"\varsigma",
    "sigma": r"\sigma", "tau": r"\tau", "upsilon": r"\upsilon", "phi": r"\phi", "chi": r"\chi",
    "psi": r"\psi", "omega": r"\omega",
}  # fmt: skip
_GREEK_CAPITAL = {
    "gamma": r"\Gamma", "delta": r"\Delta", "theta": r"\Theta", "lamda": r"\Lambda", "xi": r"\Xi",
    "pi": r"\Pi", "sigma": r"\Sigma", "upsilon": r"\Upsilon", "phi": r"\Phi", "psi": r"\Psi",
    "omega": r"\Omega", "alpha": "A", "beta": "B", "epsilon": "E", "zeta": "Z", "eta": "H",
    "iota": "I", "kappa": "K", "mu": "M", "nu": "N", "omicron": "O", "rho": "P", "tau": "T", "chi": "X",
}  # fmt: skip

_GREEK_SYMBOLS = {
    "GREEK LUNATE EPSILON SYMBOL": r"$\varepsilon$",
    "GREEK THETA SYMBOL": r"$\vartheta$",
    "GREEK PHI SYMBOL": r"$\varphi$",
}

#: common symbols and punctuation, as commands of the LaTeX kernel (no package needed)
_LATEX_SYMBOLS = {
    "–": "--", "—": "---", "‘": "`", "’": "'", "“": "``", "”": "''", "„": ",,", "«": r"$\ll$",
    "»": r"$\gg$", "…": r"\ldots{}", "•": r"$\bullet$", "·": r"$\cdot$", "°": r"$^{\circ}$",
    "§": "Sec.", "¶": "para.", "©": "(C)", "®": "(R)", "™": "(TM)",
    "†": r"$\dagger$", "‡": r"$\ddagger$", "£": "GBP", "€": "EUR", "¢": "c", "¥": "JPY", "¡": r"!`",
    "¿": r"?`", "\u00a0": "~", "\u2009": r"\,", "\u202f": r"\,", "≥": r"$\geq$", "≤": r"$\leq$",
    "≠": r"$\neq$", "≈": r"$\approx$", "±": r"$\pm$", "×": r"$\times$", "÷": r"$\div$",
    "−": r"$-$", "→": r"$\rightarrow$", "←": r"$\leftarrow$", "↔": r"$\leftrightarrow$",
    "⇒": r"$\Rightarrow$", "∞": r"$\infty$", "√": r"$\surd$", "∑": r"$\sum$", "∈": r"$\in$",
    "∩": r"$\cap$", "∪": r"$\cup$", "≡": r"$\equiv$", "∼": r"$\sim$", "′": r"$'$", "″": r"$''$",
    "µ": r"$\mu$", "ß": r"\ss{}", "æ": r"\ae{}", "Æ": r"\AE{}", "œ": r"\oe{}", "Œ": r"\OE{}",
    "ø": r"\o{}", "Ø": r"\O{}", "å": r"\aa{}", "Å": r"\AA{}", "ł": r"\l{}", "Ł": r"\L{}",
    "ı": r"\i{}", "ð": "dh", "Ð": "Dh", "þ": "th", "Þ": "Th",
    "¹": r"$^{1}$", "²": r"$^{2}$", "³": r"$^{3}$", "½": "1/2", "¼": "1/4", "¾": "3/4",
}  # fmt: skip

#: combining accents (after Unicode decomposition) as LaTeX text accents
_ACCENTS = {
    "\u0300": "`", "\u0301": "'", "\u0302": "^", "\u0303": "~", "\u0304": "=", "\u0306": "u",
    "\u0307": ".", "\u0308": '"', "\u030a": "r", "\u030b": "H", "\u030c": "v", "\u0327": "c",
    "\u0323": "d", "\u0331": "b",
}  # fmt: skip


def _latex_char(ch: str) -> str:
    """One non-ASCII character as LaTeX that pdflatex compiles with no package beyond the
    kernel: a symbol or Greek letter by its command (math mode where it is math), an accented
    Latin letter by its text accents (é -> \\'{e}), and anything else (CJK, emoji, ...) as its
    code point in brackets, ``[U+5F20]``: readable, and never an "Unicode character not set up"
    error that stops the whole document."""
    if ch in _LATEX_SYMBOLS:
        return _LATEX_SYMBOLS[ch]
    name = unicodedata.name(ch, "")
    for prefix, table in (("GREEK SMALL LETTER ", _GREEK), ("GREEK CAPITAL LETTER ", _GREEK_CAPITAL)):
        if name.startswith(prefix) and name[len(prefix) :].lower() in table:
            cmd = table[name[len(prefix) :].lower()]
            return f"${cmd}$" if cmd.startswith("\\") else cmd
    if name in _GREEK_SYMBOLS:
        return _GREEK_SYMBOLS[name]
    base, *marks = unicodedata.normalize("NFD", ch)
    if marks and base.isascii() and base.isalpha():
        # the accents the kernel's OT1 encoding has; any other mark (an ogonek, ...) is left off
        marks = [m for m in marks if m in _ACCENTS]
        out = base
        if out in ("i", "j") and marks and marks[0] not in ("\u0327", "\u0323", "\u0331"):
            out = "\\" + out  # dotless i / j under an accent above
        for m in marks:
            out = "\\" + _ACCENTS[m] + "{" + out + "}"
        return out
    folded = unicodedata.normalize("NFKC", ch)
    if folded != ch and folded.isascii():
        return latex_escape(folded)  # e.g. ligatures, full-width letters, superscript digits
    return f"[U+{ord(ch):04X}]"


def latex_escape(s: str) -> str:
    """Text safe in a LaTeX document compiled by pdflatex: the special characters escaped and
    every non-ASCII character mapped (:func:`_latex_char`)."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) if ch.isascii() else _latex_char(ch) for ch in str(s))


#: what a document needs to compile :func:`to_latex`'s output (tested with pdflatex): booktabs
#: (texlive-latex-recommended) for the rules, graphicx (texlive-latex-base) for ``\\resizebox``
LATEX_PREAMBLE = "\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage{graphicx}\n"

#: the head of every LaTeX download: what the document's preamble needs, and why the tables
#: look as they do (a download is a fragment to ``\\input``, not a document)
LATEX_HEAD = """\
% HV validation tables. In your document's preamble:
%   \\usepackage{booktabs}  % the rules (texlive-latex-recommended)
%   \\usepackage{graphicx}  % \\resizebox (texlive-latex-base)
% A table wider than the text is scaled down to \\linewidth (\\resizebox, never scaled up);
% long column headers are broken over lines. Notes and warnings follow each table as a
% paragraph ("Notes to Table N"), not inside \\caption: pdflatex stops with "Dimension too
% large" on a caption longer than about 3,400 characters.
"""

#: the longest caption text (title and caption, as LaTeX) kept inside ``\\caption``; a longer
#: caption moves to the note block. ``\\@makecaption`` sets the whole caption in one box
#: first, and a box wider than ``\\maxdimen`` (about 3,400 characters) stops pdflatex.
CAPTION_MAX = 1500

#: a column header longer than this is broken over lines at its spaces
HEADER_LINE = 16


def _latex_line(text: str) -> str:
    """An escaped line of a tabular: one that starts with ``[`` is opened with ``{}``, since
    after ``\\\\`` or ``\\midrule`` a bracket would be read as their optional argument."""
    return "{}" + text if text.startswith("[") else text


def _header_lines(text: str, width: int = HEADER_LINE) -> list[str]:
    """The header broken at spaces into lines of at most ``width`` characters (a longer word
    stays whole on its line)."""
    lines: list[str] = []
    for word in str(text).split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines or [""]


def _latex_header(text: str, align: str) -> str:
    """A header cell: as is when short, else its lines in a one-column tabular aligned like
    its column, bottom-aligned so that every header sits on the rule."""
    lines = _header_lines(text)
    if len(lines) == 1:
        return _latex_line(latex_escape(text))
    body = r" \\ ".join(_latex_line(latex_escape(line)) for line in lines)
    return r"\begin{tabular}[b]{@{}" + align + "@{}}" + body + r"\end{tabular}"


def _latex_row(texts: Sequence[str]) -> str:
    return _latex_line(" & ".join(latex_escape(x) for x in texts) + r" \\")


def _latex_label(key: str) -> str:
    return "tab:" + latex_escape(key).replace(r"\_", "-")


def to_latex(tables: Iterable[Table]) -> str:
    """One ``table`` environment per table, booktabs rules, the values right-aligned with their
    95% CI in brackets; a table wider than the text scaled down to ``\\linewidth``
    (``\\resizebox``, graphicx); long headers broken over lines. The caption holds the title
    and the table's caption; the notes (warnings, one per judge and field in a verdicts table,
    any number) follow the table as a small paragraph: never inside ``\\caption``
    (:data:`CAPTION_MAX`). Starts with :data:`LATEX_HEAD`, the packages it needs."""
    out: list[str] = [LATEX_HEAD]
    for t in tables:
        label = _latex_label(t.key)
        out.append(r"\begin{table}[!htbp]")
        out.append(r"\centering")
        # \width is the tabular's natural width: scaled down when wider than the line, else kept
        out.append(r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%")
        out.append(r"\begin{tabular}{l" + "r" * len(t.columns) + "}")
        out.append(r"\toprule")
        head = [_latex_header(t.row_header, "l"), *(_latex_header(c, "r") for c in t.columns)]
        out.append(_latex_line(" & ".join(head) + r" \\"))
        out.append(r"\midrule")
        for r in t.rows:
            out.append(_latex_row([r.label, *(format_cell(c) for c in r.cells)]))
        out.append(r"\bottomrule")
        out.append(r"\end{tabular}}")
        caption = latex_escape(" ".join(x for x in (t.title + ".", t.caption) if x))
        notes = [latex_escape(n) for n in t.notes if n]
        if len(caption) > CAPTION_MAX:
            caption = latex_escape(t.title + ".")
            notes.insert(0, latex_escape(t.caption))
        out.append(r"\caption{" + caption + "}")
        out.append(r"\label{" + label + "}")
        out.append(r"\end{table}")
        if notes:
            out.append(
                r"{\footnotesize\noindent\textit{Notes to Table~\ref{" + label + "}.} " + " ".join(notes) + r"\par}"
            )
        out.append("")
    return "\n".join(out)


def csv_rows(tables: Iterable[Table]) -> list[dict[str, Any]]:
    """Long format: one row per cell, full-precision value and interval."""
    rows = []
    for t in tables:
        for r in t.rows:
            for col, c in zip(t.columns, r.cells, strict=True):
                d = c.to_dict()
                rows.append(
                    {
                        "table": t.key,
                        "row": r.label,
                        "column": col,
                        "value": "" if d["value"] is None else d["value"],
                        "ci_low": d["ci"][0] if d["ci"] else "",
                        "ci_high": d["ci"][1] if d["ci"] else "",
                        "n": "" if c.n is None else c.n,
                        "format": c.fmt,
                        "display": d["display"],
                        "note": c.note,
                    }
                )
    return rows


def to_csv(tables: Iterable[Table], writer: Callable[[IO[str], Sequence[str]], Any] | None = None) -> str:
    """One CSV row per cell (:data:`CSV_COLUMNS`). ``writer(file, fieldnames)`` makes the
    ``DictWriter`` (``writeheader`` / ``writerow``): the platform passes its one spreadsheet-safe
    writer (``core.csvsafe.dict_writer``), since labels carry names researchers choose (a judge
    called ``=HYPERLINK(...)``); without one, ``csv.DictWriter`` with ``\r\n`` rows."""
    buf = io.StringIO()
    if writer is None:
        w = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\r\n")
    else:
        w = writer(buf, CSV_COLUMNS)
    w.writeheader()
    for row in csv_rows(tables):
        w.writerow({k: (repr(v) if isinstance(v, float) else v) for k, v in row.items()})
    return buf.getvalue()


def to_json(tables: Iterable[Table]) -> list[dict[str, Any]]:
    return [t.to_dict() for t in tables]


#: what an empty table list renders to (CSV keeps its header row: still a valid, empty table)
NO_TABLES = {
    "markdown": "_No validation tables yet: the project has no ratings to tabulate._\n",
    "latex": "% No validation tables yet: the project has no ratings to tabulate.\n",
}


def render(tables: Sequence[Table], fmt: str, csv_writer: Callable[[IO[str], Sequence[str]], Any] | None = None) -> str:
    """``markdown``, ``latex`` or ``csv`` text of the tables (``csv_writer``: see :func:`to_csv`).
    No tables (a project with no ratings yet) is said in the format's own words, never an empty
    file: an empty download reads as a failure, and an empty HTTP body loses its Content-Type."""
    if not tables and fmt in NO_TABLES:
        return NO_TABLES[fmt]
    if fmt == "markdown":
        return to_markdown(tables)
    if fmt == "latex":
        return to_latex(tables)
    if fmt == "csv":
        return to_csv(tables, csv_writer)
    raise ValueError(f"unknown table format {fmt!r}; one of markdown, latex, csv")
