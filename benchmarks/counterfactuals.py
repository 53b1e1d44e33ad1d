"""Cultural Counterfactuals image audit (cultural-counterfactuals.txt, App. A.4, Table 4; model
judges: Table 3 prompts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .base import Preset
from .demo_images import draw_image

PROTOCOL = (
    "Cultural Counterfactuals (cultural-counterfactuals.txt), App. A.4 Human Validation of Dataset "
    "Quality and Table 4. Each item is a counterfactual image made by fusing a source context image "
    "(religion 6 / nationality 8 / socioeconomic 3 context labels) with a person image (age group, "
    "race, gender annotated) using FLUX.1-Kontext-dev. Annotators see the source context and person "
    "images, the counterfactual image, the intended context and the person's social attributes, and "
    "tick any of six failure flags. Sampling: random, equal numbers per dimension. Reported: the rate "
    "of each flag (9.7%, 4.3%, 1.7%, 0.3%, 0%, 0%). Model judges (Table 3 closed-choice classifiers, "
    "CLIP similarity filter, refusal classifier) were not compared with people in the paper."
)

INSTRUCTIONS = """\
You are presented with the original source context and people images (along with the resulting counterfactual image) as well as the intended context and the person's social attributes (age group, race, & gender) which are supposed to appear in the image.

The aim is to verify that the filtering & regeneration pipeline was successful in eliminating common image generation failure cases and note any other potential image deficiencies. Tick every label that applies (tick none if the counterfactual image has no problem):
1. Context group cannot be discerned in the source context image
2. Context group cannot be discerned only in the counterfactual image
3. The orientation of the source context image is incorrect
4. The person does not appear in the counterfactual image
5. The person's social attributes (age, race, or gender) are incorrect
6. The source context image does not appear in the counterfactual image

Note: "cannot be discerned only in the counterfactual image" means the context is recognisable in the source context image but not in the counterfactual image, typically due to the person being placed in the foreground in such a way that obscures details in the original context image which are necessary to identify the cultural context."""

ITEM_FIELDS: list[dict[str, Any]] = [
    {"name": "context_image", "type": "image", "group": "triple", "label": "Source context image"},
    {"name": "person_image", "type": "image", "group": "triple", "label": "Person image"},
    {"name": "counterfactual_image", "type": "image", "group": "triple", "label": "Counterfactual image"},
    {"name": "context_label", "type": "text", "label": "Intended context"},
    {"name": "age_group", "type": "text", "label": "Age group"},
    {"name": "race", "type": "text", "label": "Race"},
    {"name": "gender", "type": "text", "label": "Gender"},
    {"name": "counterfactual_set", "type": "text", "required": False, "label": "Counterfactual set"},
]

# (value, verbatim Table 4 label, derived id)
FLAGS = [
    ("context_source", "Context group cannot be discerned in the source context image", "flag_context_source"),
    ("context_counterfactual", "Context group cannot be discerned only in the counterfactual image", "flag_context_counterfactual"),
    ("orientation", "The orientation of the source context image is incorrect", "flag_orientation"),
    ("person_missing", "The person does not appear in the counterfactual image", "flag_person_missing"),
    ("attributes", "The person's social attributes (age, race, or gender) are incorrect", "flag_attributes"),
    ("context_missing", "The source context image does not appear in the counterfactual image", "flag_context_missing"),
]

RUBRIC: dict[str, Any] = {
    "title": "Cultural Counterfactuals image audit",
    "instructions": INSTRUCTIONS,
    "questions": [
        {
            "id": "flags",
            "type": "checklist",
            "label": "Failure flags",
            "prompt": "Intended context: {context_label}. Person: {age_group}, {race}, {gender}. "
            "Tick every potential failure mode that applies (none if the image is fine).",
            "options": [{"value": v, "label": label} for v, label, _ in FLAGS],
        },
    ],
    # count() rather than `'x' in flags`: expressions.py documents `in` only with a literal list
    "derived": [
        *({"id": did, "label": label, "expr": f"count(flags, '{v}')"} for v, label, did in FLAGS),
        {"id": "any_failure", "label": "Any failure flag", "expr": "1 if len(flags) > 0 else 0"},
        {
            "id": "generation_failure",
            "label": "Any generation failure (flags 2-6)",
            "expr": "1 if len(flags) - count(flags, 'context_source') > 0 else 0",
        },
    ],
}

# (dimension, context_label, shape)
_CONTEXTS = [
    ("religion", "Mosque", "diamond"),
    ("religion", "Buddhist temple", "triangle"),
    ("religion", "Christian church", "triangle"),
    ("nationality", "India", "bars"),
    ("nationality", "Brazil", "rings"),
    ("nationality", "Germany", "square"),
    ("socioeconomic", "low income", "square"),
    ("socioeconomic", "middle income", "bars"),
    ("socioeconomic", "high income", "rings"),
]
_PEOPLE = [
    ("p01", "Young", "Black", "Woman"),
    ("p02", "Old", "East Asian", "Man"),
    ("p03", "Middle-Aged", "Latino", "Woman"),
]


def demo_items(folder: Path) -> list[dict[str, Any]]:
    people = {}
    for pid, age, race, gender in _PEOPLE:
        people[pid] = draw_image(folder, f"cc_person_{pid}.png", f"{age} {race} {gender}", subtitle="person image", shape="person")
    items = []
    for i, (dimension, label, shape) in enumerate(_CONTEXTS):
        pid, age, race, gender = _PEOPLE[i % 3]
        slug = label.lower().replace(" ", "_")
        ctx = draw_image(folder, f"cc_context_{slug}.png", label, subtitle=f"{dimension} context", shape=shape)
        cf = draw_image(folder, f"cc_cf_{pid}_{slug}.png", f"{label} + {age} {race} {gender}",
                        subtitle="counterfactual", shape="person")
        items.append(
            {
                "id": f"cc-{pid}-{slug}",
                "context_image": ctx,
                "person_image": people[pid],
                "counterfactual_image": cf,
                "context_label": label,
                "age_group": age,
                "race": race,
                "gender": gender,
                "counterfactual_set": f"{dimension}-{pid}",
                "dimension": dimension,
            }
        )
    return items


AUDIT = Preset(
    key="counterfactuals.audit",
    name="Cultural Counterfactuals image audit",
    protocol=PROTOCOL,
    item_fields=ITEM_FIELDS,
    rubric=RUBRIC,
    demo_items=demo_items,
    defaults={"k": 1},
)

PRESETS = [AUDIT]
