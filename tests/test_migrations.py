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

# sqlite: slow (conftest.SLOW_MODULES), but a migration's SQL differs between the databases, so
# the embedded (SQLite) pass runs it too
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.sqlite]

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


#: the leaf migrations of every app at the release before issue 21 (the study tables were
#: declared in annotation.models)
BEFORE_STUDY_TABLES_MOVED = [
    ("annotation", "0007_annotation_history_image_names"),
    ("curation", "0005_export_lease"),
    ("judges", "0007_run_management"),
    ("agreement", "0003_agreementreport_lease"),
    ("accounts", "0002_invitation"),
]


def test_the_study_tables_move_to_studies_with_their_rows():
    """Issue 21 moved six tables' declarations from ``annotation`` to ``studies`` in Django's
    state only: a database made by the previous release keeps every row and every key."""
    migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())  # whatever an earlier test left
    old = migrate(BEFORE_STUDY_TABLES_MOVED)
    get = old.get_model
    User = get("auth", "User")
    owner = User.objects.create(username="owner", is_staff=True)
    annotator = User.objects.create(username="ann")
    from benchmarks.registry import get_preset

    preset = get_preset("cqbench.turing")
    rubric = get("annotation", "RubricVersion").objects.create(
        rubric_key=preset.key, version=1, schema=preset.rubric, schema_hash="h" * 64
    )
    project = get("annotation", "Project").objects.create(
        name="designed", preset_key=preset.key, rubric_version=rubric, k_per_item=1, created_by=owner
    )
    get("annotation", "Membership").objects.create(project=project, user=annotator, role="annotator")
    human = get("annotation", "Rater").objects.create(kind="human", user=annotator, name="ann")
    items = [
        get("annotation", "Item").objects.create(project=project, external_id=f"s{i}", data={}, country="China")
        for i in range(2)
    ]
    sample = get("annotation", "Sample").objects.create(project=project, name="36 pairs", strata_keys=["country"])
    for item in items:
        get("annotation", "SampleItem").objects.create(sample=sample, item=item, stratum="country=China")
    plan = get("annotation", "AssignmentPlan").objects.create(project=project, sample=sample, name="k=1", k=1)
    assignment = get("annotation", "Assignment").objects.create(
        project=project, item=items[0], rater=human, status="in_progress", plan=plan
    )
    get("annotation", "PoolSlot").objects.create(
        plan=plan, item=items[0], state="leased", rater=human, assignment=assignment
    )
    get("annotation", "PoolSlot").objects.create(plan=plan, item=items[1], state="open")
    study = get("annotation", "CrowdStudy").objects.create(
        project=project, name="prolific", token="t" * 32, completion_code="C0DE"
    )
    get("annotation", "CrowdParticipant").objects.create(study=study, pid_hash="p" * 64, rater=human)
    judge = get("annotation", "Rater").objects.create(kind="model", name="judge: j", backend="openai_chat")
    config = get("judges", "JudgeConfig").objects.create(
        project=project, name="j", backend="openai_chat", model_id="m", rater=judge
    )
    get("judges", "JudgeRun").objects.create(
        config=config, project=project, status="done", item_ids=[], total=0, sample=sample
    )

    migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())

    from annotation.models import Assignment
    from judges.models import JudgeRun
    from studies.models import AssignmentPlan, CrowdParticipant, PoolSlot, Sample

    new_sample = Sample.objects.get(name="36 pairs")
    assert sorted(new_sample.items.values_list("external_id", flat=True)) == ["s0", "s1"]
    assert list(new_sample.members.values_list("stratum", flat=True)) == ["country=China"] * 2
    new_plan = AssignmentPlan.objects.get(name="k=1")
    assert new_plan.sample == new_sample
    assert Assignment.objects.get(item__external_id="s0").plan == new_plan
    assert sorted(PoolSlot.objects.filter(plan=new_plan).values_list("state", flat=True)) == ["leased", "open"]
    assert PoolSlot.objects.get(state="leased").assignment.item.external_id == "s0"
    assert CrowdParticipant.objects.get().study.completion_code == "C0DE"
    assert JudgeRun.objects.get(config__name="j").sample == new_sample
    # the tables kept their names: the move ran no SQL
    tables = set(connection.introspection.table_names())
    assert {"annotation_sample", "annotation_assignmentplan", "annotation_poolslot"} <= tables
    assert not {t for t in tables if t.startswith("studies_")}


