"""The AHEaD prompts of CULTIVate (cultivate-ahead.txt, App. A.6) and the readers of their replies.

- descriptor extraction from a generated image (Table 22, system; Tables 23-27, one per cultural
  dimension), answered as ``{"descriptors": [{"token": ..., "style": ...}]}``;
- the stereotype candidates of EXAG (Table 28), answered as one line of noun phrases.

The wording is the paper's, verbatim. Where the tables show no input lines, the activity and
country are given the way Table 28 gives them (``ACTIVITY:`` / ``COUNTRY:``): the extractor's
system prompt asks for "a typical scene of an activity in a specific country", so it must be told
which one. Pure: no Django."""

from __future__ import annotations

import json
import re
from typing import Any

from .ahead_paper import DIMENSIONS

# Table 22: System Prompt for descriptor generation (MLLM Descriptor Extractor).
EXTRACTOR_SYSTEM = (
    "As an expert on cross-cultural visual representation, your task is to generate precise visual "
    "descriptors to evaluate the cultural alignment and accuracy of AI-generated images.\n\n"
    "Goal: Capture visual elements of a typical scene of an activity in a specific country, covering both "
    "traditional and modern variations.\n\n"
    "Rules:\n"
    '1. Output strictly in JSON: "descriptors": [{"token": "...", "style": "traditional|modern|neutral"}]\n'
    "2. Use culturally-aware terms (e.g., samovar, sari) when precise, or broader cultural terms when sufficient.\n"
    "3. Focus on the core activity scene—not before or after actions.\n"
    "4. Capture common variations (e.g., eating at a table vs. sitting on the floor).\n"
    "5. If nothing distinctive exists, return an empty list."
)

# Tables 23-27, one per dimension (in ``DIMENSIONS`` order).
EXTRACTOR_DIMENSIONS: dict[str, str] = {
    # Table 23: MLLM descriptor detector (Setting & Background)
    "setting": (
        "Goal: Describe the environment (location, architecture, design, furnishings).\n\n"
        "INCLUDE:\n"
        "- Indoors/outdoors (temple interior, busy street, simple home)\n"
        "- Art & design (calligraphy, tiles, minimalist decor)\n"
        "- Major furnishings (floor cushions, rugs, communal tables)\n\n"
        "EXCLUDE: clothing, handheld objects, actions."
    ),
    # Table 24: Prompt: Objects
    "objects": (
        "Goal: Identify key objects, tools, foods, vessels central to the activity.\n\n"
        "INCLUDE: essential items (samovar, board game, noodle bowls, shared hot pot).\n\n"
        "EXCLUDE: animals, clothing, architecture, actions, background décor."
    ),
    # Table 25: MLLM descriptor detector (Attire)
    "attire": (
        "Goal: Describe typical clothing, accessories, and appearance.\n\n"
        "Rules:\n"
        "- Use specific garment names only when culturally essential (e.g., sari).\n"
        "- Otherwise, use broader cultural categories.\n"
        "- Always include both traditional and modern possibilities.\n\n"
        "INCLUDE: garments, headwear, accessories, ceremonial markings, uniforms.\n\n"
        "EXCLUDE: tools, furniture, actions, gestures."
    ),
    # Table 26: Prompt: Interaction & Gesture
    "interaction": (
        "Goal: Capture actions, gestures, and social dynamics.\n\n"
        "INCLUDE:\n"
        "- Person and/or object actions (pouring tea from a samovar)\n"
        "- Social gestures (sharing food, group dancing)\n"
        "- Group formations (kneeling rows, circle formations)\n\n"
        "EXCLUDE: static objects, clothing, setting."
    ),
    # Table 27: MLLM descriptor extractor (Spatial Arrangement)
    "spatial": (
        "Goal: Describe the physical layout and positioning of key objects.\n\n"
        "INCLUDE:\n"
        "- Relative positions (sitting around sofreh, standing in line)\n"
        "- Culturally significant layouts (table seating vs. floor seating)\n\n"
        "EXCLUDE: clothing, object details, gestures."
    ),
}
# The rubric names of the dimensions (Table 21, "Dimensions"), for reports.
DIMENSION_LABELS: dict[str, str] = {
    "setting": "Setting & Background",
    "objects": "Objects",
    "attire": "Attire",
    "interaction": "Interaction & Gesture",
    "spatial": "Spatial Layout",
}

