"""The plan form without typing rules by hand (issue 14, point 3): attribute keys and values offered
from the annotators' profiles, an htmx preview of the places per item and how many the current
annotators can fill, a quota nobody matches refused with nothing changed until confirmed, and
deleting a plan (unstarted work released, started work kept)."""

from __future__ import annotations

import pytest
from django.test import Client

from annotate import annotating
from annotation import projects
from annotation.models import Annotation, Assignment, Project
from studies import next_item, plans, sampling
from studies.models import AssignmentPlan, PoolSlot, Sample
from tests.annotation.factories import make_user
from tests.studies.design_helpers import annotator, strata_project

pytestmark = pytest.mark.django_db

ANSWER = {"human_written": "left"}


def client_for(user) -> Client:
    c = Client()
    c.force_login(user)
    return c


@pytest.fixture
def team(db):
    return {
        "cn1": annotator("cn1", nationality="China"),
        "cn2": annotator("cn2", nationality=" china "),  # the same value as the rules compare it
        "de1": annotator("de1", nationality="Germany", languages=["German", "English"]),
    }


@pytest.fixture
def project(researcher, team) -> Project:
    """Plans mode, 3 China and 3 Germany items, the three annotators."""
    return strata_project(researcher, {("China", "gpt"): 3, ("Germany", "gpt"): 3}, annotators=list(team.values()))


@pytest.fixture
def sample(project) -> Sample:
    return sampling.draw_sample(project=project, name="all", strata_keys=["country"], per_stratum=3, seed=1)


def plan_url(project, sample, tail: str = "") -> str:
    return f"/projects/{project.id}/samples/{sample.id}/{tail}"


# --------------------------------------------------------------------------- what the form offers
def test_attribute_values_come_from_the_annotators_profiles(project):
    assert plans.attribute_values(project) == {
        "languages": {"English": 1, "German": 1},
        "nationality": {"China": 2, "Germany": 1},
    }  # the UI language is not something a plan matches on


def test_the_plan_form_offers_the_profile_keys_and_values(project, sample, researcher):
    page = client_for(researcher).get(plan_url(project, sample))
    html = page.content.decode()
    assert page.status_code == 200
    assert (
        '<datalist id="profile-keys"><option value="languages"></option><option value="nationality"></option>' in html
    )
    assert '<option value="China" label="nationality: 2 annotators">' in html
    assert '<option value="Germany" label="nationality: 1 annotator">' in html
    assert 'list="profile-keys"' in html and 'list="profile-values"' in html
    assert '<datalist id="item-keys"><option value="country"></option><option value="generator"></option>' in html
    assert "China (2), Germany (1)" in html  # the table beside the form
    assert not AssignmentPlan.objects.exists()


# --------------------------------------------------------------------------- preview
def test_preview_shows_the_mix_per_item_and_what_the_annotators_can_fill(project, sample, researcher):
    c = client_for(researcher)
    r = c.post(
        plan_url(project, sample, "plan-preview/"),
        {
            "mode": "preassigned",
            "k": "3",
            "balance_attribute": "nationality",
            "quota_value": ["China", "Germany", ""],
            "quota_count": ["2", "1", ""],
        },
    )
    assert r.status_code == 200
    forecast = r.context["forecast"]
    # 6 items x 3 places: China 2 + Germany 1 per item; 2 Chinese and 1 German annotator fill them all
    assert (forecast["items"], forecast["places"], forecast["fillable"], forecast["unfilled"]) == (6, 18, 18, 0)
    assert forecast["mix"] == [
        {"items": 6, "places": [{"label": "nationality = China", "n": 2}, {"label": "nationality = Germany", "n": 1}]}
    ]
    rows = {row["label"]: (row["places"], row["annotators"], row["fillable"]) for row in forecast["requirements"]}
    assert rows == {"nationality = China": (12, 2, 12), "nationality = Germany": (6, 1, 6)}
    assert not forecast["needs_confirmation"] and b"18 of 18 places can be filled" in r.content

    # nationality = item country, k = 3: each item needs 3 of its country; 2 Chinese, 1 German
    r = c.post(
        plan_url(project, sample, "plan-preview/"),
        {"mode": "preassigned", "k": "3", "eligibility_attribute": "nationality", "eligibility_item_key": "country"},
    )
    forecast = r.context["forecast"]
    assert (forecast["places"], forecast["fillable"], forecast["unfilled"]) == (18, 3 * 2 + 3 * 1, 9)
    assert forecast["mix"] == [
        {"items": 3, "places": [{"label": "nationality = China", "n": 3}]},
        {"items": 3, "places": [{"label": "nationality = Germany", "n": 3}]},
    ]
    assert forecast["needs_confirmation"] and "9 of 18 place(s) would stay empty" in forecast["problems"][0]
    # a preview writes nothing
    assert not AssignmentPlan.objects.exists() and not PoolSlot.objects.exists()
    assert not Assignment.objects.filter(plan__isnull=False).exists()


