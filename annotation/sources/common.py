"""What every reader of :mod:`annotation.sources` yields: one :class:`SourceRating` per source
annotator and item, or a problem ``(where, message)``; and the few helpers they share, among them
the one reader of CSV and JSONL records (:func:`table_rows`) every tabular format reads through."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol, TextIO

from core.values import MAX_DEPTH, loads, shown, value_problem

#: names the readers accept for the column holding the annotator's id (long and wide formats)
RATER_COLUMNS = ("rater", "annotator", "rater_id", "annotator_id", "worker_id")
#: the column holding the item key when the file does not name it after the key itself
ITEM_COLUMN = "item"
#: optional columns: when the answer was given, and the time on task
TIMESTAMP_COLUMNS = ("timestamp", "submitted_at", "created_at")
DURATION_MS_COLUMNS = ("duration_ms",)
DURATION_S_COLUMNS = ("lead_time", "duration_s", "duration")
#: a column ``rater.<name>`` (or ``attr.<name>``) is an attribute of the annotator
ATTRIBUTE_PREFIXES = ("rater.", "attr.")
#: longest time on task kept (a day, as for answers given in HV)
MAX_DURATION_MS = 86_400_000


@dataclass(slots=True)
class SourceRating:
    """One source annotator's answers to one item, before mapping: ``answers`` source field ->
    raw value; ``where`` says where it was read ("task 7, annotation 12", "line 4")."""

    where: str
    key: str
    rater: str
    answers: dict[str, Any] = field(default_factory=dict)
    attributes: dict[str, Any] = field(default_factory=dict)
    duration_ms: int | None = None
    submitted_at: datetime | None = None
    #: where each answer came from, for the long format (source field -> "line n")
    origins: dict[str, str] | None = None
    #: a comparison of two named systems (:mod:`.comparisons`): their names as the file gives them
    #: (``model_a``, ``model_b``); its ``winner`` answer (``model_a`` / ``model_b`` / ``tie``) is
    #: in this order, which the import matches to the item's own (``comparison_answer``)
    compared: tuple[str, str] | None = None


#: ``problem(where, message)``: how a reader reports what is wrong
Problem = Callable[[str, str], None]

#: whose ratings a reader's files hold (``Rater.kind``): people's, or one judge's
HUMAN = "human"
MODEL = "model"


@dataclass(frozen=True)
class Expected:
    """What the file is expected to answer, for readers whose header must name nothing else
    (a judge's outputs): the rubric's questions and the declared extra numeric columns."""

    questions: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()


@dataclass
class ReadCounts:
    """What a reader saw besides the ratings: records read, annotations skipped and why."""

    records: int = 0
    skipped_cancelled: int = 0
    skipped_empty: int = 0
    source_fields: dict[str, int] = field(default_factory=dict)  # field -> answers seen
    #: a CSV's header as written (empty for JSON formats)
    columns: list[str] = field(default_factory=list)
    #: the keys of the tasks' data (Label Studio) with the scalar values seen under each, as text:
    #: what the import detects the item key from, and lists when the item key is not among them
    data_keys: dict[str, set[str]] = field(default_factory=dict)
    #: where a record was read that has no value for the item key (the import reports these
    #: once, with the keys the tasks have, rather than one identical line per task)
    missing_key: list[str] = field(default_factory=list)
    #: the file stopped being readable part way (JSON that breaks off): the ratings read before
    #: that point count for nothing, as if the reader had read none (the problem says where)
    broken: bool = False

    def saw(self, name: str) -> None:
        self.source_fields[name] = self.source_fields.get(name, 0) + 1

    def saw_data(self, data: dict[str, Any]) -> None:
        for name, value in data.items():
            values = self.data_keys.setdefault(str(name), set())
            if value is not None and value != "" and not isinstance(value, (list, dict, bool)):
                values.add(text_of(value))


#: a file's text as a reader takes it: the text, or the file opened as text (``newline=""``), read
#: as it goes so that a large file never is one text in memory (issue 37, M3)
TextSource = str | TextIO


def as_stream(source: TextSource) -> TextIO:
    """``source`` as a text stream (a text in a ``StringIO`` that leaves line ends as written)."""
    return io.StringIO(source, newline="") if isinstance(source, str) else source


def whole_text(source: TextSource) -> str:
    """All of ``source`` as one text: for the formats read whole (JSON-MIN, an object that is no
    task list); a stream is read from its start."""
    if isinstance(source, str):
        return source
    source.seek(0)
    return source.read()


class ReadFn(Protocol):
    def __call__(
        self, text: TextSource, *, item_key: str, problem: Problem, counts: ReadCounts, expected: Expected
    ) -> Iterable[SourceRating]: ...


@dataclass(frozen=True)
class Reader:
    """One format: its key (what forms, the API, the command and the stored import name), the
    label shown to a researcher, whose ratings it reads (:data:`HUMAN` or :data:`MODEL`), the
    ending its staged upload gets, and ``read(text, item_key=, problem=, counts=, expected=)``
    turning the file's text into :class:`SourceRating` rows (problems by task or line)."""

    key: str
    label: Any  # text, or a lazily translated one
    rater_kind: str
    suffix: str
    read: ReadFn
    #: the file carries the task's data beside the answers (Label Studio's flat exports): source
    #: fields named after an item field are that data, left out of the mapping
    task_data_beside_answers: bool = False
    #: said after "unknown item" when the key is the external id and no item has it (JSON-MIN's
    #: ``id`` is Label Studio's task id, not the data's)
    unknown_external_id_hint: str = ""
    #: ``read`` takes the file opened as text (:data:`TextSource`) and reads it as it goes, so
    #: that a large file is never one text in memory (issue 37, M3): every reader here does; a
    #: reader registered without it is given the whole text, as before
    reads_stream: bool = False


def text_of(value: Any) -> str:
    """An id or key as text (``7`` and ``"7"`` are the same annotator; ``7.0`` reads as ``7``)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def parse_time(value: Any) -> datetime | None:
    """An ISO 8601 time (``Z`` or an offset; naive times read as UTC) or a Unix time in seconds;
    None when empty. Raises ValueError otherwise."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        # a hostile number (1e20, Infinity, a 400-digit id) is no time: fromtimestamp raises
        # OverflowError / OSError past the platform's range, which no caller expects (issue 37, M6)
        try:
            return datetime.fromtimestamp(float(value), tz=UTC)
        except (OverflowError, OSError, ValueError):
            raise ValueError(
                f"{shown(value)} is not a time (a Unix time in seconds, within the years 1 to 9999, "
                "or ISO 8601, e.g. 2024-05-01T12:00:00Z)"
            ) from None
    text = str(value).strip()
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{text!r} is not a time (use ISO 8601, e.g. 2024-05-01T12:00:00Z)") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def duration_ms(value: Any, *, seconds: bool) -> int | None:
    """A time on task in milliseconds, from seconds (Label Studio's ``lead_time``) or ms; None
    when empty or out of range (negative, more than a day). Raises ValueError for non-numbers."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError("a duration is a number")
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{shown(value)} is not a duration (a number of {'seconds' if seconds else 'ms'})") from None
    if not math.isfinite(number):
        raise ValueError(f"{shown(value)} is not a duration")
    ms = round(number * 1000) if seconds else round(number)
    return ms if 0 <= ms <= MAX_DURATION_MS else None


def attribute_name(column: str) -> str | None:
    """``nationality`` of a ``rater.nationality`` / ``attr.nationality`` column, else None."""
    for prefix in ATTRIBUTE_PREFIXES:
        if column.startswith(prefix) and len(column) > len(prefix):
            return column[len(prefix) :]
    return None


def first_present(names: tuple[str, ...], header: list[str]) -> str | None:
    return next((n for n in names if n in header), None)


def csv_table(stream: io.TextIOBase, problem: Problem) -> tuple[list[str], Iterator[tuple[int, list[str]]]] | None:
    """A CSV's header (names stripped) and its rows as ``(line, cells)``, the cells padded to the
    header's width. Blank rows are skipped; a row wider than the header or holding a NUL is
    reported and skipped; a malformed file is reported where it breaks. None (reported) for an
    empty or unreadable header."""
    reader = csv.reader(stream)
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        problem("line 1", "the file is empty")
        return None
    except csv.Error as exc:
        problem("line 1", f"malformed CSV ({exc})")
        return None

    def rows() -> Iterator[tuple[int, list[str]]]:
        width = len(header)
        while True:
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                problem(f"line {reader.line_num}", f"malformed CSV ({exc})")
                return
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if len(row) > width:
                problem(f"line {reader.line_num}", "the row has more cells than the header")
                continue
            if any("\x00" in c for c in row):
                problem(f"line {reader.line_num}", "text holds a NUL character (\\u0000), which cannot be stored")
                continue
            yield reader.line_num, row + [""] * (width - len(row))

    return header, rows()


#: what :func:`load_json` answers for text that is not JSON (the problem is reported)
NOT_JSON = object()


def load_json(text: str, problem: Problem, *, line: int | None = None) -> Any:
    """``text`` parsed, or :data:`NOT_JSON` with the problem reported where it is (the line of the
    file, or ``line`` for one line of a JSONL file)."""
    try:
        return loads(text)
    except json.JSONDecodeError as exc:
        # ``exc.msg`` may end in "at" ("Unterminated string starting at"): the column follows a colon
        problem(f"line {line or exc.lineno}", f"invalid JSON ({exc.msg}: column {exc.colno})")
    except RecursionError:
        problem(f"line {line or 1}", f"the JSON is nested too deeply (more than {MAX_DEPTH} levels of lists / objects)")
    return NOT_JSON


def table_rows(
    text: TextSource, *, jsonl: bool, problem: Problem
) -> tuple[list[str], Iterator[tuple[int, dict[str, Any]]]]:
    """The records of a CSV or JSONL file with their line numbers: (the CSV's header, or [] for
    JSONL; each record's non-empty values by column / key). CSV rows are read by :func:`csv_table`;
    a JSONL line must be one JSON object whose values can be stored (``core.values``), else its
    problem is reported and the line skipped. The one CSV / JSONL reader of the tabular formats
    (long, wide, a judge's outputs)."""
    stream = as_stream(text)  # a file is read a line (a CSV row) at a time, never whole
    if jsonl:
        return [], _jsonl_records(stream, problem)
    table = csv_table(stream, problem)
    if table is None:
        return [], iter(())
    header, rows = table
    return header, ((line, {h: c for h, c in zip(header, row, strict=True) if c != ""}) for line, row in rows)


def _jsonl_records(stream: TextIO, problem: Problem) -> Iterator[tuple[int, dict[str, Any]]]:
    for line_no, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        record = load_json(line, problem, line=line_no)
        if record is NOT_JSON:
            continue
        if not isinstance(record, dict):
            problem(f"line {line_no}", "a line must be a JSON object")
            continue
        bad = value_problem(record)
        if bad:
            problem(f"line {line_no}", bad)
            continue
        yield line_no, {k: v for k, v in record.items() if v is not None and v != ""}


__all__ = [
    "ATTRIBUTE_PREFIXES",
    "HUMAN",
    "ITEM_COLUMN",
    "MODEL",
    "NOT_JSON",
    "RATER_COLUMNS",
    "Expected",
    "Problem",
    "ReadCounts",
    "Reader",
    "SourceRating",
    "TextSource",
    "as_stream",
    "attribute_name",
    "csv_table",
    "duration_ms",
    "first_present",
    "load_json",
    "parse_time",
    "table_rows",
    "text_of",
    "whole_text",
]
