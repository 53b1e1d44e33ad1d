"""Annotations in long format (one row per annotation and field), as JSONL, CSV or Parquet.

Fields are the cells of :func:`annotation.answers.flatten_answers` with its defaults, read with
each annotation's own rubric version: pairwise answers as the item field picked, repeated
questions one field per element ``q[n]``, checklists as a JSON list, then derived fields and
``accepted``. A combined judge's row (an ensemble, or the mean of several passes) holds its stored
(rounded) rubric answer in ``value`` / ``value_num`` and, in ``value_exact``, the number the
agreement report analyses (``flatten_answers(..., exact=True)``: the exact mean, and derived fields
computed from the means); ``value_exact`` is empty for humans, single-pass judges and non-numeric
fields, so ``coalesce(value_exact, value_num)`` is the report's reading of every row.
``judge_name`` names a model rater (its judge configuration's name, else the rater's name).
Both columns come last, so the columns before them are unchanged.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from agreement.selectors import submitted_annotations
from annotation.answers import flatten_answers
from annotation.models import Rater, RubricVersion
from annotation.rubric import Rubric
from judges.endpoints import public_params

from ..models import Export
from .common import Pseudonyms, TableWriter, csv_cell, json_field

ANNOTATION_CHUNK = 5_000
ANNOTATION_BATCH = 50_000  # long rows per write / Parquet row group

ANNOTATION_SCHEMA = pa.schema(
    [
        pa.field("item", pa.string()),
        pa.field("item_version", pa.int64()),
        pa.field("rater", pa.string()),
        pa.field("rater_kind", pa.string()),
        pa.field("field", pa.string()),
        pa.field("value", pa.string()),
        pa.field("value_num", pa.float64()),
        pa.field("rubric_key", pa.string()),
        pa.field("rubric_version", pa.int64()),
        pa.field("created_at", pa.timestamp("us", tz="UTC")),
        pa.field("updated_at", pa.timestamp("us", tz="UTC")),
        pa.field("annotation_revision", pa.int64()),
        pa.field("judge_backend", pa.string()),
        pa.field("judge_model", pa.string()),
        pa.field("judge_prompt_hash", pa.string()),
        json_field("judge_parameters"),
        pa.field("judge_name", pa.string()),
        pa.field("value_exact", pa.float64()),
    ]
)


def _value(v: Any) -> tuple[str, float | None]:
    """(``value``, ``value_num``) cells of one field's value."""
    if isinstance(v, bool):
        return ("true" if v else "false"), float(v)
    if isinstance(v, (int, float)):
        return (str(v), float(v))
    if isinstance(v, str):
        return v, None
    return json.dumps(v, ensure_ascii=False, sort_keys=True), None


def _exact_values(rubric: Rubric, answers: Any, derived: Any, presentation: Any) -> dict[str, float] | None:
    """Field -> the number the agreement report reads (``exact=True``), for a combined judge's
    annotation (one with ``derived["judge_exact"]``); None for every other annotation."""
    if not (isinstance(derived, dict) and derived.get("judge_exact")):
        return None
    out = {}
    for fname, _, v, _ in flatten_answers(rubric, answers, derived, presentation, exact=True):
        if isinstance(v, (bool, int, float)):
            out[fname] = float(v)
    return out


def _annotation_source(export: Export, pseudonyms: Pseudonyms) -> Iterator[tuple]:
    """Per submitted annotation of the export (id order, streamed): (item, item version, rater
    tuple (pseudonym, kind, backend, model, prompt hash, parameters, judge name), rubric (parsed, key,
    version), rubric version id, rater id, answers, derived, presentation, created, updated, revision)."""
    project = export.project
    raters = {}
    for rid, kind, name, backend, model_id, prompt_hash, params, judge_name in (
        Rater.objects.filter(annotations__item__project=project)
        .distinct()
        .values_list("id", "kind", "name", "backend", "model_id", "prompt_hash", "parameters", "judge_config__name")
    ):
        model = kind == Rater.Kind.MODEL
        raters[rid] = (
            pseudonyms(rid),
            kind,
            backend if model else None,
            model_id if model else None,
            prompt_hash if model else None,
            public_params(params) if model else None,  # never a key stored before keys were refused
            (judge_name or name) if model else None,
        )
    rubrics: dict[int, tuple[Rubric, str, int]] = {}
    qs = submitted_annotations(project)
    if export.scope == "accepted":
        qs = qs.filter(item__decision__status="accepted")
    rows = (
        qs.order_by("id")
        .values_list(
            "item__external_id",
            "item__version",
            "rater_id",
            "rubric_version_id",
            "answers",
            "derived",
            "assignment__presentation",
            "created_at",
            "updated_at",
            "revision",
        )
        .iterator(chunk_size=ANNOTATION_CHUNK)
    )
    for ext, version, rater_id, rv_id, answers, derived, presentation, created, updated, revision in rows:
        rb = rubrics.get(rv_id)
        if rb is None:
            rv = RubricVersion.objects.get(pk=rv_id)
            rb = rubrics[rv_id] = (rv.parsed(), rv.rubric_key, rv.version)
        yield (
            ext,
            version,
            raters[rater_id],
            rb,
            rv_id,
            rater_id,
            answers,
            derived,
            presentation,
            created,
            updated,
            revision,
        )


