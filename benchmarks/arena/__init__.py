"""Pairwise preference, Chatbot Arena / MT-Bench style (Zheng et al., NeurIPS 2023 Datasets and
Benchmarks, "Judging LLM-as-a-Judge with MT-Bench and Chatbot Arena", Sec. 2-4): a user's
question, the answers of two named systems, and "A better / B better / tie" with an optional
reason. The systems' names are item fields (``model_a``, ``model_b``), kept from annotators as in
the Arena's anonymous battles, so rankings of systems (``hvstats/ranking.py``, ``manage.py
rank``) can be read from the ratings; the two answers are shown in an order drawn per
assignment and stored (``randomise_pair_order``, as the CQ-Bench Turing pair).

The declaration; the wording is in ``prompts.py``, the demo items and simulated study in
``demo/``."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_noop

from ..base import JudgePrompt, LazyReport, PairOrder, Preset, StudyDesign
from ..demo_data import DemoItems, DemoStudy
from .prompts import PAIR_JUDGE_SYSTEM, PAIR_JUDGE_USER, PREFERENCE_INSTRUCTIONS, PREFERENCE_TRANSLATIONS

PREFERENCE_PROTOCOL = gettext_noop(
    "Pairwise preference after Zheng et al. (NeurIPS 2023), Judging LLM-as-a-Judge with MT-Bench and Chatbot "
    "Arena, Sec. 2-4: annotators see a user question and the answers of two anonymous systems, in an order drawn "
    "per assignment and stored, and choose A better, B better or tie, with an optional reason. The systems' names "
    "are stored with the item (model_a, model_b), so people's and judges' votes rank the systems. The paper's "
    "pairwise judge prompt (Fig. 5) answers [[A]], [[B]] or [[C]] (tie); it reports GPT-4 agreeing with experts "
    "as often as experts agree with each other (66% with ties, 85% without)."
)

PREFERENCE_ITEM_FIELDS: list[dict[str, Any]] = [
    {"name": "prompt", "type": "longtext", "label": "User question"},
    # the systems' names: stored for rankings and exports, never shown to annotators (the Arena's
    # battles are anonymous, Zheng et al. Sec. 2.3, so a vote is about the answer, not the name)
    {"name": "model_a", "type": "text", "display": False, "label": "Model A"},
    # identical labels on purpose: the two answers are shown in the stored random order
    {"name": "response_a", "type": "longtext", "label": "Response"},
    {"name": "model_b", "type": "text", "display": False, "label": "Model B"},
    {"name": "response_b", "type": "longtext", "label": "Response"},
]

PREFERENCE_RUBRIC: dict[str, Any] = {
    "title": "Pairwise preference (Chatbot Arena / MT-Bench)",
    "instructions": PREFERENCE_INSTRUCTIONS,
    "questions": [
        {
            "id": "preference",
            "type": "pairwise",
            "label": "Which response is better?",
            "prompt": "Which response follows the user's instructions and answers the question better? Choose tie "
            "if both are equally good or equally bad.",
            "pair": ["response_a", "response_b"],
            "allow_tie": True,
        },
        {
            "id": "reason",
            "type": "text",
            "required": False,
            "label": "Reason (optional)",
            "prompt": "Say in a sentence why you chose as you did.",
        },
    ],
    # the vote in the item's own order (the form's left / right are mapped back through the
    # stored presentation): model_a wins, model_b wins, or a tie
    "derived": [
        {"id": "a_wins", "label": "Model A wins", "expr": "1 if preference_field == 'response_a' else 0"},
        {"id": "b_wins", "label": "Model B wins", "expr": "1 if preference_field == 'response_b' else 0"},
        {"id": "tie", "label": "Tie", "expr": "1 if preference_field == 'tie' else 0"},
    ],
    "translations": PREFERENCE_TRANSLATIONS,
}

PREFERENCE_JUDGE_PROMPT = JudgePrompt(
    template={"system": PAIR_JUDGE_SYSTEM, "user": PAIR_JUDGE_USER}, parser="choice", questions=("preference",)
)

# Sec. 4.1: the MT-Bench human judgments are about 3K expert votes on the answers of six models
# to 80 questions (graduate students); Sec. 2.3: the Arena's are crowd votes, one per anonymous
# battle. No number of votes per pair, sample design or QC rate is given.
PREFERENCE_STUDY_DESIGN = StudyDesign(
    source=gettext_noop("Zheng et al. (NeurIPS 2023), MT-Bench and Chatbot Arena, Sec. 2.3 and 4.1"),
    k=3,
    sample_strata=("category",),
    notes=(
        gettext_noop(
            "MT-Bench's expert votes cover 80 questions in 8 categories and 6 models; the paper does not fix how "
            "many people vote on one pair, so the default of three gives agreement between people as well as "
            "with a judge."
        ),
    ),
)

PREFERENCE = Preset(
    key="arena.preference",
    name=gettext_noop("Pairwise preference (Chatbot Arena / MT-Bench)"),
    protocol=PREFERENCE_PROTOCOL,
    item_fields=PREFERENCE_ITEM_FIELDS,
    rubric=PREFERENCE_RUBRIC,
    demo_items=DemoItems("arena", "preference"),
    demo_study=DemoStudy("arena", "preference"),
    defaults={"k": 3, "randomise_pair_order": True},
    study_design=PREFERENCE_STUDY_DESIGN,
    judge_prompt=PREFERENCE_JUDGE_PROMPT,
    # a judge reads assistant A first unless asked in both orders: the swap exchanges the answers
    # and the names with them, and "left" (A better) names the first
    pair_order=PairOrder(
        fields=(("response_a", "response_b"), ("model_a", "model_b")),
        verdict=("preference",),
        swap_values={"preference": ("left", "right")},
    ),
    validation_report=LazyReport("benchmarks.arena.tables", "preference_validation_report"),
)

PRESETS = [PREFERENCE]
