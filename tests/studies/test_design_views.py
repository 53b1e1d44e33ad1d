"""The study-design pages from a researcher's browser (Django test client): the ValueGround
36-pair / 4-annotator design and the CULTIVate nationality-matched design on the demo data,
plus permissions of every new page."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
from django import forms
from django.test import Client
from django.utils import timezone

from annotation.models import Annotation, Assignment, Project
from studies import next_item, quality
from studies.models import AssignmentPlan, CrowdStudy, PoolSlot, Sample
from tests.annotation.factories import make_user
from tests.studies.design_helpers import annotator, strata_project


@pytest.fixture
def demo(shared_demo, db):
    """The demo, seeded once for TestOnTheDemo (tests/conftest.py, shared_demo), read afresh."""
    return {p.preset_key: p for p in Project.objects.filter(name__startswith="Demo: ")}


def client_for(username: str) -> Client:
    from django.contrib.auth import get_user_model

    c = Client()
    c.force_login(get_user_model().objects.get(username=username))
    return c


def work_through(project: Project, username: str, answers: dict) -> list[int]:
    c = client_for(username)
    done = []
    for _ in range(100):
        r = c.get(f"/projects/{project.id}/next/")
        if r.status_code == 200:
            break
        a_id = int(r["Location"].strip("/").split("/")[-1])
        assert c.get(f"/a/{a_id}/").status_code == 200
        r = c.post(f"/a/{a_id}/", {**answers, "mode": "submit"})
        assert r.status_code == 302, r.content[:500]
        done.append(a_id)
    return done


VG_ANSWERS = {"q1": "2", "q2": "1", "q3": "2", "q4": "1", "feedback": ""}


def prefilled(form) -> dict:
    """What a browser submits for an untouched form: every field's initial value."""
    data = {}
    for name, field in form.fields.items():
        value = form[name].initial
        if isinstance(field, forms.BooleanField):
            if value:
                data[name] = "on"
        elif value is not None:
            data[name] = value
    return data


