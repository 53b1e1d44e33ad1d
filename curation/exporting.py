"""Export writers: items (accepted or all) and annotations in long format as JSONL, CSV, Parquet
or a Hugging Face ``datasets`` folder, plus the needs-revision items with feedback.

Streaming throughout: rows come from ``values_list(...).iterator(chunk_size=...)`` (annotations)
or keyset chunks of items, are written batch by batch (Parquet: one row group per batch) to a
temporary file in the export's folder, hashed, and renamed into place. Memory stays flat in the
number of rows. Rater identities are pseudonymised with HMAC-SHA256 of the rater id under a
random per-export salt that is never stored: consistent within one export, unlinkable across.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import json
import logging
import os
import secrets
import shutil
import zipfile
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from django.conf import settings
from django.utils import timezone

from agreement.selectors import STRATA_COLUMNS, submitted_annotations
from annotation.models import Asset, Item, Project, Rater, RubricVersion
from annotation.rubric import Rubric, resolve_pair_choice

from . import selectors
from .models import Export

ANNOTATION_CHUNK = 5_000
ANNOTATION_BATCH = 50_000  # long rows per write / Parquet row group
ITEM_BATCH = 1_000
HF_ITEM_BATCH = 200  # rows per row group when images are embedded
PLATFORM_NAME = "hv-human-validation"
logger = logging.getLogger(__name__)


def platform_version() -> str:
    return str(getattr(settings, "HV_PLATFORM_VERSION", None)
               or getattr(settings, "SPECTACULAR_SETTINGS", {}).get("VERSION", "0"))


def export_root(export: Export) -> Path:
    return Path(settings.MEDIA_ROOT) / export.relative_dir()


class Pseudonyms:
    """HMAC-SHA256(salt, rater id) -> ``r_<12 hex>``; the salt lives only in this object."""

    def __init__(self, salt: bytes | None = None) -> None:
        self._salt = salt or secrets.token_bytes(32)
        self._cache: dict[int, str] = {}

    def __call__(self, rater_id: int) -> str:
        p = self._cache.get(rater_id)
        if p is None:
            p = self._cache[rater_id] = "r_" + hmac.new(self._salt, str(rater_id).encode(), hashlib.sha256).hexdigest()[:12]
        return p


# ------------------------------------------------------------------------------ table writers
def _plain(v: Any, *, nested: bool) -> Any:
    if isinstance(v, datetime):
        return v.isoformat()
    if not nested and isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False, sort_keys=True)
    return v


class TableWriter:
    """Rows (tuples in ``schema`` order) to one file, written to ``<dir>/.tmp-*`` and renamed on
    :meth:`close`. JSONL keeps nested values as JSON; CSV and Parquet columns of nested values
    hold JSON text (their schema type is string)."""

    def __init__(self, path: Path, fmt: str, schema: pa.Schema, *, row_group_size: int) -> None:
        self.path, self.fmt, self.schema, self.rows = path, fmt, schema, 0
        self.names = schema.names
        self.tmp = path.parent / f".tmp-{secrets.token_hex(6)}-{path.name}"
        self.tmp.parent.mkdir(parents=True, exist_ok=True)
        self.row_group_size = row_group_size
        self._json_cols = {i for i, f in enumerate(schema) if (f.metadata or {}).get(b"json") == b"1"}
        if fmt == "parquet":
            self._pq = pq.ParquetWriter(self.tmp, schema, compression="zstd")
        else:
            self._fh = open(self.tmp, "w", encoding="utf-8", newline="")  # noqa: SIM115 - closed in close()
            if fmt == "csv":
                self._csv = csv.writer(self._fh, lineterminator="\n")
                self._csv.writerow(self.names)

    def write(self, rows: Sequence[tuple]) -> None:
        if not rows:
            return
        self.rows += len(rows)
        if self.fmt == "parquet":
            cols = list(zip(*rows))
            arrays = []
            for i, f in enumerate(self.schema):
                col = cols[i]
                if i in self._json_cols:
                    col = [None if v is None else json.dumps(v, ensure_ascii=False, sort_keys=True) for v in col]
                arrays.append(pa.array(col, type=f.type))
            self._pq.write_table(pa.Table.from_arrays(arrays, schema=self.schema), row_group_size=self.row_group_size)
        elif self.fmt == "csv":
            self._csv.writerows([["" if v is None else _plain(v, nested=False) for v in r] for r in rows])
        else:
            names = self.names
            dumps = json.dumps
            self._fh.write("".join(
                dumps({n: _plain(v, nested=True) for n, v in zip(names, r)}, ensure_ascii=False) + "\n" for r in rows))

    def write_text(self, text: str, rows: int) -> None:
        """Pre-serialised JSONL / CSV lines (``rows`` of them), e.g. from :func:`annotation_text`."""
        if self.fmt == "parquet":
            raise ValueError("write_text is for jsonl / csv")
        self._fh.write(text)
        self.rows += rows

    def close(self) -> dict[str, Any]:
        if self.fmt == "parquet":
            self._pq.close()
        else:
            self._fh.close()
        os.replace(self.tmp, self.path)
        return file_entry(self.path, self.path.name, self.rows)

    def abort(self) -> None:
        try:
            self._pq.close() if self.fmt == "parquet" else self._fh.close()
        finally:
            self.tmp.unlink(missing_ok=True)


def file_entry(path: Path, name: str, rows: int | None) -> dict[str, Any]:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return {"name": name, "size": path.stat().st_size, "rows": rows, "sha256": digest.hexdigest()}


def write_json_atomic(path: Path, obj: Any) -> dict[str, Any]:
    tmp = path.parent / f".tmp-{secrets.token_hex(6)}-{path.name}"
    tmp.write_text(json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=True, default=str), encoding="utf-8")
    os.replace(tmp, path)
    return file_entry(path, path.name, None)


def _json_field(name: str) -> pa.Field:
    """A column of nested values: JSON text in CSV / Parquet, native JSON in JSONL."""
    return pa.field(name, pa.string(), metadata={"json": "1"})


# ------------------------------------------------------------------------------ provenance
def provenance(export: Export) -> dict[str, Any]:
    project = export.project
    rv = project.rubric_version
    from .selectors import decision_counts
    from .services import current_policy

    return {
        "platform": PLATFORM_NAME,
        "platform_version": platform_version(),
        "export": {"id": export.id, "content": export.content, "format": export.format, "scope": export.scope,
                   "exported_at": timezone.now().isoformat(),
                   "exported_by": export.created_by.get_username() if export.created_by else None},
        "project": {"id": project.id, "name": project.name, "preset": project.preset_key},
        "protocol": project.preset.protocol,
        "rubric": {"key": rv.rubric_key, "version": rv.version, "schema_sha256": rv.schema_hash},
        "acceptance_policy": current_policy(project),
        "decisions": decision_counts(project),
        "pseudonyms": "rater = 'r_' + HMAC-SHA256(per-export random salt, rater id)[:12]; the salt is not kept, "
                      "so pseudonyms are consistent within this export only",
    }


# ------------------------------------------------------------------------------ items
def item_schema(project: Project, *, hf: bool) -> tuple[pa.Schema, list[str]]:
    preset = project.preset
    rubric = project.rubric_version.parsed()
    fields: list[pa.Field] = [pa.field("id", pa.string()), pa.field("version", pa.int64()),
                              pa.field("parent_version", pa.int64())]
    images: list[str] = []
    for spec in preset.item_fields:
        t = spec["type"]
        if t == "image":
            images.append(spec["name"])
            fields.append(pa.field(spec["name"], pa.struct([("bytes", pa.binary()), ("path", pa.string())]))
                          if hf else pa.field(spec["name"], pa.string()))
        elif t == "number":
            fields.append(pa.field(spec["name"], pa.float64()))
        elif t in ("list", "object"):
            fields.append(_json_field(spec["name"]))
        else:
            fields.append(pa.field(spec["name"], pa.string()))
    fields += [pa.field(c, pa.string()) for c in STRATA_COLUMNS]
    fields += [_json_field("meta"), pa.field("status", pa.string()), pa.field("status_reason", pa.string()),
               pa.field("n_human_ratings", pa.int64())]
    fields += [pa.field(f"mean_{n}", pa.float64()) for n in _mean_fields(rubric)]
    if _element_filter(project):
        fields.append(_json_field("_removed"))
    return pa.schema(fields), images


def _element_filter(project: Project) -> dict[str, Any]:
    """The current policy's element filter ({} when none)."""
    from .services import current_policy

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
    return kept, [{"element": n, "value": elements[n - 1], "reason": why}
                  for n, why in sorted(removed.items()) if 1 <= n <= len(elements)]


