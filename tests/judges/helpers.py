"""Projects with demo items for the judge tests (the presets' own demo data)."""

from __future__ import annotations

import json
from pathlib import Path

from annotation import importing
from annotation.models import Project
from benchmarks.registry import get_preset
from tests.annotation.factories import make_project


def project_with_demo(preset_key: str, owner, tmp_path: Path, *, annotators=(), n: int | None = None) -> Project:
    project = make_project(preset_key, owner=owner, annotators=annotators)
    folder = tmp_path / f"demo-{preset_key}"
    folder.mkdir(parents=True, exist_ok=True)
    records = get_preset(preset_key).demo_items(folder)
    if n is not None:
        records = [dict(r) for r in (records * (n // len(records) + 1))[:n]]
        for i, r in enumerate(records):
            r["id"] = f"{r['id']}-{i}"
    data = "\n".join(json.dumps(r) for r in records) + "\n"
    report = importing.import_items(
        project=project,
        data=data,
        data_format="jsonl",
        images=folder if get_preset(preset_key).image_fields() else None,
    )
    assert report.ok, report.errors
    return project