class TestOnTheDemo:
    """The designs built on the whole demo, seeded once for the class (shared_demo): the other
    tests of this module count rows of a database without the demo."""

    def test_researcher_builds_the_valueground_design_on_the_demo_data(self, demo):
        project = demo["valueground.pair_quality"]
        c = client_for("researcher")
        form = {
            "name": "VG judge subset",
            "strata": ["generator", "category"],
            "allocation": "proportional",
            "total_size": "36",
            "seed": "7",
        }
        preview = c.post(f"/projects/{project.id}/samples/preview/", form)
        assert preview.status_code == 200 and b"Preview:" in preview.content
        assert not Sample.objects.filter(project__name__startswith="Demo: ").exists()
        r = c.post(f"/projects/{project.id}/samples/new/", form)
        assert r.status_code == 302
        sample = Sample.objects.get(project__name__startswith="Demo: ")
        # the demo has 40 pairs (20 questions x 2 backbones): exactly 36 are drawn, proportionally
        assert sample.report["total_drawn"] == 36 and sample.report["total_asked"] == 36 and not sample.report["short"]
        assert sorted(Counter(sample.items.values_list("generator", flat=True)).values()) == [18, 18]  # 20 / 20
        assert c.get(r["Location"]).status_code == 200
        r = c.post(
            f"/projects/{project.id}/samples/{sample.id}/",
            {
                "name": "VG 2 CN + 2 DE",
                "mode": "pooled",
                "k": "4",
                "balance_attribute": "nationality",
                "balance_quota": "China:2, Germany:2",
                "lease_minutes": "30",
                "take_over": "on",
            },
        )
        assert r.status_code == 302, r.content[:2000]
        plan = AssignmentPlan.objects.get(project__name__startswith="Demo: ")
        for username in ("annotator3", "annotator4"):
            assert (
                c.post(f"/projects/{project.id}/members/", {"username": username, "role": "annotator"}).status_code
                == 302
            )
        assert not Assignment.objects.filter(project=project).exists()  # take-over removed the default rows
        for username in ("annotator1", "annotator2", "annotator3", "annotator4"):
            assert len(work_through(project, username, VG_ANSWERS)) == 36
        per_item = {}
        for item_id, nat in Annotation.objects.filter(assignment__plan=plan).values_list(
            "item_id", "rater__attributes__nationality"
        ):
            per_item.setdefault(item_id, Counter())[nat] += 1
        assert len(per_item) == 36 and all(v == {"China": 2, "Germany": 2} for v in per_item.values())
        dash = c.get(f"/projects/{project.id}/dashboard/")
        assert dash.status_code == 200 and b"annotator3" in dash.content
        csv_text = c.get(f"/projects/{project.id}/dashboard/strata.csv").content.decode()
        assert csv_text.splitlines()[0].startswith("plan,stratum,items,places")
        assert sum(int(line.split(",")[6]) for line in csv_text.splitlines()[1:]) == 36 * 4

    def test_the_valueground_design_page_suggests_the_papers_design(self, demo):
        """Sec. 4.2 / App. B.2: a stratified 36-pair subset, 4 annotators, 2 from China and 2 from
        Germany. The pages pre-fill it (GETs write nothing) and the untouched forms build it."""
        project = demo["valueground.pair_quality"]
        options = dict(project.options)
        c = client_for("researcher")
        page = c.get(f"/projects/{project.id}/design/")
        assert page.status_code == 200
        assert b"Suggested by ValueGround, Sec. 4.2 and App. B.2" in page.content
        assert b".txt)" not in page.content  # no internal file name (issue 25)
        sample_form = page.context["form"]
        assert sample_form["total_size"].initial == 36 and sample_form["strata"].initial == ["generator"]
        assert b'name="total_size" value="36"' in page.content
        assert not Sample.objects.filter(project__name__startswith="Demo: ").exists()
        r = c.post(f"/projects/{project.id}/samples/new/", prefilled(sample_form))
        assert r.status_code == 302, r.content[:2000]
        sample = Sample.objects.get(project__name__startswith="Demo: ")
        assert sample.report["total_drawn"] == 36 and sample.strata_keys == ["generator"]
        assert sorted(Counter(sample.items.values_list("generator", flat=True)).values()) == [18, 18]

        page = c.get(r["Location"])
        plan_form = page.context["form"]
        assert plan_form["k"].initial == 4
        assert plan_form["balance_attribute"].initial == "nationality"
        assert plan_form["balance_quota"].initial == "China:2, Germany:2"
        # the quota is offered as rows of a value and a count (issue 14), pre-filled with the paper's
        assert page.context["quota_rows"][:2] == [("China", "2"), ("Germany", "2")]
        assert b'name="quota_value" value="China"' in page.content and b'name="k" value="4"' in page.content
        assert b"Suggested by ValueGround" in page.content and b"k = 4" in page.content
        assert not AssignmentPlan.objects.filter(project__name__startswith="Demo: ").exists()
        project.refresh_from_db()
        assert project.options == options  # the GETs wrote nothing

        r = c.post(f"/projects/{project.id}/samples/{sample.id}/", prefilled(plan_form))
        assert r.status_code == 302, r.content[:2000]
        plan = AssignmentPlan.objects.get(project__name__startswith="Demo: ")
        assert plan.k == 4 and plan.balance == {"attribute": "nationality", "quota": {"China": 2, "Germany": 2}}
        slots: dict[int, Counter] = {}
        for item_id, requires in PoolSlot.objects.filter(plan=plan).values_list("item_id", "requires"):
            slots.setdefault(item_id, Counter())[requires] += 1
        assert len(slots) == 36
        assert all(v == {"nationality=china": 2, "nationality=germany": 2} for v in slots.values())
        for username in ("annotator3", "annotator4"):
            assert (
                c.post(f"/projects/{project.id}/members/", {"username": username, "role": "annotator"}).status_code
                == 302
            )
        for username in ("annotator1", "annotator2", "annotator3", "annotator4"):
            assert len(work_through(project, username, VG_ANSWERS)) == 36
        per_item: dict[int, Counter] = {}
        for item_id, nat in Annotation.objects.filter(assignment__plan=plan).values_list(
            "item_id", "rater__attributes__nationality"
        ):
            per_item.setdefault(item_id, Counter())[nat] += 1
        assert len(per_item) == 36 and all(v == {"China": 2, "Germany": 2} for v in per_item.values())

    def test_the_cultivate_pages_suggest_nationality_matching_and_the_papers_qc(self, demo):
        """Sec. 4.2: two annotators of the image's country per image; a required rationale. The QC form
        is pre-filled until the project has QC settings of its own."""
        project = demo["cultivate.faithfulness"]
        c = client_for("researcher")
        page = c.get(f"/projects/{project.id}/design/")
        assert b"Suggested by CULTIVate" in page.content and b"attention checks" in page.content
        form = page.context["form"]
        assert form["strata"].initial == ["country", "category", "generator"] and form["total_size"].initial == 398
        r = c.post(f"/projects/{project.id}/samples/new/", prefilled(form))
        assert r.status_code == 302, r.content[:2000]
        plan_form = c.get(r["Location"]).context["form"]
        assert (
            plan_form["k"].initial,
            plan_form["eligibility_attribute"].initial,
            plan_form["eligibility_item_key"].initial,
        ) == (2, "nationality", "country")

        dash = c.get(f"/projects/{project.id}/dashboard/")
        assert b'id="suggested-qc"' in dash.content
        qc_form = dash.context["qc_form"]
        assert qc_form["rationale_question"].initial == "rationale"
        project.refresh_from_db()
        assert not quality.qc_enabled(project)  # a GET writes nothing
        assert c.post(f"/projects/{project.id}/qc/", prefilled(qc_form)).status_code == 302
        project.refresh_from_db()
        assert quality.qc_settings(project)["rationale_question"] == "rationale"
        assert b'id="suggested-qc"' not in c.get(f"/projects/{project.id}/dashboard/").content

    def test_researcher_builds_the_cultivate_nationality_matched_design(self, demo):
        project = demo["cultivate.faithfulness"]
        c = client_for("researcher")
        r = c.post(
            f"/projects/{project.id}/samples/new/",
            {"strata": ["region"], "allocation": "equal", "per_stratum": "10", "seed": "1", "name": "CULTIVate"},
        )
        sample = Sample.objects.get(project__name__startswith="Demo: ")
        assert (
            c.post(f"/projects/{project.id}/members/", {"username": "annotator4", "role": "annotator"}).status_code
            == 302
        )
        form = {
            "mode": "preassigned",
            "k": "2",
            "eligibility_attribute": "nationality",
            "eligibility_item_key": "country",
            "take_over": "on",
        }
        # issue 14: places nobody can fill are refused until confirmed, and nothing changes meanwhile
        # (this test used to expect the plan at once, with 16 places left empty)
        default_rows = Assignment.objects.filter(project=project, plan__isnull=True).count()
        r = c.post(f"/projects/{project.id}/samples/{sample.id}/", form)
        assert r.status_code == 400 and b"no annotator of the project matches" in r.content
        assert not AssignmentPlan.objects.filter(project__name__startswith="Demo: ").exists()
        assert Assignment.objects.filter(project=project, plan__isnull=True).count() == default_rows
        r = c.post(f"/projects/{project.id}/samples/{sample.id}/", {**form, "confirm_unfilled": "on"})
        assert r.status_code == 302, r.content[:2000]
        plan = AssignmentPlan.objects.get(project__name__startswith="Demo: ")
        rows = list(Assignment.objects.filter(plan=plan).values_list("item__country", "rater__user__username"))
        assert sorted(rows) == [("Germany", "annotator1"), ("Germany", "annotator4")]
        assert plan.report["unfilled_slots"] == 16  # 8 other countries x 2: reported on the plan page
        page = c.get(r["Location"])
        assert b"could not be filled" in page.content
        assert not Assignment.objects.filter(
            project=project, plan__isnull=True, rater__user__username="annotator2", opened_at__isnull=True
        ).exists()


