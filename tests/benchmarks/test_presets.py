"""Protocol presets: schemas parse, demo data fits the item schema, the papers' wording is
present verbatim, and derived fields / acceptance rules compute what the papers define.
Pure pytest; no database."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.utils import translation
from PIL import Image

from annotation.rubric import AnswerError, Rubric
from benchmarks.base import COMMON_KEYS, FIELD_TYPES, Preset, without_file_names
from benchmarks.registry import PRESETS, get_preset
from studies import suggestions

try:  # the integrator's import checker, when present
    from annotation.item_schema import check_record
except ImportError:  # pragma: no cover
    check_record = None

KEYS = [
    "valueground.pair_quality",
    "cultivate.faithfulness",
    "cultivate.descriptors",
    "counterfactuals.audit",
    "blendvis.image",
    "blendvis.template",
    "cqbench.story",
    "cqbench.turing",
    "cqbench.value_extraction",
    "arena.preference",
]


def rubric(key: str) -> Rubric:
    return Rubric.from_schema(get_preset(key).rubric)


def all_text(key: str) -> str:
    """Every string a preset shows: instructions, labels, prompts, help and option anchors."""
    r = get_preset(key).rubric
    parts = [r.get("title", ""), r.get("instructions", "")]
    for q in r["questions"]:
        parts += [q.get("label", ""), q.get("prompt", ""), q.get("help", "")]
        parts += [o["label"] for o in q.get("options", [])]
    return "\n".join(parts)


def option_labels(key: str, qid: str) -> dict:
    q = next(q for q in get_preset(key).rubric["questions"] if q["id"] == qid)
    return {o["value"]: o["label"] for o in q["options"]}


# --------------------------------------------------------------------------- registry
def test_registry_order_and_keys():
    assert list(PRESETS) == KEYS
    for key, preset in PRESETS.items():
        assert isinstance(preset, Preset) and preset.key == key
        assert get_preset(key) is preset


def test_get_preset_unknown_key():
    with pytest.raises(KeyError, match="unknown preset 'nope'"):
        get_preset("nope")


# --------------------------------------------------------------------------- structure
@pytest.mark.parametrize("key", KEYS)
def test_rubric_parses_and_refers_to_item_fields(key):
    preset = get_preset(key)
    r = Rubric.from_schema(preset.rubric)
    assert r.title and r.instructions
    fields = {f["name"]: f for f in preset.item_fields}
    placeholders_ok = set(fields) | set(COMMON_KEYS)
    for q in r.questions:
        for name in re.findall(r"\{([a-z_][a-z0-9_]*)\}", q.prompt):
            assert name in placeholders_ok, f"{key}: prompt of {q.id} uses unknown {{{name}}}"
        if q.repeat_over:
            assert fields[q.repeat_over]["type"] == "list"
            keys = set(fields[q.repeat_over].get("keys", []))
            assert set(q.repeat_show) <= keys
        if q.pair:
            assert all(f in fields for f in q.pair)
    assert preset.defaults.get("k", 0) >= 1
    assert preset.name and len(preset.protocol) > 100


@pytest.mark.parametrize("language", ["de", "zh-hans"])
@pytest.mark.parametrize("key", KEYS)
def test_pages_show_a_presets_summary_in_the_ui_language_and_the_declaration_stays_english(key, language):
    """Issue 25: the name, protocol paragraph and study-design notes a researcher reads are
    translated where pages show them (never the paper's file name); the declaration itself, which
    exports, the demo's project names and judge prompts read, stays the English text."""
    preset = get_preset(key)
    design = preset.study_design
    english = (preset.name, preset.protocol, tuple(design.notes if design else ()), design.source if design else "")
    with translation.override(language):
        name, protocol = preset.display_name, preset.protocol_text
        assert (preset.name, preset.protocol) == english[:2]  # plain English strings, not lazy ones
        shown = suggestions.shown(design) if design else None
    assert name != preset.name and protocol != without_file_names(preset.protocol)
    assert not re.search(r"[\w-]+\.(?:txt|pdf|md)\b", protocol), protocol
    if shown is not None:
        assert shown.source != without_file_names(design.source)
        assert not re.search(r"[\w-]+\.(?:txt|pdf|md)\b", shown.source), shown.source
        assert all(n != e for n, e in zip(shown.notes, english[2], strict=True))
    assert all(type(v) is str for v in (preset.name, preset.protocol, *english[2], english[3]))


@pytest.mark.parametrize("key", KEYS)
def test_item_fields_well_formed(key):
    preset = get_preset(key)
    names = [f["name"] for f in preset.item_fields]
    assert len(names) == len(set(names))
    assert not set(names) & set(COMMON_KEYS)
    for f in preset.item_fields:
        assert f["type"] in FIELD_TYPES
        assert set(f) <= {"name", "type", "label", "group", "of", "keys", "required", "display", "hint"}
        if f["type"] == "list":
            assert f.get("of") in ("text", "object")


def _structural_errors(preset: Preset, record: dict) -> list[str]:
    """Fallback checker when annotation.item_schema is absent."""
    errors = []
    fields = {f["name"]: f for f in preset.item_fields}
    unknown = set(record) - set(fields) - set(COMMON_KEYS)
    if unknown:
        errors.append(f"unknown {unknown}")
    for name, spec in fields.items():
        v = record.get(name)
        if v is None:
            if spec.get("required", True):
                errors.append(f"missing {name}")
            continue
        t = spec["type"]
        ok = {
            "text": isinstance(v, str),
            "longtext": isinstance(v, str),
            "image": isinstance(v, str),
            "number": isinstance(v, (int, float)) and not isinstance(v, bool),
            "object": isinstance(v, dict),
            "list": isinstance(v, list),
        }[t]
        if t == "list" and ok:
            if spec.get("of") == "object":
                ok = all(
                    isinstance(e, dict) and all(isinstance(e.get(k), str) for k in spec.get("keys", [])) for e in v
                )
            else:
                ok = all(isinstance(e, str) and e.strip() for e in v)
        if not ok:
            errors.append(f"bad {name}")
    return errors


@pytest.mark.parametrize("key", KEYS)
def test_demo_items_fit_schema_and_images_exist(key, tmp_path: Path):
    preset = get_preset(key)
    items = preset.demo_items(tmp_path)
    # ValueGround's demo is large enough for the paper's 36-pair judge-validation design
    assert (36 <= len(items) <= 48) if key == "valueground.pair_quality" else (6 <= len(items) <= 10)
    ids = [it["id"] for it in items]
    assert len(ids) == len(set(ids))
    for it in items:
        errors = check_record(preset, it).errors if check_record else _structural_errors(preset, it)
        assert errors == [], (it.get("id"), errors)
        assert not _structural_errors(preset, it)
        for name in preset.image_fields():
            if name in it:
                path = tmp_path / it[name]
                assert path.is_file(), path
                assert path.stat().st_size < 20_000
                with Image.open(path) as im:
                    assert im.format == "PNG" and 256 <= max(im.size) <= 384
        Rubric.from_schema(preset.rubric)
    # deterministic
    again = preset.demo_items(tmp_path / "again")
    assert again == items
    for it in items:
        for name in preset.image_fields():
            if name in it:
                assert (tmp_path / it[name]).read_bytes() == (tmp_path / "again" / it[name]).read_bytes()


def test_demo_strata_are_varied(tmp_path: Path):
    vg = get_preset("valueground.pair_quality").demo_items(tmp_path)
    assert {i["generator"] for i in vg} == {"gpt", "gemini"}
    cu = get_preset("cultivate.faithfulness").demo_items(tmp_path)
    assert {i["region"] for i in cu} == {"Global North", "Global South"}
    assert len({i["country"] for i in cu}) >= 6
    for i in cu:
        assert i["prompt"] == f"A photorealistic photo of {i['activity']} in {i['country']}."
    cc = get_preset("counterfactuals.audit").demo_items(tmp_path)
    assert {i["dimension"] for i in cc} == {"religion", "nationality", "socioeconomic"}
    cq = get_preset("cqbench.story").demo_items(tmp_path)
    assert all(len(i["values"]) == 5 for i in cq)
    assert {len(i["rewrites"]) for i in cq} == {0, 1, 2, 3}
    assert any("<script>" in i["story"] or "<b>" in i["story"] for i in cq)


# --------------------------------------------------------------------------- verbatim wording
def test_valueground_wording():
    text = all_text("valueground.pair_quality")
    for s in [
        "Match-A",
        "Match-B",
        "PairMatch",
        "NoExplicitCue",
        "Image A is not distinguishable, matches both options equally, or better matches o_b",
        "Image A is distinguishable from the alternative option, but the evidence is partial, generic, or incomplete",
        "it is closer to o_a and contains sufficient visual evidence for the question-option meaning",
        "Image B clearly and completely matches o_b",
        "well matched overall and differ mainly in the intended semantic contrast",
        "only partly matched, with noticeable extra visual differences",
        "differ substantially in scene, people, composition, or presentation",
        "No obvious explicit cue is present",
        "readable text, UI elements, flags, check marks, cross symbols, country names, or other explicit symbolic labels",
    ]:
        assert s in text, s
    assert option_labels("valueground.pair_quality", "q4").keys() == {0, 1}


def test_cultivate_wording():
    text = all_text("cultivate.faithfulness")
    r = rubric("cultivate.faithfulness")
    # the paper's question with the item's country in place of "your country" (issue 14)
    assert r.question("faith").prompt == "How well does this image show {activity} in {country}?"
    assert "How well does this image show {activity} in your country?" in r.instructions  # the paper's text
    assert r.question("exag").reversed and r.question("hal").reversed
    assert not r.question("faith").reversed and not r.question("realism").reversed
    assert r.question("exag").prompt == "How exaggerated is the image?"
    assert r.question("hal").prompt == "How incorrect is the image? (activity/culture)"
    assert r.question("realism").prompt == "How realistic does this image look?"
    assert option_labels("cultivate.faithfulness", "faith") == {
        1: "Not well at all (completely wrong or unrelated)",
        2: "Slightly relevant",
        3: "Somewhat accurate",
        4: "Mostly accurate",
        5: "Exactly as expected for this country",
    }
    hal = option_labels("cultivate.faithfulness", "hal")
    assert hal[1] == "Not at all. All elements seem appropriate."
    assert hal[5] == (
        "Strongly. The image is completely wrong, most elements are wrong, the activity is wrong, "
        "or the scene belongs to another country."
    )
    exag = option_labels("cultivate.faithfulness", "exag")
    assert exag[2] == "Slightly decorative but within cultural norms."
    assert exag[5] == "Strongly stereotypical, misleading, or culturally irrelevant."
    assert "A photorealistic photo of {activity} in {country}." in text
    assert "selecting a pre-mentioned number" in text
    d = all_text("cultivate.descriptors")
    assert "correct or incorrect" in d
    assert option_labels("cultivate.descriptors", "descriptor_correct") == {0: "Incorrect", 1: "Correct"}


def test_counterfactual_flags_verbatim():
    labels = list(option_labels("counterfactuals.audit", "flags").values())
    assert labels == [
        "Context group cannot be discerned in the source context image",
        "Context group cannot be discerned only in the counterfactual image",
        "The orientation of the source context image is incorrect",
        "The person does not appear in the counterfactual image",
        "The person's social attributes (age, race, or gender) are incorrect",
        "The source context image does not appear in the counterfactual image",
    ]


def test_blendvis_wording():
    text = all_text("blendvis.image")
    for s in [
        "The image successfully conveys the intended concept",
        "someone familiar with the region's cultural context would likely understand",
        "The image fails to sufficiently represent or convey the core concept",
        "Clearly Wrong Subject",
        "Misleading or Ambiguous Representation",
        "Unusably Distorted",
        "Inaccurate Regional Representation",
        "The image depicts something fundamentally different from the 'entity'",
        "severe visual artefacts that the main subject is unrecognisable or nonsensical",
        "the general category or 'image_placeholder' (e.g., \"this food\")",
    ]:
        assert s in text, s
    assert set(option_labels("blendvis.template", "verdict")) == {"Good", "Bad"}


def test_cqbench_wording():
    text = all_text("cqbench.story")
    for s in [
        "Treat them as hints only",
        "1 = slightly",
        "5 = much better",
        "Not better",
        "consistent (no character contradicts the value)",
        "inconsistent (at least one character contradicts/doesn't share it)",
        "reflected implicitly",
        "not reflected / not reasonably inferable",
        "a careful reader could reasonably infer it without being spelled out",
        "Does the Final story read like a natural human conversation?",
        "If a rewrite becomes more explicit or introduces contradiction, give 0 (or a low score).",
    ]:
        assert s in text, s
    assert option_labels("cqbench.story", "naturalness") == {
        1: "very unnatural",
        2: "below average",
        3: "acceptable",
        4: "natural",
        5: "very natural",
    }
    t = all_text("cqbench.turing")
    assert "one human-written utterance and one model-generated utterance in random order" in t
    assert "human-written" in rubric("cqbench.turing").question("human_written").prompt


# --------------------------------------------------------------------------- derived values
VG_ITEM = {"question": "q", "option_a": "a", "option_b": "b", "image_a": "a.png", "image_b": "b.png"}


@pytest.mark.parametrize(
    "answers, total, accepted",
    [
        ({"q1": 2, "q2": 2, "q3": 2, "q4": 1}, 1.0, True),
        ({"q1": 2, "q2": 1, "q3": 2, "q4": 1}, 0.875, True),  # q1 + q2 == 3 is enough
        ({"q1": 1, "q2": 2, "q3": 2, "q4": 1}, 0.875, True),
        ({"q1": 1, "q2": 1, "q3": 2, "q4": 1}, 0.75, False),  # q1 + q2 == 2
        ({"q1": 2, "q2": 2, "q3": 1, "q4": 1}, 0.875, False),  # q3 must be 2
        ({"q1": 2, "q2": 2, "q3": 2, "q4": 0}, 0.75, False),  # explicit cue
        ({"q1": 0, "q2": 0, "q3": 0, "q4": 0}, 0.0, False),
    ],
)
def test_valueground_eq7_eq8(answers, total, accepted):
    r = rubric("valueground.pair_quality")
    cleaned = r.validate(answers, item=VG_ITEM)
    out = r.derive(cleaned)
    assert out["total"] == pytest.approx(total)
    assert out["accepted"] is accepted


def test_valueground_feedback_optional_and_scale_bounds():
    r = rubric("valueground.pair_quality")
    cleaned = r.validate({"q1": 2, "q2": 2, "q3": 1, "q4": 1, "feedback": "  match the lighting "}, item=VG_ITEM)
    assert cleaned["feedback"] == "match the lighting"
    with pytest.raises(AnswerError) as exc:
        r.validate({"q1": 2, "q2": 2, "q3": 2, "q4": 2}, item=VG_ITEM)
    assert "q4" in exc.value.errors
    with pytest.raises(AnswerError) as exc:
        r.validate({"q1": 2, "q2": 2, "q3": 2}, item=VG_ITEM)
    assert "q4" in exc.value.errors


def test_cultivate_rationale_required():
    r = rubric("cultivate.faithfulness")
    item = {"image": "x.png", "activity": "eating at home", "country": "Iran"}
    base = {"faith": 4, "exag": 2, "hal": 1, "realism": 5}
    with pytest.raises(AnswerError) as exc:
        r.validate(base, item=item)
    assert "rationale" in exc.value.errors
    with pytest.raises(AnswerError) as exc:
        r.validate({**base, "rationale": "ok"}, item=item)
    assert "rationale" in exc.value.errors
    cleaned = r.validate({**base, "rationale": "The rug pattern looks Turkish, not Persian."}, item=item)
    assert cleaned["faith"] == 4


def test_cultivate_descriptor_precision():
    r = rubric("cultivate.descriptors")
    item = {"activity": "a", "descriptors": ["d1", "d2", "d3", "d4"], "country": "Iran"}
    with pytest.raises(AnswerError) as exc:
        r.validate({"descriptor_correct": [1, 1, 0], "coverage": 4}, item=item)
    assert "descriptor_correct" in exc.value.errors
    with pytest.raises(AnswerError):
        r.validate({"descriptor_correct": [1, None, 0, 1], "coverage": 4}, item=item)
    cleaned = r.validate({"descriptor_correct": [1, 1, 0, 1], "coverage": 4}, item=item)
    out = r.derive(cleaned)
    assert out["precision"] == pytest.approx(0.75)
    assert out["reported_missing"] == 0
    out = r.derive(r.validate({"descriptor_correct": [1, 1, 1, 1], "coverage": 3, "missing": "tea glasses"}, item=item))
    assert out == {"precision": 1.0, "reported_missing": 1}


def test_counterfactual_flags_derived():
    r = rubric("counterfactuals.audit")
    item = {}
    out = r.derive(r.validate({"flags": []}, item=item))
    assert out["any_failure"] == 0 and out["generation_failure"] == 0
    assert all(v == 0 for k, v in out.items() if k.startswith("flag_"))
    out = r.derive(r.validate({"flags": ["orientation", "context_source"]}, item=item))
    assert out["flag_context_source"] == 1 and out["flag_orientation"] == 1
    assert out["flag_context_counterfactual"] == 0 and out["flag_person_missing"] == 0
    assert out["any_failure"] == 1 and out["generation_failure"] == 1
    out = r.derive(r.validate({"flags": ["context_source"]}, item=item))
    assert out["any_failure"] == 1 and out["generation_failure"] == 0
    with pytest.raises(AnswerError):
        r.validate({"flags": ["f9"]}, item=item)


def test_blendvis_reason_required_only_for_bad():
    r = rubric("blendvis.image")
    item = {"image": "x.png", "entity": "patatas bravas", "region": "Spain", "placeholder": "this food"}
    cleaned = r.validate({"verdict": "G"}, item=item)
    assert r.derive(cleaned) == {"good": 1}
    with pytest.raises(AnswerError) as exc:
        r.validate({"verdict": "B"}, item=item)
    assert {"reason", "reason_category"} <= set(exc.value.errors)
    with pytest.raises(AnswerError) as exc:
        r.validate({"verdict": "B", "reason_category": "distorted"}, item=item)
    assert set(exc.value.errors) == {"reason"}
    cleaned = r.validate(
        {"verdict": "B", "reason_category": "distorted", "reason": "legs clipped by the ground"}, item=item
    )
    assert r.derive(cleaned) == {"good": 0}
    with pytest.raises(AnswerError):
        r.validate({"verdict": "Good"}, item=item)


def test_blendvis_template():
    r = rubric("blendvis.template")
    item = {"original_template": "o", "rephrased_template": "r"}
    assert r.derive(r.validate({"verdict": "Good"}, item=item)) == {"good": 1}
    assert r.derive(r.validate({"verdict": "Bad", "comment": "loses 'family'"}, item=item)) == {"good": 0}


def _story(n_rewrites: int) -> dict:
    return {
        "story": "A: hi\nB: <b>hello</b>",
        "values": [{"statement": f"v{i}", "attitude": "agree"} for i in range(5)],
        "rewrites": [{"before": f"b{i}", "after": f"a{i}"} for i in range(n_rewrites)],
    }


@pytest.mark.parametrize("naturalness, natural", [(1, 0), (3, 0), (4, 1), (5, 1)])
def test_cqbench_natural_threshold(naturalness, natural):
    r = rubric("cqbench.story")
    item = _story(2)
    cleaned = r.validate(
        {
            "rewrite_improvement": [0, 5],
            "consistency": [1, 1, 1, 0, 1],
            "reflection": [1, 1, 0, 0, 1],
            "naturalness": naturalness,
        },
        item=item,
    )
    out = r.derive(cleaned)
    assert out["natural"] == natural
    assert out["mean_rewrite_improvement"] == pytest.approx(2.5)
    assert out["consistency_rate"] == pytest.approx(0.8)
    assert out["reflection_rate"] == pytest.approx(0.6)


def test_cqbench_no_rewrites_is_na():
    r = rubric("cqbench.story")
    item = _story(0)
    cleaned = r.validate({"consistency": [1] * 5, "reflection": [1] * 5, "naturalness": 4}, item=item)
    assert cleaned["rewrite_improvement"] == []
    out = r.derive(cleaned)
    assert out["mean_rewrite_improvement"] is None
    assert out["natural"] == 1
    with pytest.raises(AnswerError) as exc:
        r.validate({"consistency": [1] * 4, "reflection": [1] * 5, "naturalness": 4}, item=item)
    assert "consistency" in exc.value.errors
    with pytest.raises(AnswerError) as exc:
        r.validate(
            {"rewrite_improvement": [6], "consistency": [1] * 5, "reflection": [1] * 5, "naturalness": 4},
            item=_story(1),
        )
    assert "rewrite_improvement" in exc.value.errors


TURING_ITEM = {"human_utterance": "h", "model_utterance": "m"}
SWAPPED = {"pair_order": {"human_written": ["model_utterance", "human_utterance"]}}


@pytest.mark.parametrize(
    "side, presentation, correct, tie",
    [
        ("left", None, 1, 0),  # declared order: left = human
        ("right", None, 0, 0),
        ("left", SWAPPED, 0, 0),  # left is the model utterance here
        ("right", SWAPPED, 1, 0),
        ("tie", SWAPPED, 0, 1),  # tie scores 0
        ("tie", None, 0, 1),
    ],
)
def test_turing_correct_through_presentation(side, presentation, correct, tie):
    r = rubric("cqbench.turing")
    cleaned = r.validate({"human_written": side}, item=TURING_ITEM, presentation=presentation)
    out = r.derive(cleaned, presentation=presentation)
    assert out == {"correct": correct, "tie": tie}


def test_turing_requires_an_answer():
    r = rubric("cqbench.turing")
    with pytest.raises(AnswerError) as exc:
        r.validate({}, item=TURING_ITEM, presentation=SWAPPED)
    assert "human_written" in exc.value.errors
    with pytest.raises(AnswerError):
        r.validate({"human_written": "human_utterance"}, item=TURING_ITEM)
