"""The headline of human labels saved on the answer panel (agreement page and printable report),
in words for a saving, none and a cost, in every language of the UI."""

from __future__ import annotations

import pytest
from django.utils import translation

from agreement.presentation import _answer_panel


def answer(items: int | None) -> dict:
    saved = None if items is None else {"items": items, "human_ratings": 2 * items, "field": "q1"}
    return {
        "judge": "gpt",
        "verdict": "replace",
        "fields_passed": ["q1"],
        "fields_failed": [],
        "fields_undecided": [],
        "per_field": {"q1": {"status": "passed", "winning_rate": 0.6, "n_humans": 3, "reason": ""}},
        "stability": 1.0,
        "replicates": 3,
        "flipped_by": [],
        "humans": ["a", "b", "c"],
        "n_humans": 3,
        "n_items": 40,
        "epsilon": 0.2,
        "labels_saved": saved,
    }


@pytest.mark.parametrize(
    "items, en, de, zh",
    [
        (12, "12 human-rated items (24 ratings)", "12 von Menschen bewertete Items", "12 个人工评分条目"),
        (0, "none (the judge does not narrow the interval on q1)", "keine (der Judge", "无（评审模型没有缩小 q1"),
        (-5, "none; the judge costs 5 human-rated items (10 ratings)", "der Judge kostet bei q1 5", "多需要 5 个"),
    ],
)
def test_the_saving_none_and_a_cost_are_said_in_words(items, en, de, zh):
    for lang, words in (("en", en), ("de", de), ("zh-hans", zh)):
        with translation.override(lang):
            saved = _answer_panel({"answers": [answer(items)]})[0]["saved"]
        assert words in saved, (lang, saved)


def test_no_headline_without_a_ppi_field():
    assert _answer_panel({"answers": [answer(None)]})[0]["saved"] == ""
