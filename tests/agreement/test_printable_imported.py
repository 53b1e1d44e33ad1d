"""The printable report of a study whose ratings were imported from Label Studio (issue 35) says
where they came from and the k the study actually reached, not only the preset's default; the
dataset card of its export says the same. The expected figures are recounted from the crafted
export itself (distinct annotators per task), not read from the platform."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from django.core.management import call_command
from django.test import Client

from agreement import selectors
from annotation.models import AnnotationImport
from curation.exports import huggingface, provenance
from tests.annotation.factories import make_user
from tests.annotation.test_import_explains import full_export, items_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def researcher(db):
    return make_user("imp-researcher", researcher=True)


def imported(researcher, tmp_path, tasks):
    project = items_project(researcher, tmp_path / "img", external_ids=True)  # planned k = 4
    path = tmp_path / "ls-export.json"
    path.write_text(json.dumps(tasks), encoding="utf-8")
    call_command("import_annotations", str(project.id), str(path), "--format", "labelstudio", stdout=io.StringIO())
    return project


def raters_per_task(tasks) -> list[int]:
    return [len({a["completed_by"] for a in t["annotations"] if not a.get("was_cancelled")}) for t in tasks]


def test_the_printable_report_says_what_was_imported_and_the_actual_k(researcher, tmp_path):
    tasks = full_export()
    project = imported(researcher, tmp_path, tasks)
    job = AnnotationImport.objects.get(project=project)
    per_task = raters_per_task(tasks)
    owner = Client()
    owner.force_login(researcher)
    outsider = Client()
    outsider.force_login(make_user("outsider-imp", researcher=True))
    assert outsider.get(f"/projects/{project.id}/report/").status_code in (403, 404)
    html = owner.get(f"/projects/{project.id}/report/").content.decode()
    assert 'data-testid="study-k"' in html
    assert "planned 4" in html
    assert (
        f"actual {int(np.median(per_task))} people per item (median; {min(per_task)}–{max(per_task)}, "
        f"over {len(per_task)} rated items)"
    ) in html
    assert (
        f"{sum(per_task)} ratings by 3 people from Label Studio JSON export, items matched by pair_id" in html
        and f"imported:{job.id}" in html
        and "ls-export.json" in html
    )


def test_the_actual_k_is_the_median_and_range_of_people_per_item(researcher, tmp_path):
    tasks = full_export()
    tasks[1]["annotations"] = tasks[1]["annotations"][:2]  # task B rated by two people
    project = imported(researcher, tmp_path, tasks)
    per_task = raters_per_task(tasks)
    assert per_task == [3, 2]
    assert selectors.actual_k(project) == {
        "items": 2,
        "min": 2,
        "median": float(np.median(per_task)),  # 2.5
        "max": 3,
    }
    line = huggingface.ratings_per_item_line(project)
    assert line == "Human ratings per item: planned k = 4; actual k = 2.5 (median; 2–3) over 2 rated items."


def test_the_dataset_card_names_the_tool_the_ratings_came_from(researcher, tmp_path):
    tasks = full_export()
    project = imported(researcher, tmp_path, tasks)
    job = AnnotationImport.objects.get(project=project)
    card = huggingface.imported_lines({"annotation_imports": provenance.annotation_imports(project)})
    assert "| import | file | from | sha256 | item key | mapping | annotations | raters |" in card
    assert (
        f"| `imported:{job.id}` | ls-export.json | Label Studio JSON export (`labelstudio`) | `{job.sha256}` "
        f"| `pair_id` | by name | {sum(raters_per_task(tasks))} | 3 |"
    ) in card
    assert huggingface.ratings_per_item_line(project).endswith(
        "actual k = 3 (median; 3 on every item) over 2 rated items."
    )
