"""Acceptance rules of every preset on constructed cases (pure: no database), including ties,
incomplete and missing ratings, judge screening and the revision rule."""

from __future__ import annotations

import pytest

from annotation.rubric import Rubric
from benchmarks.registry import PRESETS, get_preset
from curation.policy import (
    PolicyError,
    PolicySpec,
    Rating,
    compile_policy,
    decide,
)

# the policy each preset suggests (Preset.suggested_policy), by preset key
SUGGESTED = {k: dict(p.suggested_policy) for k, p in PRESETS.items() if p.suggested_policy}


def policy(preset: str, **overrides):
    rubric = Rubric.from_schema(get_preset(preset).rubric)
    base = dict(SUGGESTED.get(preset, {}))
    if "rule" not in base and rubric.acceptance is not None:
        base["rule"] = rubric.acceptance.source
    base.update(overrides)
    return compile_policy(PolicySpec.parse(base), rubric)


def human(answers, name="h"):
    return Rating(rater=name, kind="human", answers=answers)


def judge(answers, name="judge"):
    return Rating(rater=name, kind="model", answers=answers)


PASS = {"q1": 2, "q2": 1, "q3": 2, "q4": 1}  # Q1 + Q2 = 3, Q3 = 2, Q4 = 1: Eq. 7 holds
FAIL_SUM = {"q1": 1, "q2": 1, "q3": 2, "q4": 1}  # Q1 + Q2 = 2
FAIL_CUE = {"q1": 2, "q2": 2, "q3": 2, "q4": 0}  # explicit cue


# ------------------------------------------------------------------------------ ValueGround Eq. 7
@pytest.mark.parametrize(
    "answers, ok",
    [
        (PASS, True),
        ({"q1": 2, "q2": 2, "q3": 2, "q4": 1}, True),
        (FAIL_SUM, False),
        (FAIL_CUE, False),
        ({"q1": 2, "q2": 2, "q3": 1, "q4": 1}, False),  # Q3 must be exactly 2
    ],
)
def test_valueground_eq7_per_single_reviewer(answers, ok):
    v = decide(policy("valueground.pair_quality", min_human_ratings=1), [human(answers)])
    assert v.status == ("accepted" if ok else "rejected"), v.reason


def test_valueground_all_rejects_when_one_reviewer_fails():
    p = policy("valueground.pair_quality", aggregation="all", min_human_ratings=4)
    assert decide(p, [human(PASS, f"h{i}") for i in range(4)]).status == "accepted"
    v = decide(p, [human(PASS, "a"), human(PASS, "b"), human(PASS, "c"), human(FAIL_CUE, "d")])
    assert v.status == "rejected" and "3 of 4" in v.reason


def test_valueground_majority_with_a_two_two_tie():
    ratings = [human(PASS, "a"), human(PASS, "b"), human(FAIL_SUM, "c"), human(FAIL_CUE, "d")]
    v = decide(policy("valueground.pair_quality", aggregation="majority", min_human_ratings=4), ratings)
    assert v.status == "rejected" and v.details["tie"] and "tie" in v.reason
    v = decide(policy("valueground.pair_quality", aggregation="majority", tie="pending", min_human_ratings=4), ratings)
    assert v.status == "pending"
    three = decide(policy("valueground.pair_quality", aggregation="majority", min_human_ratings=3), ratings[:3])
    assert three.status == "accepted"


def test_valueground_rule_on_mean_scores():
    # means: q1 = 1.5, q2 = 1.5 (sum 3), q3 = 2, q4 = 1 -> Eq. 7 holds on the means although
    # only one of the two reviewers passes individually
    a = {"q1": 2, "q2": 1, "q3": 2, "q4": 1}
    b = {"q1": 1, "q2": 2, "q3": 2, "q4": 1}
    c = {"q1": 1, "q2": 1, "q3": 2, "q4": 1}
    p = policy("valueground.pair_quality", aggregation="mean", min_human_ratings=2)
    v = decide(p, [human(a, "a"), human(b, "b")])
    assert v.status == "accepted" and v.details["mean"]["q1"] == 1.5
    # q3 mean 1.5 fails "q3 == 2"
    assert decide(p, [human(a, "a"), human({**b, "q3": 1}, "b")]).status == "rejected"
    assert decide(p, [human(a, "a"), human(c, "c")]).status == "rejected"  # q1 + q2 = 2.5