def test_hand_assignment_and_reassignment_from_the_plan_page(researcher):
    cn1, cn2 = annotator("cn1", nationality="China"), annotator("cn2", nationality="China")
    project = strata_project(researcher, {("China", "gpt"): 2}, annotators=[cn1, cn2])
    c = Client()
    c.force_login(researcher)
    c.post(
        f"/projects/{project.id}/samples/new/",
        {"strata": ["country"], "allocation": "equal", "per_stratum": "2", "seed": "1"},
    )
    sample = Sample.objects.get()
    c.post(f"/projects/{project.id}/samples/{sample.id}/", {"mode": "preassigned", "k": "1"})
    plan = AssignmentPlan.objects.get()
    a = Assignment.objects.filter(plan=plan, rater__user=cn1).first() or Assignment.objects.filter(plan=plan).first()
    target = "cn2" if a.rater.user == cn1 else "cn1"
    r = c.post(f"/projects/{project.id}/plans/{plan.id}/reassign/", {"move-assignment": a.id, "move-username": target})
    assert r.status_code == 302
    a.refresh_from_db()
    assert a.status == "expired"
    assert Assignment.objects.filter(item=a.item, rater__user__username=target, status="assigned").exists()
    r = c.post(
        f"/projects/{project.id}/plans/{plan.id}/hand/",
        {"hand-item": a.item.external_id, "hand-username": target},
        follow=True,
    )
    assert b"already has" in r.content


