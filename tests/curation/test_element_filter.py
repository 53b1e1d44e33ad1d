"""CQ-Bench value removal: the policy's per-element filter (``element_filter``) on constructed
cases (majority, all, mean, ties, missing ratings), its validation (a clear error naming the
allowed fields), the decision details, and the export round trip (only kept values, plus
``_removed`` with the reason)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from django.test import Client

from annotation import importing
from annotation.models import Item
from annotation.rubric import Rubric
from benchmarks.registry import get_preset
from core.errors import DomainError
from curation import services
from curation.exports import export_root, run_export_job
from curation.models import AcceptancePolicy, Export, ItemDecision
from curation.policy import (
    PolicyError,
    PolicySpec,
    Rating,
    compile_policy,
    decide,
)
from tests.annotation.factories import jsonl, make_project

from .helpers import submit_all

FILTER = {"over": "values", "keep_if": "reflection == 1 and consistency == 1", "aggregation": "majority"}


def story_policy(**element_filter):
    rubric = Rubric.from_schema(get_preset("cqbench.story").rubric)
    ef = {**FILTER, **element_filter}
    return compile_policy(
        PolicySpec.parse(
            {"rule": "natural == 1", "aggregation": "majority", "min_human_ratings": 1, "element_filter": ef}
        ),
        rubric,
    )


def story(reflection, consistency, naturalness=5, name="h", kind="human"):
    return Rating(
        rater=name,
        kind=kind,
        answers={
            "rewrite_improvement": [],
            "reflection": reflection,
            "consistency": consistency,
            "naturalness": naturalness,
        },
    )


def removed(verdict):
    return [r["element"] for r in verdict.details["element_filter"]["removed"]]


# ------------------------------------------------------------------------------ constructed cases
def test_majority_keeps_values_most_raters_find_reflected_and_consistent():
    p = story_policy()
    ratings = [
        story([1, 1, 0, 1, 0], [1, 1, 1, 0, 1], name="a"),
        story([1, 0, 0, 1, 1], [1, 1, 1, 1, 1], name="b"),
        story([1, 1, 1, 1, 0], [1, 1, 1, 1, 1], name="c"),
    ]
    v = decide(p, ratings)
    ef = v.details["element_filter"]
    assert ef["n"] == 5 and ef["kept"] == [1, 2, 4] and removed(v) == [3, 5]
    assert ef["removed"][0]["reason"] == "reflection == 1 and consistency == 1: majority: 1 of 3 rating(s) keep"
    # the filter does not change the item's status; the reason says how many values were dropped
    assert v.status == "accepted" and v.reason.endswith("; 2 of 5 values removed")


@pytest.mark.parametrize("tie, kept, gone", [("drop", [1], [2]), ("keep", [1, 2], [])])
def test_a_one_one_tie_follows_the_filters_tie_setting(tie, kept, gone):
    v = decide(story_policy(tie=tie), [story([1, 1], [1, 1], name="a"), story([1, 0], [1, 1], name="b")])
    assert v.details["element_filter"]["kept"] == kept and removed(v) == gone
    assert "tie: 1 of 2 rating(s) keep" in json.dumps(v.details) or not gone


def test_default_tie_is_drop():
    assert story_policy().spec.element_filter["tie"] == "drop"


def test_missing_answers_are_not_counted_and_no_complete_rating_counts_as_a_tie():
    ratings = [
        story([1, None, None], [1, 1, None], name="a"),
        story([0, 1, None], [1, 1, 1], name="b"),
        story([1, 1, 1], [1, 1, 1], name="c"),
    ]
    v = decide(story_policy(), ratings)
    # V1: 2 of 3 keep; V2: a missing, b and c keep (2 of 2); V3: only c complete -> 1 of 1 keeps
    assert v.details["element_filter"]["kept"] == [1, 2, 3]
    v = decide(story_policy(), [story([None, 1], [None, 1], name="a"), story([None, 1], [1, 1], name="b")])
    assert removed(v) == [1]
    assert "no complete rating (dropped as a tie)" in v.details["element_filter"]["removed"][0]["reason"]
    v = decide(story_policy(tie="keep"), [story([None, 1], [None, 1], name="a")])
    assert v.details["element_filter"]["kept"] == [1, 2]
    # a single incomplete rating is noted in the reason
    v = decide(story_policy(), [story([0, 1], [1, 1], name="a"), story([None, 1], [1, 1], name="b")])
    assert "1 incomplete rating(s) not counted" in v.details["element_filter"]["removed"][0]["reason"]


def test_all_and_mean_aggregations_and_judges_are_not_counted():
    ratings = [story([1, 1], [1, 1], name="a"), story([1, 0], [1, 1], name="b"), story([1, 0], [1, 1], name="c")]
    assert removed(decide(story_policy(aggregation="all"), ratings)) == [2]
    assert removed(decide(story_policy(aggregation="all"), ratings[:1])) == []
    mean = story_policy(aggregation="mean", keep_if="reflection >= 0.5 and consistency >= 0.5")
    assert removed(decide(mean, ratings)) == [2]  # mean reflection of V2 = 1/3
    assert removed(decide(mean, ratings[:2])) == []  # 0.5
    # model raters (judges) are hints: they never count for the filter
    judge = story([0, 0], [0, 0], name="j", kind="model")
    assert removed(decide(story_policy(), [*ratings[:1], judge])) == []


def test_no_human_rating_means_no_elements_and_the_filter_is_recorded_anyway():
    v = decide(story_policy(), [])
    assert v.status == "pending" and v.details["element_filter"]["n"] == 0


def test_cqbench_default_policy_removes_values():
    ef = get_preset("cqbench.story").suggested_policy["element_filter"]
    assert ef["over"] == "values" and {"reflection", "consistency"} <= set(ef["keep_if"].replace("==", " ").split())


@pytest.mark.parametrize(
    "ef, message",
    [
        ({"over": "stories", "keep_if": "reflection == 1"}, "no question of this rubric is repeated over 'stories'"),
        (
            {"over": "values", "keep_if": "naturalness >= 4"},
            "unknown field(s) naturalness; questions repeated over 'values'",
        ),
        ({"over": "values", "keep_if": "rewrite_improvement > 2"}, "unknown field(s) rewrite_improvement"),
        ({"over": "values", "keep_if": "reflection =="}, "element_filter keep_if: cannot parse"),
        ({"over": "values"}, "needs 'keep_if'"),
        ({"keep_if": "reflection == 1"}, "needs 'over'"),
        (
            {"over": "values", "keep_if": "reflection == 1", "aggregation": "median"},
            "unknown element_filter aggregation",
        ),
        ({"over": "values", "keep_if": "reflection == 1", "tie": "coin"}, "unknown element_filter tie"),
        ({"over": "values", "keep_if": "reflection == 1", "when": 1}, "unknown element_filter key(s): when"),
        ("[1, 2", "element_filter is not valid JSON"),
        ([1, 2], "element_filter must be an object"),
    ],
)
def test_bad_element_filters_are_refused_with_a_clear_message(ef, message):
    rubric = Rubric.from_schema(get_preset("cqbench.story").rubric)
    with pytest.raises(PolicyError) as exc:
        compile_policy(PolicySpec.parse({"rule": "natural == 1", "element_filter": ef}), rubric)
    assert message in exc.value.message


def test_element_filter_from_a_form_is_json_text_and_empty_means_none():
    spec = PolicySpec.parse({"rule": "natural == 1", "element_filter": json.dumps(FILTER)})
    assert spec.element_filter == {**FILTER, "tie": "drop"}
    assert PolicySpec.parse({"rule": "natural == 1", "element_filter": ""}).element_filter == {}


# ------------------------------------------------------------------------------ database + export
def story_project(researcher, annotators):
    project = make_project("cqbench.story", owner=researcher, annotators=annotators[:2], k=2)
    records = get_preset("cqbench.story").demo_items(None)[:2]
    report = importing.import_items(project=project, data=jsonl(records), data_format="jsonl")
    assert report.ok, report.errors
    return project


def story_answers(item, reflection, consistency, naturalness=5):
    return {
        "rewrite_improvement": [3] * len(item.data.get("rewrites") or []),
        "reflection": reflection,
        "consistency": consistency,
        "naturalness": naturalness,
    }


@pytest.fixture
def stories(researcher, annotators):
    project = story_project(researcher, annotators)
    first, second = Item.objects.filter(project=project).order_by("id")
    plan = {  # (item, rater) -> answers; item 1: V2 dropped by both, V5 a 1-1 tie; item 2: all kept
        (first.id, "ann1"): story_answers(first, [1, 0, 1, 1, 1], [1, 1, 1, 1, 1]),
        (first.id, "ann2"): story_answers(first, [1, 0, 1, 1, 0], [1, 1, 1, 1, 1]),
        (second.id, "ann1"): story_answers(second, [1] * len(second.data["values"]), [1] * len(second.data["values"])),
        (second.id, "ann2"): story_answers(second, [1] * len(second.data["values"]), [1] * len(second.data["values"])),
    }
    submit_all(project, lambda item, rater: plan[(item.id, rater.name)])
    return project, first, second


@pytest.mark.django_db
def test_cqbench_default_policy_is_applied_recorded_and_exported(stories, researcher):
    project, first, second = stories
    assert len(first.data["values"]) == 5
    assert services.current_policy(project)["element_filter"]["over"] == "values"
    report = services.apply_policy(project=project, user=researcher)
    assert report.counts["accepted"] == 2
    d = ItemDecision.objects.get(item=first)
    assert d.details["element_filter"]["kept"] == [1, 3, 4] and removed(d) == [2, 5]
    assert "2 of 5 values removed" in d.reason
    for fmt in ("jsonl", "csv", "parquet"):
        export = run_export_job(
            export=Export.objects.create(project=project, created_by=researcher, content="items", format=fmt)
        )
        assert export.status == "done", export.message
        assert export.provenance["acceptance_policy"]["element_filter"]["keep_if"] == FILTER["keep_if"]
        path = export_root(export) / f"items.{fmt}"
        if fmt == "jsonl":
            rows = {r["id"]: r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}
        else:
            df = pd.read_csv(path, dtype=str, keep_default_na=False) if fmt == "csv" else pd.read_parquet(path)
            rows = {
                r["id"]: {
                    **r,
                    "values": json.loads(r["values"]),
                    "_removed": json.loads(r["_removed"]) if r["_removed"] else None,
                }
                for r in df.to_dict("records")
            }
        one, two = rows[first.external_id], rows[second.external_id]
        original = first.data["values"]
        assert one["values"] == [original[0], original[2], original[3]], fmt
        assert [(r["element"], r["value"]) for r in one["_removed"]] == [(2, original[1]), (5, original[4])]
        assert "majority: 0 of 2" in one["_removed"][0]["reason"] and "tie: 1 of 2" in one["_removed"][1]["reason"]
        assert two["values"] == second.data["values"] and two["_removed"] == []
    # the decision details reach the API too
    c = Client()
    c.force_login(researcher)
    rows = c.get(f"/api/projects/{project.id}/decisions/").json()
    rows = rows["results"] if isinstance(rows, dict) else rows
    assert any(r["details"].get("element_filter", {}).get("removed") for r in rows)


@pytest.mark.django_db
def test_without_a_filter_exports_are_unchanged(stories, researcher):
    project, first, _ = stories
    services.set_policy(project=project, raw={"element_filter": {}}, user=researcher)
    assert AcceptancePolicy.objects.get(project=project).element_filter == {}
    services.apply_policy(project=project, user=researcher)
    assert "element_filter" not in ItemDecision.objects.get(item=first).details
    export = run_export_job(
        export=Export.objects.create(project=project, created_by=researcher, content="items", format="jsonl")
    )
    rows = [json.loads(line) for line in (export_root(export) / "items.jsonl").read_text().splitlines()]
    assert "_removed" not in rows[0] and rows[0]["values"] == first.data["values"]


@pytest.mark.django_db
def test_a_filter_set_after_the_decision_leaves_the_list_whole_until_applied(stories, researcher):
    project, first, _ = stories
    services.set_policy(project=project, raw={"element_filter": {}}, user=researcher)
    services.apply_policy(project=project, user=researcher)
    services.set_policy(project=project, raw={"element_filter": FILTER}, user=researcher)
    export = run_export_job(
        export=Export.objects.create(project=project, created_by=researcher, content="items", format="jsonl")
    )
    row = json.loads((export_root(export) / "items.jsonl").read_text().splitlines()[0])
    assert row["values"] == first.data["values"] and row["_removed"] is None


@pytest.mark.django_db
def test_bad_filters_are_a_400_over_the_api_and_a_curation_error(stories, researcher):
    project, _, _ = stories
    c = Client()
    c.force_login(researcher)
    r = c.put(
        f"/api/projects/{project.id}/acceptance-policy/",
        {"element_filter": {"over": "values", "keep_if": "naturalness == 1"}},
        content_type="application/json",
    )
    assert r.status_code == 400 and "unknown field(s) naturalness" in r.json()["detail"]
    r = c.put(
        f"/api/projects/{project.id}/acceptance-policy/",
        {"element_filter": {**FILTER, "tie": "keep"}},
        content_type="application/json",
    )
    assert r.status_code == 200 and r.json()["element_filter"]["tie"] == "keep"
    with pytest.raises(DomainError, match="no question of this rubric is repeated over 'characters'"):
        services.preview_policy(project=project, raw={"element_filter": {"over": "characters", "keep_if": "x == 1"}})


@pytest.mark.django_db
def test_the_curation_page_edits_the_filter_as_json(stories, researcher):
    project, _, _ = stories
    c = Client()
    c.force_login(researcher)
    page = c.get(f"/projects/{project.id}/curation/").content.decode()
    assert 'name="element_filter"' in page and "reflection == 1 and consistency == 1" in page
    form = {
        "rule": "natural == 1",
        "aggregation": "majority",
        "tie": "reject",
        "min_human_ratings": "2",
        "revise_if": "",
        "element_filter": '{"over": "values", "keep_if": "reflection == 1"}',
        "save": "1",
    }
    assert c.post(f"/projects/{project.id}/curation/policy/", form).status_code == 302
    assert AcceptancePolicy.objects.get(project=project).element_filter["keep_if"] == "reflection == 1"
    r = c.post(f"/projects/{project.id}/curation/policy/", {**form, "element_filter": '{"over": "values"'})
    assert r.status_code == 400 and "element_filter is not valid JSON" in r.content.decode()