def test_valueground_missing_and_incomplete_ratings_leave_the_item_pending():
    p = policy("valueground.pair_quality", min_human_ratings=2)
    assert decide(p, []).status == "pending"
    v = decide(p, [human(PASS, "a")])
    assert v.status == "pending" and "1 of 2" in v.reason
    incomplete = {"q1": 2, "q2": None, "q3": 2, "q4": 1}  # e.g. an older rubric version
    v = decide(p, [human(PASS, "a"), human(incomplete, "b")])
    assert v.status == "pending" and "incomplete" in v.reason and v.details["n_incomplete"] == 1
    v = decide(p, [human(PASS, "a"), human(PASS, "b"), human(incomplete, "c")])
    assert v.status == "accepted" and "1 incomplete" in v.reason


def test_valueground_rejected_pair_with_feedback_needs_revision():
    p = policy("valueground.pair_quality", min_human_ratings=2)
    fb = {**FAIL_CUE, "feedback": "remove the flag on the wall"}
    v = decide(p, [human(PASS, "a"), human(fb, "b")])
    assert v.status == "needs_revision" and v.details["revision_requested_by"] == 1
    assert decide(p, [human(PASS, "a"), human(FAIL_CUE, "b")]).status == "rejected"
    # an accepted item never goes to revision, even with feedback
    assert decide(p, [human({**PASS, "feedback": "fine"}, "a"), human(PASS, "b")]).status == "accepted"


def test_judge_screening_comes_before_human_review():
    p = policy("valueground.pair_quality", judge_screening=True, min_human_ratings=1)
    assert decide(p, [human(PASS)]).status == "pending"  # no judge yet
    v = decide(p, [human(PASS), judge(FAIL_CUE, "gpt")])
    assert v.status == "rejected" and "gpt" in v.reason
    assert decide(p, [human(PASS), judge(PASS, "gpt")]).status == "accepted"
    assert decide(p, [human(FAIL_SUM), judge(PASS, "gpt")]).status == "rejected"
    # without screening, model ratings never count as human ones
    p2 = policy("valueground.pair_quality", min_human_ratings=1)
    assert decide(p2, [judge(PASS), judge(PASS, "j2")]).status == "pending"


def test_the_stored_derived_accepted_field_can_be_the_rule():
    p = policy("valueground.pair_quality", rule="accepted", min_human_ratings=1)
    assert decide(p, [human(PASS)]).status == "accepted"
    assert decide(p, [human(FAIL_SUM)]).status == "rejected"


# ------------------------------------------------------------------------------ BLEnD-Vis 2-of-3
def bv(verdict, **extra):
    return {"verdict": verdict, **extra}


@pytest.mark.parametrize(
    "verdicts, status",
    [
        ("GGG", "accepted"),
        ("GGB", "accepted"),
        ("GBB", "rejected"),
        ("BBB", "rejected"),
    ],
)
def test_blendvis_image_two_of_three_majority(verdicts, status):
    p = policy("blendvis.image", min_human_ratings=3)
    ratings = [human(bv(c, reason="wrong dish") if c == "B" else bv(c), f"h{i}") for i, c in enumerate(verdicts)]
    assert decide(p, ratings).status == status


def test_blendvis_image_waits_for_the_third_rating_and_breaks_ties_as_configured():
    p = policy("blendvis.image", min_human_ratings=3)
    assert decide(p, [human(bv("G"), "a"), human(bv("B"), "b")]).status == "pending"
    two = policy("blendvis.image", min_human_ratings=2)
    assert decide(two, [human(bv("G"), "a"), human(bv("B"), "b")]).status == "rejected"
    assert (
        decide(
            policy("blendvis.image", min_human_ratings=2, tie="pending"), [human(bv("G"), "a"), human(bv("B"), "b")]
        ).status
        == "pending"
    )


