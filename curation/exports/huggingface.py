"""The Hugging Face ``datasets`` folder of the items (the ``hf`` format, :class:`DatasetFolder`):
``dataset/`` with the Parquet data (images embedded), the images, a dataset card (``README.md``)
and the provenance, plus ``dataset.zip``."""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import shutil
import unicodedata
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
from django.conf import settings

from agreement import selectors as agreement_selectors
from annotation.models import Asset, Project
from annotation.sources import registry

from ..export_formats import ExportFormat
from ..models import Export
from ..policy import LATENT_AGGREGATIONS
from .common import PLATFORM_NAME, file_entry, write_json_atomic
from .tables import ParquetTable, Table

logger = logging.getLogger(__name__)

#: longest file name component written for an image (bytes of UTF-8; common file systems allow 255)
MAX_COMPONENT_BYTES = 150
_UNSAFE = re.compile(r'[\x00-\x1f\x7f<>:"|?*\\]')


class ImagePlaces:
    """Where each image goes under ``images/``: the name it was imported under, made safe.

    - Each path component is cleaned: control and reserved characters (``<>:"|?*\\``) become
      ``_``, ``.`` / ``..`` / empty components are dropped, a leading dot becomes ``_`` (no
      hidden files), and it is cut to ``MAX_COMPONENT_BYTES``. So no path leaves ``images/``.
    - The same image under the same name is written once. A name already taken by another image
      (compared case-insensitively, after Unicode NFC, as case-insensitive file systems and zip
      tools would) gets ``-<first 12 hex of its sha256>`` before the extension, then a counter.
      A file and a folder never share a path.
    - An image with no recorded name (imported before names were kept) is ``<sha256>.<ext>``;
      a name without an extension gets the image's."""

    def __init__(self) -> None:
        self._by_key: dict[tuple[str, str], str] = {}  # (sha, wanted path) -> placed path
        self._files: set[str] = set()  # placed file paths, folded
        self._dirs: set[str] = set()  # folders in use, folded

    @staticmethod
    def _fold(path: str) -> str:
        return unicodedata.normalize("NFC", path).casefold()

    @staticmethod
    def _component(part: str) -> str:
        part = _UNSAFE.sub("_", unicodedata.normalize("NFC", part)).strip()
        if part.startswith("."):
            part = "_" + part[1:]
        if len(part.encode("utf-8")) > MAX_COMPONENT_BYTES:
            stem, dot, ext = part.rpartition(".")
            keep = f"{dot}{ext}" if dot and len(ext) <= 10 else ""
            stem = stem if keep else part
            while len((stem + keep).encode("utf-8")) > MAX_COMPONENT_BYTES:
                stem = stem[:-1]
            part = stem + keep
        return part

    def _clean(self, sha: str, extension: str, name: str | None) -> str:
        parts = [p for p in (name or "").replace("\\", "/").split("/") if p.strip() not in ("", ".", "..")]
        parts = [c for c in (self._component(p) for p in parts) if c.strip("_")]
        if not parts:
            return f"{sha}.{extension}"
        stem, dot, ext = parts[-1].rpartition(".")
        if not (dot and ext and stem.strip("_")):  # no extension to open it by: the image's own
            parts[-1] = f"{parts[-1].rstrip('.')}.{extension}"
        return "/".join(parts)

    def _parent_is_file(self, folded: str) -> bool:
        parents = folded.split("/")[:-1]
        return any("/".join(parents[: i + 1]) in self._files for i in range(len(parents)))

    def _free(self, path: str) -> bool:
        folded = self._fold(path)
        return folded not in self._files and folded not in self._dirs and not self._parent_is_file(folded)

    def place(self, sha: str, extension: str, name: str | None) -> tuple[str, bool]:
        """(``images/<path>``, whether this call placed it: the file is still to be written)."""
        wanted = self._clean(sha, extension, name)
        placed = self._by_key.get((sha, wanted))
        if placed is not None:
            return placed, False
        # a folder of the name is already a file: no suffix on the file name can fix that, so
        # the image goes to the top of images/ under its own file name
        path = wanted.rsplit("/", 1)[-1] if self._parent_is_file(self._fold(wanted)) else wanted
        stem, dot, ext = path.rpartition(".")  # _clean leaves an extension on the last component
        n = 1
        while not self._free(path):
            suffix = f"-{sha[:12]}" + (f"-{n}" if n > 1 else "")
            path = f"{stem}{suffix}{dot}{ext}"
            n += 1
        folded = self._fold(path)
        self._files.add(folded)
        parents = folded.split("/")[:-1]
        self._dirs.update("/".join(parents[: i + 1]) for i in range(len(parents)))
        placed = self._by_key[(sha, wanted)] = f"images/{path}"
        return placed, True


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