def _mean_fields(rubric: Rubric) -> list[str]:
    names = [q.id for q in rubric.questions if q.type in ("scale", "binary") and not q.repeat_over]
    return names + [d.id for d in rubric.derived]


def _human_means(project: Project, item_ids: list[int], names: list[str]) -> dict[int, tuple[int, list[float | None]]]:
    sums: dict[int, list[list[float]]] = defaultdict(lambda: [[] for _ in names])
    rows = (submitted_annotations(project).filter(item_id__in=item_ids, rater__kind=Rater.Kind.HUMAN)
            .values_list("item_id", "answers", "derived"))
    for item_id, answers, derived in rows:
        acc = sums[item_id]
        for k, n in enumerate(names):
            v = (answers or {}).get(n, (derived or {}).get(n))
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                acc[k].append(float(v))
    return {i: (max((len(x) for x in acc), default=0), [sum(x) / len(x) if x else None for x in acc])
            for i, acc in sums.items()}


def item_rows(export: Export, schema: pa.Schema, images: list[str], *, hf: bool,
              image_value: Callable[[str], Any]) -> Iterator[list[tuple]]:
    project = export.project
    rubric = project.rubric_version.parsed()
    means = _mean_fields(rubric)
    data_fields = [f["name"] for f in project.preset.item_fields]
    over = _element_filter(project).get("over") if "_removed" in schema.names else None
    qs = selectors.exported_items(project, export.scope)
    parents = {}
    batch = HF_ITEM_BATCH if hf else ITEM_BATCH
    for rows in selectors.item_chunks(qs, "external_id", "version", "parent_id", "data", *STRATA_COLUMNS, "meta",
                                      "decision__status", "decision__reason", "decision__details", chunk=batch):
        ids = [r[0] for r in rows]
        parent_ids = [r[3] for r in rows if r[3]]
        parents = dict(Item.objects.filter(id__in=parent_ids).values_list("id", "version")) if parent_ids else {}
        stats = _human_means(project, ids, means)
        out = []
        for r in rows:
            data = r[4] or {}
            n, mv = stats.get(r[0], (0, [None] * len(means)))
            values: list[Any] = [r[1], r[2], parents.get(r[3])]
            k = 5 + len(STRATA_COLUMNS)
            removed = None
            for name in data_fields:
                v = data.get(name)
                if name == over:
                    v, removed = _apply_element_filter(over, v, r[k + 3])
                values.append(image_value(v) if name in images and v else v)
            values += [v or "" for v in r[5:5 + len(STRATA_COLUMNS)]]
            values += [r[k] or {}, r[k + 1] or "pending", r[k + 2] or "", n, *mv]
            if over is not None:
                values.append(removed)
            out.append(tuple(values))
        yield out


