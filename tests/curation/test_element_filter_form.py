"""The curation policy's element filter as a form (issue 14, point 3): which list field, one
condition per repeated question, the aggregation and the tie; the JSON stays as the advanced
view. Saved from the form and shown again as it was saved (a round trip); a form that cannot
make a filter is refused and changes nothing."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from annotation import projects
from annotation.rubric import Rubric
from core.errors import DomainError
from curation import element_form, services
from curation.models import AcceptancePolicy
from curation.policy import PolicySpec, compile_policy
from tests.annotation.factories import make_project, make_user

pytestmark = pytest.mark.django_db

BASE = {"rule": "natural == 1", "aggregation": "majority", "min_human_ratings": "1", "save": "1"}


@pytest.fixture
def story(researcher):
    return make_project("cqbench.story", owner=researcher, k=1)


def client_for(user) -> Client:
    c = Client()
    c.force_login(user)
    return c


def conditions(ef: dict, over: str = "values") -> dict[str, tuple[str, str]]:
    return {q["id"]: (q["op"], q["value"]) for f in ef["fields"] if f["over"] == over for q in f["questions"]}


def as_posted(ef: dict) -> dict[str, str]:
    """What the browser sends for the element filter part of the page as it is shown."""
    data = {
        "ef_mode": ef["mode"],
        "ef_over": ef["over"],
        "ef_aggregation": ef["aggregation"],
        "ef_tie": ef["tie"],
        "element_filter": ef["json"],
    }
    for f in ef["fields"]:
        for q in f["questions"]:
            data[f"ef_op_{q['id']}"], data[f"ef_value_{q['id']}"] = q["op"], q["value"]
    return data


def test_the_page_shows_the_suggested_filter_as_a_form(story, researcher):
    page = client_for(researcher).get(f"/projects/{story.id}/curation/")
    ef = page.context["ef"]
    assert ef["mode"] == "form" and ef["over"] == "values" and (ef["aggregation"], ef["tie"]) == ("majority", "drop")
    assert conditions(ef) == {"consistency": ("==", "1"), "reflection": ("==", "1")}
    assert [f["over"] for f in ef["fields"]] == ["rewrites", "values"]
    html = page.content.decode()
    assert re.search(r'name="ef_op_reflection"[^>]*>.*?<option value="==" selected>', html, re.S)
    assert '<input type="radio" name="ef_mode" value="form" checked>' in html
    assert 'name="element_filter" value="{&quot;over&quot;: &quot;values&quot;' in html  # the advanced view


def test_a_filter_made_with_the_form_is_saved_and_shown_again_as_made(story, researcher):
    c = client_for(researcher)
    form = {
        **BASE,
        "ef_mode": "form",
        "ef_over": "values",
        "ef_op_reflection": ">=",
        "ef_value_reflection": "1",
        "ef_op_consistency": "",
        "ef_value_consistency": "0",
        "ef_op_rewrite_improvement": "==",  # a question of another list field: not read
        "ef_value_rewrite_improvement": "5",
        "ef_aggregation": "all",
        "ef_tie": "keep",
        "element_filter": "not read in form mode",
    }
    r = c.post(f"/projects/{story.id}/curation/policy/", form)
    assert r.status_code == 302, r.content[-2000:]
    saved = {"over": "values", "keep_if": "reflection >= 1", "aggregation": "all", "tie": "keep"}
    assert AcceptancePolicy.objects.get(project=story).element_filter == saved
    ef = c.get(f"/projects/{story.id}/curation/").context["ef"]
    assert ef["mode"] == "form" and (ef["aggregation"], ef["tie"]) == ("all", "keep")
    assert conditions(ef) == {"consistency": ("", ""), "reflection": (">=", "1")}
    # sending the page back as shown keeps the same filter: the round trip is exact
    assert c.post(f"/projects/{story.id}/curation/policy/", {**BASE, **as_posted(ef)}).status_code == 302
    assert AcceptancePolicy.objects.get(project=story).element_filter == saved


def test_no_filter_and_the_advanced_json(story, researcher):
    c = client_for(researcher)
    assert c.post(f"/projects/{story.id}/curation/policy/", {**BASE, "ef_mode": "none"}).status_code == 302
    assert AcceptancePolicy.objects.get(project=story).element_filter == {}
    assert c.get(f"/projects/{story.id}/curation/").context["ef"]["mode"] == "none"
    text = '{"over": "values", "keep_if": "reflection == 1 or consistency == 1"}'
    r = c.post(f"/projects/{story.id}/curation/policy/", {**BASE, "ef_mode": "json", "element_filter": text})
    assert r.status_code == 302
    assert (
        AcceptancePolicy.objects.get(project=story).element_filter["keep_if"] == "reflection == 1 or consistency == 1"
    )
    page = c.get(f"/projects/{story.id}/curation/")
    assert page.context["ef"]["mode"] == "json"  # "or" is beyond the form: shown in the advanced view
    assert b"<details open><summary>Advanced: the filter as JSON" in page.content
    # a client that sends only the JSON (no form) is read as before
    r = c.post(f"/projects/{story.id}/curation/policy/", {**BASE, "element_filter": ""})
    assert r.status_code == 302 and AcceptancePolicy.objects.get(project=story).element_filter == {}


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"ef_op_reflection": "", "ef_op_consistency": ""}, b"give at least one condition"),
        ({"ef_value_reflection": "yes"}, b"the value for reflection must be a number"),
        ({"ef_over": "stories"}, b"choose the list field whose elements are filtered"),
        ({"ef_op_reflection": "=~"}, b"unknown comparison"),
        ({"ef_mode": "maybe"}, b"choose none, the form, or JSON"),
        ({"ef_mode": "json", "element_filter": "{oops"}, b"element_filter is not valid JSON"),
    ],
)
def test_a_form_that_cannot_make_a_filter_is_refused_and_changes_nothing(story, researcher, fields, message):
    c = client_for(researcher)
    assert c.post(f"/projects/{story.id}/curation/policy/", {**BASE, "ef_mode": "none"}).status_code == 302
    before = AcceptancePolicy.objects.get(project=story).spec_dict()
    form = {
        **BASE,
        "ef_mode": "form",
        "ef_over": "values",
        "ef_op_reflection": "==",
        "ef_value_reflection": "1",
        **fields,
    }
    r = c.post(f"/projects/{story.id}/curation/policy/", form)
    assert r.status_code == 400 and message in r.content, r.content[-3000:]
    assert AcceptancePolicy.objects.get(project=story).spec_dict() == before
    if form["ef_mode"] == "form":  # shown again as sent, not as stored
        assert r.context["ef"]["mode"] == "form"
    preview = c.post(f"/projects/{story.id}/curation/preview/", form)
    assert preview.status_code == 400 and message in preview.content


def test_the_preview_reads_the_form(story, researcher):
    r = client_for(researcher).post(
        f"/projects/{story.id}/curation/preview/",
        {**BASE, "ef_mode": "form", "ef_over": "values", "ef_op_reflection": "==", "ef_value_reflection": "1"},
    )
    assert r.status_code == 200 and b'data-testid="preview"' in r.content


def test_annotators_cannot_save_a_filter(story, researcher):
    ann = make_user("ef-annotator")
    projects.add_member(project=story, user=ann, role="annotator")
    r = client_for(ann).post(f"/projects/{story.id}/curation/policy/", {**BASE, "ef_mode": "none"})
    assert r.status_code == 403 and not AcceptancePolicy.objects.filter(project=story).exists()
    assert services.current_policy(story)["element_filter"]["over"] == "values"


def test_a_choice_question_is_compared_with_one_of_its_options():
    rubric = Rubric.from_schema(
        {
            "title": "t",
            "instructions": "",
            "questions": [
                {
                    "id": "verdict",
                    "type": "choice",
                    "label": "Verdict",
                    "prompt": "?",
                    "options": [{"value": "keep", "label": "Keep"}, {"value": "drop it", "label": "Drop"}],
                    "repeat": {"over": "values", "label": "V{n}"},
                }
            ],
        }
    )
    post = {"ef_mode": "form", "ef_over": "values", "ef_op_verdict": "!=", "ef_value_verdict": "drop it"}
    made = element_form.filter_from_post(post, rubric)
    assert made["keep_if"] == 'verdict != "drop it"'
    compile_policy(PolicySpec.parse({"rule": "True", "element_filter": made}), rubric)  # a valid filter
    assert element_form.state_from_filter(made, rubric)["conditions"] == {"verdict": ("!=", "drop it")}
    with pytest.raises(DomainError, match="takes one of keep, drop it"):
        element_form.filter_from_post({**post, "ef_value_verdict": "maybe"}, rubric)