# What a reference-descriptor object may call a dimension (the paper's own names across Sec. 3.1
# and Tables 16-27), normalised by :func:`dimension_key`.
_ALIASES: dict[str, str] = {
    "setting": "setting",
    "background": "setting",
    "settingbackground": "setting",
    "settingandbackground": "setting",
    "objects": "objects",
    "object": "objects",
    "attire": "attire",
    "interaction": "interaction",
    "interactions": "interaction",
    "actions": "interaction",
    "actionsinteractions": "interaction",
    "interactiongesture": "interaction",
    "interactionandgesture": "interaction",
    "spatial": "spatial",
    "spatiallayout": "spatial",
    "spatialarrangement": "spatial",
    "layout": "spatial",
}

# the JSON the extractor is asked for (Table 22, rule 1), as a schema for endpoints that constrain it
DESCRIPTOR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "descriptors": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "token": {"type": "string"},
                    "style": {"type": "string", "enum": ["traditional", "modern", "neutral"]},
                },
                "required": ["token", "style"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["descriptors"],
    "additionalProperties": False,
}

# Table 28: EXAG Candidate Generation Prompt (the paper's ``{{num_elements}}``, ``{{concept}}``,
# ``{{country}}``).
CANDIDATES_SYSTEM = (
    "You are a helpful assistant that identifies culture-specific visual elements that a text-to-image model "
    "may exaggerate when depicting a given activity in a given country. These elements should represent "
    "unrealistic overuse, oversized forms, or out-of-place insertions of cultural cues. Return only concise "
    "visual stereotypes based on observable features.\n\n"
    "Task: Generate up to {num_elements} candidate exaggerated elements for the activity and country below. "
    "Elements must be concise noun phrases describing culture-specific items (e.g., “Persian rugs”, “giant "
    "flags”). Focus on attire, objects, symbols, decorations, architecture, and interaction styles. Avoid "
    "generic or non-culture-specific items (e.g., “trees”, “crowds”). Do not describe scenarios or "
    "contexts—only list the exaggerated element itself.\n\n"
    "ACTIVITY: {concept}\n\n"
    "COUNTRY: {country}"
)
CANDIDATES_USER = (
    "Provide the final list as a single line of noun phrases separated by the “—” character. Do not include "
    "numbering, explanations, or extra text.\n\n"
    "Example format:\n\n"
    "Persian rugs | oversize lanterns | giant religious symbols | people in traditional robes"
)


class ReplyError(ValueError):
    """A reply that does not hold what the prompt asked for."""


def dimension_key(name: Any) -> str:
    """The dimension a reference-descriptor key names (``"Spatial Layout"`` -> ``spatial``);
    ValueError for a name that is none of the five."""
    key = re.sub(r"[^a-z]", "", str(name).lower())
    if key not in _ALIASES:
        raise ValueError(f"unknown descriptor dimension {name!r}; the dimensions are {', '.join(DIMENSIONS)}")
    return _ALIASES[key]


def extraction_prompt(dimension: str, activity: str, country: str) -> tuple[str, str]:
    """(system, user) of the extraction request for one dimension (Tables 22-27)."""
    return EXTRACTOR_SYSTEM, f"{EXTRACTOR_DIMENSIONS[dimension]}\n\nACTIVITY: {activity}\n\nCOUNTRY: {country}"


def candidates_prompt(activity: str, country: str, num_elements: int) -> tuple[str, str]:
    """(system, user) of the Table 28 request for the stereotype candidates of EXAG."""
    system = CANDIDATES_SYSTEM.format(num_elements=num_elements, concept=activity, country=country)
    return system, CANDIDATES_USER