def export_items(export: Export, root: Path, prov: dict[str, Any], progress: Callable[[float], None]) -> list[dict]:
    fmt = export.format
    hf = fmt == "hf"
    schema, images = item_schema(export.project, hf=hf)
    total = max(selectors.exported_items(export.project, export.scope).count(), 1)
    ext = {"jsonl": "jsonl", "csv": "csv", "parquet": "parquet"}
    if not hf:
        schema = schema.with_metadata({"hv_provenance": json.dumps(prov)})
        writer = TableWriter(root / f"items.{ext[fmt]}", fmt, schema, row_group_size=ITEM_BATCH)
        try:
            for rows in item_rows(export, schema, images, hf=False, image_value=lambda sha: sha):
                writer.write(rows)
                progress(writer.rows / total)
        except BaseException:
            writer.abort()
            raise
        return [writer.close()]
    return export_hf(export, root, prov, schema, images, total, progress)


# ------------------------------------------------------------------------------ Hugging Face folder
def _hf_features(schema: pa.Schema, images: list[str]) -> dict[str, Any]:
    feats: dict[str, Any] = {}
    for f in schema:
        if f.name in images:
            feats[f.name] = {"_type": "Image"}
        elif pa.types.is_int64(f.type):
            feats[f.name] = {"dtype": "int64", "_type": "Value"}
        elif pa.types.is_float64(f.type):
            feats[f.name] = {"dtype": "float64", "_type": "Value"}
        else:
            feats[f.name] = {"dtype": "string", "_type": "Value"}
    return feats


