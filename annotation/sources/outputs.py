"""One rater's outputs, one line per item (JSONL object or CSV row), as a judge or metric run
elsewhere writes them: the item key (the external id ``id``), then one key per rubric question
answered or per declared extra numeric column (a metric such as ``clip``). Every line is the
same rater's, so an item given twice is a problem of the file; a CSV's header must name the key
and nothing but the questions and the declared columns (:class:`~.common.Expected`). What the
values mean (answers, scores) is checked by the room that imports them (``judges.imported``)."""

from __future__ import annotations

from .common import MODEL, Expected, Problem, ReadCounts, Reader, SourceRating, TextSource, table_rows, text_of


def read(
    text: TextSource, *, jsonl: bool, item_key: str, problem: Problem, counts: ReadCounts, expected: Expected
) -> list[SourceRating]:
    header, rows = table_rows(text, jsonl=jsonl, problem=problem)
    counts.columns = header
    if not jsonl and header:
        allowed = {item_key, *expected.questions, *expected.extra}
        unknown = [h for h in header if h not in allowed]
        if item_key not in header or unknown:
            problems = ([f"no {item_key!r} column"] if item_key not in header else []) + (
                [f"unknown column(s) {', '.join(unknown)}"] if unknown else []
            )
            problem(
                "line 1",
                f"wrong CSV header: {'; '.join(problems)}; expected {item_key}, rubric questions "
                f"({', '.join(expected.questions)}) and declared metrics ({', '.join(expected.extra) or 'none'})",
            )
            return []
    out: list[SourceRating] = []
    first: dict[str, int] = {}
    for line, record in rows:
        counts.records += 1
        where = f"line {line}"
        raw_key = record.pop(item_key, None)
        if raw_key is None:
            problem(where, f"no {item_key!r} (the item's external id)")
            continue
        key = text_of(raw_key)
        if key in first:
            problem(where, f"item {key!r} is given twice (first on line {first[key]})")
            continue
        first[key] = line
        for name in record:
            counts.saw(name)
        out.append(SourceRating(where=where, key=key, rater="", answers=record))
    return out


def read_jsonl(
    text: TextSource, *, item_key: str, problem: Problem, counts: ReadCounts, expected: Expected
) -> list[SourceRating]:
    return read(text, jsonl=True, item_key=item_key, problem=problem, counts=counts, expected=expected)


def read_csv(
    text: TextSource, *, item_key: str, problem: Problem, counts: ReadCounts, expected: Expected
) -> list[SourceRating]:
    return read(text, jsonl=False, item_key=item_key, problem=problem, counts=counts, expected=expected)


# labels not marked for translation: no page offers these as a choice (the judges page takes
# JSONL or CSV by the file's name), only the admin's filter lists them
JSONL = Reader(
    "outputs-jsonl", "Judge outputs (JSONL, one line per item)", MODEL, ".jsonl", read_jsonl, reads_stream=True
)
CSV = Reader("outputs-csv", "Judge outputs (CSV, one row per item)", MODEL, ".csv", read_csv, reads_stream=True)

__all__ = ["CSV", "JSONL", "read"]
