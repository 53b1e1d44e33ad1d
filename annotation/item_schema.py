"""Checking one imported record against a preset's item schema (see benchmarks/base.py).

Pure functions: a record in, a normalised record or a list of messages out. The import service
adds the line number and decides what to write."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from benchmarks.base import COMMON_KEYS, STRATA_KEYS, Preset

MAX_TEXT_CHARS = 100_000
MAX_STRATUM_CHARS = 100


@dataclass
class CheckedRecord:
    external_id: str | None
    data: dict[str, Any]
    strata: dict[str, str]
    meta: dict[str, Any]
    image_refs: dict[str, str] = field(default_factory=dict)  # field name -> relative path
    errors: list[str] = field(default_factory=list)


def check_record(preset: Preset, record: Any) -> CheckedRecord:
    out = CheckedRecord(external_id=None, data={}, strata={}, meta={})
    if not isinstance(record, dict):
        out.errors.append("each record must be a JSON object")
        return out
    known = {f["name"] for f in preset.item_fields}
    unknown = sorted(set(record) - known - set(COMMON_KEYS))
    if unknown:
        out.errors.append(
            f"unknown field(s) for preset {preset.key}: {', '.join(unknown)} "
            f"(allowed: {', '.join(sorted(known | set(COMMON_KEYS)))}; put extra strata under 'meta')"
        )
    raw_id = record.get("id")
    if raw_id is not None:
        if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)) or str(raw_id).strip() == "":
            out.errors.append("'id' must be a non-empty string or integer")
        elif len(str(raw_id)) > 200:
            out.errors.append("'id' is longer than 200 characters")
        else:
            out.external_id = str(raw_id).strip()
    for key in STRATA_KEYS:
        value = record.get(key)
        if value is None or value == "":
            continue
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            out.errors.append(f"'{key}' must be text")
        elif len(str(value)) > MAX_STRATUM_CHARS:
            out.errors.append(f"'{key}' is longer than {MAX_STRATUM_CHARS} characters")
        else:
            out.strata[key] = str(value).strip()
    meta = record.get("meta")
    if meta is not None:
        if not isinstance(meta, dict) or not all(
            isinstance(v, (str, int, float, bool)) or v is None for v in meta.values()
        ):
            out.errors.append("'meta' must be an object of plain values (text, numbers, booleans)")
        else:
            out.meta = meta
    for spec in preset.item_fields:
        name = spec["name"]
        value = record.get(name)
        if value is None or value == "" or value == []:
            if value == [] and spec["type"] == "list":
                out.data[name] = []
                continue
            if spec.get("required", True):
                out.errors.append(f"missing required field '{name}'")
            continue
        problem = _check_value(spec, value)
        if problem:
            out.errors.append(f"field '{name}': {problem}")
            continue
        if spec["type"] == "image":
            out.image_refs[name] = value
        out.data[name] = value
    return out


def _check_value(spec: dict[str, Any], value: Any) -> str | None:
    kind = spec["type"]
    if kind in ("text", "longtext", "image"):
        if not isinstance(value, str):
            return "expected text"
        if len(value) > MAX_TEXT_CHARS:
            return f"longer than {MAX_TEXT_CHARS} characters"
        return None
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return "expected a finite number"
        return None
    if kind == "object":
        return None if isinstance(value, dict) else "expected an object"
    if kind == "list":
        if not isinstance(value, list):
            return "expected a list"
        of = spec.get("of", "text")
        for i, element in enumerate(value, start=1):
            if of == "text":
                if not isinstance(element, str) or not element.strip():
                    return f"element {i} must be non-empty text"
            else:
                if not isinstance(element, dict):
                    return f"element {i} must be an object"
                missing = [k for k in spec.get("keys", []) if not isinstance(element.get(k), str)]
                if missing:
                    return f"element {i} lacks text for {', '.join(missing)}"
        return None
    return f"unsupported field type {kind}"  # pragma: no cover - presets are checked in tests
