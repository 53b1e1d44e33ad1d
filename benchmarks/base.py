"""What a protocol preset is: an item schema, a rubric schema (see annotation/rubric.py), project
defaults and a demo-data generator. Adding a protocol = adding one module in this package and
listing its presets in ``benchmarks/registry.py``; no view changes.

Item schema: a list of field specs, in display order::

    {"name": "question", "type": "text", "label": "Question"}
    {"name": "story", "type": "longtext"}                      # shown with line breaks kept
    {"name": "image_a", "type": "image", "group": "pair"}      # same group = side by side
    {"name": "values", "type": "list", "of": "object", "keys": ["statement", "attitude"]}
    {"name": "descriptors", "type": "list", "of": "text"}
    {"name": "model_verdicts", "type": "object", "required": False, "hint": True}
    {"name": "seed", "type": "number", "required": False}

Types: text, longtext, image (a path relative to the import's images folder/zip), number,
list (``of`` text|object; ``keys`` = required keys of each object), object. ``required``
defaults to true. ``display`` false hides a field from annotators (it stays in the data).
``hint`` true shows a field only when the project turns model hints on. ``pair`` fields of a
pairwise question are shown in the assignment's stored order, not here.

Every preset also accepts the common keys ``id`` (external id), the strata ``country``,
``region``, ``generator``, ``category``, ``dimension`` and ``meta`` (an object of any extra
strata keys). Anything else is an unknown field and the import is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FIELD_TYPES = ("text", "longtext", "image", "number", "list", "object")
COMMON_KEYS = ("id", "country", "region", "generator", "category", "dimension", "meta")
STRATA_KEYS = ("country", "region", "generator", "category", "dimension")


@dataclass(frozen=True)
class Preset:
    key: str  # e.g. "valueground.pair_quality"; stable, used in URLs and exports
    name: str
    protocol: str  # one paragraph: the paper, section, what is validated
    item_fields: list[dict[str, Any]]
    rubric: dict[str, Any]
    # writes demo images into the folder and returns item records in the import format
    demo_items: Callable[[Path], list[dict[str, Any]]]
    defaults: dict[str, Any] = field(default_factory=dict)  # e.g. {"k": 2, "show_model_hints": False}

    def field(self, name: str) -> dict[str, Any] | None:
        return next((f for f in self.item_fields if f["name"] == name), None)

    def image_fields(self) -> list[str]:
        return [f["name"] for f in self.item_fields if f["type"] == "image"]
