"""Quality control: attention and gold scoring at submit time, pausing, repeats with a
consistency score, minimum time per item, required rationale."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from annotate import annotating
from annotation import projects
from annotation.models import Assignment, Membership
from core.errors import DomainError
from studies import dashboard, next_item, plans, quality, sampling
from tests.studies.design_helpers import annotator, strata_project

QC_ITEMS = [
    {
        "id": "att-1",
        "human_utterance": "Pick LEFT",
        "model_utterance": "x",
        "country": "China",
        "generator": "gpt",
        "meta": {"qc": "attention", "expected.human_written": "left"},
    },
    {
        "id": "gold-1",
        "human_utterance": "g",
        "model_utterance": "y",
        "country": "China",
        "generator": "gpt",
        "meta": {"qc": "gold", "expected.human_written": "right"},
    },
]


@pytest.fixture
def setup(researcher):
    ann = annotator("ann", nationality="China")
    project = strata_project(researcher, {("China", "gpt"): 12}, annotators=[ann], extra=QC_ITEMS)
    sample = sampling.draw_sample(project=project, name="s", strata_keys=["country"], per_stratum=12, seed=1)
    plans.create_plan(sample=sample, mode="pooled", k=1)
    return project, projects.rater_for_user(ann), ann


def submit_next(project, rater, answer="right"):
    a = next_item.next_assignment(rater=rater, project=project)
    annotating.submit_annotation(assignment_id=a.id, rater=rater, answers={"human_written": answer})
    return Assignment.objects.get(pk=a.id)


def test_attention_checks_are_injected_at_the_rate_scored_and_pause_after_failures(setup):
    project, rater, _ = setup
    quality.set_qc_settings(project=project, values={"attention_rate": 0.5, "attention_pause_after": 2})
    purposes = [submit_next(project, rater, "right").purpose for _ in range(3)]
    assert purposes == ["regular", "regular", "attention"]  # one check per two submitted items
    att = Assignment.objects.get(rater=rater, purpose="attention")
    assert att.qc_passed is False  # expected left, answered right
    assert quality.pause_reason(rater, project) is None
    submit_next(project, rater)
    submit_next(project, rater)
    second = submit_next(project, rater, "right")
    assert second.purpose == "attention" and second.qc_passed is False
    assert "failed 2 attention checks" in quality.pause_reason(rater, project)
    assert next_item.next_assignment(rater=rater, project=project) is None
    row = next(r for r in dashboard.progress_by_annotator(project) if r["rater_id"] == rater.id)
    assert row["attention_failed"] == 2 and "paused" in row["at_risk"]
    quality.resume(project=project, rater=rater)
    assert next_item.next_assignment(rater=rater, project=project) is not None


def test_passed_attention_check_counts_as_passed(setup):
    project, rater, _ = setup
    quality.set_qc_settings(project=project, values={"attention_rate": 1})
    submit_next(project, rater)
    att = submit_next(project, rater, "left")
    assert att.purpose == "attention" and att.qc_passed is True


def test_gold_accuracy_threshold_marks_at_risk_and_can_pause(setup):
    project, rater, _ = setup
    quality.set_qc_settings(
        project=project, values={"gold_rate": 1, "gold_threshold": 0.8, "gold_min_answered": 1, "gold_pause": True}
    )
    submit_next(project, rater)
    gold = submit_next(project, rater, "left")
    assert gold.purpose == "gold" and gold.qc_passed is False
    assert quality.rater_qc(rater, project)["gold_accuracy"] == 0
    assert "gold accuracy" in quality.pause_reason(rater, project)


def test_repeats_give_a_consistency_score(setup):
    project, rater, _ = setup
    quality.set_qc_settings(project=project, values={"repeat_rate": 0.5})
    first = submit_next(project, rater, "left")
    second = submit_next(project, rater, "left")
    rep = submit_next(project, rater, "right")
    assert rep.purpose == "repeat" and rep.item_id in (first.item_id, second.item_id)
    assert rep.presentation == Assignment.objects.get(item=rep.item, rater=rater, purpose="regular").presentation
    assert quality.consistency_scores(project)[rater.id] == {"repeats": 1, "consistency": 0.0}


def test_too_fast_submissions_are_refused_with_a_clear_message(setup):
    project, _rater, ann = setup
    quality.set_qc_settings(project=project, values={"min_seconds": 5})
    c = Client()
    c.force_login(ann)
    a_id = int(c.get(f"/projects/{project.id}/next/")["Location"].strip("/").split("/")[-1])
    c.get(f"/a/{a_id}/")
    r = c.post(f"/a/{a_id}/", {"human_written": "left", "mode": "submit"})
    assert r.status_code == 400 and b"too fast" in r.content and b"at least 5 seconds" in r.content
    assert Assignment.objects.get(pk=a_id).status == "in_progress"
    Assignment.objects.filter(pk=a_id).update(opened_at=timezone.now() - timedelta(seconds=6))
    assert c.post(f"/a/{a_id}/", {"human_written": "left", "mode": "submit"}).status_code == 302
    # the API says the same
    nxt = c.get(f"/api/projects/{project.id}/next/").json()["id"]
    c.get(f"/api/assignments/{nxt}/")
    r = c.post(
        f"/api/assignments/{nxt}/submit/", {"answers": {"human_written": "left"}}, content_type="application/json"
    )
    assert r.status_code == 400 and "too fast" in r.json()["detail"]


def test_required_rationale(setup):
    project, rater, _ = setup
    project.options = {**project.options, "qc": {"rationale_question": "why", "rationale_min_chars": 10}}
    project.save(update_fields=["options"])
    a = next_item.next_assignment(rater=rater, project=project)
    with pytest.raises(DomainError, match="at least 10 characters"):
        annotating.submit_annotation(assignment_id=a.id, rater=rater, answers={"human_written": "left"})


def test_qc_settings_are_validated(setup):
    project, *_ = setup
    with pytest.raises(DomainError, match="between 0 and 1"):
        quality.set_qc_settings(project=project, values={"attention_rate": 2})


def test_researcher_sets_qc_and_pauses_from_the_dashboard(setup, researcher):
    project, rater, _ = setup
    c = Client()
    c.force_login(researcher)
    r = c.post(f"/projects/{project.id}/qc/", {"attention_rate": "0.1", "min_seconds": "3"})
    assert r.status_code == 302 and r["Location"] == f"/projects/{project.id}/dashboard/"
    project.refresh_from_db()
    assert project.options["qc"]["attention_rate"] == 0.1 and project.options["qc"]["min_seconds"] == 3
    c.post(f"/projects/{project.id}/annotators/{rater.id}/pause/")
    assert Membership.objects.get(project=project, user=rater.user, role="annotator").paused_at is not None
    c.post(f"/projects/{project.id}/annotators/{rater.id}/resume/")
    assert Membership.objects.get(project=project, user=rater.user, role="annotator").paused_at is None
    # the dashboard itself only reads: a POST to it is refused and changes nothing
    assert c.post(f"/projects/{project.id}/dashboard/", {"action": "pause", "rater": rater.id}).status_code == 405
    assert Membership.objects.get(project=project, user=rater.user, role="annotator").paused_at is None