def annotation_rows(export: Export, pseudonyms: Pseudonyms) -> Iterator[list[tuple]]:
    """Long rows (tuples in ``ANNOTATION_SCHEMA`` order), ``ANNOTATION_BATCH`` at a time (Parquet)."""
    batch: list[tuple] = []
    for (
        ext,
        version,
        rater,
        rb,
        _rv_id,
        _rater_id,
        answers,
        derived,
        presentation,
        created,
        updated,
        revision,
    ) in _annotation_source(export, pseudonyms):
        rubric, rkey, rver = rb
        pseud, kind, backend, model_id, prompt_hash, params, judge_name = rater
        exact = _exact_values(rubric, answers, derived, presentation)
        for fname, _, v, _ in flatten_answers(rubric, answers, derived, presentation):
            text, num = _value(v)
            batch.append(
                (
                    ext,
                    version,
                    pseud,
                    kind,
                    fname,
                    text,
                    num,
                    rkey,
                    rver,
                    created,
                    updated,
                    revision,
                    backend,
                    model_id,
                    prompt_hash,
                    params,
                    judge_name,
                    exact.get(fname) if exact else None,
                )
            )
        if len(batch) >= ANNOTATION_BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


class _CsvCells:
    """CSV text of a run of cells exactly as ``csv.writer(lineterminator="\n")`` writes them inside
    a row (QUOTE_MINIMAL decides per cell, so runs joined by "," equal the whole row written at
    once; a sentinel last cell avoids the lone-empty-cell special case)."""

    def __init__(self) -> None:
        self._buf = io.StringIO()
        self._w = csv.writer(self._buf, lineterminator="\n")

    def __call__(self, cells: Sequence[Any]) -> str:
        buf = self._buf
        buf.seek(0)
        buf.truncate()
        self._w.writerow([*cells, "x"])
        return buf.getvalue()[:-3]  # drop ",x\n"


_VALUE_CACHE_MAX = 10_000


