"""Rubric translations as rubric data (issue 14): the schema's ``translations`` are checked when
a rubric is parsed, a localized rubric changes only the words an annotator reads, and the
translated presets cover every text their annotators see."""

from __future__ import annotations

import re

import pytest

from annotation.rubric import CANONICAL_LOCALE, Rubric, RubricError
from benchmarks.registry import PRESETS

BASE = {
    "title": "Pairs",
    "instructions": "Judge the pair.",
    "questions": [
        {
            "id": "q1",
            "type": "scale",
            "label": "Q1",
            "prompt": "Is {option_a} shown?",
            "options": [{"value": 0, "label": "no"}, {"value": 1, "label": "partly"}, {"value": 2, "label": "yes"}],
        },
        {
            "id": "verdict",
            "type": "choice",
            "options": [{"value": "G", "label": "Good"}, {"value": "B", "label": "Bad"}],
        },
        {
            "id": "per_value",
            "type": "binary",
            "options": [{"value": 0, "label": "no"}, {"value": 1, "label": "yes"}],
            "repeat": {"over": "values", "label": "V{n}", "show": [["statement", "Statement"]]},
        },
        {"id": "note", "type": "text", "required": False},
    ],
    "acceptance": {"expr": "q1 == 2", "description": "Q1 must be 2."},
}


def with_translations(translations) -> dict:
    return {**BASE, "translations": translations}


@pytest.mark.parametrize(
    ("translations", "message"),
    [
        ({"fr": {"title": "Paires"}}, r"translations\['fr'\]: unknown locale \(the UI's languages: de, zh-hans\)"),
        ({"en": {"title": "Pairs"}}, r"'en' is the canonical wording"),
        ({"de": {"questions": {"q9": {"label": "Q9"}}}}, r"translations\['de'\]: unknown question id 'q9'"),
        ({"de": {"questions": {"q1": {"options": {"7": "sieben"}}}}}, r"unknown option value '7' \(values: 0, 1, 2\)"),
        ({"de": {"questions": {"q1": {"prompt": "Wird es gezeigt?"}}}}, r"must name the canonical text's fields"),
        (
            {"de": {"questions": {"q1": {"prompt": "Wird {option_b} gezeigt?"}}}},
            r"\(\{option_a\}\), not \(\{option_b\}\)",
        ),
        ({"de": {"questions": {"q1": {"colour": "rot"}}}}, r"unknown keys colour"),
        ({"de": {"subtitle": "x"}}, r"translations\['de'\]: unknown keys subtitle"),
        ({"de": {"title": ""}}, r"translations\['de'\].title must be non-empty text"),
        ({"de": {"questions": {"q1": {"label": 3}}}}, r"label must be non-empty text"),
        ({"de": {"questions": {"note": {"options": {"a": "b"}}}}}, r"only option questions take translated options"),
        ({"de": {"questions": {"q1": {"repeat_label": "W{n}"}}}}, r"question q1 does not repeat"),
        ({"de": {"questions": {"per_value": {"repeat_label": "Wert"}}}}, r"repeat_label must name"),
        ({"de": {"questions": {"per_value": {"show": {"other": "x"}}}}}, r"labels by the keys of repeat.show"),
        ({"de": {"fields": {"Image A": "Bild A"}}}, r"'Image A' is not an item field name"),
        ({"de": {"fields": ["image_a"]}}, r"fields must be an object"),
        ({"de": "Paare"}, r"translations\['de'\] must be an object"),
        (["de"], r"translations must be an object"),
    ],
)
def test_a_bad_translation_is_refused_with_what_is_wrong(translations, message):
    with pytest.raises(RubricError, match=message):
        Rubric.from_schema(with_translations(translations))


def test_a_localized_rubric_changes_only_the_words():
    rubric = Rubric.from_schema(
        with_translations(
            {
                "de": {
                    "title": "Paare",
                    "instructions": "Beurteilen Sie das Paar.",
                    "acceptance": "Q1 muss 2 sein.",
                    "fields": {"option_a": "Option A"},
                    "questions": {
                        "q1": {"prompt": "Wird {option_a} gezeigt?", "options": {"0": "nein", "2": "ja"}},
                        "per_value": {"repeat_label": "W{n}", "show": {"statement": "Aussage"}},
                    },
                }
            }
        )
    )
    de = rubric.localized("de")
    assert (de.title, de.instructions, de.acceptance_description) == (
        "Paare",
        "Beurteilen Sie das Paar.",
        "Q1 muss 2 sein.",
    )
    assert de.field_labels == {"option_a": "Option A"} and rubric.field_labels == {}
    q1 = de.question("q1")
    assert q1.prompt == "Wird {option_a} gezeigt?"
    # an option left out keeps the canonical anchor; values and keys never change
    assert [(o.value, o.key, o.label) for o in q1.options] == [(0, "0", "nein"), (1, "1", "partly"), (2, "2", "ja")]
    assert de.question("per_value").repeat_label == "W{n}"
    assert de.question("per_value").repeat_show_labels == ("Aussage",)
    assert de.question("verdict") == rubric.question("verdict")  # untranslated: canonical
    # the same answers validate and derive alike under both
    item = {"values": ["a"], "option_a": "x"}
    answers = {"q1": 2, "verdict": "G", "per_value": [1]}
    assert de.validate(answers, item=item) == rubric.validate(answers, item=item)
    assert de.derive(rubric.validate(answers, item=item)) == rubric.derive(rubric.validate(answers, item=item))
    assert rubric.localized(None) is rubric and rubric.localized(CANONICAL_LOCALE) is rubric
    assert rubric.localized("de") is de  # made once per rubric


