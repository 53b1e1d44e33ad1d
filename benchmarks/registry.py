"""All protocol presets, in display order. Adding a protocol = one package + one line here."""

from __future__ import annotations

from . import arena, blendvis, counterfactuals, cqbench, cultivate, valueground
from .base import NamedTemplate, Preset

PRESETS: dict[str, Preset] = {
    p.key: p
    for p in (
        valueground.PAIR_QUALITY,
        cultivate.FAITHFULNESS,
        cultivate.DESCRIPTORS,
        counterfactuals.AUDIT,
        blendvis.IMAGE,
        blendvis.TEMPLATE,
        cqbench.STORY,
        cqbench.TURING,
        cqbench.VALUE_EXTRACTION,
        arena.PREFERENCE,
    )
}


def get_preset(key: str) -> Preset:
    try:
        return PRESETS[key]
    except KeyError:
        raise KeyError(f"unknown preset {key!r}; known presets: {', '.join(PRESETS)}") from None


def choices() -> list[tuple[str, str]]:
    """(key, name) pairs for a select field."""
    return [(p.key, p.name) for p in PRESETS.values()]


def named_templates() -> dict[str, NamedTemplate]:
    """Every preset's named judge templates, by name, in preset order (names are unique)."""
    out: dict[str, NamedTemplate] = {}
    for preset in PRESETS.values():
        for name, template in preset.named_templates.items():
            if name in out:
                raise ValueError(f"two presets declare the judge template {name!r}")
            out[name] = template
    return out
