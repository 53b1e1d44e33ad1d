"""Prolific entry: pseudonymous participants, pre-screen eligibility, quota and completion."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation.models import Rater
from studies import crowd, plans, sampling
from studies.models import CrowdParticipant
from tests.studies.design_helpers import strata_project


@pytest.fixture
def study(researcher):
    project = strata_project(researcher, {("China", "gpt"): 4, ("Germany", "gpt"): 4})
    sample = sampling.draw_sample(project=project, name="s", strata_keys=["country"], per_stratum=4, seed=1)
    plans.create_plan(
        sample=sample, mode="pooled", k=2, eligibility=[{"attribute": "nationality", "item_key": "country"}]
    )
    return crowd.create_study(
        project=project,
        name="CN/DE study",
        completion_code="C1A2B3",
        items_per_participant=2,
        prescreen=[
            {"attribute": "nationality", "label": "Your nationality", "choices": ["China", "Germany", "France"]}
        ],
    )


def link(study, pid="5f1d2e3c4b5a69788796a5b4", session="sess1"):
    return f"/p/{study.token}/?PROLIFIC_PID={pid}&STUDY_ID=st1&SESSION_ID={session}"


def test_entry_prescreen_work_and_completion(study):
    c = Client()
    r = c.get(link(study))
    assert r.status_code == 200 and b"Your nationality" in r.content
    r = c.post(f"/p/{study.token}/", {"nationality": "Germany"})
    assert r.status_code == 302 and r["Location"] == f"/p/{study.token}/work/"
    for _ in range(2):
        r = c.get(f"/p/{study.token}/work/")
        a_id = int(r["Location"].strip("/").split("/")[-1])
        r = c.post(f"/a/{a_id}/", {"human_written": "left", "mode": "submit"})
        assert r.status_code == 302
    # quota reached: the annotate flow lands on the completion page
    r = c.get(r["Location"], follow=True)
    assert r.redirect_chain[-1][0] == f"/p/{study.token}/done/"
    assert b"C1A2B3" in r.content and b"https://app.prolific.com/submissions/complete?cc=C1A2B3" in r.content
    p = CrowdParticipant.objects.get()
    assert p.completed_at is not None and p.prolific_session_id == "sess1"


def test_no_personal_data_only_a_keyed_hash_of_the_pid(study):
    pid = "5f1d2e3c4b5a69788796a5b4"
    Client().get(link(study, pid))
    p = CrowdParticipant.objects.get()
    assert p.pid_hash == crowd.pid_hash(pid) and pid not in p.pid_hash
    user = p.rater.user
    assert pid not in user.username and not user.has_usable_password() and not user.email
    assert p.rater.attributes == {"crowd": True}


def test_returning_participant_resumes_the_same_annotator(study):
    Client().get(link(study, session="a"))
    Client().get(link(study, session="b"))
    assert CrowdParticipant.objects.count() == 1 and Rater.objects.filter(name__startswith="p-").count() == 1
    assert CrowdParticipant.objects.get().prolific_session_id == "b"


def test_ineligible_prescreen_answer_gets_no_work(study):
    c = Client()
    c.get(link(study))
    r = c.post(f"/p/{study.token}/", {"nationality": "France"})
    assert r.status_code == 200 and b"different profile" in r.content
    assert c.get(f"/p/{study.token}/work/").status_code == 302
    assert not study.project.memberships.filter(user__username__startswith="p-").exists()


def test_prescreen_answer_outside_the_choices_is_refused(study):
    c = Client()
    c.get(link(study))
    r = c.post(f"/p/{study.token}/", {"nationality": "Atlantis"})
    assert r.status_code == 400 and b"choose one of the options" in r.content


@pytest.mark.parametrize("url", ["/p/not-a-token/?PROLIFIC_PID=abc", "/p/not-a-token/work/", "/p/not-a-token/done/"])
def test_entry_needs_a_valid_study_token(study, url):
    assert Client().get(url).status_code == 404
    assert not CrowdParticipant.objects.exists()


def test_entry_needs_a_prolific_id_and_a_well_formed_one(study):
    assert Client().get(f"/p/{study.token}/").status_code == 400
    assert Client().get(f"/p/{study.token}/?PROLIFIC_PID=<script>").status_code == 400
    assert not CrowdParticipant.objects.exists()


def test_closed_study_takes_nobody(study):
    study.active = False
    study.save()
    assert Client().get(link(study)).status_code == 400


def test_completion_page_needs_the_participant_session(study):
    c = Client()
    assert c.get(f"/p/{study.token}/done/").status_code == 404
    c.get(link(study))
    c.post(f"/p/{study.token}/", {"nationality": "China"})
    # work remains: the completion page sends them back to work instead of showing the code
    r = c.get(f"/p/{study.token}/done/")
    assert r.status_code == 302 and r["Location"] == f"/p/{study.token}/work/"


def test_participant_cannot_reach_researcher_pages(study):
    c = Client()
    c.get(link(study))
    c.post(f"/p/{study.token}/", {"nationality": "China"})
    assert c.get(f"/projects/{study.project_id}/dashboard/").status_code == 403
    assert c.get(f"/projects/{study.project_id}/design/").status_code == 403
    assert c.get(f"/projects/{study.project_id}/").status_code == 403


def test_crowd_link_asks_before_switching_a_logged_in_user(study, researcher):
    """Issue 12 finding 14: a GET never logs a different user out."""
    c = Client()
    c.force_login(researcher)
    r = c.get(link(study))
    assert r.status_code == 200 and b"Continue as a participant" in r.content
    assert int(c.session["_auth_user_id"]) == researcher.pk
    assert not CrowdParticipant.objects.exists()
    r = c.post(
        f"/p/{study.token}/",
        {"hv_switch": "1", "PROLIFIC_PID": "5f1d2e3c4b5a69788796a5b4", "STUDY_ID": "st1", "SESSION_ID": "s1"},
    )
    assert r.status_code == 302 and r["Location"] == f"/p/{study.token}/"
    p = CrowdParticipant.objects.get()
    assert int(c.session["_auth_user_id"]) == p.rater.user_id
    assert b"Your nationality" in c.get(f"/p/{study.token}/").content
    # the participant themselves returning with the link is not asked again
    r = c.get(link(study))
    assert b"Continue as a participant" not in r.content and r.status_code == 200
