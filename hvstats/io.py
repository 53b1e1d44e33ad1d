"""Reading rating files (CSV or JSONL) with line-numbered errors, in long or wide form.

Long: one row per rating, columns ``item``, ``rater``, ``value`` (required), ``field``,
``rater_kind``, strata (see :mod:`.data`). Wide: one row per item and rater, one column per
field, as survey tools write it (the shape of the platform's ``wide`` import): ``item``,
``rater``, optionally ``rater_kind`` and ``pi``, the stratum columns named in ``by``; every
other column is a field, and an empty cell is no rating. A file without a ``value`` column is
read as wide."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from .data import REQUIRED, RatingTableError

#: the columns of a wide file that are not fields (besides ``item``, ``rater`` and ``by``)
WIDE_KEEP = ("rater_kind", "pi")


def read_ratings(path: str | Path, by: Sequence[str] = ()) -> pd.DataFrame:
    """Read a CSV (header row) or JSONL (one object per line) ratings file, long or wide
    (module docstring); a wide file comes back in long form, its ``by`` columns as strata.

    The returned frame has a ``_line`` column (1-based line number in the file) used in
    error messages.  Raises RatingTableError for unreadable files, bad JSON lines and
    missing required columns.
    """
    df = _read(path)
    if "value" in df.columns:
        return df
    return wide_to_long(df, by)


def wide_to_long(df: pd.DataFrame, by: Sequence[str] = ()) -> pd.DataFrame:
    """A wide table (one row per item and rater, one column per field) in long form: one row
    per non-empty cell, the item's other columns (``rater_kind``, ``pi``, ``by``) repeated."""
    miss = [c for c in ("item", "rater") if c not in df.columns]
    if miss:
        raise RatingTableError(
            f"missing required column(s): {', '.join(miss)} (a long file has item, rater, value; "
            f"a wide file item, rater and one column per field)"
        )
    keep = ["item", "rater", *(c for c in (*WIDE_KEEP, *by) if c in df.columns), *(["_line"] if "_line" in df else [])]
    fields = [c for c in df.columns if c not in keep]
    if not fields:
        raise RatingTableError("no field column: a wide file needs one column per field besides item and rater")
    long = df.melt(id_vars=keep, value_vars=fields, var_name="field", value_name="value")
    empty = long["value"].isna() | long["value"].map(lambda v: isinstance(v, str) and v.strip() == "")
    # an item whose fields are all empty for a rater stays as one empty rating: active
    # estimates count an item listed without a human value as unlabelled
    first_field = ~long.duplicated(subset=["item", "rater"], keep="first")
    listed = ~empty | (first_field & _all_empty(long, empty))
    long = long[listed]
    if "_line" in long.columns:
        long = long.sort_values(["_line", "field"], kind="stable", key=_field_order(fields))
    return long.reset_index(drop=True)


def _all_empty(long: pd.DataFrame, empty: pd.Series) -> pd.Series:
    """Per long row: whether every field of its (item, rater) row is empty."""
    return empty.groupby([long["item"].astype(str), long["rater"].astype(str)]).transform("all")


def _field_order(fields: Sequence[str]):
    """Sort key: ``_line`` as is, ``field`` in the file's column order."""
    rank = {f: i for i, f in enumerate(fields)}
    return lambda col: col.map(rank) if col.name == "field" else col


def _read(path: str | Path) -> pd.DataFrame:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise RatingTableError(f"cannot read {path}: {exc}") from exc
    rows: list[dict] = []
    if p.suffix.lower() in (".jsonl", ".ndjson", ".json"):
        for ln, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise RatingTableError(f"line {ln}: invalid JSON ({exc.msg})") from exc
            if not isinstance(obj, dict):
                raise RatingTableError(f"line {ln}: expected a JSON object")
            obj["_line"] = ln
            rows.append(obj)
        if not rows:
            raise RatingTableError(f"{path}: no ratings")
        # a long file has a value on its lines; a file where no line has one is wide
        need = REQUIRED if any("value" in obj for obj in rows) else ("item", "rater")
        for obj in rows:
            miss = [c for c in need if c not in obj]
            if miss:
                raise RatingTableError(f"line {obj['_line']}: missing required field(s): {', '.join(miss)}")
        return pd.DataFrame(rows)
    reader = csv.DictReader(text.splitlines())
    header = reader.fieldnames or []
    need = REQUIRED if "value" in header else ("item", "rater")  # no value column: a wide file
    miss = [c for c in need if c not in header]
    if miss:
        raise RatingTableError(f"{path}: missing required column(s): {', '.join(miss)} (header: {header})")
    for ln, row in enumerate(reader, start=2):
        if None in row:
            raise RatingTableError(f"line {ln}: more values than header columns")
        row = {k: (v if v != "" else None) for k, v in row.items()}
        row["_line"] = ln
        rows.append(row)
    if not rows:
        raise RatingTableError(f"{path}: no ratings")
    return pd.DataFrame(rows)
