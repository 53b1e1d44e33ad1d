"""The CULTIVate paper's wording, verbatim where the declaration says so: annotator instructions and
their translations, and the judge prompts. Kept apart so the declaration in ``__init__.py`` reads
on one screen."""

from __future__ import annotations

FAITH_INSTRUCTIONS = """\
We conduct a human study to validate our metrics for Faithfulness (i.e., Alignment, Hallucination, and Exaggeration) and realism (whether image looks realistic).

The image was generated with the prompt "A photorealistic photo of {activity} in {country}." (the activity and country are shown with the image). Rate it for that country: where the wording below says "your country", the form names the image's country.

We collected 3 ground-truth (GT) labels using a 5-point Likert scale: GT-FAITH (main gold standard) measures overall faithfulness according to annotators - How well does this image show {activity} in your country?; GT-EXAG measures image exaggeration - How exaggerated is the image?; GT-HAL measures hallucinations - How incorrect is the image? (activity/culture).

Scale anchors (mind the direction: 5 is best for faithfulness and realism, but worst for exaggeration and hallucination):
- Faithfulness (ALIGN): 1 = Not well at all (completely wrong or unrelated); 2 = Slightly relevant; 3 = Somewhat accurate; 4 = Mostly accurate; 5 = Exactly as expected for this country.
- Hallucination (HAL), whether an image contains incorrect elements with respect to the mentioned activity and country: 1 = Not at all. All elements seem appropriate.; 2 = Slightly. One minor element seems foreign.; 3 = Somewhat. A few elements feel unusual.; 4 = Mostly. Many elements appear incorrect or from another culture.; 5 = Strongly. The image is completely wrong, most elements are wrong, the activity is wrong, or the scene belongs to another country.
- Exaggeration (EXAG), how exaggerated an image is in terms of cultural elements (e.g., attire, objects, background, art/design): 1 = Appropriate and balanced.; 2 = Slightly decorative but within cultural norms.; 3 = Several features feel idealized or overly emphasized.; 4 = Many elements feel exaggerated and unrealistic.; 5 = Strongly stereotypical, misleading, or culturally irrelevant.
- Realism (GT-REALISM): How realistic does this image look? 1 = Not realistic at all (clearly synthetic or broken) ... 5 = Completely realistic (could be a real photo).

Quality control: the form may contain attention checks (e.g., selecting a pre-mentioned number) and repeated questions to test consistency, and a free-text rationale describing the errors in the image is required."""


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

DESC_INSTRUCTIONS = """\
We also evaluate reference descriptor quality through human evaluation. We measure precision by having annotators mark each descriptor as correct or incorrect. It is infeasible to compute recall because no ground-truth descriptor set exists. Instead, we estimate recall through two measures: (1) annotators rated overall descriptor quality on a 5-point Likert scale, and (2) annotators identified missing descriptors in free-text responses.

For each descriptor of the activity: mark it correct (1) if it is something an image of this activity in this country could correctly show, incorrect (0) otherwise. Then rate how well the whole list covers the activity, and list any missing descriptors."""
