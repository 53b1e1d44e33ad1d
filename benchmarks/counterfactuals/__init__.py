"""Cultural Counterfactuals image audit (cultural-counterfactuals.txt, App. A.4, Table 4; model
judges: Table 3 prompts).

The declaration; the paper's wording is in ``prompts.py``, its validation tables in
``tables.py`` (imported when a report is asked for), the demo items and answers in ``demo/``."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_noop

from ..base import (
    ClassifierBank,
    ClosedQuestion,
    DirectJudge,
    JudgePrompt,
    LazyReport,
    NamedTemplate,
    Preset,
    StudyDesign,
)
from ..demo_data import DemoItems, DemoStudy
from .prompts import CLASSIFIER, CONTEXT_CHOICES, INSTRUCTIONS, PEOPLE_CHOICES, REFUSAL_CLASSIFIER, TRANSLATIONS

PROTOCOL = gettext_noop(
    "Cultural Counterfactuals (cultural-counterfactuals.txt), App. A.4 Human Validation of Dataset "
    "Quality and Table 4. Each item is a counterfactual image made by fusing a source context image "
    "(religion 6 / nationality 8 / socioeconomic 3 context labels) with a person image (age group, "
    "race, gender annotated) using FLUX.1-Kontext-dev. Annotators see the source context and person "
    "images, the counterfactual image, the intended context and the person's social attributes, and "
    "tick any of six failure flags. Sampling: random, equal numbers per dimension. Reported: the rate "
    "of each flag (9.7%, 4.3%, 1.7%, 0.3%, 0%, 0%). Model judges (Table 3 closed-choice classifiers, "
    "CLIP similarity filter, refusal classifier) were not compared with people in the paper."
)

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
    (
        "context_counterfactual",
        "Context group cannot be discerned only in the counterfactual image",
        "flag_context_counterfactual",
    ),
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
    "translations": TRANSLATIONS,
}

TABLE3 = ClassifierBank(
    source="Table 3",
    questions={
        k: ClosedQuestion(prompt, tuple(choices))
        for k, (prompt, choices) in {**CONTEXT_CHOICES, **PEOPLE_CHOICES}.items()
    },
    context=tuple(CONTEXT_CHOICES),
)

# Table 3 closed-choice classifiers on the source and counterfactual images, mapped to the
# Table 4 flags they can decide (see CLASSIFIER)
JUDGE_PROMPT = JudgePrompt(template=CLASSIFIER, parser="choice", questions=("flags",))

# Sec. 3.2 image-image filter: flags 4 and 6 only (judges/decides.py). ``clip_similarity`` is the
# paper's (CLIP-ViT-L/14, below 0.75 to the context or 0.85 to the person image);
# ``image_similarity`` an SSIM proxy with its own thresholds (judges/backends/image_similarity.py)
DIRECT_JUDGES = {
    "clip_similarity": DirectJudge(questions=("flags",), mode="counterfactual_filter"),
    "image_similarity": DirectJudge(questions=("flags",), mode="counterfactual_filter"),
}

NAMED_TEMPLATES = {
    "counterfactuals.classifier": NamedTemplate(
        label=gettext_noop("Cultural Counterfactuals Table 3 classifiers -> failure flags"), template=CLASSIFIER
    ),
    "refusal": NamedTemplate(
        label=gettext_noop("Refusal classifier (refused / answered, Cultural Counterfactuals App. D)"),
        template=REFUSAL_CLASSIFIER,
    ),
}

# Table 4 reports failure rates; an image is kept when no failure flag is ticked.
SUGGESTED_POLICY = {"rule": "any_failure == 0", "aggregation": "majority"}


# App. A.4: "Three of the authors of this work manually reviewed 100 randomly sampled
# counterfactual images each ... An equal number of images with religion, nationality, and
# socioeconomic contexts were annotated". One reviewer per image (k = 1, the project default):
# 3 x 100 = 300 images, which Table 4's smallest rate, 0.3% = 1/300, matches. No eligibility
# and no QC are given.
STUDY_DESIGN = StudyDesign(
    source=gettext_noop("Cultural Counterfactuals (cultural-counterfactuals.txt), App. A.4"),
    k=1,
    sample_strata=("dimension",),
    sample_size=300,
    sample_allocation="equal",
    cap_per_annotator=100,
    notes=(gettext_noop("The reviewers were three of the paper's authors (no platform setting)."),),
)


AUDIT = Preset(
    key="counterfactuals.audit",
    name=gettext_noop("Cultural Counterfactuals image audit"),
    protocol=PROTOCOL,
    item_fields=ITEM_FIELDS,
    rubric=RUBRIC,
    demo_items=DemoItems("counterfactuals", "audit"),
    demo_study=DemoStudy("counterfactuals", "audit"),
    defaults={"k": 1},
    study_design=STUDY_DESIGN,
    judge_prompt=JUDGE_PROMPT,
    direct_judges=DIRECT_JUDGES,
    named_templates=NAMED_TEMPLATES,
    classifier_bank=TABLE3,
    suggested_policy=SUGGESTED_POLICY,
    validation_report=LazyReport("benchmarks.counterfactuals.tables", "validation_report"),
)

PRESETS = [AUDIT]
