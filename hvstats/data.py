"""Long-format rating tables: validation, level inference, item x rater matrices.

Columns: ``item``, ``rater``, ``value`` (required); ``field`` (default ``"value"``),
``rater_kind`` ("human" | "model", default "human"); any other column is a stratum
(country, region, model, ...).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from .options import LEVELS as LEVELS  # re-exported: the platform reads the levels here

REQUIRED = ("item", "rater", "value")


class RatingTableError(ValueError):
    """Invalid long-format input (message names the problem and row where it applies)."""


def to_frame(table: Any) -> pd.DataFrame:
    """Accept a DataFrame, a list of dicts or a dict of columns; validate the columns."""
    df = table.copy() if isinstance(table, pd.DataFrame) else pd.DataFrame(table)
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise RatingTableError(f"missing required column(s): {', '.join(missing)}")
    if "field" not in df.columns:
        df["field"] = "value"
    if "rater_kind" not in df.columns:
        df["rater_kind"] = "human"
    df["item"] = df["item"].astype(str)
    df["rater"] = df["rater"].astype(str)
    df["field"] = df["field"].astype(str)
    df["rater_kind"] = df["rater_kind"].fillna("human").astype(str).str.lower()
    bad = ~df["rater_kind"].isin(["human", "model"])
    if bad.any():
        i = int(np.argmax(bad.to_numpy()))
        raise RatingTableError(f"row {i + 1}: rater_kind must be 'human' or 'model', got {df['rater_kind'].iloc[i]!r}")
    return df


def _is_missing(v) -> bool:
    return v is None or (isinstance(v, float) and np.isnan(v)) or (isinstance(v, str) and v.strip() == "")


def infer_level(values: Iterable[Any]) -> str:
    """nominal if any value is non-numeric; ordinal for <= 10 distinct integers; else interval."""
    s = pd.Series([v for v in values if not _is_missing(v)], dtype=object)
    num = pd.to_numeric(s, errors="coerce")
    if len(s) == 0 or num.isna().any():
        return "nominal"
    u = np.unique(num.to_numpy(dtype=float))
    if len(u) <= 10 and np.all(u == np.round(u)):
        return "ordinal"
    return "interval"


def numeric_values(df: pd.DataFrame, level: str, row_offset: int = 1) -> tuple[np.ndarray, np.ndarray | None]:
    """Values as floats (NaN missing). nominal: category codes + the label array.

    Raises RatingTableError naming the first non-numeric row for non-nominal levels.
    ``row_offset``: add to the 0-based row position to report a line number.
    """
    raw = df["value"]
    miss = raw.isna().to_numpy(dtype=bool)
    if raw.dtype == object or pd.api.types.is_string_dtype(raw.dtype):  # pandas 3 reads text as str
        miss = miss | raw.map(lambda v: isinstance(v, str) and v.strip() == "").to_numpy(dtype=bool)
    if level == "nominal":
        lab = raw.astype(object).where(~miss, None)
        as_str = lab.map(
            lambda v: (
                None
                if v is None
                else (str(v) if not isinstance(v, (int, float, np.number)) or isinstance(v, bool) else v)
            )
        )
        # a list, not Series.map: pandas 3 infers the str dtype for the mapped labels and turns
        # the missing ones (None) into NaN, which then counted as a label 'nan'
        keys = [None if m else str(v) for v, m in zip(as_str.tolist(), miss.tolist(), strict=True)]
        uniq = sorted({k for k in keys if k is not None}, key=_natural)
        index = {k: i for i, k in enumerate(uniq)}
        codes = np.array([np.nan if k is None else index[k] for k in keys], dtype=float)
        return codes, np.array(uniq, dtype=object)
    num = pd.to_numeric(raw.where(~miss, None), errors="coerce").to_numpy(dtype=float)
    bad = np.isnan(num) & ~miss
    if bad.any():
        i = int(np.argmax(bad))
        line = df["_line"].iloc[i] if "_line" in df.columns else i + row_offset
        raise RatingTableError(f"line {line}: value {raw.iloc[i]!r} is not a number (level {level!r} needs numbers)")
    if level == "ratio" and (num[~np.isnan(num)] < 0).any():
        i = int(np.argmax(num < 0))
        line = df["_line"].iloc[i] if "_line" in df.columns else i + row_offset
        raise RatingTableError(f"line {line}: ratio level needs non-negative values, got {raw.iloc[i]!r}")
    return num, None


def _natural(k: str):
    try:
        return (0, float(k), k)
    except ValueError:
        return (1, 0.0, k)


def pivot(df: pd.DataFrame, values: np.ndarray, raters: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """items x raters matrix (columns in ``raters`` order) and the item ids.
    Duplicate (item, rater) ratings raise RatingTableError."""
    items, ii = np.unique(df["item"].to_numpy(dtype=object).astype(str), return_inverse=True)
    rindex = {r: k for k, r in enumerate(raters)}
    rr = df["rater"].map(rindex).to_numpy()
    keep = ~pd.isna(rr)
    ii, rr, v = ii[keep], rr[keep].astype(np.int64), values[keep]
    key = ii.astype(np.int64) * len(raters) + rr
    uk, _first, cnt = np.unique(key, return_index=True, return_counts=True)
    if (cnt > 1).any():
        k = uk[np.argmax(cnt > 1)]
        it, ra = items[k // len(raters)], raters[k % len(raters)]
        raise RatingTableError(f"duplicate rating for item {it!r}, rater {ra!r} in field {df['field'].iloc[0]!r}")
    X = np.full((len(items), len(raters)), np.nan)
    X[ii, rr] = v
    return X, items
