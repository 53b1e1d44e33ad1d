"""Annotations in long format (one row per annotation and field), in any format that serves
them (``curation.export_formats``: JSONL, CSV, Parquet).

Fields are the cells of :func:`annotation.answers.flatten_answers` with its defaults, read with
each annotation's own rubric version: pairwise answers as the item field picked, repeated
questions one field per element ``q[n]``, checklists as a JSON list, then derived fields and
``accepted``. A combined judge's row (an ensemble, or the mean of several passes) holds its stored
(rounded) rubric answer in ``value`` / ``value_num`` and, in ``value_exact``, the number the
agreement report analyses (``flatten_answers(..., exact=True)``: the exact mean, and derived fields
computed from the means); ``value_exact`` is empty for humans, single-pass judges and non-numeric
fields, so ``coalesce(value_exact, value_num)`` is the report's reading of every row.
``judge_name`` names a model rater (its judge configuration's name, else the rater's name).
Then ``duration_ms`` (the annotator's time on the current answer), ``source`` (``hv`` for a rating
given here, ``imported:<id>`` for one imported from another tool by that annotation import) and one ``rater.<attribute>``
column per public profile attribute of the annotators (e.g. ``rater.nationality``; empty for model
raters; :func:`curation.exports.provenance.public_attributes` keeps identifying ones out). New
columns are added at the end, so the columns before them are unchanged, except ``locale``, which
sits with the annotation's own columns (after ``annotation_revision``): the wording the rubric was
shown in, ``en`` the paper's or a rubric translation's language, empty when not known (judges,
API clients that did not say, answers stored before it was recorded).
The answers that edits replaced go to ``annotation_history.<format>`` (:func:`history_rows`).
A judge's rows hold only what it decides (:mod:`judges.decides`): no row for a derived field
that reads a question or checklist flag it does not decide (e.g. ``flag_context_source`` of the
CLIP / SSIM filter, which assesses flags 4 and 6 only); its checklist row lists the flags it
ticked among those it decides, named in ``judge_parameters["decides"]``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
from django.db.models import QuerySet

from agreement.selectors import submitted_annotations
from annotation.answers import flatten_answers
from annotation.models import Annotation, AnnotationRevision, Rater, RubricVersion
from annotation.rubric import Rubric
from judges.decides import rater_decides
from judges.endpoints import public_params

from ..models import Export
from .common import Pseudonyms, json_field
from .provenance import attribute_keys as attribute_keys_of
from .provenance import public_attributes, text_cell
from .tables import LineEncoder, open_table

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
        pa.field("locale", pa.string()),
        pa.field("judge_backend", pa.string()),
        pa.field("judge_model", pa.string()),
        pa.field("judge_prompt_hash", pa.string()),
        json_field("judge_parameters"),
        pa.field("judge_name", pa.string()),
        pa.field("value_exact", pa.float64()),
        pa.field("duration_ms", pa.int64()),
        pa.field("source", pa.string()),
    ]
)
#: ``source`` of a rating given in HV (by a person or a judge run here); an imported one's is
#: ``imported:<import id>`` (``annotation.models.AnnotationImport``, listed in the provenance)
SOURCE_HV = "hv"
#: one column per public profile attribute of the annotators (``rater.nationality``), after the
#: fixed columns; empty for model raters
ATTRIBUTE_PREFIX = "rater."


def annotation_schema(attribute_keys: Sequence[str]) -> pa.Schema:
    """The long table's columns: ``ANNOTATION_SCHEMA`` then ``rater.<attribute>`` per key."""
    return pa.schema([*ANNOTATION_SCHEMA, *(pa.field(f"{ATTRIBUTE_PREFIX}{k}", pa.string()) for k in attribute_keys)])


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


def _cell_name(fname: str, src: Any) -> str:
    """The rubric name a cell belongs to (a question's id for its ``q[n]`` / ``q_field`` cells)."""
    return fname if src is None else src.id