@pytest.fixture
def design_project(researcher):
    ann = annotator("ann", nationality="China")
    project = strata_project(researcher, {("China", "gpt"): 2}, annotators=[ann])
    from studies import plans, sampling

    sample = sampling.draw_sample(project=project, name="s", strata_keys=["country"], per_stratum=2, seed=1)
    plan = plans.create_plan(sample=sample, mode="pooled", k=1)
    return project, sample, plan, ann


def _urls(project, sample, plan, rater_id=1):
    """Every study-design endpoint: one view per action."""
    return [
        ("get", f"/projects/{project.id}/design/"),
        ("post", f"/projects/{project.id}/samples/preview/"),
        ("post", f"/projects/{project.id}/samples/new/"),
        ("get", f"/projects/{project.id}/samples/{sample.id}/"),
        ("post", f"/projects/{project.id}/samples/{sample.id}/"),
        ("post", f"/projects/{project.id}/samples/{sample.id}/plan-preview/"),
        ("get", f"/projects/{project.id}/plans/{plan.id}/"),
        ("post", f"/projects/{project.id}/plans/{plan.id}/hand/"),
        ("post", f"/projects/{project.id}/plans/{plan.id}/reassign/"),
        ("post", f"/projects/{project.id}/plans/{plan.id}/close/"),
        ("post", f"/projects/{project.id}/plans/{plan.id}/expire/"),
        ("get", f"/projects/{project.id}/plans/{plan.id}/delete/"),
        ("post", f"/projects/{project.id}/plans/{plan.id}/delete/"),
        ("get", f"/projects/{project.id}/dashboard/"),
        ("get", f"/projects/{project.id}/dashboard/annotators.csv"),
        ("get", f"/projects/{project.id}/dashboard/strata.csv"),
        ("post", f"/projects/{project.id}/qc/"),
        ("post", f"/projects/{project.id}/annotators/{rater_id}/pause/"),
        ("post", f"/projects/{project.id}/annotators/{rater_id}/resume/"),
        ("post", f"/projects/{project.id}/studies/new/"),
        ("post", f"/projects/{project.id}/studies/1/toggle/"),
    ]


