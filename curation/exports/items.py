"""Items (accepted or all) as one row each, in JSONL / CSV / Parquet: the item's fields (an image
field holds the image's sha256, followed by ``<field>__filename``, the name it was imported under),
strata, meta (the JSON, then one ``meta.<key>`` text column per key), ``sample_ids`` (the design
samples the item is in), decision, the means of its human ratings (``mean_*``), per categorical question the
Dawid-Skene posterior label and its entropy in nats (``<question>__latent_label``,
``<question>__latent_entropy``: the model fitted over every item of the project, humans and
model judges together as raters; empty when no item has two raters, or for a question the model
cannot be fitted on), and, under a policy with an element filter, only the kept elements of the
filtered list plus a ``_removed`` column.
(The Hugging Face folder reuses these rows: :mod:`curation.exports.huggingface`.)"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
from django.db.models import Count, QuerySet

from agreement.selectors import submitted_annotations
from annotation.answers import flatten_answers
from annotation.models import Item, Project, Rater
from annotation.rubric import Rubric
from benchmarks.base import STRATA_KEYS
from studies.models import SampleItem

from .. import selectors
from ..export_formats import get_format
from ..models import Export
from ..policy import LatentLabels, categorical_fields
from ..services import current_policy, latent_labels
from .common import json_field
from .provenance import text_cell
from .tables import open_table

ITEM_BATCH = 1_000
HF_ITEM_BATCH = 200  # rows per row group when images are embedded


def item_schema(project: Project, *, hf: bool, meta_keys: Sequence[str] = ()) -> tuple[pa.Schema, list[str]]:
    """The items table's columns (``meta_keys``: one ``meta.<key>`` column each) and the names
    of its image fields."""
    preset = project.preset
    rubric = project.rubric_version.parsed()
    fields: list[pa.Field] = [
        pa.field("id", pa.string()),
        pa.field("version", pa.int64()),
        pa.field("parent_version", pa.int64()),
    ]
    images: list[str] = []
    for spec in preset.item_fields:
        t = spec["type"]
        if t == "image":
            images.append(spec["name"])
            fields.append(
                pa.field(spec["name"], pa.struct([("bytes", pa.binary()), ("path", pa.string())]))
                if hf
                else pa.field(spec["name"], pa.string())
            )
            fields.append(pa.field(f"{spec['name']}{FILENAME}", pa.string()))
        elif t == "number":
            fields.append(pa.field(spec["name"], pa.float64()))
        elif t in ("list", "object"):
            fields.append(json_field(spec["name"]))
        else:
            fields.append(pa.field(spec["name"], pa.string()))
    fields += [pa.field(c, pa.string()) for c in STRATA_KEYS]
    fields += [
        json_field("meta"),
        *(pa.field(f"{META_PREFIX}{k}", pa.string()) for k in meta_keys),
        json_field("sample_ids"),
        pa.field("status", pa.string()),
        pa.field("status_reason", pa.string()),
        pa.field("n_human_ratings", pa.int64()),
    ]
    fields += [pa.field(f"mean_{n}", pa.float64()) for n in _mean_fields(rubric)]
    for name in categorical_fields(rubric):
        fields.append(pa.field(f"{name}{LATENT_LABEL}", _label_type(rubric, name)))
        fields.append(pa.field(f"{name}{LATENT_ENTROPY}", pa.float64()))
    if _element_filter(project):
        fields.append(json_field("_removed"))
    return pa.schema(fields), images


LATENT_LABEL = "__latent_label"
LATENT_ENTROPY = "__latent_entropy"
#: after each image column: the file name the image was imported under (empty when not known)
FILENAME = "__filename"
#: one column per key of the items' ``meta`` (its value as text), beside the ``meta`` JSON
META_PREFIX = "meta."


def meta_keys(items: QuerySet[Item]) -> list[str]:
    """Every key of the items' ``meta``, sorted (one pass over ``meta`` only, in keyset chunks)."""
    keys: set[str] = set()
    for rows in selectors.item_chunks(items, "meta", chunk=5_000):
        for _, meta in rows:
            keys.update(meta or {})
    return sorted(keys)