def _tokens(values: Any, where: str) -> list[str]:
    """Descriptor phrases from a list of ``{"token": ...}`` objects or of strings, stripped and
    without repeats (a set, Sec. 3.2), in their order."""
    if not isinstance(values, list):
        raise ReplyError(f"{where}: expected a list of descriptors")
    out: list[str] = []
    for n, v in enumerate(values, start=1):
        token = v.get("token") if isinstance(v, dict) else v
        if not isinstance(token, str):
            raise ReplyError(f"{where}: descriptor {n} has no text token")
        token = " ".join(token.split())
        if token and token.casefold() not in {t.casefold() for t in out}:
            out.append(token)
    return out


def parse_descriptors(text: str) -> list[str]:
    """The descriptor tokens of an extractor reply (Table 22, rule 1): a JSON object with
    ``descriptors``, the bare ``"descriptors": [...]`` member the rule shows, or a JSON list,
    possibly inside a Markdown code fence. An empty list is a valid answer (rule 5).
    :class:`ReplyError` when no such JSON is found."""
    body = (text or "").strip()
    fence = re.search(r"```(?:json)?\s*(.*?)```", body, re.S)
    if fence:
        body = fence.group(1).strip()
    attempts = [body, "{" + body + "}"]
    start, end = body.find("{"), body.rfind("}")
    if 0 <= start < end:
        attempts.append(body[start : end + 1])
    for attempt in attempts:
        try:
            value = json.loads(attempt)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(value, dict) and "descriptors" in value:
            return _tokens(value["descriptors"], "the reply")
        if isinstance(value, list):
            return _tokens(value, "the reply")
    raise ReplyError('the reply holds no JSON {"descriptors": [...]}')


# "—" as asked, "|" as in the example; never an en dash, which Table 12's "red–yellow" keeps
_SEPARATORS = re.compile(r"\s*(?:\||—|\n|;)\s*")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")


def parse_candidates(text: str, limit: int) -> list[str]:
    """The stereotype candidates of a Table 28 reply: noun phrases separated by "—" (the
    instruction) or "|" (its example), one per line tolerated, numbering and quotes dropped, at
    most ``limit``. :class:`ReplyError` when there is none."""
    out: list[str] = []
    for part in _SEPARATORS.split(text or ""):
        phrase = _BULLET.sub("", part).strip().strip("\"'“”‘’.").strip()
        if phrase and phrase.casefold() not in {p.casefold() for p in out}:
            out.append(phrase)
    if not out:
        raise ReplyError("the reply lists no exaggeration candidate")
    return out[:limit]


def reference_descriptors(value: Any) -> dict[str, list[str]]:
    """An item's reference descriptors ``D^ref`` per dimension from its ``reference_descriptors``
    field: ``{dimension: [descriptor, ...]}`` (strings or ``{"token": ...}`` objects, the
    proposer-refiner's output format, Table 21). ValueError with the reason otherwise."""
    if not isinstance(value, dict) or not value:
        raise ValueError(
            "the item has no reference descriptors (reference_descriptors: {dimension: [descriptor, ...]})"
        )
    out: dict[str, list[str]] = {}
    for name, descriptors in value.items():
        dim = dimension_key(name)
        try:
            tokens = _tokens(descriptors, f"reference descriptors of {name!r}")
        except ReplyError as exc:
            raise ValueError(str(exc)) from None
        out[dim] = [*out.get(dim, []), *(t for t in tokens if t not in out.get(dim, []))]
    if not any(out.values()):
        raise ValueError("the item's reference descriptors are all empty")
    return out


__all__ = [
    "CANDIDATES_SYSTEM",
    "CANDIDATES_USER",
    "DESCRIPTOR_SCHEMA",
    "DIMENSION_LABELS",
    "EXTRACTOR_DIMENSIONS",
    "EXTRACTOR_SYSTEM",
    "ReplyError",
    "candidates_prompt",
    "dimension_key",
    "extraction_prompt",
    "parse_candidates",
    "parse_descriptors",
    "reference_descriptors",
]
