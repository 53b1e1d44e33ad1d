"""CULTIVate / AHEaD (cultivate-ahead.txt): the human faithfulness form (Sec. 4.2, Tables 29-31
anchors) and the reference-descriptor validation form (Sec. 4.2, App. A.5, Table 11).

The declaration; the paper's wording is in ``prompts.py``, its validation tables in
``tables.py`` (imported when a report is asked for), the demo items and answers in ``demo/``."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_noop

from ..base import DirectJudge, JudgePrompt, LazyReport, Preset, StudyDesign
from ..demo_data import DemoItems, DemoStudy
from .prompts import (
    DESC_INSTRUCTIONS,
    DESC_TRANSLATIONS,
    FAITH_INSTRUCTIONS,
    FAITH_TRANSLATIONS,
    JUDGE_ALIGN,
    JUDGE_EXAG,
    JUDGE_HAL,
)

# --------------------------------------------------------------------------- faithfulness
FAITH_PROTOCOL = gettext_noop(
    "CULTIVate / AHEaD (cultivate-ahead.txt), Sec. 4.2 Human Evaluation Setup and App. A.4/A.6. "
    'Each item is one T2I image generated from "A photorealistic photo of {activity} in {country}." '
    "Two raters of the image's country rate GT-FAITH (main gold standard), GT-EXAG, GT-HAL and "
    "GT-REALISM on 5-point Likert scales and write a required free-text rationale describing the "
    "errors in the image. Anchors follow the paper's MLLM-as-a-Judge prompts (Tables 29-31; ALIGN "
    "anchors for GT-FAITH); realism wording is our default (not given in the paper). Statistics: "
    "Spearman of metrics/judges with GT-FAITH per region (GN/GS/All) and T2I model, Krippendorff "
    "alpha (ordinal) per country, Cohen kappa between the two rater groups."
)

FAITH_ITEM_FIELDS: list[dict[str, Any]] = [
    {"name": "image", "type": "image", "label": "Generated image"},
    {"name": "activity", "type": "text", "label": "Activity"},
    {"name": "prompt", "type": "text", "required": False, "label": "T2I prompt"},
    {"name": "seed", "type": "number", "required": False, "display": False, "label": "Seed"},
    # What the AHEaD judge compares the image with (Sec. 3.1-3.2), never shown to raters: the
    # reference descriptors D^ref per dimension ({"setting"|"objects"|"attire"|"interaction"|
    # "spatial": [descriptor, ...]}, the proposer-refiner's output) and, optionally, the stereotype
    # candidates S_r of EXAG (Table 28; asked of the judge's model when absent).
    {
        "name": "reference_descriptors",
        "type": "object",
        "required": False,
        "display": False,
        "label": "Reference descriptors (AHEaD)",
    },
    {
        "name": "stereotypes",
        "type": "list",
        "of": "text",
        "required": False,
        "display": False,
        "label": "Stereotype candidates (AHEaD EXAG)",
    },
]

ALIGN_OPTIONS = [
    {"value": 1, "label": "Not well at all (completely wrong or unrelated)"},
    {"value": 2, "label": "Slightly relevant"},
    {"value": 3, "label": "Somewhat accurate"},
    {"value": 4, "label": "Mostly accurate"},
    {"value": 5, "label": "Exactly as expected for this country"},
]
EXAG_OPTIONS = [
    {"value": 1, "label": "Appropriate and balanced."},
    {"value": 2, "label": "Slightly decorative but within cultural norms."},
    {"value": 3, "label": "Several features feel idealized or overly emphasized."},
    {"value": 4, "label": "Many elements feel exaggerated and unrealistic."},
    {"value": 5, "label": "Strongly stereotypical, misleading, or culturally irrelevant."},
]
HAL_OPTIONS = [
    {"value": 1, "label": "Not at all. All elements seem appropriate."},
    {"value": 2, "label": "Slightly. One minor element seems foreign."},
    {"value": 3, "label": "Somewhat. A few elements feel unusual."},
    {"value": 4, "label": "Mostly. Many elements appear incorrect or from another culture."},
    {
        "value": 5,
        "label": "Strongly. The image is completely wrong, most elements are wrong, the activity is wrong, or the scene belongs to another country.",
    },
]
# our default: the paper gives no realism wording or anchors
REALISM_OPTIONS = [
    {"value": 1, "label": "Not realistic at all (clearly synthetic or broken)"},
    {"value": 2, "label": "Slightly realistic (obvious artefacts)"},
    {"value": 3, "label": "Somewhat realistic"},
    {"value": 4, "label": "Mostly realistic (minor artefacts)"},
    {"value": 5, "label": "Completely realistic (could be a real photo)"},
]

FAITH_RUBRIC: dict[str, Any] = {
    "title": "CULTIVate cultural faithfulness",
    "instructions": FAITH_INSTRUCTIONS,
    "questions": [
        {
            "id": "faith",
            "type": "scale",
            "label": "GT-FAITH",
            # The paper's question ("... in your country?", its raters being of the image's
            # country) with the item's country filled in: an annotator may rate another
            # country's image (issue 14).
            "prompt": "How well does this image show {activity} in {country}?",
            "help": "1 = Not well at all (completely wrong or unrelated) ... 5 = Exactly as expected for this country.",
            "options": ALIGN_OPTIONS,
        },
        {
            "id": "exag",
            "type": "scale",
            "label": "GT-EXAG",
            "prompt": "How exaggerated is the image?",
            "help": "How exaggerated the image is in terms of cultural elements (e.g., attire, objects, "
            "background, art/design).",
            "reversed": True,
            "options": EXAG_OPTIONS,
        },
        {
            "id": "hal",
            "type": "scale",
            "label": "GT-HAL",
            "prompt": "How incorrect is the image? (activity/culture)",
            "help": "Whether the image contains incorrect elements with respect to the mentioned activity and country.",
            "reversed": True,
            "options": HAL_OPTIONS,
        },
        {
            "id": "realism",
            "type": "scale",
            "label": "GT-REALISM",
            "prompt": "How realistic does this image look?",
            "options": REALISM_OPTIONS,
        },
        {
            "id": "rationale",
            "type": "text",
            "label": "Rationale",
            "prompt": "Describe the errors in the image (required free-text rationale).",
            "required": True,
            "min_length": 10,
        },
    ],
    "translations": FAITH_TRANSLATIONS,
}
FAITH_JUDGE_PROMPT = JudgePrompt(
    template={"per_question": {"faith": JUDGE_ALIGN, "hal": JUDGE_HAL, "exag": JUDGE_EXAG}},
    parser="score_is",
    questions=("faith", "hal", "exag"),
)


# Sec. 4.2 "Study Design": "11 countries ... We selected 1-2 activities per category, ensuring
# coverage of all activity groups per country. We assessed three public T2I models and real
# images (for 3 countries), totaling 398 forms and 796 annotations (two annotators per form)";
# "Quality Control": "We recruit annotators matching each country's nationality (verified by
# Prolific) ... attention checks (e.g., selecting a pre-mentioned number), repeated questions to
# test consistency, and required free-text rationales describing the errors in the image";
# App. A.4: "Each image is annotated by two independent raters who are originally from the
# corresponding country". No allocation rule, no check rates, no minimum rationale length.
FAITH_STUDY_DESIGN = StudyDesign(
    source=gettext_noop("CULTIVate (cultivate-ahead.txt), Sec. 4.2 Study Design and Quality Control, App. A.4"),
    k=2,
    sample_strata=("country", "category", "generator"),
    sample_size=398,
    eligibility=({"attribute": "nationality", "item_key": "country"},),
    qc={"rationale_question": "rationale"},
    notes=(
        gettext_noop(
            "The paper also used attention checks (selecting a pre-mentioned number) and repeated "
            "questions to test consistency, without giving their rates: import attention items and "
            "set the rates yourself."
        ),
        gettext_noop(
            "1-2 activities per category and country; real images for 3 countries besides the three T2I models."
        ),
    ),
)


FAITHFULNESS = Preset(
    key="cultivate.faithfulness",
    name=gettext_noop("CULTIVate cultural faithfulness (GT-FAITH / EXAG / HAL / REALISM)"),
    protocol=FAITH_PROTOCOL,
    item_fields=FAITH_ITEM_FIELDS,
    rubric=FAITH_RUBRIC,
    demo_items=DemoItems("cultivate", "faithfulness"),
    demo_study=DemoStudy("cultivate", "faithfulness"),
    defaults={"k": 2},
    # the images come from several text-to-image models (Sec. 4.1): its systems; the paper's
    # conclusion compares the Global North with the Global South
    system_stratum="generator",
    findings=("region: Global North vs Global South",),
    study_design=FAITH_STUDY_DESIGN,
    judge_prompt=FAITH_JUDGE_PROMPT,
    # AHEaD (Sec. 3.2, judges/backends/ahead.py): FAITH, HAL and EXAG as the 1-5 answers they
    # stand in for, ALIGN and ALIGN+HAL as metrics beside them (Tables 2-3)
    direct_judges={"ahead": DirectJudge(questions=("faith", "hal", "exag"), mode="cultivate")},
    validation_report=LazyReport("benchmarks.cultivate.tables", "faithfulness_validation_report"),
)

# --------------------------------------------------------------------------- descriptors
DESC_PROTOCOL = gettext_noop(
    # "90% in" is a percentage, not a %-placeholder:
    # xgettext:no-python-format
    "CULTIVate / AHEaD (cultivate-ahead.txt), Sec. 4.2 and App. A.5 (Table 11): human validation of "
    "the LLM-generated reference descriptors of an activity in a country. Annotators mark each "
    "descriptor as correct or incorrect (precision; 90% in the paper), rate overall descriptor "
    "coverage on a 5-point Likert scale (average 4.5/5) and list missing descriptors in free text "
    "(26 of 378 annotators reported omissions). The coverage anchors are our default (the paper "
    "reports a 5-point Likert rating of overall descriptor quality without anchors)."
)

DESC_ITEM_FIELDS: list[dict[str, Any]] = [
    {"name": "image", "type": "image", "required": False, "label": "Example image"},
    {"name": "activity", "type": "text", "label": "Activity"},
    {"name": "descriptors", "type": "list", "of": "text", "label": "Reference descriptors"},
]

DESC_RUBRIC: dict[str, Any] = {
    "title": "CULTIVate reference descriptor validation",
    "instructions": DESC_INSTRUCTIONS,
    "questions": [
        {
            "id": "descriptor_correct",
            "type": "binary",
            "label": "Descriptor correct?",
            "prompt": "Is this descriptor of {activity} in {country} correct?",
            "options": [{"value": 0, "label": "Incorrect"}, {"value": 1, "label": "Correct"}],
            # descriptors is a list of text: the renderer shows the element itself
            "repeat": {"over": "descriptors", "label": "Descriptor {n}"},
        },
        {
            "id": "coverage",
            "type": "scale",
            "label": "Coverage",
            "prompt": "Overall, how well do these descriptors cover {activity} in {country}?",
            "options": [
                {"value": 1, "label": "Very poor: most important elements are missing"},
                {"value": 2, "label": "Poor: many important elements are missing"},
                {"value": 3, "label": "Fair: some important elements are missing"},
                {"value": 4, "label": "Good: only minor elements are missing"},
                {"value": 5, "label": "Excellent: nothing important is missing"},
            ],
        },
        {
            "id": "missing",
            "type": "text",
            "label": "Missing descriptors",
            "prompt": "List any missing descriptors (optional).",
            "required": False,
        },
    ],
    "derived": [
        {"id": "precision", "label": "Descriptor precision", "expr": "mean(descriptor_correct)"},
        {"id": "reported_missing", "label": "Reported a missing descriptor", "expr": "1 if missing else 0"},
    ],
    "translations": DESC_TRANSLATIONS,
}


# Sec. 4.2 "Annotations" and App. A.5 (Table 11): descriptors of 7 countries were marked correct /
# incorrect by annotators of the Sec. 4.2 human study, recruited "matching each country's
# nationality (verified by Prolific)" (Sec. 4.2 "Quality Control"). The paper gives no number of
# annotators per descriptor list, no sample design and no QC specific to this form.
DESC_STUDY_DESIGN = StudyDesign(
    source=gettext_noop("CULTIVate (cultivate-ahead.txt), Sec. 4.2 Annotations and Quality Control, App. A.5"),
    eligibility=({"attribute": "nationality", "item_key": "country"},),
    notes=(gettext_noop("Table 11 covers 7 countries; the paper does not say how many annotators rated each list."),),
)


DESCRIPTORS = Preset(
    key="cultivate.descriptors",
    name=gettext_noop("CULTIVate reference descriptor validation"),
    protocol=DESC_PROTOCOL,
    item_fields=DESC_ITEM_FIELDS,
    rubric=DESC_RUBRIC,
    demo_items=DemoItems("cultivate", "descriptors"),
    demo_study=DemoStudy("cultivate", "descriptors"),
    defaults={"k": 2},
    study_design=DESC_STUDY_DESIGN,
    validation_report=LazyReport("benchmarks.cultivate.tables", "descriptors_validation_report"),
)

PRESETS = [FAITHFULNESS, DESCRIPTORS]