def _sample_ids(item_ids: list[int]) -> dict[int, list[int]]:
    """Item id -> the design samples it is in."""
    out: dict[int, list[int]] = defaultdict(list)
    for item_id, sample_id in (
        SampleItem.objects.filter(item_id__in=item_ids).order_by("sample_id").values_list("item_id", "sample_id")
    ):
        out[item_id].append(sample_id)
    return out


def _label_type(rubric: Rubric, name: str) -> pa.DataType:
    """Integer for scale and binary questions (their options are integers), text otherwise."""
    q = next((q for q in rubric.questions if q.id == name), None)
    return pa.int64() if q is not None and q.type in ("scale", "binary") else pa.string()


def _latent(project: Project, rubric: Rubric) -> LatentLabels | None:
    """Dawid-Skene per categorical question over the whole project; None when no item has two
    raters (nothing to learn rater quality from) or the rubric has no categorical question."""
    fields = categorical_fields(rubric)
    if not fields:
        return None
    overlap = (
        submitted_annotations(project)
        .values("item_id")
        .annotate(n=Count("rater_id", distinct=True))
        .filter(n__gte=2)
        .exists()
    )
    return latent_labels(project, rubric, fields, "dawid_skene") if overlap else None


def _latent_cells(latent: LatentLabels | None, item_id: int, fields: list[str], types: list[bool]) -> list[Any]:
    """[label, entropy] per field for one item (None where there is no posterior)."""
    posterior = latent.item(item_id) if latent is not None else {}
    out: list[Any] = []
    for name, is_int in zip(fields, types, strict=True):
        label, ent = posterior.get(name, (None, None))
        if label is not None and not is_int:
            label = str(label)
        out += [label, ent]
    return out


def _element_filter(project: Project) -> dict[str, Any]:
    """The current policy's element filter ({} when none)."""
    return current_policy(project).get("element_filter") or {}


def _apply_element_filter(over: str, elements: Any, details: dict | None) -> tuple[Any, list[dict] | None]:
    """(kept elements, ``_removed`` records) of an item's list field under the element filter its
    decision recorded; ``_removed`` is None when the decision has no filter record for this field
    (not decided under the filter: re-apply the policy), and the list is then left whole."""
    record = (details or {}).get("element_filter")
    if not isinstance(record, dict) or record.get("over") != over or not isinstance(elements, list):
        return elements, None
    removed = {r["element"]: r.get("reason", "") for r in record.get("removed") or []}
    kept = [e for n, e in enumerate(elements, start=1) if n not in removed]
    return kept, [
        {"element": n, "value": elements[n - 1], "reason": why}
        for n, why in sorted(removed.items())
        if 1 <= n <= len(elements)
    ]


def _mean_fields(rubric: Rubric) -> list[str]:
    names = [q.id for q in rubric.questions if q.type in ("scale", "binary") and not q.repeat_over]
    return names + [d.id for d in rubric.derived]


def _human_means(
    project: Project, rubric: Rubric, item_ids: list[int], names: list[str]
) -> dict[int, tuple[int, list[float | None]]]:
    """Per item: (most ratings behind one mean, the mean of each field over its human ratings);
    the stored (rounded) answers, read with the project's current rubric."""
    sums: dict[int, list[list[float]]] = defaultdict(lambda: [[] for _ in names])
    rows = (
        submitted_annotations(project)
        .filter(item_id__in=item_ids, rater__kind=Rater.Kind.HUMAN)
        .values_list("item_id", "answers", "derived")
    )
    for item_id, answers, derived in rows:
        acc = sums[item_id]
        fields = {
            name: v for name, _, v, _ in flatten_answers(rubric, answers, derived, None, elements=False, text=False)
        }
        for k, n in enumerate(names):
            v = fields.get(n)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                acc[k].append(float(v))
    return {
        i: (max((len(x) for x in acc), default=0), [sum(x) / len(x) if x else None for x in acc])
        for i, acc in sums.items()
    }


