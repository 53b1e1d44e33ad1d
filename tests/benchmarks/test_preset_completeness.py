"""A protocol is one package (issues 9 and 21): every registered preset carries all that is its own -
schema, rubric, study design, judge prompt, direct judges, named templates, suggested policy,
demo items, demo judges and demo answers - and each piece fits the rest (questions exist in the rubric,
the policy compiles, the demo answers validate). The apps read all of it from the preset, so
no app module outside ``benchmarks/`` names a preset key, and a new preset is picked up with
no app change. No database."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from annotation.item_schema import check_record
from annotation.rubric import Rubric
from benchmarks.base import (
    COMMON_KEYS,
    STRATA_KEYS,
    ClassifierBank,
    ClosedQuestion,
    DirectJudge,
    JudgePrompt,
    NamedTemplate,
    PairOrder,
    Preset,
    StudyDesign,
)
from benchmarks.registry import PRESETS, named_templates
from curation.policy import PolicySpec, compile_policy
from judges import prompts
from judges.backends import JudgeSpec
from judges.registry import BACKENDS, backend_for, is_direct, is_ensemble
from studies import quality
from studies.models import Sample
from studies.rules import format_balance_text, parse_balance_text, parse_rules

ROOT = Path(__file__).resolve().parent.parent.parent
APP_DIRS = ("annotation", "studies", "judges", "curation", "agreement", "core", "config")
PARSERS = ("json", "score_is", "choice")
# the prompt-less backends (judges/registry.py)
DIRECT_BACKENDS = tuple(key for key in BACKENDS if is_direct(key))
# what a rubric prompt template may name besides the item's fields (judges/prompts.py)
PROMPT_NAMES = {"item", "rubric", "schema", "instructions", "question", "anchors", *COMMON_KEYS}


@pytest.fixture(params=list(PRESETS), ids=list(PRESETS))
def preset(request) -> Preset:
    return PRESETS[request.param]


@pytest.fixture
def no_encoder(monkeypatch):
    """The embedding backend without loading a model (only its configuration is checked here)."""
    import judges.backends.embedding as embedding

    monkeypatch.setattr(embedding, "load_encoder", lambda model_id, device=None: object())


def demo_records(preset: Preset, tmp_path: Path) -> dict[str, dict]:
    return {r["id"]: r for r in preset.demo_items(tmp_path)}


def build(preset: Preset, backend: str, questions, params=None) -> object:
    spec = JudgeSpec(
        backend=backend,
        model_id="",
        prompt_template={},
        parser="none",
        questions=tuple(questions),
        params=dict(params or {}),
        rubric=Rubric.from_schema(preset.rubric),
        item_fields=preset.item_fields,
        preset_key=preset.key,
    )
    return backend_for(spec)


# --------------------------------------------------------------------------- completeness
def test_rubric_and_demo_items(preset, tmp_path):
    Rubric.from_schema(preset.rubric)
    records = demo_records(preset, tmp_path)
    assert records
    for record in records.values():
        assert check_record(preset, record).errors == [], record["id"]
    assert isinstance(preset.defaults.get("k", 1), int) and preset.defaults.get("k", 1) >= 1
    assert preset.validation_report is None or callable(preset.validation_report)


def test_judge_prompt(preset, tmp_path):
    rubric = Rubric.from_schema(preset.rubric)
    paper = preset.judge_prompt
    defaults = prompts.preset_defaults(preset, rubric)
    if paper is None:  # the generic rubric prompt over the non-text questions
        assert defaults["prompt_template"] == prompts.GENERIC_TEMPLATE
        return
    assert isinstance(paper, JudgePrompt) and paper.parser in PARSERS and paper.questions
    known = {q.id: q for q in rubric.questions}
    assert set(paper.questions) <= set(known), paper.questions
    assert all(known[q].type != "text" for q in paper.questions)
    assert defaults["questions"] == list(paper.questions) and defaults["parser"] == paper.parser
    template = defaults["prompt_template"]
    kind = prompts.template_kind(template)
    if kind == "classifiers":
        judged, _ = prompts.check_classifier_template(template, rubric, prompts.classifier_bank(preset.key))
        assert judged == list(paper.questions)
        return
    if kind == "format":  # a paper's own output contract (judges/formats.py), stored as the choice parser
        from judges.formats import check_format_template

        assert check_format_template(template, rubric) == list(paper.questions) and paper.parser == "choice"
    else:
        assert kind == "rubric"
    parts = list(template["per_question"].values()) if "per_question" in template else [template]
    if "per_question" in template:
        assert set(template["per_question"]) == set(paper.questions)
    fillable = PROMPT_NAMES | {f["name"] for f in preset.item_fields}
    for part in parts:
        assert part.get("system") is not None and part.get("user"), part
        names = prompts.template_placeholders(part["system"] + part["user"])
        assert set(names) <= fillable, f"placeholders nothing fills: {set(names) - fillable}"
    item = next(iter(demo_records(preset, tmp_path).values()))
    if kind == "format":
        from judges.formats import format_messages

        system, user = format_messages(template, rubric, item, preset.item_fields)
        assert user and not prompts.template_placeholders(system + user), "placeholders left unfilled"
        return
    assert prompts.build_messages(template, rubric, list(paper.questions), item, preset.item_fields)


def test_direct_judges(preset, no_encoder):
    known = {q.id for q in Rubric.from_schema(preset.rubric).questions}
    for backend, direct in preset.direct_judges.items():
        assert backend in DIRECT_BACKENDS, backend
        assert isinstance(direct, DirectJudge) and direct.mode and direct.questions
        assert set(direct.questions) <= known, direct.questions
        judge = build(preset, backend, direct.questions)  # the backend takes the preset's mode
        assert judge.mode == direct.mode


def test_pair_order(preset):
    """A protocol with a pairwise question declares how a judge sees the pair swapped (the
    judges' position-bias check), and a declaration fits the item schema and the rubric."""
    from judges.orders import check_pair_order, map_back, order_questions

    rubric = Rubric.from_schema(preset.rubric)
    order = preset.pair_order
    if any(q.type == "pairwise" for q in rubric.questions):
        assert order is not None, f"{preset.key} has a pairwise question but no pair_order"
    if order is None:
        return
    assert isinstance(order, PairOrder)
    assert check_pair_order(order, rubric, preset.item_fields) == []
    # the swap is its own inverse on every answer it touches
    answers = {q: rubric.question(q).option_values()[0] for q in order_questions(order)}
    for qid, (first, _) in order.swap_values.items():
        answers[qid] = first
    assert map_back(map_back(answers, order), order) == answers


def test_a_bad_pair_order_is_reported():
    from judges.orders import check_pair_order

    preset = PRESETS["valueground.pair_quality"]
    rubric = Rubric.from_schema(preset.rubric)
    bad = PairOrder(fields=(("image_a", "question"), ("nope", "image_b")), verdict=("q1", "q4", "q3"))
    problems = check_pair_order(bad, rubric, preset.item_fields)
    assert any("different types" in p for p in problems) and any("not both item fields" in p for p in problems)
    assert any("one question or two" in p for p in problems)
    bad = PairOrder(fields=(("image_a", "image_b"),), verdict=("q1", "q4"), swap_questions=(("q1", "q4"),))
    problems = check_pair_order(bad, rubric, preset.item_fields)
    assert any("differ in type or options" in p for p in problems)
    bad = PairOrder(fields=(("image_a", "image_b"),), verdict=("q9",))
    problems = check_pair_order(bad, rubric, preset.item_fields)
    assert any("unknown question 'q9'" in p for p in problems) and any("swap_values" in p for p in problems)


def test_named_templates_and_classifier_bank(preset):
    rubric = Rubric.from_schema(preset.rubric)
    bank = preset.classifier_bank
    if bank is not None:
        assert isinstance(bank, ClassifierBank) and bank.source and bank.questions
        assert set(bank.context) <= set(bank.questions)
        for q in bank.questions.values():
            assert isinstance(q, ClosedQuestion) and "{choices}" in q.prompt and len(q.choices) >= 2
    for name, named in preset.named_templates.items():
        assert isinstance(named, NamedTemplate) and named.label, name
        kind = prompts.template_kind(named.template)
        if kind == "classifiers":
            prompts.check_classifier_template(named.template, rubric, prompts.classifier_bank(preset.key))
        elif kind == "label":
            assert named.template["label"] and len(named.template["labels"]) >= 2
            assert named.template.get("user")
        elif kind == "format":  # the question it answers fits the paper's output format
            from judges.formats import check_format_template

            assert check_format_template(named.template, rubric) == [named.template["question"]]
        else:
            assert "per_question" in named.template or named.template.get("user")


def test_named_template_names_are_unique_across_presets():
    every = named_templates()
    assert sum(len(p.named_templates) for p in PRESETS.values()) == len(every)


def test_suggested_policy_compiles(preset):
    rubric = Rubric.from_schema(preset.rubric)
    suggested = dict(preset.suggested_policy or {})
    if not suggested:
        return
    base = {"rule": rubric.acceptance.source} if rubric.acceptance is not None else {}
    spec = PolicySpec.parse(suggested, defaults=base)
    compiled = compile_policy(spec, rubric)
    assert (compiled.keep is not None) == bool(suggested.get("element_filter"))


def test_demo_judges_and_answers(preset, tmp_path, no_encoder):
    for judge in preset.demo_judges:
        assert judge.name and judge.backend in BACKENDS
        assert not is_ensemble(judge.backend)
        if judge.backend in DIRECT_BACKENDS:
            direct = preset.direct_judges.get(judge.backend)
            assert direct is not None, f"{judge.name}: the preset declares no {judge.backend} judge"
            build(preset, judge.backend, direct.questions, judge.params)
    assert len({j.name for j in preset.demo_judges}) == len(preset.demo_judges)
    records = demo_records(preset, tmp_path)
    rubric = Rubric.from_schema(preset.rubric)
    for item_id, ratings in preset.demo_answers.items():
        assert item_id in records, item_id
        assert len(ratings) == 2  # annotator1's, annotator2's
        for answers in ratings:
            rubric.derive(rubric.validate(answers, item=records[item_id]))


def carried_by_every_demo_item(key: str, records: dict[str, dict]) -> bool:
    """A strata column or ``meta`` key with a value in every demo item (what a sample or an
    eligibility rule of the preset's study design reads)."""
    key = key.removeprefix("meta.")
    where = (lambda r: r.get(key)) if key in STRATA_KEYS else (lambda r: (r.get("meta") or {}).get(key))
    return all(where(r) not in (None, "") for r in records.values())


def test_study_design(preset, tmp_path):
    """The paper's study design is the shape the study-design pages take: the real rule parser
    reads its eligibility and balance unchanged, its QC goes through the QC validator unchanged,
    and the keys it samples or matches by are carried by the demo items."""
    design = preset.study_design
    if design is None:
        return
    assert isinstance(design, StudyDesign) and design.source.strip()
    k = preset.defaults.get("k", 1)
    if design.k is not None:
        assert isinstance(design.k, int) and design.k == k, "the project default k is the paper's k"
    assert design.sample_size is None or (isinstance(design.sample_size, int) and design.sample_size >= 1)
    assert design.sample_allocation in (None, *Sample.Allocation.values)
    assert design.cap_per_annotator is None or design.cap_per_annotator >= 1
    assert isinstance(design.sample_strata, tuple) and isinstance(design.eligibility, tuple)
    rules = parse_rules(
        k=design.k or k,
        eligibility=[dict(r) for r in design.eligibility],
        balance=dict(design.balance) if design.balance else None,
    )
    assert rules.eligibility == [dict(r) for r in design.eligibility]
    assert rules.balance == (dict(design.balance) if design.balance else {})
    if design.balance:  # what the plan form is pre-filled with reads back as the same rule
        assert parse_balance_text(design.balance["attribute"], format_balance_text(design.balance)) == rules.balance
    assert set(design.qc) <= set(quality.DEFAULTS), set(design.qc) - set(quality.DEFAULTS)
    assert quality.clean_qc_settings(design.qc) == dict(design.qc)
    if design.qc.get("rationale_question"):
        texts = {q.id for q in Rubric.from_schema(preset.rubric).questions if q.type == "text"}
        assert design.qc["rationale_question"] in texts
    records = demo_records(preset, tmp_path)
    for key in (*design.sample_strata, *(r["item_key"] for r in design.eligibility)):
        assert carried_by_every_demo_item(key, records), f"demo items lack {key!r}"
    assert all(isinstance(n, str) and n.strip() for n in design.notes)


# --------------------------------------------------------------------------- preset keys in apps
def key_pattern() -> re.Pattern[str]:
    prefixes = sorted({key.split(".")[0] for key in PRESETS})
    return re.compile(r"\b(?:" + "|".join(map(re.escape, prefixes)) + r")\.")


def test_no_app_module_names_a_preset_key():
    """Protocol knowledge lives in ``benchmarks/``: an app reads it from the preset, never by key
    (``tests/`` and ``perf/`` may name keys)."""
    pattern = key_pattern()
    found = []
    for app in APP_DIRS:
        for path in sorted((ROOT / app).rglob("*.py")):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if pattern.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not found, "preset keys outside benchmarks/:\n" + "\n".join(found)


def test_the_key_pattern_catches_keys():
    pattern = key_pattern()
    assert all(pattern.search(f'x = "{key}"') for key in PRESETS)
    assert not pattern.search("preset = project.preset")


# --------------------------------------------------------------------------- a new protocol
def test_a_new_preset_needs_no_app_change(monkeypatch):
    """A preset added to the registry is read by the judges without any change there."""
    from judges.views import JudgeConfigForm

    rubric = {
        "title": "t",
        "instructions": "Judge it.",
        "questions": [
            {
                "id": "ok",
                "type": "binary",
                "label": "OK",
                "prompt": "Is {thing} fine?",
                "options": [{"value": 0, "label": "no"}, {"value": 1, "label": "yes"}],
            },
            {
                "id": "flags",
                "type": "checklist",
                "label": "Flags",
                "prompt": "Problems",
                "options": [{"value": "wrong", "label": "wrong"}],
                "required": False,
            },
        ],
    }
    template = {
        "classifiers": [{"id": "c", "image": "picture", "ask": "kind", "expected": "kind"}],
        "flags": [{"question": "flags", "flag": "wrong", "if_wrong": ["c"]}],
    }
    extra = Preset(
        key="extra.check",
        name="Extra",
        protocol="p",
        rubric=rubric,
        demo_items=lambda folder: [],
        item_fields=[
            {"name": "thing", "type": "text"},
            {"name": "picture", "type": "image"},
            {"name": "kind", "type": "text"},
        ],
        judge_prompt=JudgePrompt(parser="json", questions=("ok",), template={"system": "Be fair. {instructions}"}),
        direct_judges={"image_similarity": DirectJudge(questions=("ok",), mode="extra_mode")},
        named_templates={"extra.kind": NamedTemplate(label="Extra kind classifier", template=template)},
        classifier_bank=ClassifierBank(
            source="Table X", questions={"kind": ClosedQuestion("Which kind? {choices}", ("a", "b"))}
        ),
    )
    monkeypatch.setitem(PRESETS, extra.key, extra)
    parsed = Rubric.from_schema(rubric)
    defaults = prompts.preset_defaults(extra, parsed)
    assert defaults == {
        "prompt_template": {"system": "Be fair. {instructions}", "user": prompts.GENERIC_USER},
        "parser": "json",
        "questions": ["ok"],
    }
    spec = JudgeSpec(
        backend="image_similarity",
        model_id="",
        prompt_template={},
        parser="none",
        questions=("ok",),
        params={},
        rubric=parsed,
        preset_key=extra.key,
    )
    assert spec.preset_mode() == "extra_mode"
    assert prompts.named_template("extra.kind") == template
    assert prompts.check_classifier_template(template, parsed, prompts.classifier_bank(extra.key)) == (
        ["flags"],
        ["wrong"],
    )
    assert prompts.classifier_question(template["classifiers"][0], {}, prompts.classifier_bank(extra.key)) == (
        "Which kind? ['a', 'b']",
        ["a", "b"],
    )
    assert ("extra.kind", "Extra kind classifier") in list(JudgeConfigForm.base_fields["template"].choices)
