"""What every reader of :mod:`annotation.sources` yields: one :class:`SourceRating` per source
annotator and item, or a problem ``(where, message)``; and the few helpers they share."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

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


#: ``problem(where, message)``: how a reader reports what is wrong
Problem = Callable[[str, str], None]


@dataclass
class ReadCounts:
    """What a reader saw besides the ratings: records read, annotations skipped and why."""

    records: int = 0
    skipped_cancelled: int = 0
    skipped_empty: int = 0
    source_fields: dict[str, int] = field(default_factory=dict)  # field -> answers seen

    def saw(self, name: str) -> None:
        self.source_fields[name] = self.source_fields.get(name, 0) + 1


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
        return datetime.fromtimestamp(float(value), tz=UTC)
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
    except (TypeError, ValueError):
        raise ValueError(f"{value!r} is not a duration (a number of {'seconds' if seconds else 'ms'})") from None
    if not math.isfinite(number):
        raise ValueError(f"{value!r} is not a duration")
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


__all__ = [
    "ATTRIBUTE_PREFIXES",
    "ITEM_COLUMN",
    "RATER_COLUMNS",
    "Problem",
    "ReadCounts",
    "SourceRating",
    "attribute_name",
    "duration_ms",
    "first_present",
    "parse_time",
    "text_of",
]
