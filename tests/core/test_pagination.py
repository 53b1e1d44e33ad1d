"""Issue 37, M6: ``?limit=`` at or past 2^63 on the API's paginated lists was a server error (the
number reached the database's LIMIT); now every list caps it at ``core.api.Pagination.max_limit``
and answers 200. Each list also keeps its permission: another researcher gets no rows."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Rater
from judges.models import JudgeConfig, JudgeItemResult, JudgeOutput, JudgeRun
from tests.annotation.factories import make_user
from tests.curation.helpers import valueground_project

pytestmark = pytest.mark.django_db

HOSTILE_LIMITS = [str(2**63), str(2**63 - 1), str(2**64 + 5), "9" * 5000]


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def researcher(db):
    return make_user("res-pages", researcher=True)


@pytest.fixture
def lists(researcher, annotator, tmp_path):
    project = valueground_project(researcher, [annotator], tmp_path / "img", n=3, k=1)
    judge = Rater.objects.create(kind="model", name="judge: j", backend="openai_chat", model_id="m")
    config = JudgeConfig.objects.create(project=project, name="j", backend="openai_chat", model_id="m", rater=judge)
    item = project.items.first()
    run = JudgeRun.objects.create(config=config, project=project, item_ids=[item.id], total=1, status="done")
    JudgeOutput.objects.create(run=run, item=item, pass_index=0, member=None, raw_output="?", error="bad reply")
    JudgeItemResult.objects.create(run=run, item=item, status="failed", error="pass 1: bad reply")
    return {
        "projects": "/api/projects/",
        "items": reverse("api-project-items", args=[project.id]),
        "judge outputs": reverse("api_judge_run_outputs", args=[run.id]),
        "judge failures": reverse("api_judge_run_failures", args=[run.id]),
        "decisions": reverse("api_curation_decisions", args=[project.id]),
        "accepted items": reverse("api_curation_accepted_items", args=[project.id]),
    }


@pytest.fixture
def annotator(db):
    return make_user("ann-pages")


def test_a_hostile_limit_is_capped_not_a_server_error(lists, researcher):
    c = Client(raise_request_exception=False)
    c.force_login(researcher)
    pages = {}
    for (name, url), limit in ((n, limit) for n in lists.items() for limit in HOSTILE_LIMITS):
        r = c.get(url, {"limit": limit, "offset": str(2**63)})
        assert r.status_code == 200, (name, limit[:20], r.status_code, r.content[:200])
        assert r.json()["results"] == [], name  # an offset past the end: an empty page
        r = c.get(url, {"limit": limit})
        assert r.status_code == 200, (name, limit[:20], r.status_code)
        pages[name, limit] = r.json()
    from core.api import Pagination

    for (name, _limit), body in pages.items():
        assert len(body["results"]) == min(body["count"], Pagination.max_limit), name


def test_the_cap_is_the_limit_a_client_gets(lists, researcher, monkeypatch):
    from core.api import Pagination

    monkeypatch.setattr(Pagination, "max_limit", 1)
    c = Client()
    c.force_login(researcher)
    body = c.get(lists["items"], {"limit": str(2**63)}).json()
    assert body["count"] == 3 and len(body["results"]) == 1 and "limit=1" in body["next"]


def test_the_lists_stay_closed_to_others(lists):
    other = make_user("other-researcher")
    c = Client(raise_request_exception=False)
    c.force_login(other)
    for name, url in lists.items():
        if name == "projects":
            assert c.get(url, {"limit": str(2**63)}).json()["results"] == []
            continue
        assert c.get(url, {"limit": str(2**63)}).status_code in (403, 404), name
    anonymous = Client(raise_request_exception=False)
    for name, url in lists.items():
        assert anonymous.get(url, {"limit": str(2**63)}).status_code in (401, 403), name
