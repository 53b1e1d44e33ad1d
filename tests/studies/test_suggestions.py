"""The paper's study design as the design pages' suggestions (``studies.suggestions``): the initial
values of the sample, plan and QC forms and the "Suggested by" words, checked as plain functions
(no database, no request)."""

from __future__ import annotations

from benchmarks.base import StudyDesign
from benchmarks.registry import get_preset
from studies import suggestions

NATIONALITY_MATCHED = StudyDesign(
    source="Paper, Sec. 4.2",
    k=2,
    sample_strata=("country", "pipeline"),
    sample_size=40,
    sample_allocation="proportional",
    eligibility=({"attribute": "nationality", "item_key": "country"}, {"attribute": "lang", "item_key": "lang"}),
    balance={"attribute": "nationality", "quota": {"China": 1, "Germany": 1}},
    cap_per_annotator=20,
    qc={"rationale_question": "rationale", "min_seconds": 5},
)
SILENT = StudyDesign(source="Paper that says nothing")


def test_without_a_design_the_forms_start_from_the_projects_own_values():
    assert suggestions.sample_initial(None) == {"allocation": "equal", "seed": 1}
    assert suggestions.plan_initial(None, 3) == {"k": 3, "take_over": True}
    assert suggestions.suggestion(None) == {"suggested": None, "summary": {}}
    assert suggestions.qc_suggestion(None, {"min_seconds": 0}, qc_enabled=False) == {
        "qc_initial": {"min_seconds": 0},
        "qc_suggested": None,
        "qc_summary": "",
    }


def test_the_sample_form_ticks_the_strata_columns_and_types_the_other_keys():
    assert suggestions.sample_initial(NATIONALITY_MATCHED) == {
        "allocation": "proportional",
        "seed": 1,
        "strata": ["country"],
        "meta_keys": "pipeline",
        "total_size": 40,
    }
    assert suggestions.sample_initial(SILENT) == {"allocation": "equal", "seed": 1, "strata": []}


def test_the_plan_form_takes_the_papers_k_first_eligibility_rule_quota_and_cap():
    assert suggestions.plan_initial(NATIONALITY_MATCHED, 3) == {
        "k": 2,
        "take_over": True,
        "eligibility_attribute": "nationality",
        "eligibility_item_key": "country",
        "balance_attribute": "nationality",
        "balance_quota": "China:1, Germany:1",
        "cap_per_annotator": 20,
    }
    assert suggestions.plan_initial(SILENT, 3) == {"k": 3, "take_over": True}


def test_the_design_in_words_per_form_and_whole():
    summary = suggestions.design_summary(NATIONALITY_MATCHED)
    assert summary["sample"] == "40 items, stratified by country × pipeline, proportional allocation"
    assert summary["plan"] == (
        "k = 2, eligibility nationality = item country, eligibility lang = item lang, "
        "balance nationality China:1, Germany:1, at most 20 items per annotator"
    )
    assert summary["qc"] == "rationale question = rationale, min seconds = 5"
    assert summary["all"] == (
        f"sample {summary['sample']}; assignment {summary['plan']}; quality control {summary['qc']}"
    )
    assert suggestions.design_summary(SILENT) == {"sample": "", "plan": "", "qc": "", "all": ""}
    assert suggestions.suggestion(NATIONALITY_MATCHED) == {"suggested": NATIONALITY_MATCHED, "summary": summary}


def test_the_papers_qc_is_suggested_only_until_the_project_has_its_own():
    settings = {"min_seconds": 0, "rationale_question": "", "gold_rate": 0.1}
    fresh = suggestions.qc_suggestion(NATIONALITY_MATCHED, settings, qc_enabled=False)
    assert fresh == {
        "qc_initial": {"min_seconds": 5, "rationale_question": "rationale", "gold_rate": 0.1},
        "qc_suggested": NATIONALITY_MATCHED,
        "qc_summary": "rationale question = rationale, min seconds = 5",
    }
    assert settings == {"min_seconds": 0, "rationale_question": "", "gold_rate": 0.1}  # not changed in place
    own = suggestions.qc_suggestion(NATIONALITY_MATCHED, settings, qc_enabled=True)
    assert own == {"qc_initial": settings, "qc_suggested": None, "qc_summary": ""}
    assert suggestions.qc_suggestion(SILENT, settings, qc_enabled=False)["qc_suggested"] is None


def test_a_presets_design_fills_the_forms_as_the_paper_states_it():
    """ValueGround, Sec. 4.2 / App. B.2: 36 pairs stratified by backbone, 4 annotators, 2 from
    China and 2 from Germany (what the design page test submits untouched)."""
    design = get_preset("valueground.pair_quality").study_design
    assert suggestions.sample_initial(design)["total_size"] == 36
    plan = suggestions.plan_initial(design, 1)
    assert (plan["k"], plan["balance_attribute"], plan["balance_quota"]) == (4, "nationality", "China:2, Germany:2")
