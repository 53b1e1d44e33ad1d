"""Pairwise comparisons made elsewhere (Chatbot Arena's battles, MT-Bench's human or GPT-4
judgments, a spreadsheet of votes): one record per comparison, CSV or JSONL, with

- the item: ``item``, or the column named after the item key (``pair_id``), or ``question_id``;
- the two systems compared, ``model_a`` and ``model_b``, and the ``winner``;
- who voted: ``rater`` (or ``annotator``, ``judge``, ``rater_id``, ``annotator_id``,
  ``worker_id``); for a judge's file every record is that one judge's;
- optionally a ``reason``, a time (``timestamp``, or the Arena's ``tstamp``) and, for people,
  attributes as ``rater.<name>`` columns.

Other columns (the Arena's ``turn``, ``anony``, ``language``, MT-Bench's conversations) are read
past. The winner is given in any of the usual spellings (:data:`WINNER_SPELLINGS`, case and
spaces ignored) or as the winning system's name; a record whose winner is none of them is a
problem of its line, and any problem leaves the whole file unwritten (the import's rule).

A record becomes a :class:`~.common.SourceRating` whose ``winner`` answer is ``model_a``,
``model_b`` or ``tie`` in the file's order, with the systems' names in ``compared``: the import
checks them against the item's ``model_a`` / ``model_b`` fields and maps the winner to the item
field picked, in the item's own order (``annotation_import.comparison_answer``), so a file that
lists a pair the other way round is read right."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from django.utils.translation import gettext_lazy as _

from .common import (
    ATTRIBUTE_PREFIXES,
    HUMAN,
    ITEM_COLUMN,
    MODEL,
    RATER_COLUMNS,
    TIMESTAMP_COLUMNS,
    Expected,
    Problem,
    ReadCounts,
    Reader,
    SourceRating,
    TextSource,
    attribute_name,
    first_present,
    parse_time,
    table_rows,
    text_of,
)

#: the columns naming the two systems; the item's fields of the same names must hold them
SYSTEM_COLUMNS = ("model_a", "model_b")
WINNER_COLUMN = "winner"
REASON_COLUMN = "reason"
#: MT-Bench's files name the voter ``judge``; the Arena's time is ``tstamp``
COMPARISON_RATER_COLUMNS = (*RATER_COLUMNS, "judge")
COMPARISON_TIME_COLUMNS = (*TIMESTAMP_COLUMNS, "tstamp")
QUESTION_ID_COLUMN = "question_id"

#: the winner's spellings, case and spaces ignored: the Arena's ``model_a`` / ``model_b`` /
#: ``tie`` / ``tie (bothbad)``, MT-Bench's judge verdicts ``A`` / ``B`` / ``C`` (Zheng et al.
#: Fig. 5), and ``1`` / ``2`` / ``0``. Both kinds of tie are one tie: the rubric has one.
WINNER_SPELLINGS: dict[str, str] = {
    **dict.fromkeys(("model_a", "a", "1", "[[a]]"), "model_a"),
    **dict.fromkeys(("model_b", "b", "2", "[[b]]"), "model_b"),
    **dict.fromkeys(
        ("tie", "0", "c", "[[c]]", "draw", "tie (bothbad)", "tie (both bad)", "tie (bothgood)", "tie (both good)"),
        "tie",
    ),
}


def _folded(value: Any) -> str:
    text = text_of(value).casefold()
    return re.sub(r"\s+", " ", re.sub(r"\s*\(\s*", " (", text)).strip()


def winner_side(value: Any, first: str, second: str) -> str | None:
    """``model_a``, ``model_b`` or ``tie`` for a winner as written, the systems' own names
    included; None when it is none of them."""
    folded = _folded(value)
    if folded in WINNER_SPELLINGS:
        return WINNER_SPELLINGS[folded]
    named = [side for side, name in (("model_a", first), ("model_b", second)) if folded == _folded(name)]
    return named[0] if len(named) == 1 else None


def read(
    text: TextSource, *, jsonl: bool, kind: str, item_key: str, problem: Problem, counts: ReadCounts
) -> Iterator[SourceRating]:
    """The comparisons, a row / line at a time (the file is never read whole: issue 37, M3)."""
    header, rows = table_rows(text, jsonl=jsonl, problem=problem)
    counts.columns = header
    first_rater: tuple[str, str] | None = None  # a judge's file: (its rater, where first named)
    for line, row in rows:
        counts.records += 1
        where = f"line {line}"
        names = list(row)
        item_col = next((c for c in (item_key, ITEM_COLUMN, QUESTION_ID_COLUMN) if c in row), None)
        rater_col = first_present(COMPARISON_RATER_COLUMNS, names)
        missing = [
            c
            for c, found in (
                ("item", item_col),
                (SYSTEM_COLUMNS[0], SYSTEM_COLUMNS[0] in row),
                (SYSTEM_COLUMNS[1], SYSTEM_COLUMNS[1] in row),
                (WINNER_COLUMN, WINNER_COLUMN in row),
                ("rater", rater_col),
            )
            if not found
        ]
        if missing:
            problem(
                where,
                f"no {', '.join(repr(c) for c in missing)} (a comparison needs the item, model_a, model_b, "
                "the winner and the rater)",
            )
            continue
        first, second = text_of(row[SYSTEM_COLUMNS[0]]), text_of(row[SYSTEM_COLUMNS[1]])
        if first == second:
            problem(where, f"model_a and model_b are both {first!r}: a comparison needs two systems")
            continue
        side = winner_side(row[WINNER_COLUMN], first, second)
        if side is None:
            problem(
                where,
                f"winner {text_of(row[WINNER_COLUMN])[:80]!r} is none of model_a, model_b, tie (or a, b, A, B, "
                f"1, 2, 0, C, tie (bothbad), tie (both good)) nor {first!r} or {second!r}",
            )
            continue
        rater = text_of(row[rater_col])
        if kind == MODEL:
            if first_rater is None:
                first_rater = (rater, where)
            elif rater != first_rater[0]:
                problem(
                    where,
                    f"rater {rater!r}: a judge's file holds one judge's comparisons, and {first_rater[1]} "
                    f"names {first_rater[0]!r}",
                )
                continue
        rating = SourceRating(
            where=where,
            key=text_of(row[item_col]),
            rater=rater,
            answers={WINNER_COLUMN: side},
            compared=(first, second),
        )
        counts.saw(WINNER_COLUMN)
        if REASON_COLUMN in row:
            rating.answers[REASON_COLUMN] = row[REASON_COLUMN]
            counts.saw(REASON_COLUMN)
        if kind == HUMAN:
            rating.attributes = {
                name: value
                for c, value in row.items()
                if c.startswith(ATTRIBUTE_PREFIXES) and (name := attribute_name(c))
            }
        time_col = first_present(COMPARISON_TIME_COLUMNS, names)
        try:
            rating.submitted_at = parse_time(row[time_col]) if time_col else None
        except ValueError as exc:
            problem(where, str(exc))
            continue
        yield rating


def _reader(kind: str, jsonl: bool):
    def read_file(
        text: TextSource, *, item_key: str, problem: Problem, counts: ReadCounts, expected: Expected
    ) -> Iterator[SourceRating]:
        return read(text, jsonl=jsonl, kind=kind, item_key=item_key, problem=problem, counts=counts)

    return read_file


CSV = Reader(
    "comparisons-csv",
    _("Pairwise comparisons, CSV (item, model_a, model_b, winner, rater)"),
    HUMAN,
    ".csv",
    _reader(HUMAN, False),
    reads_stream=True,
)
JSONL = Reader(
    "comparisons-jsonl",
    _("Pairwise comparisons, JSONL (item, model_a, model_b, winner, rater)"),
    HUMAN,
    ".jsonl",
    _reader(HUMAN, True),
    reads_stream=True,
)
# labels not marked for translation, as the other judge readers': the judges page takes the file
# by its type, the API and the command by this key
JUDGE_CSV = Reader(
    "judge-pairs-csv",
    "A judge's pairwise comparisons (CSV, one row per comparison)",
    MODEL,
    ".csv",
    _reader(MODEL, False),
    reads_stream=True,
)
JUDGE_JSONL = Reader(
    "judge-pairs-jsonl",
    "A judge's pairwise comparisons (JSONL, one line per comparison)",
    MODEL,
    ".jsonl",
    _reader(MODEL, True),
    reads_stream=True,
)

__all__ = ["CSV", "JSONL", "JUDGE_CSV", "JUDGE_JSONL", "WINNER_SPELLINGS", "read", "winner_side"]
