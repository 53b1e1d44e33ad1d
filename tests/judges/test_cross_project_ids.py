"""Issue 37, lows: a judge id of another project is answered exactly as an id that does not
exist, so the answer does not reveal what other projects hold; and only the project's
researchers reach the list at all."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Rater
from judges.models import JudgeConfig
from tests.annotation.factories import make_project, make_user

pytestmark = pytest.mark.django_db


def judge(project, name):
    rater = Rater.objects.create(kind="model", name=f"judge: {name}-{project.id}", backend="openai_chat", model_id="m")
    return JudgeConfig.objects.create(
        project=project, name=name, backend="openai_chat", model_id="m", rater=rater, questions=["q1", "q2"]
    )


@pytest.fixture
def setting():
    mine, theirs = make_user("mine", researcher=True), make_user("theirs", researcher=True)
    project = make_project("valueground.pair_quality", owner=mine)
    other = make_project("valueground.pair_quality", owner=theirs)
    return mine, project, [judge(project, "a"), judge(project, "b")], judge(other, "secret")


def post_ensemble(client, project, member_ids):
    return client.post(
        reverse("api_judges", args=[project.id]),
        {"name": "ens", "backend": "ensemble", "members": member_ids},
        content_type="application/json",
    )


def test_another_projects_judge_id_reads_as_one_that_does_not_exist(setting):
    mine, project, (a, b), foreign = setting
    missing = JudgeConfig.objects.order_by("-id").first().id + 1000
    c = Client()
    c.force_login(mine)
    answers = {}
    for label, asked in (("foreign", foreign.id), ("missing", missing)):
        r = post_ensemble(c, project, [a.id, asked])
        assert r.status_code == 400, r.content
        answers[label] = r.content.decode().replace(f'\\"{asked}\\"', "N")
    assert answers["foreign"] == answers["missing"], answers
    assert "same project" not in answers["foreign"]
    assert not JudgeConfig.objects.filter(name="ens").exists()
    r = post_ensemble(c, project, [a.id, b.id])  # the project's own judges still make an ensemble
    assert r.status_code == 201, r.content
    assert sorted(r.json()["members"]) == sorted([a.id, b.id])


def test_only_the_projects_researchers_post_judges(setting):
    _mine, project, (a, b), _foreign = setting
    outsider = make_user("outsider", researcher=True)
    c = Client()
    c.force_login(outsider)
    assert post_ensemble(c, project, [a.id, b.id]).status_code in (403, 404)
    assert Client().post(reverse("api_judges", args=[project.id]), {}).status_code in (401, 403)
    assert not JudgeConfig.objects.filter(name="ens").exists()