def _annotation_source(export: Export, pseudonyms: Pseudonyms, attribute_keys: Sequence[str]) -> Iterator[tuple]:
    """Per submitted annotation of the export (id order, streamed): (item, item version, rater
    tuple (pseudonym, kind, backend, model, prompt hash, parameters, judge name, the rater's
    ``attribute_keys`` values as text), rubric (parsed, key, version), rubric version id, rater id,
    answers, derived, presentation, created, updated, revision, the names the rater does not decide
    under that rubric (``Decides.undecided``), duration in ms, locale, source)."""
    project = export.project
    preset = project.preset
    raters = {}
    decides_of = {}
    for rid, kind, name, backend, model_id, prompt_hash, params, judge_name, attributes in (
        Rater.objects.filter(annotations__item__project=project)
        .distinct()
        .values_list(
            "id",
            "kind",
            "name",
            "backend",
            "model_id",
            "prompt_hash",
            "parameters",
            "judge_config__name",
            "attributes",
        )
    ):
        model = kind == Rater.Kind.MODEL
        decides = decides_of[rid] = rater_decides(kind=kind, backend=backend or "", parameters=params, preset=preset)
        if decides is not None and decides.flags and not (params or {}).get("decides"):
            params = {**(params or {}), "decides": decides.as_json()}  # a rater stored before it was recorded
        raters[rid] = (
            pseudonyms(rid),
            kind,
            backend if model else None,
            model_id if model else None,
            prompt_hash if model else None,
            public_params(params) if model else None,  # never a key stored before keys were refused
            (judge_name or name) if model else None,
            _attribute_cells(attributes, attribute_keys) if not model else (None,) * len(attribute_keys),
        )
    rubrics: dict[int, tuple[Rubric, str, int]] = {}
    undecided: dict[tuple[int, int], frozenset[str]] = {}
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
            "duration_ms",
            "locale",
            "source_import_id",
        )
        .iterator(chunk_size=ANNOTATION_CHUNK)
    )
    for (
        ext,
        version,
        rater_id,
        rv_id,
        answers,
        derived,
        presentation,
        created,
        updated,
        revision,
        duration,
        locale,
        imported,
    ) in rows:
        rb = rubrics.get(rv_id)
        if rb is None:
            rv = RubricVersion.objects.get(pk=rv_id)
            rb = rubrics[rv_id] = (rv.parsed(), rv.rubric_key, rv.version)
        skip = undecided.get((rater_id, rv_id))
        if skip is None:
            d = decides_of.get(rater_id)
            skip = undecided[(rater_id, rv_id)] = d.undecided(rb[0]) if d is not None else frozenset()
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
            skip,
            duration,
            locale,
            f"imported:{imported}" if imported else SOURCE_HV,
        )


def _attribute_cells(attributes: dict | None, keys: Sequence[str]) -> tuple[str | None, ...]:
    """A person's public profile attributes (``provenance.public_attributes``) as the
    ``rater.<key>`` cells."""
    public = public_attributes(attributes)
    return tuple(text_cell(public.get(k)) for k in keys)


def annotation_rows(
    export: Export, pseudonyms: Pseudonyms, attribute_keys: Sequence[str] | None = None
) -> Iterator[list[tuple]]:
    """Long rows (tuples in :func:`annotation_schema` order), ``ANNOTATION_BATCH`` at a time
    (Parquet). ``attribute_keys``: the ``rater.<key>`` columns (default: the project's)."""
    keys = attribute_keys if attribute_keys is not None else attribute_keys_of(export.project)
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
        skip,
        duration,
        locale,
        source,
    ) in _annotation_source(export, pseudonyms, keys):
        rubric, rkey, rver = rb
        pseud, kind, backend, model_id, prompt_hash, params, judge_name, attrs = rater
        exact = _exact_values(rubric, answers, derived, presentation)
        for fname, _, v, src in flatten_answers(rubric, answers, derived, presentation):
            if skip and _cell_name(fname, src) in skip:
                continue  # not decided by this judge
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
                    locale,
                    backend,
                    model_id,
                    prompt_hash,
                    params,
                    judge_name,
                    exact.get(fname) if exact else None,
                    duration,
                    source,
                    *attrs,
                )
            )
        if len(batch) >= ANNOTATION_BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


_VALUE_CACHE_MAX = 10_000


def annotation_text(
    export: Export, pseudonyms: Pseudonyms, encoder: LineEncoder, attribute_keys: Sequence[str] | None = None
) -> Iterator[tuple[str, int]]:
    """The body of the long annotations table in a text format, (text, rows) about
    ``ANNOTATION_BATCH`` rows at a time; byte for byte what the format's table writes for
    :func:`annotation_rows` (``encoder``: the table's :meth:`~curation.exports.tables.Table.line_encoder`),
    but each annotation's constant cells (item, rater, rubric, timestamps, judge) and the field
    names / common values are encoded once and every line is concatenated from those pieces
    (``tests/curation/test_export_text.py`` checks the identity)."""
    keys = attribute_keys if attribute_keys is not None else attribute_keys_of(export.project)
    run, end = encoder.run, encoder.end
    # column numbers in annotation_schema order (the pieces are runs of consecutive columns)
    c = {n: i for i, n in enumerate(annotation_schema(keys).names)}
    no_exact = run(c["value_exact"], [None])  # the value_exact cell of a row without an exact value
    rater_pieces: dict[int, tuple[str, str, str]] = {}
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
        skip,
        duration,
        locale,
        source,
    ) in _annotation_source(export, pseudonyms, keys):
        rubric, rkey, rver = rb
        rp = rater_pieces.get(rater_id)
        if rp is None:  # (pseudonym + kind, judge columns, attribute columns)
            pseud, kind, backend, model_id, prompt_hash, params, judge_name, attrs = rater
            rp = rater_pieces[rater_id] = (
                run(c["rater"], [pseud, kind]),
                run(c["judge_backend"], [backend, model_id, prompt_hash, params, judge_name]),
                run(len(ANNOTATION_SCHEMA), attrs),
            )
        rk = rubric_pieces.get(rv_id)
        if rk is None:
            rk = rubric_pieces[rv_id] = run(c["rubric_key"], [rkey, rver])
        head = run(c["item"], [ext, version]) + rp[0]
        tail = rk + run(c["created_at"], [created, updated, revision, locale]) + rp[1]
        # duration, source and the rater's attributes close every line of the annotation
        trail = run(c["duration_ms"], [duration, source]) + rp[2] + end
        exact = _exact_values(rubric, answers, derived, presentation)
        for fname, _, v, src in flatten_answers(rubric, answers, derived, presentation):
            if skip and _cell_name(fname, src) in skip:
                continue  # not decided by this judge
            fp = field_pieces.get(fname)
            if fp is None:
                fp = field_pieces[fname] = run(c["field"], [fname])
            ck = (v.__class__, v) if isinstance(v, (bool, int, float)) else None
            vp = value_pieces.get(ck) if ck is not None else None
            if vp is None:
                vp = run(c["value"], _value(v))
                if ck is not None and len(value_pieces) < _VALUE_CACHE_MAX:
                    value_pieces[ck] = vp
            ex = exact.get(fname) if exact else None
            ep = no_exact if ex is None else run(c["value_exact"], [ex])
            parts.append(head + fp + vp + tail + ep + trail)
        if len(parts) >= ANNOTATION_BATCH:
            yield "".join(parts), len(parts)
            parts = []
    if parts:
        yield "".join(parts), len(parts)


