"""The CQ-Bench paper's wording, verbatim where the declaration says so: annotator instructions and
their translations, and the judge prompts. Kept apart so the declaration in ``__init__.py`` reads
on one screen."""

from __future__ import annotations

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

TURING_INSTRUCTIONS = """\
We present annotators with one human-written utterance and one model-generated utterance in random order. For each pair, annotators choose among three options: human, model, or tie.

Read both utterances and pick the one you think was written by a person (the other was generated by a language model). Choose "Tie" only if you cannot distinguish between the two sources. A tie choice is assigned a score of 0, indicating that the annotator cannot distinguish between the two sources."""

VALUE_EXTRACTION_INSTRUCTIONS = """\
You will be given two sets of texts: a set of predicted values and a ground truth set of values. Your task is to determine how many of the ground truth values are fully represented in the predicted values. A ground truth value is considered correct if all of its components are meaningfully discussed in the predicted value, even if there is no exact 1-to-1 match. It could be many-to-1 match i.e. many values to 1 ground truth value. If the ground truth value is fully presented, score 1, if it is partially presented, score 0.5, if it is not mentioned at all, score 0.

We define \u201cpartially presented\u201d as an output that mentions the same topic but lacks sufficient specificity."""

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
