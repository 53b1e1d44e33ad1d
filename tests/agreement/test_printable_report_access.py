"""The printable validation report (``/projects/<id>/report/``, issue 25) is for the project's
researchers: an annotator of the project and a researcher of another project are refused, an
anonymous visitor is sent to log in; the page states the study's settings beside the tables."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation import importing
from studies import plans, sampling
from tests.annotation.factories import jsonl, make_project, make_user, turing_records
from tests.studies.design_helpers import annotator

pytestmark = pytest.mark.django_db


@pytest.fixture
def project():
    owner = make_user("rep-owner", researcher=True)
    p = make_project("cqbench.turing", owner=owner, annotators=[annotator("rep-ann")], k=1)
    importing.import_items(project=p, data=jsonl(turing_records(4)), data_format="jsonl")
    return p


def client_for(user) -> Client:
    c = Client()
    c.force_login(user)
    return c


def test_only_the_projects_researchers_see_the_report(project):
    url = f"/projects/{project.id}/report/"
    anonymous = Client().get(url)
    assert anonymous.status_code == 302 and "/login/" in anonymous["Location"]
    assert client_for(project.memberships.get(role="annotator").user).get(url).status_code in (403, 404)
    assert client_for(make_user("rep-outsider", researcher=True)).get(url).status_code in (403, 404)
    owner = client_for(project.created_by)
    page = owner.get(url)
    assert page.status_code == 200
    assert b'data-testid="study-settings"' in page.content
    assert f'href="{url}"'.encode() in owner.get(f"/projects/{project.id}/").content  # linked


def test_the_report_states_the_samples_plans_and_qc(project):
    sample = sampling.draw_sample(project=project, name="sample-one", strata_keys=[], total_size=2, seed=3)
    plans.create_plan(sample=sample, name="plan-one", k=1)
    html = client_for(project.created_by).get(f"/projects/{project.id}/report/").content.decode()
    assert "sample-one" in html and "plan-one" in html and "seed 3" in html