def test_preview_of_a_bad_form_says_why(project, sample, researcher):
    r = client_for(researcher).post(
        plan_url(project, sample, "plan-preview/"),
        {"mode": "pooled", "k": "2", "balance_attribute": "nationality", "quota_value": ["China"], "quota_count": [""]},
    )
    assert r.status_code == 400 and b"give how many annotators with nationality = China" in r.content
    r = client_for(researcher).post(
        plan_url(project, sample, "plan-preview/"),
        {
            "mode": "pooled",
            "k": "1",
            "balance_attribute": "nationality",
            "quota_value": ["China"],
            "quota_count": ["2"],
        },
    )
    assert r.status_code == 400 and b"more than k = 1" in r.content


# --------------------------------------------------------------------------- refusal
def test_a_quota_nobody_matches_is_refused_and_changes_nothing_until_confirmed(researcher, team):
    # automatic assignment first: every annotator has default rows a take-over would remove
    project = strata_project(
        researcher, {("China", "gpt"): 2, ("Germany", "gpt"): 2}, annotators=list(team.values()), take_over=False
    )
    default_rows = set(Assignment.objects.filter(project=project).values_list("pk", flat=True))
    assert len(default_rows) == 4 * 2
    options = dict(project.options)
    sample = sampling.draw_sample(project=project, name="all", strata_keys=["country"], per_stratum=2, seed=1)
    form = {
        "mode": "pooled",
        "k": "2",
        "balance_attribute": "nationality",
        "quota_value": ["Chinese", ""],
        "quota_count": ["2", ""],
        "take_over": "on",
    }
    c = client_for(researcher)
    r = c.post(plan_url(project, sample), form)
    page = r.content.decode()
    assert r.status_code == 400
    assert "Nothing was created" in page and "nationality = Chinese: no annotator of the project matches" in page
    assert "their nationality values: China, Germany" in page
    assert 'name="confirm_unfilled"' in page and 'data-testid="plan-preview"' in page  # the forecast, and the box
    assert not AssignmentPlan.objects.exists() and not PoolSlot.objects.exists()
    assert set(Assignment.objects.filter(project=project).values_list("pk", flat=True)) == default_rows
    project.refresh_from_db()
    assert project.options == options

    # the same refusal from the service, for anyone calling it with the check on
    with pytest.raises(plans.UnfilledPlan) as refused:
        plans.create_plan(
            sample=sample, k=2, balance={"attribute": "nationality", "quota": {"Chinese": 2}}, refuse_unfilled=True
        )
    assert refused.value.forecast["fillable"] == 0 and not AssignmentPlan.objects.exists()

    # confirmed: created as asked, with its places open
    r = c.post(plan_url(project, sample), {**form, "confirm_unfilled": "on"})
    assert r.status_code == 302
    plan = AssignmentPlan.objects.get()
    assert set(plan.slots.values_list("requires", flat=True)) == {"nationality=chinese"}
    assert not Assignment.objects.filter(project=project, plan__isnull=True).exists()


