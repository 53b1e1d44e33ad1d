"""Example import files per preset, made from the preset's own demo items (``Preset.demo_items``,
images drawn by ``benchmarks/demo_images.py``), so an example is always in the format the importer
accepts for that preset: the same records the demo command imports.

- every preset: ``<preset>.example.jsonl``, one item per line;
- a preset with image fields also: ``<preset>.example.zip``, holding the images at the paths the
  records name and ``items.jsonl`` at its root. Upload ``items.jsonl`` as the data file and the
  zip itself as the images (the importer reads only the paths the records name)."""

from __future__ import annotations

import io
import json
import tempfile
import zipfile
from functools import cache
from pathlib import Path

from benchmarks.base import Preset
from benchmarks.registry import PRESETS
from core.errors import DomainError

#: the name of the JSONL inside an example zip
ZIP_DATA_NAME = "items.jsonl"
# A fixed timestamp: the same preset gives the same zip bytes (cache- and diff-friendly).
_ZIP_TIME = (2024, 1, 1, 0, 0, 0)


def example_preset(key: str) -> Preset:
    preset = PRESETS.get(key)
    if preset is None:
        raise DomainError(f"unknown preset {key!r}", code="not_found")
    return preset


def has_images(preset: Preset) -> bool:
    return bool(preset.image_fields())


def file_names(preset: Preset) -> dict[str, str]:
    """The download names: ``jsonl`` always, ``zip`` for presets with images."""
    names = {"jsonl": f"{preset.key}.example.jsonl"}
    if has_images(preset):
        names["zip"] = f"{preset.key}.example.zip"
    return names


def _jsonl(records: list[dict]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


@cache
def _build(key: str) -> tuple[bytes, bytes | None]:
    """(JSONL, zip or None) for a preset; the demo builders are deterministic, so one build per
    process serves every download."""
    preset = example_preset(key)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        records = preset.demo_items(folder)
        data = _jsonl(records)
        if not has_images(preset):
            return data, None
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr(zipfile.ZipInfo(ZIP_DATA_NAME, _ZIP_TIME), data)
            for path in sorted(p for p in folder.rglob("*") if p.is_file()):
                info = zipfile.ZipInfo(path.relative_to(folder).as_posix(), _ZIP_TIME)
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, path.read_bytes())
        return data, buffer.getvalue()


def example_jsonl(key: str) -> bytes:
    """The preset's demo items as JSONL (image fields name paths inside the example zip)."""
    return _build(key)[0]


def example_zip(key: str) -> bytes:
    """The preset's images and ``items.jsonl`` as one zip; a preset without images has none."""
    archive = _build(key)[1]
    if archive is None:
        raise DomainError(f"the preset {key!r} has no image fields: its example is the JSONL alone", code="not_found")
    return archive