def annotation_text(export: Export, pseudonyms: Pseudonyms, fmt: str) -> Iterator[tuple[str, int]]:
    """The JSONL or CSV body of the long annotations table, (text, rows) about ``ANNOTATION_BATCH``
    rows at a time; byte for byte what :class:`TableWriter` writes for :func:`annotation_rows`
    (``json.dumps`` of each row as an object in schema order with ``ensure_ascii=False``; CSV via
    the csv module), but each annotation's constant cells (item, rater, rubric, timestamps, judge)
    and the field names / common values are serialised once and every line is concatenated from
    those pieces (``tests/curation/test_export_text.py`` checks the identity)."""
    dumps = json.dumps
    names = ANNOTATION_SCHEMA.names
    if fmt == "jsonl":

        def enc(v: Any) -> str:
            return dumps(v.isoformat() if isinstance(v, datetime) else v, ensure_ascii=False)

        key = [("{" if i == 0 else ", ") + dumps(n, ensure_ascii=False) + ": " for i, n in enumerate(names)]
        end = "}\n"
    else:
        cells = _CsvCells()

        def enc_cells(vs: Sequence[Any]) -> str:
            return cells([csv_cell(v) for v in vs])

    # the value_exact cell and line end of a row without an exact value
    no_exact = (key[17] + enc(None) + end) if fmt == "jsonl" else "," + enc_cells([None]) + "\n"
    rater_pieces: dict[int, tuple[str, str]] = {}
    rubric_pieces: dict[int, str] = {}
    field_pieces: dict[str, str] = {}
    value_pieces: dict[tuple[type, Any], str] = {}
    parts: list[str] = []
    for (
        ext,
        version,
        rater,
        rb,
        rv_id,
        rater_id,
        answers,
        derived,
        presentation,
        created,
        updated,
        revision,
    ) in _annotation_source(export, pseudonyms):
        rubric, rkey, rver = rb
        rp = rater_pieces.get(rater_id)
        if rp is None:  # (pseudonym + kind, judge columns)
            pseud, kind, backend, model_id, prompt_hash, params, judge_name = rater
            if fmt == "jsonl":
                rp = (
                    key[2] + enc(pseud) + key[3] + enc(kind) + key[4],
                    key[12]
                    + enc(backend)
                    + key[13]
                    + enc(model_id)
                    + key[14]
                    + enc(prompt_hash)
                    + key[15]
                    + enc(params)
                    + key[16]
                    + enc(judge_name),
                )
            else:
                rp = (
                    "," + enc_cells([pseud, kind]) + ",",
                    "," + enc_cells([backend, model_id, prompt_hash, params, judge_name]),
                )
            rater_pieces[rater_id] = rp
        rk = rubric_pieces.get(rv_id)
        if rk is None:
            rk = rubric_pieces[rv_id] = (
                key[7] + enc(rkey) + key[8] + enc(rver) if fmt == "jsonl" else "," + enc_cells([rkey, rver])
            )
        if fmt == "jsonl":
            head = key[0] + enc(ext) + key[1] + enc(version) + rp[0]
            tail = rk + key[9] + enc(created) + key[10] + enc(updated) + key[11] + enc(revision) + rp[1]
        else:
            head = enc_cells([ext, version]) + rp[0]
            tail = rk + "," + enc_cells([created, updated, revision]) + rp[1]
        exact = _exact_values(rubric, answers, derived, presentation)
        for fname, _, v, _ in flatten_answers(rubric, answers, derived, presentation):
            fp = field_pieces.get(fname)
            if fp is None:
                fp = field_pieces[fname] = enc(fname) if fmt == "jsonl" else enc_cells([fname])
            ck = (v.__class__, v) if isinstance(v, (bool, int, float)) else None
            vp = value_pieces.get(ck) if ck is not None else None
            if vp is None:
                text, num = _value(v)
                vp = (key[5] + enc(text) + key[6] + enc(num)) if fmt == "jsonl" else "," + enc_cells([text, num])
                if ck is not None and len(value_pieces) < _VALUE_CACHE_MAX:
                    value_pieces[ck] = vp
            ex = exact.get(fname) if exact else None
            if ex is None:
                ep = no_exact
            else:
                ep = (key[17] + enc(ex) + end) if fmt == "jsonl" else "," + enc_cells([ex]) + "\n"
            parts.append(head + fp + vp + tail + ep)
        if len(parts) >= ANNOTATION_BATCH:
            yield "".join(parts), len(parts)
            parts = []
    if parts:
        yield "".join(parts), len(parts)


def export_annotations(
    export: Export, root: Path, prov: dict[str, Any], progress: Callable[[float], None]
) -> list[dict]:
    qs = submitted_annotations(export.project)
    if export.scope == "accepted":
        qs = qs.filter(item__decision__status="accepted")
    total = max(qs.count(), 1)
    ext = {"jsonl": "jsonl", "csv": "csv", "parquet": "parquet"}[export.format]
    schema = ANNOTATION_SCHEMA.with_metadata({"hv_provenance": json.dumps(prov)})
    writer = TableWriter(root / f"annotations.{ext}", export.format, schema, row_group_size=ANNOTATION_BATCH)
    pseudonyms = Pseudonyms()
    seen = 0
    try:
        if export.format == "parquet":
            for batch in annotation_rows(export, pseudonyms):
                writer.write(batch)
                seen += len(batch)
                progress(min(0.99, seen / (total * 7)))  # ~7 long rows per annotation: an estimate
        else:
            for text, n in annotation_text(export, pseudonyms, export.format):
                writer.write_text(text, n)
                seen += n
                progress(min(0.99, seen / (total * 7)))
    except BaseException:
        writer.abort()
        raise
    return [writer.close()]
