"""BLEnD-Vis validation (blend-vis.txt, App. D.1 rephrased templates, App. D.2 image QA, App. E).

The declaration; the paper's wording is in ``prompts.py``, its validation tables in
``tables.py`` (imported when a report is asked for), the demo items and answers in ``demo/``."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_noop

from ..base import LazyReport, Preset, StudyDesign
from ..demo_data import DemoItems, DemoStudy
from .prompts import IMAGE_INSTRUCTIONS, IMAGE_TRANSLATIONS, TEMPLATE_INSTRUCTIONS, TEMPLATE_TRANSLATIONS

# --------------------------------------------------------------------------- image validation
IMAGE_PROTOCOL = gettext_noop(
    "BLEnD-Vis (blend-vis.txt), App. D.2 Sampled Quality Assurance for Generated Images and App. E.2. "
    "A random, stratified 10% sample (500 of 4,916 Gemini 2.5 Flash Image images) is evaluated by "
    "three independent annotators, given the entity, the region and the image placeholder: G = the "
    "image successfully conveys the intended concept; B = it fails to, with a required brief reason "
    "and a failure category. Decided by a 2/3 majority vote; reported 27/500 (5.40%) Bad."
)

IMAGE_ITEM_FIELDS: list[dict[str, Any]] = [
    {"name": "image", "type": "image", "label": "Generated image"},
    {"name": "entity", "type": "text", "label": "Entity"},
    {"name": "placeholder", "type": "text", "label": "Image placeholder"},
    {"name": "question", "type": "text", "required": False, "label": "Original question"},
]

IMAGE_RUBRIC: dict[str, Any] = {
    "title": "BLEnD-Vis image validation",
    "instructions": IMAGE_INSTRUCTIONS,
    "questions": [
        {
            "id": "verdict",
            "type": "choice",
            "label": "Verdict",
            "prompt": "Does this image ({placeholder}) serve as a plausible and recognisable visual representation "
            "of {entity} in {region}?",
            "options": [
                {"value": "G", "label": "G (Good): The image successfully conveys the intended concept."},
                {
                    "value": "B",
                    "label": "B (Bad): The image fails to sufficiently represent or convey the core concept.",
                },
            ],
        },
        {
            "id": "reason_category",
            "type": "choice",
            "label": "Failure category",
            "prompt": "If B: which criterion applies?",
            "required": False,
            "required_if": "verdict == 'B'",
            "options": [
                {
                    "value": "wrong_subject",
                    "label": "Clearly Wrong Subject: The image depicts something fundamentally different from the 'entity'.",
                },
                {
                    "value": "misleading",
                    "label": "Misleading or Ambiguous Representation: The image is so generic, abstract, or poorly rendered that it fails to represent the 'entity', even with the provided context.",
                },
                {
                    "value": "distorted",
                    "label": "Unusably Distorted: The image has such severe visual artefacts that the main subject is unrecognisable or nonsensical.",
                },
                {
                    "value": "regional",
                    "label": "Inaccurate Regional Representation: The image does not accurately reflect the visual characteristics of the entity in the region.",
                },
            ],
        },
        {
            "id": "reason",
            "type": "text",
            "label": "Reason",
            "prompt": "If B: a brief reason for your judgment.",
            "required_if": "verdict == 'B'",
            "min_length": 3,
        },
    ],
    "derived": [
        {"id": "good", "label": "Good (G)", "expr": "1 if verdict == 'G' else 0"},
    ],
    "translations": IMAGE_TRANSLATIONS,
}


# App. D.2 "Task Setup": "A random, stratified sample of 500 images (10%) was evaluated by three
# independent annotators" (also Sec. 3 Step 5); App. D: "All annotators are research assistants
# with at least an undergraduate degree". The strata are not named; no eligibility, no QC.
IMAGE_STUDY_DESIGN = StudyDesign(
    source=gettext_noop("BLEnD-Vis (blend-vis.txt), App. D and D.2"),
    k=3,
    sample_size=500,
    notes=(
        gettext_noop(
            # "10% of" is a percentage, not a %-placeholder:
            # xgettext:no-python-format
            "The paper's 500 images (10% of 4,916) are a 'random, stratified' sample, without naming "
            "the strata: choose them (e.g. region, category)."
        ),
        gettext_noop(
            "Annotators were research assistants with at least an undergraduate degree (no platform setting)."
        ),
    ),
)


IMAGE = Preset(
    key="blendvis.image",
    name=gettext_noop("BLEnD-Vis image validation (G/B)"),
    protocol=IMAGE_PROTOCOL,
    item_fields=IMAGE_ITEM_FIELDS,
    rubric=IMAGE_RUBRIC,
    demo_items=DemoItems("blendvis", "image"),
    demo_study=DemoStudy("blendvis", "image"),
    defaults={"k": 3},
    study_design=IMAGE_STUDY_DESIGN,
    suggested_policy={"rule": "good == 1", "aggregation": "majority"},
    validation_report=LazyReport("benchmarks.blendvis.tables", "image_validation_report"),
)

# --------------------------------------------------------------------------- template validation
TEMPLATE_PROTOCOL = gettext_noop(
    "BLEnD-Vis (blend-vis.txt), App. D.1 Rephrased Question Validation and App. E.1. Three independent "
    "annotators evaluate each automatically generated rephrased question template (Entity -> Region "
    "inversion) against the original BLEnD SAQ template for semantic fidelity and clarity: Good / Bad. "
    "A majority vote (at least 2 of 3) flagged 39 of 320 templates (12.2%) as Bad; these were "
    "manually corrected by the research team, not dropped."
)

TEMPLATE_ITEM_FIELDS: list[dict[str, Any]] = [
    {"name": "original_template", "type": "text", "label": "Original template"},
    {"name": "rephrased_template", "type": "text", "label": "Rephrased template"},
]

TEMPLATE_RUBRIC: dict[str, Any] = {
    "title": "BLEnD-Vis rephrased template validation",
    "instructions": TEMPLATE_INSTRUCTIONS,
    "questions": [
        {
            "id": "verdict",
            "type": "choice",
            "label": "Verdict",
            "prompt": "Does the rephrased question accurately invert the original query while maintaining clarity?",
            "options": [
                {"value": "Good", "label": "Good"},
                {"value": "Bad", "label": "Bad (semantic misalignment or grammatical issues)"},
            ],
        },
        {
            "id": "comment",
            "type": "text",
            "label": "Comment",
            "prompt": "Optional: what is wrong, or a corrected rephrasing.",
            "required": False,
        },
    ],
    "derived": [
        {"id": "good", "label": "Good", "expr": "1 if verdict == 'Good' else 0"},
    ],
    "translations": TEMPLATE_TRANSLATIONS,
}


# App. D.1: "Three independent annotators evaluated the 320 automatically generated rephrased
# question templates" - every template, no sample; no eligibility, no QC.
TEMPLATE_STUDY_DESIGN = StudyDesign(
    source=gettext_noop("BLEnD-Vis (blend-vis.txt), App. D and D.1"),
    k=3,
    notes=(
        gettext_noop("The paper validated all 320 rephrased templates (no sample)."),
        gettext_noop(
            "Annotators were research assistants with at least an undergraduate degree (no platform setting)."
        ),
    ),
)


TEMPLATE = Preset(
    key="blendvis.template",
    name=gettext_noop("BLEnD-Vis rephrased template validation"),
    protocol=TEMPLATE_PROTOCOL,
    item_fields=TEMPLATE_ITEM_FIELDS,
    rubric=TEMPLATE_RUBRIC,
    demo_items=DemoItems("blendvis", "template"),
    demo_study=DemoStudy("blendvis", "template"),
    defaults={"k": 3},
    study_design=TEMPLATE_STUDY_DESIGN,
    # Bad templates were corrected by the team, not dropped.
    suggested_policy={"rule": "good == 1", "aggregation": "majority", "revise_if": "good == 0"},
    validation_report=LazyReport("benchmarks.blendvis.tables", "template_validation_report"),
)

PRESETS = [IMAGE, TEMPLATE]
