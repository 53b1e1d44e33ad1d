"""What the one form renderer (``annotation/presentation.py``) hands the annotate page for the
keyboard rules of issue 14: which answers ask a conditional question, which text is optional,
the reversed-scale cue, element labels; and that no preset shows a researcher's note."""

from __future__ import annotations

import json
import re

import pytest

from annotation.presentation import question_blocks
from annotation.rubric import Rubric, RubricError
from benchmarks.registry import PRESETS

CHOICE = {
    "id": "verdict",
    "type": "choice",
    "label": "Verdict",
    "options": [{"value": "G", "label": "G (Good): fine"}, {"value": "B", "label": "B (Bad): broken"}],
}
SCORE = {"id": "score", "type": "scale", "options": [{"value": v, "label": str(v)} for v in (1, 2, 3)]}


def blocks(*questions, item=None, answers=None) -> dict[str, dict]:
    rubric = Rubric.from_schema({"title": "t", "questions": list(questions)})
    return {b["id"]: b for b in question_blocks(rubric=rubric, item_ctx=item or {}, answers=answers, errors=None)}


def test_a_condition_on_one_choice_lists_the_values_that_ask_the_question():
    b = blocks(CHOICE, {"id": "reason", "type": "text", "required_if": "verdict == 'B'"})
    reason = b["reason"]
    assert json.loads(reason["required_when"]) == {"names": ["verdict"], "when": [["B"]]}
    assert reason["required_when_text"] == "Required when Verdict is B (Bad); skipped otherwise."
    assert not reason["required"] and not reason["optional_text"]  # conditional, not optional
    assert b["verdict"]["required"] and b["verdict"]["required_when"] == ""


def test_a_condition_on_two_answers_lists_every_combination_that_holds():
    b = blocks(CHOICE, SCORE, {"id": "why", "type": "text", "required_if": "score >= 2 and verdict != 'G'"})
    when = json.loads(b["why"]["required_when"])
    assert when["names"] == ["score", "verdict"]
    # as the server evaluates it: an unanswered score makes ``score >= 2`` None (not asked), an
    # unanswered verdict (null) is not 'G' (asked)
    assert {tuple(row) for row in when["when"]} == {("2", None), ("2", "B"), ("3", None), ("3", "B")}
    assert b["why"]["required_when_text"] == "Required for some answers to the questions above; skipped otherwise."


def test_a_condition_the_browser_cannot_list_is_left_to_the_server():
    b = blocks(
        {"id": "note", "type": "text"},
        {"id": "more", "type": "text", "required_if": "note == 'x'"},
    )
    assert b["more"]["required_when"] == ""  # the page then always shows it and never skips it
    assert b["more"]["conditional"] == "note == 'x'"
    assert b["more"]["required_when_text"] == "Required for some answers to the questions above."


def test_only_optional_unconditional_text_is_optional_text():
    b = blocks(
        CHOICE,
        {"id": "free", "type": "text"},
        {"id": "must", "type": "text", "required": True},
        {"id": "if_bad", "type": "text", "required_if": "verdict == 'B'"},
    )
    assert [k for k, v in b.items() if v["optional_text"]] == ["free"]


def test_a_reversed_scale_carries_a_cue_naming_its_ends():
    b = blocks({**SCORE, "reversed": True}, {**SCORE, "id": "plain"})
    assert b["score"]["reversed_cue"] == "Reversed scale: 1 = best, 3 = worst"
    assert b["plain"]["reversed_cue"] == ""
    with pytest.raises(RubricError, match="only a scale can be reversed"):
        Rubric.from_schema({"title": "t", "questions": [{**CHOICE, "reversed": True}]})


def test_repeated_elements_show_their_keys_under_the_labels_given():
    q = {
        **SCORE,
        "repeat": {"over": "rewrites", "label": "Rewrite {n}", "show": [["before", "Original line"], "after"]},
    }
    item = {"rewrites": [{"before": "b1", "after": "a1"}, {"before": "b2", "after": "a2"}]}
    els = blocks(q, item=item)["score"]["elements"]
    assert [e["label"] for e in els] == ["Rewrite 1", "Rewrite 2"]
    assert els[1]["shown"] == [("Original line", "b2"), ("After", "a2")]
    r = Rubric.from_schema({"title": "t", "questions": [q]})
    assert r.question("score").repeat_show == ("before", "after")  # judges read the keys as before
    with pytest.raises(RubricError, match=r"a key or \[key, label\]"):
        Rubric.from_schema({"title": "t", "questions": [{**q, "repeat": {"over": "rewrites", "show": [["a"]]}}]})


def test_cultivate_asks_about_the_items_country():
    rubric = Rubric.from_schema(PRESETS["cultivate.faithfulness"].rubric)
    b = {
        x["id"]: x
        for x in question_blocks(
            rubric=rubric, item_ctx={"activity": "eating at home", "country": "Iran"}, answers=None, errors=None
        )
    }
    assert b["faith"]["prompt"] == "How well does this image show eating at home in Iran?"
    assert b["exag"]["reversed_cue"] and b["hal"]["reversed_cue"]
    assert not b["faith"]["reversed_cue"] and not b["realism"]["reversed_cue"]


# Notes about where wording comes from are for researchers (the preset's protocol, comments);
# the annotator sees the protocol's text only (issue 14: "the paper does not give them").
RESEARCHER_NOTE = re.compile(r"(?i)\bthe paper\b|\bpaper's\b|\bour default\b")


@pytest.mark.parametrize("key", list(PRESETS))
def test_no_researcher_note_reaches_the_annotator(key):
    preset = PRESETS[key]
    r = preset.rubric
    shown = [r["title"], r.get("instructions", "")]
    for q in r["questions"]:
        shown += [q.get("label", ""), q.get("prompt", ""), q.get("help", "")]
        shown += [o.get("label", "") for o in q.get("options", [])]
    shown += [f.get("label", "") for f in preset.item_fields]
    found = [t for t in shown if RESEARCHER_NOTE.search(t)]
    assert not found, found
