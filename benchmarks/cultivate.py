"""CULTIVate / AHEaD (cultivate-ahead.txt): the human faithfulness form (Sec. 4.2, Tables 29-31
anchors) and the reference-descriptor validation form (Sec. 4.2, App. A.5, Table 11)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .base import JudgePrompt, Preset, StudyDesign
from .demo_images import draw_image

GN = "Global North"
GS = "Global South"

# --------------------------------------------------------------------------- faithfulness
FAITH_PROTOCOL = (
    "CULTIVate / AHEaD (cultivate-ahead.txt), Sec. 4.2 Human Evaluation Setup and App. A.4/A.6. "
    'Each item is one T2I image generated from "A photorealistic photo of {activity} in {country}." '
    "Two raters of the image's country rate GT-FAITH (main gold standard), GT-EXAG, GT-HAL and "
    "GT-REALISM on 5-point Likert scales and write a required free-text rationale describing the "
    "errors in the image. Anchors follow the paper's MLLM-as-a-Judge prompts (Tables 29-31; ALIGN "
    "anchors for GT-FAITH); realism wording is our default (not given in the paper). Statistics: "
    "Spearman of metrics/judges with GT-FAITH per region (GN/GS/All) and T2I model, Krippendorff "
    "alpha (ordinal) per country, Cohen kappa between the two rater groups."
)

FAITH_INSTRUCTIONS = """\
We conduct a human study to validate our metrics for Faithfulness (i.e., Alignment, Hallucination, and Exaggeration) and realism (whether image looks realistic).

The image was generated with the prompt "A photorealistic photo of {activity} in {country}." (the activity and country are shown with the image). You are rating it as someone from that country.

We collected 3 ground-truth (GT) labels using a 5-point Likert scale: GT-FAITH (main gold standard) measures overall faithfulness according to annotators - How well does this image show {activity} in your country?; GT-EXAG measures image exaggeration - How exaggerated is the image?; GT-HAL measures hallucinations - How incorrect is the image? (activity/culture).