#: the leaf migrations just before issue 25 moved the UI language out of the rater's profile
BEFORE_UI_LANGUAGE_MOVED = [("accounts", "0003_preference"), ("annotation", "0010_annotation_imports")]


def test_the_ui_language_moves_out_of_the_rater_profile_and_back():
    """Issue 25: ``Rater.attributes["ui_language"]`` (what the switcher wrote) becomes the
    account's preference; the profile keeps its other attributes, a rater imported from another
    tool keeps its own ``ui_language`` attribute; the reverse puts the language back."""
    leaves = MigrationExecutor(connection).loader.graph.leaf_nodes()
    migrate(leaves)  # whatever an earlier test left
    old = migrate(BEFORE_UI_LANGUAGE_MOVED)
    User = old.get_model("auth", "User")
    Rater = old.get_model("annotation", "Rater")
    chose = User.objects.create(username="chose")
    never = User.objects.create(username="never")
    Rater.objects.create(
        kind="human", user=chose, name="chose", attributes={"nationality": "China", "ui_language": "de"}
    )
    Rater.objects.create(kind="human", user=never, name="never", attributes={"nationality": "Germany"})
    Rater.objects.create(kind="human", name="imported", backend="imported", attributes={"ui_language": "fr"})

    migrate(leaves)

    from accounts.models import Preference
    from accounts.services import preferred_language
    from annotation.models import Rater as NewRater

    profiles = dict(NewRater.objects.values_list("name", "attributes"))
    assert profiles == {
        "chose": {"nationality": "China"},
        "never": {"nationality": "Germany"},
        "imported": {"ui_language": "fr"},
    }
    assert list(Preference.objects.values_list("user__username", "ui_language")) == [("chose", "de")]
    assert preferred_language(NewRater.objects.get(name="chose").user) == "de"

    back = migrate(BEFORE_UI_LANGUAGE_MOVED)
    profiles = dict(back.get_model("annotation", "Rater").objects.values_list("name", "attributes"))
    assert profiles["chose"] == {"nationality": "China", "ui_language": "de"}
    assert profiles["never"] == {"nationality": "Germany"} and profiles["imported"] == {"ui_language": "fr"}
    migrate(leaves)


#: the leaf migration just before issue 37 made an annotation file written once per project
BEFORE_WRITTEN_ONCE = [("annotation", "0012_annotation_import_formats_from_registry")]


def test_imports_that_wrote_one_file_twice_keep_their_rows_and_the_first_holds_the_file():
    """Issue 37 (H1): a database where two imports of one file both wrote (the race this
    migration closes) migrates with every row; the first of them holds the file's hash, the
    later one and the "already imported" one hold none, and no further import can write it."""
    from django.db import IntegrityError, transaction

    leaves = MigrationExecutor(connection).loader.graph.leaf_nodes()
    migrate(leaves)  # whatever an earlier test left
    old = migrate(BEFORE_WRITTEN_ONCE)
    User = old.get_model("auth", "User")
    RubricVersion = old.get_model("annotation", "RubricVersion")
    Project = old.get_model("annotation", "Project")
    AnnotationImport = old.get_model("annotation", "AnnotationImport")
    from benchmarks.registry import get_preset

    preset = get_preset("cqbench.turing")
    owner = User.objects.create(username="importer")
    rubric = RubricVersion.objects.create(rubric_key=preset.key, version=1, schema=preset.rubric, schema_hash="i" * 64)
    projects = [
        Project.objects.create(name=n, preset_key=preset.key, rubric_version=rubric, k_per_item=1, created_by=owner)
        for n in ("p", "q")
    ]
    sha, other = "a" * 64, "b" * 64

    def job(project, status, sha256, report):
        return AnnotationImport.objects.create(
            project=project, data_file="/x.json", data_format="labelstudio", status=status, sha256=sha256, report=report
        ).pk

    first = job(projects[0], "done", sha, {"annotations_created": 4})
    second = job(projects[0], "done", sha, {"annotations_created": 4})  # the race: both wrote
    dup = job(projects[0], "done", sha, {"annotations_created": 0, "duplicate_of": first})
    refused = job(projects[0], "failed", other, {"ok": False})
    elsewhere = job(projects[1], "done", sha, {"annotations_created": 4})

    migrate(leaves)

    from annotation.models import AnnotationImport as NewImport

    written = dict(NewImport.objects.values_list("pk", "written_sha256"))
    assert written == {first: sha, second: None, dup: None, refused: None, elsewhere: sha}
    with pytest.raises(IntegrityError), transaction.atomic():
        NewImport.objects.filter(pk=second).update(written_sha256=sha)