def test_annotators_cannot_reach_design_or_dashboard_pages(design_project):
    project, sample, plan, ann = design_project
    c = Client()
    c.force_login(ann)
    for method, url in _urls(project, sample, plan, rater_id=ann.rater.id):
        r = getattr(c, method)(
            url,
            {
                "strata": ["country"],
                "per_stratum": "1",
                "seed": "1",
                "allocation": "equal",
                "name": "x",
                "completion_code": "C0DE",
                "items_per_participant": "3",
            },
        )
        assert r.status_code in (403, 404), (method, url, r.status_code)
    assert Sample.objects.count() == 1
    plan.refresh_from_db()
    assert plan.status == "active"


def test_researchers_of_other_projects_cannot_either(design_project):
    project, sample, plan, _ = design_project
    c = Client()
    c.force_login(make_user("other", researcher=True))
    for method, url in _urls(project, sample, plan):
        assert getattr(c, method)(url).status_code in (403, 404), url


def test_anonymous_users_are_sent_to_login(design_project):
    project, sample, plan, _ = design_project
    for method, url in _urls(project, sample, plan):
        r = getattr(Client(), method)(url)
        assert r.status_code == 302 and "/login/" in r["Location"], url


def test_sample_and_plan_of_another_project_are_404(researcher, design_project):
    _project, sample, plan, _ = design_project
    mine = strata_project(researcher, {("China", "gpt"): 1})
    c = Client()
    c.force_login(researcher)
    assert c.get(f"/projects/{mine.id}/samples/{sample.id}/").status_code == 404
    assert c.get(f"/projects/{mine.id}/plans/{plan.id}/").status_code == 404


def test_bad_sample_parameters_show_the_message(researcher, design_project):
    project, *_ = design_project
    c = Client()
    c.force_login(researcher)
    r = c.post(f"/projects/{project.id}/samples/preview/", {"strata": ["country"], "allocation": "equal", "seed": "1"})
    assert r.status_code == 400 and b"either a total" in r.content


def test_dashboard_csv_neutralises_formulas(researcher):
    evil = annotator("=cmd|calc", nationality="China")
    project = strata_project(researcher, {("China", "gpt"): 1}, annotators=[evil])
    c = Client()
    c.force_login(researcher)
    text = c.get(f"/projects/{project.id}/dashboard/annotators.csv").content.decode()
    assert "\n'=cmd|calc," in text.replace("\r\n", "\n")


def test_the_dashboard_page_writes_nothing(researcher, design_project):
    """Expired holds go back to the pool through beat or the plan's button, never on a GET."""
    project, _sample, plan, ann = design_project
    a = next_item.next_assignment(rater=ann.rater, project=project)
    PoolSlot.objects.filter(assignment=a).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    c = Client()
    c.force_login(researcher)
    assert c.get(f"/projects/{project.id}/dashboard/").status_code == 200
    a.refresh_from_db()
    assert a.status == "assigned" and PoolSlot.objects.get(assignment=a).state == "leased"
    assert c.post(f"/projects/{project.id}/plans/{plan.id}/expire/").status_code == 302
    a.refresh_from_db()
    assert a.status == "expired"


def test_pause_and_resume_are_their_own_actions(researcher, design_project):
    project, _sample, _plan, ann = design_project
    c = Client()
    c.force_login(researcher)
    assert c.post(f"/projects/{project.id}/annotators/{ann.rater.id}/pause/").status_code == 302
    assert quality.pause_reason(ann.rater, project) is not None
    assert c.post(f"/projects/{project.id}/annotators/{ann.rater.id}/resume/").status_code == 302
    assert quality.pause_reason(ann.rater, project) is None


def test_study_toggle_closes_and_reopens_through_the_service(researcher, design_project):
    project, *_ = design_project
    c = Client()
    c.force_login(researcher)
    r = c.post(
        f"/projects/{project.id}/studies/new/",
        {"name": "pilot", "completion_code": "C0DE", "items_per_participant": "3"},
    )
    assert r.status_code == 302
    study = CrowdStudy.objects.get(project=project)
    assert study.active
    c.post(f"/projects/{project.id}/studies/{study.id}/toggle/")
    study.refresh_from_db()
    assert not study.active