def test_the_ui_language_picks_the_translation():
    rubric = Rubric.from_schema(with_translations({"de": {"title": "Paare"}}))
    assert rubric.pick_locale("de") == "de"
    assert rubric.pick_locale("de-at") == "de"  # a regional variant falls back to the language
    assert rubric.pick_locale("zh-hans") is None  # no Chinese: the canonical wording
    assert rubric.pick_locale("en") is None


def test_the_stated_locale_must_be_one_the_rubric_is_shown_in():
    rubric = Rubric.from_schema(with_translations({"de": {"title": "Paare"}}))
    assert rubric.check_locale("de") == "de"
    assert rubric.check_locale("EN") == "en"
    assert rubric.check_locale("") == ""
    with pytest.raises(ValueError, match=r"no wording in zh-hans \(it has: en, de\)"):
        rubric.check_locale("zh-hans")
    with pytest.raises(ValueError, match="must be text"):
        rubric.check_locale(3)


# Every preset's annotators read the rubric in Chinese and German as well as in the paper's
# English: every text an annotator reads is translated, in both languages.
LOCALES = ["zh-hans", "de"]
_FIELD = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


def test_every_preset_has_a_chinese_and_a_german_translation():
    assert {key: sorted(Rubric.from_schema(p.rubric).translations) for key, p in PRESETS.items()} == {
        key: sorted(LOCALES) for key in PRESETS
    }


@pytest.mark.parametrize("key", sorted(PRESETS))
@pytest.mark.parametrize("locale", LOCALES)
def test_every_preset_translation_covers_every_text_the_annotator_reads(key, locale):
    rubric = Rubric.from_schema(PRESETS[key].rubric)
    tr = rubric.translations[locale]
    # everything is given, none of it left to fall back to the canonical wording
    assert {"title", "instructions", "fields", "questions"} <= set(tr)
    if rubric.acceptance_description:
        assert "acceptance" in tr
    assert set(tr["questions"]) == {q.id for q in rubric.questions}
    for q in rubric.questions:
        given = tr["questions"][q.id]
        expected = {"label"} | {k for k in ("prompt", "help") if getattr(q, k)}
        if q.options and q.type != "pairwise":  # a pairwise question's sides are the form's words
            expected.add("options")
            assert set(given["options"]) == {str(o.value) for o in q.options}, q.id
        if q.repeat_over:
            expected.add("repeat_label")
            if q.repeat_show:
                expected.add("show")
                assert set(given["show"]) == set(q.repeat_show), q.id
        assert set(given) == expected, q.id
    shown = rubric.localized(locale)
    assert shown.title != rubric.title and shown.instructions != rubric.instructions
    if rubric.acceptance_description:
        assert shown.acceptance_description != rubric.acceptance_description
    for canonical, q in zip(rubric.questions, shown.questions, strict=True):
        if canonical.prompt:
            assert q.prompt != canonical.prompt, q.id
            assert set(_FIELD.findall(q.prompt)) == set(_FIELD.findall(canonical.prompt))
        if canonical.help:
            assert q.help != canonical.help, q.id
        if canonical.label != canonical.id and not re.fullmatch(r"Q\d \w+(-\w)?", canonical.label):
            assert q.label != canonical.label, q.id  # names such as "Q1 Match-A" stay as they are
        assert set(_FIELD.findall(q.repeat_label)) == set(_FIELD.findall(canonical.repeat_label)), q.id
        assert all(label.strip() for label in q.repeat_show_labels), q.id
        for o, c in zip(q.options, canonical.options, strict=True):
            assert o.value == c.value, (q.id, o.value)
            if q.type != "pairwise" and re.search(
                r"[^\W\d_]", c.label
            ):  # a bare point ("2") reads the same in every language
                assert o.label != c.label, (q.id, o.value)
    # the item's fields the form shows, by their names in the preset's item schema
    shown_fields = {f["name"] for f in PRESETS[key].item_fields if f.get("display", True) is not False}
    assert set(shown.field_labels) == shown_fields