class DatasetFolder(Table):
    """The items as a Hugging Face ``datasets`` folder (the ``hf`` format's table):
    ``<root>/dataset/`` with ``data/train-00000-of-00001.parquet`` (image columns as the datasets
    Image struct with the bytes embedded and a relative path), ``images/<original name>``
    (:class:`ImagePlaces`), ``README.md`` (dataset card) and ``provenance.json``; plus
    ``dataset.zip`` of that folder. Built in a temporary folder, put in place on :meth:`close`."""

    embeds_images = True

    @classmethod
    def open(
        cls,
        fmt: ExportFormat,
        export: Export,
        root: Path,
        stem: str,
        schema: pa.Schema,
        *,
        provenance: dict[str, Any],
        row_group_size: int,
    ) -> DatasetFolder:
        # always dataset.zip beside dataset/, whatever the table is called: the folder's layout
        # is the datasets library's, not the export's
        return cls(export, root / "dataset.zip", schema, provenance=provenance, row_group_size=row_group_size)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # self.tmp: the zip until it is complete
        self.root = self.path.parent
        self.build = self.root / f".tmp-{secrets.token_hex(6)}-dataset"
        (self.build / "data").mkdir(parents=True)
        (self.build / "images").mkdir()
        self.images = [f.name for f in self.schema if pa.types.is_struct(f.type)]
        self.features = _hf_features(self.schema, self.images)
        schema = self.schema.with_metadata({"huggingface": json.dumps({"info": {"features": self.features}})})
        self.data = ParquetTable(
            self.export,
            self.build / "data" / "train-00000-of-00001.parquet",
            schema,
            provenance=self.provenance,
            row_group_size=self.row_group_size,
        )
        self.assets: dict[str, Asset | None] = {}
        self.places = ImagePlaces()

    def image_value(self, sha256: str, name: str | None) -> dict[str, Any]:
        if sha256 not in self.assets:
            self.assets[sha256] = Asset.objects.filter(sha256=sha256).first()
        asset = self.assets[sha256]
        if asset is None:
            return {"bytes": None, "path": None}
        rel, new = self.places.place(sha256, asset.extension, name)
        dst = self.build / rel
        if new:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(Path(settings.MEDIA_ROOT) / asset.relative_path(), dst)
        return {"bytes": dst.read_bytes(), "path": rel}

    def write(self, rows: Sequence[tuple]) -> None:
        self.data.write(rows)
        self.rows = self.data.rows

    def close(self) -> list[dict[str, Any]]:
        try:
            return self.put_in_place()
        except BaseException:
            self.discard()
            raise

    def put_in_place(self) -> list[dict[str, Any]]:
        (data_entry,) = self.data.close()
        data_entry["name"] = "data/" + data_entry["name"]
        build, root, prov = self.build, self.root, self.provenance
        readme = build / "README.md"
        readme.write_text(
            dataset_card(self.export, prov, self.features, self.images, data_entry["rows"]), encoding="utf-8"
        )
        prov_entry = write_json_atomic(build / "provenance.json", prov)
        image_files = [p for p in (build / "images").rglob("*") if p.is_file()]
        images_entry = {
            "name": "dataset/images/",
            "size": sum(p.stat().st_size for p in image_files),
            "rows": len(image_files),
            "sha256": None,
        }
        final = root / "dataset"
        if final.exists():
            shutil.rmtree(final)
        os.replace(build, final)
        with zipfile.ZipFile(self.tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for path in sorted(final.rglob("*")):
                if path.is_file():
                    kind = zipfile.ZIP_STORED if "images" in path.relative_to(final).parts[:1] else zipfile.ZIP_DEFLATED
                    zf.write(path, f"dataset/{path.relative_to(final)}", compress_type=kind)
        os.replace(self.tmp, self.path)
        return [
            file_entry(self.path, self.path.name, data_entry["rows"]),
            {**data_entry, "name": "dataset/" + data_entry["name"]},
            {**file_entry(final / "README.md", "dataset/README.md", None)},
            {**prov_entry, "name": "dataset/provenance.json"},
            images_entry,
        ]

    def discard(self) -> None:
        shutil.rmtree(self.build, ignore_errors=True)
        self.tmp.unlink(missing_ok=True)

    def abort(self) -> None:
        try:
            self.data.abort()
        finally:
            self.discard()


def agreement_lines(project: Project, max_annotations: int = 200_000) -> list[str]:
    """Headline agreement figures (no bootstrap) from the agreement app, for the dataset card."""
    # imported here: the statistics (scipy) cost ~55 MiB, and only the dataset card needs them
    from agreement import services as agreement_services

    if agreement_selectors.annotation_count(project) > max_annotations:
        return ["(project too large for the card: see the platform's agreement report)"]
    try:
        result = agreement_services.compute_report(project=project, params=agreement_services.ReportParams(bootstrap=0))
    except Exception:  # the card must not fail the export; the card is published: no type name (issue 37)
        logger.exception("the dataset card's agreement figures failed")
        return ["(agreement report unavailable: see the platform's agreement report)"]
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


def validation_section(project: Project, max_annotations: int = 200_000) -> str:
    """The protocol's validation tables (the paper's tables, e.g. ValueGround Table 4) as Markdown,
    with the agreement page's default bootstrap (1000 resamples, seed 0): the same numbers as the
    page and ``GET /api/projects/<id>/validation-report/?format=markdown``."""
    from agreement import validation
    from agreement.services import ReportParams
    from hvstats.tables import to_markdown

    if not validation.has_tables(project):
        return "(this protocol declares no validation tables)"
    if agreement_selectors.annotation_count(project) > max_annotations:
        return "(project too large for the card: see the platform's agreement report)"
    defaults = ReportParams()
    try:
        tables = validation.compute_tables(project, bootstrap=defaults.bootstrap, seed=defaults.seed)
    except Exception:  # the card must not fail the export; the card is published: no type name (issue 37)
        logger.exception("the dataset card's validation tables failed")
        return "(validation tables unavailable: see the platform's validation report)"
    if not tables:
        return "(no validation tables yet: no submitted ratings)"
    text = to_markdown(tables).replace("\n### ", "\n#### ")
    return "#" + text if text.startswith("### ") else text


def imported_lines(prov: dict[str, Any]) -> str:
    """The card's paragraph on ratings imported from other tools (empty when none were)."""
    imports = [i for i in prov.get("annotation_imports") or [] if i.get("annotations")]
    if not imports:
        return ""
    lines = [
        "## Imported ratings",
        "",
        "Some human ratings were collected in another tool and imported (rows with `source` = "
        "`imported:<id>` in the annotations table; each source annotator is a pseudonymous rater):",
        "",
        "| import | file | from | sha256 | item key | mapping | annotations | raters |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for i in imports:
        mapping = ", ".join(f"{k} -> {v or '(left out)'}" for k, v in (i.get("mapping") or {}).items() if k != v)
        reader = registry.READERS.get(i["format"])
        tool = f"{reader.label} (`{i['format']}`)" if reader else f"`{i['format']}`"
        lines.append(
            f"| `{i['source']}` | {i['file']} | {tool} | `{i['sha256']}` | `{i['item_key']}` | "
            f"{mapping or 'by name'} | {i['annotations']} | {i.get('raters', '')} |"
        )
    return "\n".join(lines) + "\n\n"


def ratings_per_item_line(project: Project) -> str:
    """The card's statement of k: the project's planned k and how many people actually rated each
    item (``agreement.selectors.actual_k``), which for imported ratings is not the preset's default."""
    got = agreement_selectors.actual_k(project)
    if not got["items"]:
        return f"Human ratings per item: planned k = {project.k_per_item}; no item has a human rating yet."
    spread = f"{got['min']}–{got['max']}" if got["min"] != got["max"] else f"{got['min']} on every item"
    return (
        f"Human ratings per item: planned k = {project.k_per_item}; actual k = {got['median']} "
        f"(median; {spread}) over {got['items']} rated items."
    )


def dataset_card(export: Export, prov: dict[str, Any], feats: dict[str, Any], images: list[str], rows: int) -> str:
    project = export.project
    rubric = project.rubric_version.parsed()
    policy = prov["acceptance_policy"]
    features_yaml = "\n".join(
        f"  - name: {name}\n    dtype: {'image' if f.get('_type') == 'Image' else f['dtype']}"
        for name, f in feats.items()
    )
    counts = prov["decisions"]
    policy_lines = (
        ["(no acceptance policy set: items are pending)"]
        if not policy
        else [
            f"- rule per rater: `{policy['rule']}`",
            f"- aggregation across raters: {policy['aggregation']}"
            + (f" (ties: {policy['tie']})" if policy["aggregation"] == "majority" else "")
            + (
                " (the rule on each item's posterior label, humans and model judges together as raters)"
                if policy["aggregation"] in LATENT_AGGREGATIONS
                else ""
            ),
            f"- judge screening before human review: {'yes' if policy['judge_screening'] else 'no'}",
            f"- minimum complete human ratings: {policy['min_human_ratings']}",
            f"- needs revision when rejected and any rating satisfies: `{policy['revise_if'] or '(never)'}`",
        ]
    )
    ef = (policy or {}).get("element_filter") or {}
    if ef:
        policy_lines.append(
            f"- elements of `{ef['over']}` kept only when `{ef['keep_if']}` holds for the human raters "
            f"({ef['aggregation']}; ties and elements without a complete rating: {ef['tie']}); the dropped ones "
            "are listed, with the reason, in the `_removed` column"
        )
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
{chr(10) + "> **" + prov["demo"] + ".**" + chr(10) if prov.get("demo") else ""}
Exported from the human-validation platform ({PLATFORM_NAME} {prov["platform_version"]}) on
{prov["export"]["exported_at"]}: {"accepted items only" if export.scope == "accepted" else "all items"},
{rows} rows. Image columns ({", ".join(images) or "none"}) hold the images (also under `images/`, by the
file names they were imported under; `<column>__filename` gives each one's original name). `meta` holds
each item's metadata as JSON and `meta.<key>` one column per key (as text); `sample_ids` the study
design samples the item was drawn into.

```python
from datasets import load_dataset
ds = load_dataset("path/to/this/folder", split="train")
# or without datasets: pandas.read_parquet("data/train-00000-of-00001.parquet")
```

## Protocol

Preset `{project.preset_key}`. {prov["protocol"]}

## Rubric

`{prov["rubric"]["key"]}` version {prov["rubric"]["version"]} (schema sha256 `{prov["rubric"]["schema_sha256"]}`).
{rubric.acceptance_description}

Questions:
{questions}

Derived fields:
{derived}

The `mean_*` columns are means over the item's submitted human ratings; `n_human_ratings` counts them.
The `<question>__latent_label` and `<question>__latent_entropy` columns hold, per categorical question,
the item's Dawid-Skene posterior label and the entropy of its posterior (nats), from the model fitted
over all items with humans and model judges together as raters (empty when no item has two raters).

## Acceptance policy

{chr(10).join(policy_lines)}

Decisions in the project at export time: {counts["accepted"]} accepted, {counts["rejected"]} rejected,
{counts["needs_revision"]} need revision, {counts["pending"]} pending (of {counts["total"]} item versions).

{ratings_per_item_line(project)}

{imported_lines(prov)}## Agreement

Computed by the platform on all submitted ratings of the project (no bootstrap intervals here):

{chr(10).join(agreement_lines(project))}

## Validation tables

The protocol's tables computed from the submitted ratings (95% bootstrap intervals over items,
1000 resamples, seed 0):

{validation_section(project)}

## Provenance

See `provenance.json`: platform version, rubric version, policy and export time, and the study
behind the ratings: the design samples (seed, strata, size), the assignment plans (k, eligibility,
balance quotas), the model judges (backend, model, prompt template, parser, parameters with secrets
hidden, questions, passes, runs), the imports of ratings made in other tools (file SHA-256, format,
item key, mapping) and the annotators as a group (count, attribute values). Annotator
identities are pseudonymised (HMAC with a per-export salt that is not kept).
"""
