"""An existing database migrates cleanly to today's code, with its data.

The database is taken back to the schema of the last release (the redesign of issue 9 moved
code, not tables, except the judge run's lifecycle column), filled through the historical
models as that release would have written it, then migrated forward; the rows must all be
there and the current code must work on them."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from studies.next_item import next_assignment

pytestmark = pytest.mark.django_db(transaction=True)

#: the leaf migrations of every app at the last release (before the redesign)
RELEASED = [
    ("annotation", "0003_sampling_plans_pool_qc_crowd"),
    ("curation", "0002_policy_element_filter"),
    ("judges", "0001_initial"),
    ("agreement", "0001_initial"),
]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def latest():
    executor = MigrationExecutor(connection)
    return [key for key in executor.loader.graph.leaf_nodes() if key[0] in {app for app, _ in RELEASED}]


def test_a_released_database_migrates_forward_with_its_data():
    old = migrate(RELEASED)
    User = old.get_model("auth", "User")
    RubricVersion = old.get_model("annotation", "RubricVersion")
    Project = old.get_model("annotation", "Project")
    Membership = old.get_model("annotation", "Membership")
    Item = old.get_model("annotation", "Item")
    Rater = old.get_model("annotation", "Rater")
    Assignment = old.get_model("annotation", "Assignment")
    Annotation = old.get_model("annotation", "Annotation")
    ImportJob = old.get_model("annotation", "ImportJob")
    JudgeConfig = old.get_model("judges", "JudgeConfig")
    JudgeRun = old.get_model("judges", "JudgeRun")
    AgreementReport = old.get_model("agreement", "AgreementReport")
    Export = old.get_model("curation", "Export")

    owner = User.objects.create(username="owner", is_staff=True)
    annotator = User.objects.create(username="ann")
    from benchmarks.registry import get_preset

    preset = get_preset("cqbench.turing")
    rubric = RubricVersion.objects.create(rubric_key=preset.key, version=1, schema=preset.rubric, schema_hash="h" * 64)
    project = Project.objects.create(
        name="old", preset_key=preset.key, rubric_version=rubric, k_per_item=1, created_by=owner
    )
    Membership.objects.create(project=project, user=annotator, role="annotator")
    human = Rater.objects.create(kind="human", user=annotator, name="ann")
    items = [
        Item.objects.create(project=project, external_id=f"t{i}", data={"left": "a", "right": "b"}, country="China")
        for i in range(3)
    ]
    done = Assignment.objects.create(project=project, item=items[0], rater=human, status="submitted", position=0)
    Annotation.objects.create(
        assignment=done,
        item=items[0],
        rater=human,
        rubric_version=rubric,
        answers={"human_written": "left"},
        derived={},
    )
    Assignment.objects.create(project=project, item=items[1], rater=human, status="assigned", position=1)
    ImportJob.objects.create(
        project=project,
        status="done",
        data_file="x.jsonl",
        data_format="jsonl",
        report={"ok": True, "items_created": 3},
    )
    judge = Rater.objects.create(kind="model", name="judge: j", backend="openai_chat", model_id="m")
    config = JudgeConfig.objects.create(project=project, name="j", backend="openai_chat", model_id="m", rater=judge)
    JudgeRun.objects.create(config=config, project=project, state="running", item_ids=[items[0].id], total=1)
    JudgeRun.objects.create(
        config=config, project=project, state="cancelled", item_ids=[], total=0, message="cancelled"
    )
    AgreementReport.objects.create(project=project, status="failed", message="why")
    Export.objects.create(project=project, content="items", format="jsonl", status="queued")

    migrate(latest())

    from agreement.models import AgreementReport as NewReport
    from annotation.models import Annotation as NewAnnotation
    from annotation.models import ImportJob as NewImport
    from annotation.models import Project as NewProject
    from annotation.models import Rater as NewRater
    from curation.models import Export as NewExport
    from judges.models import JudgeRun as NewRun

    project = NewProject.objects.get(name="old")
    assert project.items.count() == 3 and NewAnnotation.objects.filter(item__project=project).count() == 1
    assert NewImport.objects.get(project=project).status == "done"
    assert sorted(NewRun.objects.filter(project=project).values_list("status", flat=True)) == ["cancelled", "running"]
    assert NewReport.objects.get(project=project).message == "why"
    assert NewExport.objects.get(project=project).is_pending
    # today's code works on the migrated rows: the annotator's next item is the open one
    rater = NewRater.objects.get(name="ann")
    assert next_assignment(rater=rater, project=project).item.external_id == "t1"