def test_a_fillable_plan_needs_no_confirmation(project, sample, researcher):
    r = client_for(researcher).post(
        plan_url(project, sample),
        {
            "mode": "preassigned",
            "k": "2",
            "balance_attribute": "nationality",
            "quota_value": ["china", "Germany"],
            "quota_count": ["1", "1"],
        },
        follow=True,
    )
    assert r.status_code == 200 and b"plan created: 12 places, 12 assigned, 0 not filled" in r.content
    plan = AssignmentPlan.objects.get()
    assert plan.balance == {"attribute": "nationality", "quota": {"china": 1, "Germany": 1}}


# --------------------------------------------------------------------------- delete
def test_deleting_a_pooled_plan_releases_unstarted_work_and_keeps_started_work(project, sample, researcher, team):
    plan = plans.create_plan(sample=sample, mode="pooled", k=2)
    r = {name: projects.rater_for_user(user) for name, user in team.items()}
    started = next_item.next_assignment(rater=r["cn1"], project=project)
    annotating.open_assignment(assignment=started, rater=r["cn1"])
    claimed = next_item.next_assignment(rater=r["cn2"], project=project)  # claimed, never opened
    done = next_item.next_assignment(rater=r["de1"], project=project)
    annotating.submit_annotation(assignment_id=done.id, rater=r["de1"], answers=ANSWER)
    c = client_for(researcher)

    page = c.get(f"/projects/{project.id}/plans/{plan.id}/delete/")
    assert page.status_code == 200 and page.context["footprint"] == {
        "released": 1,
        "started": 1,
        "submitted": 1,
        "closed": 0,
        "open_places": 12 - 3,
    }
    assert AssignmentPlan.objects.filter(pk=plan.pk).exists()  # the GET deleted nothing

    r_delete = c.post(f"/projects/{project.id}/plans/{plan.id}/delete/", follow=True)
    assert r_delete.status_code == 200 and b"1 unstarted assignment(s) released" in r_delete.content
    assert not AssignmentPlan.objects.filter(pk=plan.pk).exists() and not PoolSlot.objects.exists()
    assert not Assignment.objects.filter(pk=claimed.pk).exists()
    kept = Assignment.objects.get(pk=started.pk)
    assert kept.plan_id is None and kept.status == "in_progress" and kept.lease_expires_at is None
    assert Annotation.objects.filter(assignment_id=done.pk).exists()
    assert Sample.objects.filter(pk=sample.pk).exists()
    # the started item can still be finished; nobody draws from the deleted pool
    annotating.submit_annotation(assignment_id=started.id, rater=r["cn1"], answers=ANSWER)
    assert next_item.next_assignment(rater=r["cn2"], project=project) is None


def test_deleting_a_preassigned_plan(project, sample, researcher):
    plan = plans.create_plan(sample=sample, mode="preassigned", k=1)
    assert Assignment.objects.filter(plan=plan).count() == 6
    assert client_for(researcher).post(f"/projects/{project.id}/plans/{plan.id}/delete/").status_code == 302
    assert not Assignment.objects.filter(project=project).exists()


def test_only_the_projects_researchers_preview_or_delete_plans(project, sample, researcher, team):
    plan = plans.create_plan(sample=sample, mode="pooled", k=1)
    urls = [
        ("post", plan_url(project, sample, "plan-preview/")),
        ("get", f"/projects/{project.id}/plans/{plan.id}/delete/"),
        ("post", f"/projects/{project.id}/plans/{plan.id}/delete/"),
    ]
    for who, status in ((team["cn1"], 403), (make_user("other-res", researcher=True), 404)):
        for method, url in urls:
            assert getattr(client_for(who), method)(url, {"mode": "pooled", "k": "1"}).status_code == status, url
    for method, url in urls:
        assert getattr(Client(), method)(url).status_code == 302, url
    assert AssignmentPlan.objects.filter(pk=plan.pk).exists()
