"""Reading long-format rating files (CSV or JSONL) with line-numbered errors."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd

from .data import REQUIRED, RatingTableError


def read_ratings(path: str | Path) -> pd.DataFrame:
    """Read a CSV (header row) or JSONL (one object per line) ratings file.

    The returned frame has a ``_line`` column (1-based line number in the file) used in
    error messages.  Raises RatingTableError for unreadable files, bad JSON lines and
    missing required columns.
    """
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
            miss = [c for c in REQUIRED if c not in obj]
            if miss:
                raise RatingTableError(f"line {ln}: missing required field(s): {', '.join(miss)}")
            obj["_line"] = ln
            rows.append(obj)
        if not rows:
            raise RatingTableError(f"{path}: no ratings")
        return pd.DataFrame(rows)
    reader = csv.DictReader(text.splitlines())
    header = reader.fieldnames or []
    miss = [c for c in REQUIRED if c not in header]
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