def export_hf(export: Export, root: Path, prov: dict[str, Any], schema: pa.Schema, images: list[str], total: int,
              progress: Callable[[float], None]) -> list[dict]:
    """``<root>/dataset/``: ``data/train-00000-of-00001.parquet`` (image columns as the datasets
    Image struct with the bytes embedded and a relative path), ``images/<sha>.<ext>``,
    ``README.md`` (dataset card) and ``provenance.json``; plus ``dataset.zip`` of that folder."""
    build = root / f".tmp-{secrets.token_hex(6)}-dataset"
    (build / "data").mkdir(parents=True)
    (build / "images").mkdir()
    feats = _hf_features(schema, images)
    schema = schema.with_metadata({"huggingface": json.dumps({"info": {"features": feats}}),
                                   "hv_provenance": json.dumps(prov)})
    assets = {}

    def image_value(sha: str) -> dict[str, Any]:
        a = assets.get(sha)
        if a is None:
            asset = Asset.objects.filter(sha256=sha).first()
            if asset is None:
                return {"bytes": None, "path": None}
            rel = f"images/{sha}.{asset.extension}"
            src = Path(settings.MEDIA_ROOT) / asset.relative_path()
            dst = build / rel
            if not dst.exists():
                shutil.copyfile(src, dst)
            a = assets[sha] = rel
        return {"bytes": (build / a).read_bytes(), "path": a}

    writer = TableWriter(build / "data" / "train-00000-of-00001.parquet", "parquet", schema,
                         row_group_size=HF_ITEM_BATCH)
    try:
        for rows in item_rows(export, schema, images, hf=True, image_value=image_value):
            writer.write(rows)
            progress(0.9 * writer.rows / total)
        data_entry = writer.close()
    except BaseException:
        writer.abort()
        shutil.rmtree(build, ignore_errors=True)
        raise
    data_entry["name"] = "data/" + data_entry["name"]
    readme = build / "README.md"
    readme.write_text(dataset_card(export, prov, feats, images, data_entry["rows"]), encoding="utf-8")
    prov_entry = write_json_atomic(build / "provenance.json", prov)
    image_files = list((build / "images").iterdir())
    images_entry = {"name": "dataset/images/", "size": sum(p.stat().st_size for p in image_files),
                    "rows": len(image_files), "sha256": None}
    final = root / "dataset"
    if final.exists():
        shutil.rmtree(final)
    os.replace(build, final)
    zip_tmp = root / f".tmp-{secrets.token_hex(6)}-dataset.zip"
    with zipfile.ZipFile(zip_tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(final.rglob("*")):
            if path.is_file():
                kind = zipfile.ZIP_STORED if path.parent.name == "images" else zipfile.ZIP_DEFLATED
                zf.write(path, f"dataset/{path.relative_to(final)}", compress_type=kind)
    os.replace(zip_tmp, root / "dataset.zip")
    progress(1.0)
    return [
        file_entry(root / "dataset.zip", "dataset.zip", data_entry["rows"]),
        {**data_entry, "name": "dataset/" + data_entry["name"]},
        {**file_entry(final / "README.md", "dataset/README.md", None)},
        {**prov_entry, "name": "dataset/provenance.json"},
        images_entry,
    ]


def agreement_lines(project: Project, max_annotations: int = 200_000) -> list[str]:
    """Headline agreement figures (no bootstrap) from the agreement app, for the dataset card."""
    from agreement import selectors as agreement_selectors
    from agreement import services as agreement_services

    if agreement_selectors.annotation_count(project) > max_annotations:
        return ["(project too large for the card: see the platform's agreement report)"]
    try:
        result = agreement_services.compute_report(project=project, params=agreement_services.ReportParams(bootstrap=0))
    except Exception as exc:  # noqa: BLE001 - the card must not fail the export
        return [f"(agreement report unavailable: {type(exc).__name__})"]
    keep = {"krippendorff_alpha", "fleiss_kappa", "percent_agreement", "pearson", "spearman", "cohen_kappa"}
    lines = ["| field | comparison | metric | value | items |", "|---|---|---|---|---|"]
    for row in agreement_services.report_rows(result):
        if row["stratum_column"] or row["metric"] not in keep or row["subject"] or row["value"] is None:
            continue
        if not (row["section"].startswith("humans_vs_humans") or row["section"].startswith("judges_vs_humans")):
            continue
        if row["section"].count("/") > 2:
            continue
        value = f"{row['value']:.3f}" if isinstance(row["value"], float) else str(row["value"])
        lines.append(f"| {row['field']} | {row['section']} | {row['metric']} | {value} | {row['n_items'] or ''} |")
    return lines if len(lines) > 2 else ["(no agreement figures: not enough overlapping ratings)"]


def dataset_card(export: Export, prov: dict[str, Any], feats: dict[str, Any], images: list[str], rows: int) -> str:
    project = export.project
    rubric = project.rubric_version.parsed()
    policy = prov["acceptance_policy"]
    features_yaml = "\n".join(
        f"  - name: {name}\n    dtype: {'image' if f.get('_type') == 'Image' else f['dtype']}" for name, f in feats.items())
    counts = prov["decisions"]
    policy_lines = (["(no acceptance policy set: items are pending)"] if not policy else [
        f"- rule per rater: `{policy['rule']}`", f"- aggregation across raters: {policy['aggregation']}"
        + (f" (ties: {policy['tie']})" if policy["aggregation"] == "majority" else ""),
        f"- judge screening before human review: {'yes' if policy['judge_screening'] else 'no'}",
        f"- minimum complete human ratings: {policy['min_human_ratings']}",
        f"- needs revision when rejected and any rating satisfies: `{policy['revise_if'] or '(never)'}`"])
    ef = (policy or {}).get("element_filter") or {}
    if ef:
        policy_lines.append(
            f"- elements of `{ef['over']}` kept only when `{ef['keep_if']}` holds for the human raters "
            f"({ef['aggregation']}; ties and elements without a complete rating: {ef['tie']}); the dropped ones "
            "are listed, with the reason, in the `_removed` column")
    questions = "\n".join(f"- `{q.id}` ({q.type}): {q.label}" for q in rubric.questions)
    derived = "\n".join(f"- `{d.id}` = `{d.expr.source}`: {d.label}" for d in rubric.derived) or "- (none)"
    return f"""---
pretty_name: {json.dumps(project.name)}
configs:
- config_name: default
  data_files:
  - split: train
    path: data/train-*.parquet
dataset_info:
  features:
{features_yaml}
  splits:
  - name: train
    num_examples: {rows}
---

# {project.name}

Exported from the human-validation platform ({PLATFORM_NAME} {prov['platform_version']}) on
{prov['export']['exported_at']}: {'accepted items only' if export.scope == 'accepted' else 'all items'},
{rows} rows. Image columns ({', '.join(images) or 'none'}) hold the images (also under `images/`).

```python
from datasets import load_dataset
ds = load_dataset("path/to/this/folder", split="train")
# or without datasets: pandas.read_parquet("data/train-00000-of-00001.parquet")
```

## Protocol

Preset `{project.preset_key}`. {prov['protocol']}

## Rubric

`{prov['rubric']['key']}` version {prov['rubric']['version']} (schema sha256 `{prov['rubric']['schema_sha256']}`).
{rubric.acceptance_description}

Questions:
{questions}

Derived fields:
{derived}

The `mean_*` columns are means over the item's submitted human ratings; `n_human_ratings` counts them.

## Acceptance policy

{chr(10).join(policy_lines)}

Decisions in the project at export time: {counts['accepted']} accepted, {counts['rejected']} rejected,
{counts['needs_revision']} need revision, {counts['pending']} pending (of {counts['total']} item versions).

## Agreement

Computed by the platform on all submitted ratings of the project (no bootstrap intervals here):

{chr(10).join(agreement_lines(project))}

## Provenance

See `provenance.json` (platform version, rubric version, policy, export time). Annotator
identities are pseudonymised (HMAC with a per-export salt that is not kept).
"""


# ------------------------------------------------------------------------------ annotations (long)
ANNOTATION_SCHEMA = pa.schema([
    pa.field("item", pa.string()), pa.field("item_version", pa.int64()), pa.field("rater", pa.string()),
    pa.field("rater_kind", pa.string()), pa.field("field", pa.string()), pa.field("value", pa.string()),
    pa.field("value_num", pa.float64()), pa.field("rubric_key", pa.string()), pa.field("rubric_version", pa.int64()),
    pa.field("created_at", pa.timestamp("us", tz="UTC")), pa.field("updated_at", pa.timestamp("us", tz="UTC")),
    pa.field("annotation_revision", pa.int64()), pa.field("judge_backend", pa.string()),
    pa.field("judge_model", pa.string()), pa.field("judge_prompt_hash", pa.string()),
    _json_field("judge_parameters"),
])


def _flatten(rubric: Rubric, answers: dict, derived: dict, presentation: dict | None) -> Iterator[tuple[str, Any]]:
    """(field, value) of one annotation: every answer (pairwise resolved to the item field picked;
    repeated questions one field per element ``q[n]``; checklists as a JSON list), then derived
    fields and ``accepted``. Missing answers are left out."""
    for q in rubric.questions:
        v = answers.get(q.id)
        if q.type == "pairwise":
            v = resolve_pair_choice(q, v, presentation)
        if q.repeat_over and isinstance(v, list):
            for n, ev in enumerate(v, start=1):
                if ev is not None:
                    yield f"{q.id}[{n}]", ev
        elif v is not None:
            yield q.id, v
    for d in rubric.derived:
        v = derived.get(d.id)
        if v is not None:
            yield d.id, v
    if "accepted" in derived and derived["accepted"] is not None:
        yield "accepted", derived["accepted"]


def _value(v: Any) -> tuple[str, float | None]:
    if isinstance(v, bool):
        return ("true" if v else "false"), float(v)
    if isinstance(v, (int, float)):
        return (str(v), float(v))
    if isinstance(v, str):
        return v, None
    return json.dumps(v, ensure_ascii=False, sort_keys=True), None


def _annotation_source(export: Export, pseudonyms: Pseudonyms) -> Iterator[tuple]:
    """Per submitted annotation of the export (id order, streamed): (item, item version, rater
    tuple (pseudonym, kind, backend, model, prompt hash, parameters), rubric (parsed, key,
    version), rubric version id, rater id, answers, derived, presentation, created, updated, revision)."""
    project = export.project
    raters = {}
    for rid, kind, backend, model_id, prompt_hash, params in (
            Rater.objects.filter(annotations__item__project=project).distinct()
            .values_list("id", "kind", "backend", "model_id", "prompt_hash", "parameters")):
        model = kind == Rater.Kind.MODEL
        raters[rid] = (pseudonyms(rid), kind, backend if model else None, model_id if model else None,
                       prompt_hash if model else None, params if model else None)
    rubrics: dict[int, tuple[Rubric, str, int]] = {}
    qs = submitted_annotations(project)
    if export.scope == "accepted":
        qs = qs.filter(item__decision__status="accepted")
    rows = qs.order_by("id").values_list(
        "item__external_id", "item__version", "rater_id", "rubric_version_id", "answers", "derived",
        "assignment__presentation", "created_at", "updated_at", "revision").iterator(chunk_size=ANNOTATION_CHUNK)
    for ext, version, rater_id, rv_id, answers, derived, presentation, created, updated, revision in rows:
        rb = rubrics.get(rv_id)
        if rb is None:
            rv = RubricVersion.objects.get(pk=rv_id)
            rb = rubrics[rv_id] = (rv.parsed(), rv.rubric_key, rv.version)
        yield (ext, version, raters[rater_id], rb, rv_id, rater_id, answers, derived, presentation, created, updated,
               revision)


def annotation_rows(export: Export, pseudonyms: Pseudonyms) -> Iterator[list[tuple]]:
    """Long rows (tuples in ``ANNOTATION_SCHEMA`` order), ``ANNOTATION_BATCH`` at a time (Parquet)."""
    batch: list[tuple] = []
    for (ext, version, rater, rb, _rv_id, _rater_id, answers, derived, presentation, created, updated,
         revision) in _annotation_source(export, pseudonyms):
        rubric, rkey, rver = rb
        pseud, kind, backend, model_id, prompt_hash, params = rater
        for fname, v in _flatten(rubric, answers or {}, derived or {}, presentation):
            text, num = _value(v)
            batch.append((ext, version, pseud, kind, fname, text, num, rkey, rver, created, updated, revision,
                          backend, model_id, prompt_hash, params))
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
            return cells(["" if v is None else _plain(v, nested=False) for v in vs])
    rater_pieces: dict[int, tuple[str, str]] = {}
    rubric_pieces: dict[int, str] = {}
    field_pieces: dict[str, str] = {}
    value_pieces: dict[tuple[type, Any], str] = {}
    parts: list[str] = []
    for (ext, version, rater, rb, rv_id, rater_id, answers, derived, presentation, created, updated,
         revision) in _annotation_source(export, pseudonyms):
        rubric, rkey, rver = rb
        rp = rater_pieces.get(rater_id)
        if rp is None:  # (pseudonym + kind, judge columns + line end)
            pseud, kind, backend, model_id, prompt_hash, params = rater
            if fmt == "jsonl":
                rp = (key[2] + enc(pseud) + key[3] + enc(kind) + key[4],
                      key[12] + enc(backend) + key[13] + enc(model_id) + key[14] + enc(prompt_hash)
                      + key[15] + enc(params) + end)
            else:
                rp = ("," + enc_cells([pseud, kind]) + ",",
                      "," + enc_cells([backend, model_id, prompt_hash, params]) + "\n")
            rater_pieces[rater_id] = rp
        rk = rubric_pieces.get(rv_id)
        if rk is None:
            rk = rubric_pieces[rv_id] = (key[7] + enc(rkey) + key[8] + enc(rver) if fmt == "jsonl"
                                         else "," + enc_cells([rkey, rver]))
        if fmt == "jsonl":
            head = key[0] + enc(ext) + key[1] + enc(version) + rp[0]
            tail = (rk + key[9] + enc(created) + key[10] + enc(updated) + key[11] + enc(revision) + rp[1])
        else:
            head = enc_cells([ext, version]) + rp[0]
            tail = rk + "," + enc_cells([created, updated, revision]) + rp[1]
        for fname, v in _flatten(rubric, answers or {}, derived or {}, presentation):
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
            parts.append(head + fp + vp + tail)
        if len(parts) >= ANNOTATION_BATCH:
            yield "".join(parts), len(parts)
            parts = []
    if parts:
        yield "".join(parts), len(parts)


def export_annotations(export: Export, root: Path, prov: dict[str, Any], progress: Callable[[float], None]) -> list[dict]:
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


# ------------------------------------------------------------------------------ revisions
def export_revisions(export: Export, root: Path, prov: dict[str, Any], progress: Callable[[float], None]) -> list[dict]:
    """One JSONL record per item needing revision, in the import format (image fields as
    ``sha256:<hex>`` of the stored image) plus ``_revision``: the decision and every rater's
    answers and free-text feedback. Edit the item fields, keep ``id``, and re-import."""
    project = export.project
    rubric = project.rubric_version.parsed()
    text_ids = [q.id for q in rubric.questions if q.type == "text"]
    images = set(project.preset.image_fields())
    pseudonyms = Pseudonyms()
    qs = selectors.needs_revision_items(project)
    total = max(qs.count(), 1)
    out = root / "revisions.jsonl"
    tmp = root / f".tmp-{secrets.token_hex(6)}-revisions.jsonl"
    n = 0
    with open(tmp, "w", encoding="utf-8") as fh:
        for rows in selectors.item_chunks(qs, "external_id", "version", "data", *STRATA_COLUMNS, "meta",
                                          "decision__reason", "decision__note"):
            feedback = defaultdict(list)
            for item_id, rater_id, kind, answers, derived in (
                    submitted_annotations(project).filter(item_id__in=[r[0] for r in rows]).order_by("id")
                    .values_list("item_id", "rater_id", "rater__kind", "answers", "derived")):
                feedback[item_id].append({
                    "rater": pseudonyms(rater_id), "rater_kind": kind, "answers": answers, "derived": derived,
                    "feedback": {t: answers.get(t) for t in text_ids if (answers or {}).get(t)}})
            for r in rows:
                record: dict[str, Any] = {"id": r[1]}
                for k, v in (r[3] or {}).items():
                    record[k] = f"sha256:{v}" if k in images and v else v
                for c, v in zip(STRATA_COLUMNS, r[4:4 + len(STRATA_COLUMNS)]):
                    if v:
                        record[c] = v
                k = 4 + len(STRATA_COLUMNS)
                if r[k]:
                    record["meta"] = r[k]
                record["_revision"] = {"of_version": r[2], "reason": r[k + 1], "note": r[k + 2],
                                       "ratings": feedback.get(r[0], [])}
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
                n += 1
            progress(n / total)
    os.replace(tmp, out)
    return [file_entry(out, out.name, n)]


# ------------------------------------------------------------------------------ the job
def run_export_job(*, export: Export) -> Export:
    """Write the export's files under MEDIA_ROOT/exports/<project>/<id>/, recording progress,
    the file list (name, size, rows, sha256) and the provenance on the row."""
    Export.objects.filter(pk=export.pk).update(status=Export.Status.RUNNING, progress=0.0)
    root = export_root(export)
    root.mkdir(parents=True, exist_ok=True)
    last = [0.0]

    def progress(p: float) -> None:
        p = round(min(max(p, 0.0), 1.0), 3)
        if p - last[0] >= 0.01:
            last[0] = p
            Export.objects.filter(pk=export.pk).update(progress=p)

    try:
        prov = provenance(export)
        run = {"items": export_items, "annotations": export_annotations, "revisions": export_revisions}[export.content]
        files = run(export, root, prov, progress)
        files.append({**write_json_atomic(root / "provenance.json", prov)})
        export.files, export.provenance = files, prov
        export.status, export.progress, export.message = Export.Status.DONE, 1.0, ""
    except Exception as exc:
        logger.exception("export %s failed", export.pk)
        export.status, export.message = Export.Status.FAILED, f"{type(exc).__name__}: {exc}"
    export.finished_at = timezone.now()
    export.save(update_fields=["status", "progress", "message", "files", "provenance", "finished_at"])
    return export


def file_path(export: Export, name: str) -> Path | None:
    """The path of one listed file of a finished export (None for anything not listed)."""
    listed = {f["name"] for f in export.files if f.get("sha256")}
    if name not in listed:
        return None
    path = (export_root(export) / name).resolve()
    return path if path.is_relative_to(export_root(export).resolve()) and path.is_file() else None


def main_file(export: Export) -> str | None:
    files: Iterable[dict] = export.files or []
    return next((f["name"] for f in files if f["name"] != "provenance.json" and f.get("sha256")), None)