def test_blendvis_bad_templates_go_to_revision_not_to_the_bin():
    p = policy("blendvis.template", min_human_ratings=3)
    v = decide(p, [human({"verdict": "Bad"}, "a"), human({"verdict": "Bad"}, "b"), human({"verdict": "Good"}, "c")])
    assert v.status == "needs_revision"
    assert decide(p, [human({"verdict": "Good"}, f"h{i}") for i in range(3)]).status == "accepted"


# ------------------------------------------------------------------------------ other presets
def test_counterfactuals_majority_of_raters_without_failure_flags():
    p = policy("counterfactuals.audit", min_human_ratings=3)
    ok, bad = {"flags": []}, {"flags": ["orientation"]}
    assert decide(p, [human(ok, "a"), human(ok, "b"), human(bad, "c")]).status == "accepted"
    assert decide(p, [human(ok, "a"), human(bad, "b"), human(bad, "c")]).status == "rejected"


def test_cqbench_story_majority_on_natural_and_mean_on_naturalness():
    def answers(n):
        return {"rewrite_improvement": [3], "consistency": [1, 1], "reflection": [1, 0], "naturalness": n}

    p = policy("cqbench.story", min_human_ratings=2)
    assert decide(p, [human(answers(4), "a"), human(answers(5), "b")]).status == "accepted"
    assert decide(p, [human(answers(4), "a"), human(answers(3), "b")]).status == "rejected"  # 1-1 tie
    mean = policy("cqbench.story", aggregation="mean", rule="naturalness >= 3.5", min_human_ratings=2)
    assert decide(mean, [human(answers(4), "a"), human(answers(3), "b")]).status == "accepted"
    # the per-value reflection rate is available to rules too (CQ-Bench value checks)
    refl = policy("cqbench.story", rule="reflection_rate == 1", min_human_ratings=1)
    assert decide(refl, [human(answers(5))]).status == "rejected"


@pytest.mark.parametrize(
    "preset", [k for k in PRESETS if k not in SUGGESTED and Rubric.from_schema(PRESETS[k].rubric).acceptance is None]
)
def test_presets_without_a_rule_need_one_written_by_the_researcher(preset):
    rubric = Rubric.from_schema(get_preset(preset).rubric)
    with pytest.raises(PolicyError, match="needs a rule"):
        PolicySpec.parse({})
    # any field of the rubric works, e.g. a derived one, majority across raters
    field = rubric.derived[0].id if rubric.derived else rubric.questions[0].id
    compile_policy(PolicySpec.parse({"rule": f"{field} == 1", "aggregation": "majority"}), rubric)


def test_every_preset_default_compiles():
    for key, preset in PRESETS.items():
        rubric = Rubric.from_schema(preset.rubric)
        rule = rubric.acceptance.source if rubric.acceptance else SUGGESTED.get(key, {}).get("rule")
        if rule:
            compile_policy(PolicySpec.parse({**SUGGESTED.get(key, {}), "rule": rule}), rubric)


# ------------------------------------------------------------------------------ bad policies
@pytest.mark.parametrize(
    "raw, message",
    [
        ({"rule": "q9 >= 2"}, "unknown field(s) q9"),
        ({"rule": "q1 >= 2", "revise_if": "comment"}, "revise_if refers to unknown field(s) comment"),
        ({"rule": "q1 >="}, "cannot parse"),
        ({"rule": "__import__('os')"}, "only the functions"),
        ({"rule": "q1 >= 1", "aggregation": "median"}, "unknown aggregation 'median'"),
        ({"rule": "q1 >= 1", "tie": "coin"}, "unknown tie handling"),
        ({"rule": "q1 >= 1", "min_human_ratings": "many"}, "whole number"),
        ({"rule": "q1 >= 1", "colour": "red"}, "unknown policy key(s): colour"),
    ],
)
def test_bad_policies_are_refused_with_a_clear_message(raw, message):
    rubric = Rubric.from_schema(get_preset("valueground.pair_quality").rubric)
    with pytest.raises(PolicyError) as exc:
        compile_policy(PolicySpec.parse(raw), rubric)
    assert message in exc.value.message