def export_annotations(
    export: Export, root: Path, prov: dict[str, Any], progress: Callable[[float], None]
) -> list[dict]:
    """``annotations.<extension>`` and ``annotation_history.<extension>`` in the export's format
    (the registry's table class): a table with a line encoder gets the fast text
    (:func:`annotation_text`), any other the rows (:func:`annotation_rows`)."""
    qs = submitted_annotations(export.project)
    if export.scope == "accepted":
        qs = qs.filter(item__decision__status="accepted")
    total = max(qs.count(), 1)
    keys = attribute_keys_of(export.project)
    table = open_table(
        export, root, "annotations", annotation_schema(keys), provenance=prov, row_group_size=ANNOTATION_BATCH
    )
    pseudonyms = Pseudonyms()
    seen = 0
    try:
        encoder = table.line_encoder()
        if encoder is None:
            for batch in annotation_rows(export, pseudonyms, keys):
                table.write(batch)
                seen += len(batch)
                progress(min(0.99, seen / (total * 7)))  # ~7 long rows per annotation: an estimate
        else:
            for text, n in annotation_text(export, pseudonyms, encoder, keys):
                table.write_text(text, n)
                seen += n
                progress(min(0.99, seen / (total * 7)))
    except BaseException:
        table.abort()
        raise
    files = table.close()
    # the earlier answers of edited annotations, under the same pseudonyms
    history = open_table(
        export, root, "annotation_history", HISTORY_SCHEMA, provenance=prov, row_group_size=ANNOTATION_BATCH
    )
    try:
        for batch in history_rows(qs, pseudonyms):
            history.write(batch)
    except BaseException:
        history.abort()
        raise
    return [*files, *history.close()]


HISTORY_SCHEMA = pa.schema(
    [
        pa.field("item", pa.string()),
        pa.field("item_version", pa.int64()),
        pa.field("rater", pa.string()),
        pa.field("rater_kind", pa.string()),
        pa.field("revision", pa.int64()),
        json_field("answers"),
        json_field("derived"),
        pa.field("rubric_key", pa.string()),
        pa.field("rubric_version", pa.int64()),
        pa.field("duration_ms", pa.int64()),
        pa.field("answered_at", pa.timestamp("us", tz="UTC")),
        pa.field("edited_at", pa.timestamp("us", tz="UTC")),
    ]
)


def history_rows(annotations: QuerySet[Annotation], pseudonyms: Pseudonyms) -> Iterator[list[tuple]]:
    """Rows (``HISTORY_SCHEMA`` order) of the answers edits replaced (``AnnotationRevision``) of
    ``annotations``, per annotation oldest first: each with the revision number it had, its
    rubric version and time on task. The current answer is the annotation's own row in the long
    table (its ``annotation_revision`` is one more than the last one here)."""
    rows = (
        AnnotationRevision.objects.filter(annotation__in=annotations.values("id"))
        .order_by("annotation_id", "revision")
        .values_list(
            "annotation__item__external_id",
            "annotation__item__version",
            "annotation__rater_id",
            "annotation__rater__kind",
            "revision",
            "answers",
            "derived",
            "rubric_version__rubric_key",
            "rubric_version__version",
            "duration_ms",
            "answered_at",
            "edited_at",
        )
        .iterator(chunk_size=ANNOTATION_CHUNK)
    )
    batch: list[tuple] = []
    for ext, version, rater_id, kind, *rest in rows:
        batch.append((ext, version, pseudonyms(rater_id), kind, *rest))
        if len(batch) >= ANNOTATION_BATCH:
            yield batch
            batch = []
    if batch:
        yield batch
