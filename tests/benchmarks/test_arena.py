"""The pairwise-preference preset (Zheng et al., NeurIPS 2023, MT-Bench and Chatbot Arena): its
item fields, wording, the order of the pair and what a vote means in the item's own order."""

from __future__ import annotations

import pytest

from annotation.rubric import AnswerError, Rubric
from benchmarks.registry import get_preset

PRESET = get_preset("arena.preference")
ITEM = {"prompt": "q", "model_a": "gpt-4", "response_a": "a", "model_b": "llama-13b", "response_b": "b"}
SWAPPED = {"pair_order": {"preference": ["response_b", "response_a"]}}


def rubric() -> Rubric:
    return Rubric.from_schema(PRESET.rubric)


def test_the_systems_are_stored_with_the_item_and_hidden_from_annotators():
    fields = {f["name"]: f for f in PRESET.item_fields}
    assert list(fields) == ["prompt", "model_a", "response_a", "model_b", "response_b"]
    # anonymous votes, as the Arena's: the names are data, never shown
    assert fields["model_a"]["display"] is False and fields["model_b"]["display"] is False
    assert fields["response_a"]["label"] == fields["response_b"]["label"]  # nothing tells the sides apart
    assert PRESET.defaults["randomise_pair_order"] is True


def test_the_question_is_a_vote_with_a_tie_and_an_optional_reason():
    r = rubric()
    vote = r.question("preference")
    assert vote.type == "pairwise" and vote.pair == ("response_a", "response_b")
    assert vote.option_values() == ["left", "right", "tie"]
    assert r.question("reason").type == "text"
    assert r.validate({"preference": "tie"}, item=ITEM) == {"preference": "tie", "reason": None}
    with pytest.raises(AnswerError) as exc:
        r.validate({"reason": "no vote"}, item=ITEM)
    assert "preference" in exc.value.errors


@pytest.mark.parametrize(
    "side, presentation, wins",
    [
        ("left", None, (1, 0, 0)),  # the item's own order: left is model_a's answer
        ("right", None, (0, 1, 0)),
        ("left", SWAPPED, (0, 1, 0)),  # shown swapped: left is model_b's answer
        ("right", SWAPPED, (1, 0, 0)),
        ("tie", SWAPPED, (0, 0, 1)),
    ],
)
def test_a_vote_counts_for_the_system_whose_answer_was_picked(side, presentation, wins):
    r = rubric()
    cleaned = r.validate({"preference": side}, item=ITEM, presentation=presentation)
    derived = r.derive(cleaned, presentation=presentation)
    assert (derived["a_wins"], derived["b_wins"], derived["tie"]) == wins


def test_the_judge_prompt_is_the_papers_pairwise_prompt():
    prompt = PRESET.judge_prompt
    assert prompt.parser == "choice" and prompt.questions == ("preference",)
    system, user = prompt.template["system"], prompt.template["user"]
    # Zheng et al. Fig. 5, its output contract and its warnings about position and names
    assert system.startswith("Please act as an impartial judge and evaluate the quality of the responses")
    assert '"[[A]]" if assistant A is better, "[[B]]" if assistant B is better, and "[[C]]" for a tie.' in system
    assert "Avoid any position biases" in system and "Do not favor certain names of the assistants." in system
    # the judge reads the answers, never the systems' names
    assert "{response_a}" in user and "{response_b}" in user and "{prompt}" in user
    assert "{model_a}" not in user + system and "{model_b}" not in user + system


def test_the_swap_for_the_position_check_moves_the_names_with_the_answers():
    order = PRESET.pair_order
    assert ("response_a", "response_b") in order.fields and ("model_a", "model_b") in order.fields
    assert order.swap_values == {"preference": ("left", "right")}


@pytest.mark.parametrize("locale", ["zh-hans", "de"])
def test_the_translations_keep_the_fields_of_the_prompts(locale):
    shown = rubric().localized(locale)
    assert shown.title != rubric().title
    assert shown.question("preference").label != "Which response is better?"