def item_rows(
    export: Export,
    schema: pa.Schema,
    images: list[str],
    *,
    hf: bool,
    image_value: Callable[[str, str | None], Any],
) -> Iterator[list[tuple]]:
    """Rows (tuples in ``schema`` order) of the export's items, a keyset chunk at a time.
    ``image_value(sha256, original file name or None)`` gives an image column's cell."""
    project = export.project
    rubric = project.rubric_version.parsed()
    means = _mean_fields(rubric)
    data_fields = [f["name"] for f in project.preset.item_fields]
    over = _element_filter(project).get("over") if "_removed" in schema.names else None
    latent_names = [n for n in categorical_fields(rubric) if f"{n}{LATENT_LABEL}" in schema.names]
    int_labels = [schema.field(f"{n}{LATENT_LABEL}").type == pa.int64() for n in latent_names]
    latent = _latent(project, rubric) if latent_names else None
    metas = [n[len(META_PREFIX) :] for n in schema.names if n.startswith(META_PREFIX)]
    qs = selectors.exported_items(project, export.scope)
    parents = {}
    batch = HF_ITEM_BATCH if hf else ITEM_BATCH
    for rows in selectors.item_chunks(
        qs,
        "external_id",
        "version",
        "parent_id",
        "data",
        *STRATA_KEYS,
        "meta",
        "decision__status",
        "decision__reason",
        "decision__details",
        "image_names",
        chunk=batch,
    ):
        ids = [r[0] for r in rows]
        parent_ids = [r[3] for r in rows if r[3]]
        parents = dict(Item.objects.filter(id__in=parent_ids).values_list("id", "version")) if parent_ids else {}
        stats = _human_means(project, rubric, ids, means)
        in_samples = _sample_ids(ids)
        out = []
        for r in rows:
            data = r[4] or {}
            n, mv = stats.get(r[0], (0, [None] * len(means)))
            values: list[Any] = [r[1], r[2], parents.get(r[3])]
            k = 5 + len(STRATA_KEYS)
            names = r[k + 4] or {}
            removed = None
            for name in data_fields:
                v = data.get(name)
                if name == over:
                    v, removed = _apply_element_filter(over, v, r[k + 3])
                if name in images:
                    values += [image_value(v, names.get(name)) if v else v, names.get(name) if v else None]
                else:
                    values.append(v)
            values += [v or "" for v in r[5 : 5 + len(STRATA_KEYS)]]
            meta = r[k] or {}
            values += [meta, *(text_cell(meta.get(key)) for key in metas), in_samples.get(r[0], [])]
            values += [r[k + 1] or "pending", r[k + 2] or "", n, *mv]
            values += _latent_cells(latent, r[0], latent_names, int_labels)
            if over is not None:
                values.append(removed)
            out.append(tuple(values))
        yield out


def export_items(export: Export, root: Path, prov: dict[str, Any], progress: Callable[[float], None]) -> list[dict]:
    """The items table in the export's format (the registry's table class): ``items.<extension>``,
    or what the format's table writes instead (the Hugging Face folder:
    :class:`curation.exports.huggingface.DatasetFolder`). A table that embeds images gets the
    image columns as the ``datasets`` Image struct and smaller batches."""
    items = selectors.exported_items(export.project, export.scope)
    embed = get_format(export.format).table_class().embeds_images
    schema, images = item_schema(export.project, hf=embed, meta_keys=meta_keys(items))
    total = max(items.count(), 1)
    table = open_table(
        export, root, "items", schema, provenance=prov, row_group_size=HF_ITEM_BATCH if embed else ITEM_BATCH
    )
    try:
        for rows in item_rows(export, schema, images, hf=embed, image_value=table.image_value):
            table.write(rows)
            progress(table.rows / total)
    except BaseException:
        table.abort()
        raise
    return table.close()
