"""Issue 22, finding 3: a stated minimum number of items per rater for the human agreement
ceilings and slots (default: the alt-test's 30, ``hvstats.validation.MIN_RATER_ITEMS``), settable
in the report settings (the ``validation_report`` command, the API's ``min_rater_items``, the
stored report's params), printed in the caption; raters below it are named and left out, and
an undefined leave-one-out names its raters, never an index."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from agreement import validation
from agreement.services import ReportParams
from annotate import annotating
from annotation import projects
from annotation.models import Assignment, Item
from core.errors import DomainError
from hvstats.validation import MIN_RATER_ITEMS
from tests.agreement import test_paper_tables as paper
from tests.agreement.test_paper_tables import VG_FIELDS, eq8, submit_judge, table4_independent
from tests.studies.design_helpers import annotator

pytestmark = pytest.mark.django_db
TOL = 1e-9
env = paper._env
valueground = paper.valueground


def close(a, b) -> bool:
    return a is not None and b is not None and abs(a - b) <= TOL


def add_small_rater(project, name: str, external_ids: list[str], answers: dict) -> None:
    """A fifth annotator who rated only ``external_ids``, all with the same answers."""
    user = annotator(name, nationality="China")
    projects.add_member(project=project, user=user, role="annotator")
    rater = projects.rater_for_user(user)
    for item in Item.objects.filter(project=project, external_id__in=external_ids):
        a = Assignment.objects.create(project=project, item=item, rater=rater, presentation={})
        annotating.submit_annotation(assignment_id=a.id, rater=rater, answers=answers)


@pytest.fixture
def vg_small(valueground):
    project, ids, humans, judges, pos = valueground
    jraw = judges["judge-a"]
    submit_judge(project, "judge-a", lambda e: {f: int(jraw[f][pos[e]]) for f in VG_FIELDS})
    # a fifth annotator who rated 3 items only (identical answers)
    add_small_rater(project, "tiny-rater", ids[:3], {"q1": 2, "q2": 2, "q3": 2, "q4": 1})
    return project, ids, humans, jraw


def test_default_minimum_is_the_alt_tests_and_the_small_rater_is_named_and_left_out(vg_small):
    project, _ids, humans, jraw = vg_small
    assert MIN_RATER_ITEMS == 30
    t4 = validation.compute_tables(project, bootstrap=100, seed=0)[0]
    want = table4_independent(humans, {**jraw, "total": eq8(*(jraw[q] for q in VG_FIELDS))})
    for label, f in (("Q1", "q1"), ("Q2", "q2"), ("Total", "total")):
        # the four annotators' leave-one-out, computed independently, as if the fifth were absent
        assert close(t4.cell(label, "Human agreement: Pearson r").value, want[f]["human_pearson"])
        assert close(t4.cell(label, "Human agreement: Spearman ρ").value, want[f]["human_spearman"])
    text = " ".join(t4.notes) + " " + t4.caption
    assert "at least 30 rated items" in text
    assert "tiny-rater (3 in Q1" in text


def test_without_a_minimum_the_small_rater_enters_and_is_named_when_undefined(vg_small):
    project, _ids, humans, _jraw = vg_small
    t4 = validation.compute_tables(project, bootstrap=0, seed=0, min_rater_items=0)[0]
    q1 = t4.cell("Q1", "Human agreement: Pearson r")
    # three identical answers: that rater's leave-one-out is undefined, and the note says who
    assert q1.value is None and "tiny-rater" in q1.note and "[" not in q1.note
    assert "at least 0 rated items" in " ".join(t4.notes)
    # independently: the small rater's three answers are constant, so its own leave-one-out
    # correlation has no variance on one side (scipy returns NaN)
    names = sorted(humans)
    H = np.column_stack([humans[u]["q1"] for u in names]).astype(float)[:3]
    with np.errstate(invalid="ignore", divide="ignore"):
        assert np.isnan(np.corrcoef(np.full(3, 2.0), H.mean(1))[0, 1])


def test_the_setting_travels_through_the_command_the_api_and_the_report_params(vg_small, client):
    project, _ids, _humans, _jraw = vg_small
    out = io.StringIO()
    call_command(
        "validation_report",
        str(project.id),
        "--format",
        "json",
        "--bootstrap",
        "0",
        "--min-rater-items",
        "0",
        stdout=out,
    )
    t4 = json.loads(out.getvalue())[0]
    q1 = next(r for r in t4["rows"] if r["label"] == "Q1")["cells"]
    col = t4["columns"].index("Human agreement: Pearson r")
    assert q1[col]["value"] is None and "tiny-rater" in q1[col]["note"]
    with pytest.raises(CommandError):
        call_command("validation_report", str(project.id), "--min-rater-items", "-1")

    client.force_login(project.created_by)
    url = reverse("api_validation_report", args=[project.id])
    body = client.get(url + "?format=json&bootstrap=0&min_rater_items=0").json()
    assert body["params"]["min_rater_items"] == 0
    cells = next(r for r in body["tables"][0]["rows"] if r["label"] == "Q1")["cells"]
    assert cells[col]["value"] is None and "tiny-rater" in cells[col]["note"]
    default = client.get(url + "?format=json&bootstrap=0").json()
    assert default["params"]["min_rater_items"] == 30
    assert next(r for r in default["tables"][0]["rows"] if r["label"] == "Q1")["cells"][col]["value"] is not None
    assert client.get(url + "?min_rater_items=many").status_code == 400
    assert ReportParams.from_query({"min_rater_items": "5"}).min_rater_items == 5
    with pytest.raises(DomainError):
        ReportParams.parse(min_rater_items="-3")