Scale anchors (from the paper's scoring prompts, Tables 29-31):
- Faithfulness (ALIGN): 1 = Not well at all (completely wrong or unrelated); 2 = Slightly relevant; 3 = Somewhat accurate; 4 = Mostly accurate; 5 = Exactly as expected for this country.
- Hallucination (HAL), whether an image contains incorrect elements with respect to the mentioned activity and country: 1 = Not at all. All elements seem appropriate.; 2 = Slightly. One minor element seems foreign.; 3 = Somewhat. A few elements feel unusual.; 4 = Mostly. Many elements appear incorrect or from another culture.; 5 = Strongly. The image is completely wrong, most elements are wrong, the activity is wrong, or the scene belongs to another country.
- Exaggeration (EXAG), how exaggerated an image is in terms of cultural elements (e.g., attire, objects, background, art/design): 1 = Appropriate and balanced.; 2 = Slightly decorative but within cultural norms.; 3 = Several features feel idealized or overly emphasized.; 4 = Many elements feel exaggerated and unrealistic.; 5 = Strongly stereotypical, misleading, or culturally irrelevant.
- Realism (our default wording; the paper does not give it): How realistic does this image look?

Quality control: the form may contain attention checks (e.g., selecting a pre-mentioned number) and repeated questions to test consistency, and a free-text rationale describing the errors in the image is required."""

FAITH_ITEM_FIELDS: list[dict[str, Any]] = [
    {"name": "image", "type": "image", "label": "Generated image"},
    {"name": "activity", "type": "text", "label": "Activity"},
    {"name": "prompt", "type": "text", "required": False, "label": "T2I prompt"},
    {"name": "seed", "type": "number", "required": False, "display": False, "label": "Seed"},
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
            "prompt": "How well does this image show {activity} in your country?",
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
            "options": EXAG_OPTIONS,
        },
        {
            "id": "hal",
            "type": "scale",
            "label": "GT-HAL",
            "prompt": "How incorrect is the image? (activity/culture)",
            "help": "Whether the image contains incorrect elements with respect to the mentioned activity and country.",
            "options": HAL_OPTIONS,
        },
        {
            "id": "realism",
            "type": "scale",
            "label": "GT-REALISM",
            "prompt": "How realistic does this image look?",
            "help": "Our default wording and anchors (the paper does not give them).",
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
}

# (country, region, category, activity)
_FAITH_DEMO = [
    ("Iran", GS, "eating", "eating at home"),
    ("India", GS, "celebration", "celebrating Diwali"),
    ("Nigeria", GS, "wedding", "a traditional wedding"),
    ("Indonesia", GS, "game", "playing elephant ant man"),
    ("Mexico", GS, "funeral", "a funeral"),
    ("Germany", GN, "concert", "attending an outdoor concert"),
    ("Spain", GN, "dance", "dancing flamenco"),
    ("Italy", GN, "greeting", "greeting a friend"),
    ("USA", GN, "religious practice", "a Sunday church service"),
]
_T2I = ("Stable Diffusion 3.5", "FLUX", "Qwen-Image")


def faithfulness_demo_items(folder: Path) -> list[dict[str, Any]]:
    items = []
    for i, (country, region, category, activity) in enumerate(_FAITH_DEMO, start=1):
        name = draw_image(folder, f"cultivate_{i:02d}.png", activity, subtitle=f"{country} - {_T2I[i % 3]}")
        items.append(
            {
                "id": f"cultivate-{i:02d}",
                "image": name,
                "activity": activity,
                "country": country,
                "region": region,
                "category": category,
                "generator": _T2I[i % 3],
                "prompt": f"A photorealistic photo of {activity} in {country}.",
                "seed": 42 + (i % 10),
            }
        )
    return items


# CULTIVate / AHEaD, App. A, Tables 29-31 (MLLM-as-a-Judge prompts), verbatim: one prompt per
# question (ALIGN -> faith, HAL, EXAG). The paper's {{prompt}} / {{country}} are the item's T2I
# prompt and country.
_SCORE_FORMAT = (
    "Respond with ONLY the score in the exact format below:\n\nscore is < num >\n\n"
    "Do not include any other text, explanation, or formatting."
)
JUDGE_ALIGN = {
    "system": (
        "You are a helpful assistant scoring how well an image depicts an activity as it would typically "
        "appear in the specified country. Provide a rating from 1 to 5 using the guidelines below. Only output "
        "the score in the required format.\n\nScoring Scale:\n\n- 1 = Not well at all (completely wrong or "
        "unrelated)\n- 2 = Slightly relevant\n- 3 = Somewhat accurate\n- 4 = Mostly accurate\n- 5 = Exactly as "
        "expected for this country\n\nTask:\n\nPROMPT: {prompt}\n\nCOUNTRY: {country}"
    ),
    "user": _SCORE_FORMAT,
}
JUDGE_HAL = {
    "system": (
        "You are a helpful assistant scoring whether an image contains incorrect elements with respect to the "
        "mentioned activity and country. Rate on a scale from 1 to 5 using the rules below. Only output the "
        "score in the required format.\n\nScoring Scale:\n\n- 1 = Not at all. All elements seem appropriate.\n"
        "- 2 = Slightly. One minor element seems foreign.\n- 3 = Somewhat. A few elements feel unusual.\n"
        "- 4 = Mostly. Many elements appear incorrect or from another culture.\n- 5 = Strongly. The image is "
        "completely wrong, most elements are wrong, the activity is wrong, or the scene belongs to another "
        "country.\n\nTask:\n\nPROMPT: {prompt}\n\nCOUNTRY: {country}"
    ),
    "user": _SCORE_FORMAT,
}
JUDGE_EXAG = {
    "system": (
        "You are a helpful assistant scoring how exaggerated an image is in terms of cultural elements (e.g., "
        "attire, objects, background, art/design). Rate on a scale from 1 to 5 using the rules below. Only "
        "output the score in the required format.\n\nScoring Scale:\n\n- 1 = Appropriate and balanced.\n"
        "- 2 = Slightly decorative but within cultural norms.\n- 3 = Several features feel idealized or overly "
        "emphasized.\n- 4 = Many elements feel exaggerated and unrealistic.\n- 5 = Strongly stereotypical, "
        "misleading, or culturally irrelevant.\n\nTask:\n\nPROMPT: {prompt}\n\nCOUNTRY: {country}"
    ),
    "user": _SCORE_FORMAT,
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
    source="CULTIVate (cultivate-ahead.txt), Sec. 4.2 Study Design and Quality Control, App. A.4",
    k=2,
    sample_strata=("country", "category", "generator"),
    sample_size=398,
    eligibility=({"attribute": "nationality", "item_key": "country"},),
    qc={"rationale_question": "rationale"},
    notes=(
        "The paper also used attention checks (selecting a pre-mentioned number) and repeated "
        "questions to test consistency, without giving their rates: import attention items and "
        "set the rates yourself.",
        "1-2 activities per category and country; real images for 3 countries besides the three T2I models.",
    ),
)


FAITHFULNESS = Preset(
    key="cultivate.faithfulness",
    name="CULTIVate cultural faithfulness (GT-FAITH / EXAG / HAL / REALISM)",
    protocol=FAITH_PROTOCOL,
    item_fields=FAITH_ITEM_FIELDS,
    rubric=FAITH_RUBRIC,
    demo_items=faithfulness_demo_items,
    defaults={"k": 2},
    study_design=FAITH_STUDY_DESIGN,
    judge_prompt=FAITH_JUDGE_PROMPT,
)

# --------------------------------------------------------------------------- descriptors
DESC_PROTOCOL = (
    "CULTIVate / AHEaD (cultivate-ahead.txt), Sec. 4.2 and App. A.5 (Table 11): human validation of "
    "the LLM-generated reference descriptors of an activity in a country. Annotators mark each "
    "descriptor as correct or incorrect (precision; 90% in the paper), rate overall descriptor "
    "coverage on a 5-point Likert scale (average 4.5/5) and list missing descriptors in free text "
    "(26 of 378 annotators reported omissions)."
)

DESC_INSTRUCTIONS = """\
We also evaluate reference descriptor quality through human evaluation. We measure precision by having annotators mark each descriptor as correct or incorrect. It is infeasible to compute recall because no ground-truth descriptor set exists. Instead, we estimate recall through two measures: (1) annotators rated overall descriptor quality on a 5-point Likert scale, and (2) annotators identified missing descriptors in free-text responses.

For each descriptor of the activity: mark it correct (1) if it is something an image of this activity in this country could correctly show, incorrect (0) otherwise. Then rate how well the whole list covers the activity, and list any missing descriptors."""

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
            "help": "Our default anchors (the paper reports a 5-point Likert rating of overall descriptor quality).",
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
}

_DESC_DEMO = [
    (
        "Iran",
        GS,
        "eating",
        "eating at home",
        [
            "family sitting on the floor around a sofreh",
            "bowls of rice with saffron",
            "plates of fresh herbs",
            "Persian rug underneath the meal",
            "glasses of black tea",
            "people eating with chopsticks",
        ],
    ),
    (
        "India",
        GS,
        "celebration",
        "celebrating Diwali",
        [
            "rows of small oil lamps (diyas)",
            "colourful rangoli patterns on the floor",
            "fireworks in the night sky",
            "people in traditional saris and kurtas",
            "trays of sweets",
            "carved pumpkins on the doorstep",
        ],
    ),
    (
        "Nigeria",
        GS,
        "wedding",
        "a traditional wedding",
        [
            "couple in matching aso-ebi fabric",
            "women wearing gele head ties",
            "guests spraying money on the couple",
            "drummers playing talking drums",
            "white wedding cake with many tiers",
        ],
    ),
    (
        "Nepal",
        GS,
        "greeting",
        "greeting an elder",
        [
            "palms pressed together in namaste",
            "slight bow of the head",
            "touching the elder's feet",
            "tika on the forehead",
            "firm handshake with eye contact",
        ],
    ),
    (
        "Brazil",
        GS,
        "dance",
        "dancing samba",
        [
            "dancers in feathered carnival costumes",
            "street parade with drummers",
            "fast footwork",
            "sambadrome stands with crowds",
            "dancers wearing kimonos",
        ],
    ),
    (
        "Germany",
        GN,
        "concert",
        "attending an outdoor concert",
        [
            "crowd in front of an open-air stage",
            "people holding beer cups",
            "summer festival setting",
            "stage lighting rigs",
            "rain ponchos",
        ],
    ),
    (
        "France",
        GN,
        "eating",
        "eating at a restaurant",
        [
            "bistro tables on a terrace",
            "baguette in a bread basket",
            "glass of red wine",
            "waiter in a black apron",
            "cheese course",
            "sushi conveyor belt",
        ],
    ),
    (
        "Spain",
        GN,
        "celebration",
        "celebrating La Tomatina",
        [
            "crowds throwing tomatoes in a street",
            "people in white t-shirts covered in red pulp",
            "trucks loaded with tomatoes",
            "goggles and swimwear",
            "bulls running through the street",
        ],
    ),
]


def descriptors_demo_items(folder: Path) -> list[dict[str, Any]]:
    items = []
    for i, (country, region, category, activity, descs) in enumerate(_DESC_DEMO, start=1):
        item: dict[str, Any] = {
            "id": f"cultivate-desc-{i:02d}",
            "activity": activity,
            "descriptors": descs,
            "country": country,
            "region": region,
            "category": category,
        }
        if i % 3 != 0:  # the image is optional
            item["image"] = draw_image(folder, f"cultivate_desc_{i:02d}.png", activity, subtitle=country)
        items.append(item)
    return items


# Sec. 4.2 "Annotations" and App. A.5 (Table 11): descriptors of 7 countries were marked correct /
# incorrect by annotators of the Sec. 4.2 human study, recruited "matching each country's
# nationality (verified by Prolific)" (Sec. 4.2 "Quality Control"). The paper gives no number of
# annotators per descriptor list, no sample design and no QC specific to this form.
DESC_STUDY_DESIGN = StudyDesign(
    source="CULTIVate (cultivate-ahead.txt), Sec. 4.2 Annotations and Quality Control, App. A.5",
    eligibility=({"attribute": "nationality", "item_key": "country"},),
    notes=("Table 11 covers 7 countries; the paper does not say how many annotators rated each list.",),
)


DESCRIPTORS = Preset(
    key="cultivate.descriptors",
    name="CULTIVate reference descriptor validation",
    protocol=DESC_PROTOCOL,
    item_fields=DESC_ITEM_FIELDS,
    rubric=DESC_RUBRIC,
    demo_items=descriptors_demo_items,
    defaults={"k": 2},
    study_design=DESC_STUDY_DESIGN,
)

PRESETS = [FAITHFULNESS, DESCRIPTORS]
