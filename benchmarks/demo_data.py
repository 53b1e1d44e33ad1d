"""The presets' demo as data files, read when the demo is seeded, never at import.

Each protocol package keeps its demo in ``benchmarks/<paper>/demo/``:

- ``<name>.items.jsonl``: the demo items, one import record a line, in the import format;
- ``<name>.images.json`` (only where the items have images): the drawings the items' image
  fields name, each ``{"name", "caption", "subtitle"?, "shape"?, "mirror"?}``, the arguments of
  :func:`benchmarks.demo_images.draw_image`, so a demo image is re-drawn, byte for byte, into
  the folder the demo command gives;
- ``<name>.answers.json`` (optional): demo item id -> the two demo annotators' answers;
- ``<name>.study.json``: the simulated study seeded beside the demo project (docs/demo.md).

The files are UTF-8 with the text readable (no ``\\u`` escapes). Images are drawn, not stored,
because the drawing is deterministic and a few lines describe it."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from functools import cached_property
from pathlib import Path
from typing import Any

from .base import DemoRatings

ROOT = Path(__file__).resolve().parent


def demo_folder(package: str) -> Path:
    """``benchmarks/<package>/demo``: where a protocol package's demo files live."""
    return ROOT / package / "demo"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


class DemoItems:
    """A preset's ``demo_items``: called with the demo's image folder (``None`` where the items
    have no images), draws the images there and returns the records, fresh on every call."""

    def __init__(self, package: str, name: str) -> None:
        self.folder = demo_folder(package)
        self.name = name

    def __repr__(self) -> str:
        return f"DemoItems({self.folder.parent.name!r}, {self.name!r})"

    def __call__(self, folder: Path | None) -> list[dict[str, Any]]:
        images = self.folder / f"{self.name}.images.json"
        if images.exists():
            # Pillow only when images are drawn: loading the presets stays cheap
            from .demo_images import draw_image

            if folder is None:
                raise TypeError(f"the {self.name} demo items have images: give a folder to draw them in")
            for spec in json.loads(images.read_text(encoding="utf-8")):
                spec = dict(spec)
                draw_image(Path(folder), spec.pop("name"), spec.pop("caption"), **spec)
        return read_jsonl(self.folder / f"{self.name}.items.jsonl")


class DemoAnswers(Mapping[str, DemoRatings]):
    """A preset's ``demo_answers``: a read-only mapping read from its file on first use."""

    def __init__(self, package: str, name: str) -> None:
        self.path = demo_folder(package) / f"{name}.answers.json"

    def __repr__(self) -> str:
        return f"DemoAnswers({self.path.parent.parent.name!r}, {self.path.name!r})"

    @cached_property
    def table(self) -> dict[str, DemoRatings]:
        raw = json.loads(self.path.read_text(encoding="utf-8"))
        return {item: (first, second) for item, (first, second) in raw.items()}

    def __getitem__(self, item: str) -> DemoRatings:
        return self.table[item]

    def __iter__(self) -> Iterator[str]:
        return iter(self.table)

    def __len__(self) -> int:
        return len(self.table)


class DemoStudy(Mapping[str, Any]):
    """A preset's ``demo_study``: the simulated study (``<name>.study.json``: its seed, items,
    sample, annotators, their noise and groups, the judges; see docs/demo.md), read on first use."""

    def __init__(self, package: str, name: str) -> None:
        self.path = demo_folder(package) / f"{name}.study.json"

    def __repr__(self) -> str:
        return f"DemoStudy({self.path.parent.parent.name!r}, {self.path.name!r})"

    @cached_property
    def table(self) -> dict[str, Any]:
        return json.loads(self.path.read_text(encoding="utf-8"))

    def __getitem__(self, key: str) -> Any:
        return self.table[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.table)

    def __len__(self) -> int:
        return len(self.table)


def write_json(path: Path, data: Any) -> None:
    """How the demo files are written (tests and whoever regenerates them): readable unicode."""
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def write_jsonl(path: Path, records: list[Mapping[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
