"""Demo accounts and one demo project per preset, imported through the real import service,
plus ready-to-run model judges and a few human annotations so the agreement report compares
judge and humans out of the box. Idempotent: running it again changes nothing.

Everything protocol-specific comes from the preset (``benchmarks/<protocol>.py``): its demo
items, its demo judges (``Preset.demo_judges``) and its demo answers (``Preset.demo_answers``).
The judges are only configured here (a run is started from the project's judges page); the
human annotations go through ``annotate.annotating.submit_annotation`` like a browser
submission. They are fixed, illustrative demo ratings, not data from a paper, and are written
only on assignments nobody has opened yet."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction

from annotate import annotating
from annotation import importing, projects
from annotation.models import Assignment, Project
from benchmarks.registry import PRESETS
from judges.configuration import create_judge_config
from judges.models import JudgeConfig

from ... import studies

# Documented in the README. Demo only: change or remove them on any shared deployment.
DEMO_USERS = [
    ("admin", "admin", {"is_superuser": True, "is_staff": True}, {}),
    ("researcher", "researcher", {}, {}),
    ("annotator1", "annotator1", {}, {"nationality": "Germany"}),
    ("annotator2", "annotator2", {}, {"nationality": "China"}),
    # Not members of the demo projects: extra raters for the study designs (e.g. ValueGround's
    # two annotators from China and two from Germany), added to a project by a researcher.
    ("annotator3", "annotator3", {}, {"nationality": "China"}),
    ("annotator4", "annotator4", {}, {"nationality": "Germany"}),
]


def researchers_group() -> Group:
    group, _ = Group.objects.get_or_create(name="researchers")
    group.permissions.add(Permission.objects.get(codename="add_project", content_type__app_label="annotation"))
    return group


class Command(BaseCommand):
    help = "Create demo accounts and a demo project with items for every protocol preset."

    def handle(self, *args, **options):
        User = get_user_model()
        users = {}
        with transaction.atomic():
            group = researchers_group()
            for username, password, flags, attributes in DEMO_USERS:
                user = User.objects.filter(username=username).first()
                if user is None:
                    user = User(username=username, **flags)
                    user.set_password(password)
                    user.save()
                    self.stdout.write(f"user {username} / {password}")
                if username == "researcher":
                    user.groups.add(group)
                if attributes:
                    rater = projects.rater_for_user(user)
                    if rater.attributes != attributes:
                        rater.attributes = attributes
                        rater.save(update_fields=["attributes"])
                users[username] = user
        with tempfile.TemporaryDirectory() as tmp:
            self.seed_projects(users, studies.DemoFiles(Path(tmp)))
        if connection.vendor == "postgresql":
            # PostgreSQL plans from the statistics ANALYZE collects; autovacuum collects them up
            # to a minute later, and never for rows of a transaction still open (a test class's
            # demo). Planned as tables of a row or none, the demo's thousands of annotations
            # were read by nested loops over whole indexes: the reports' queries took seconds
            # each, 50x their time with statistics. PostgreSQL's advice after a bulk load
            # (docs, "Populating a Database": run ANALYZE afterwards).
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")

    def seed_projects(self, users, files) -> None:
        for key, preset in PRESETS.items():
            name = f"Demo: {preset.name}"
            if Project.objects.filter(preset_key=key, name=name).exists():
                continue
            with transaction.atomic():
                project = projects.create_project(name=name, preset_key=key, created_by=users["researcher"])
                for annotator in ("annotator1", "annotator2"):
                    projects.add_member(project=project, user=users[annotator], role="annotator")
                records = files.records(preset)
                data = "\n".join(json.dumps(r, ensure_ascii=False) for r in records)
                report = importing.import_items(
                    project=project,
                    data=data,
                    data_format="jsonl",
                    images=files.folder(preset) if preset.image_fields() else None,
                )
                if not report.ok:
                    raise CommandError(f"demo data of {key} does not import: {report.errors[:5]}")
            self.stdout.write(f"{name}: {report.items_created} items, {report.assignments_created} assignments")
        for key, preset in PRESETS.items():
            project = Project.objects.filter(preset_key=key, name=f"Demo: {preset.name}").order_by("id").first()
            if project is None:
                continue
            if not project.options.get("demo"):
                Project.objects.filter(pk=project.pk).update(options={**project.options, "demo": True})
            self.seed_judges(project, users["researcher"])
            self.seed_annotations(project, users)
        # one simulated study per preset (docs/demo.md): the tables and verdicts the platform is for
        studies.seed_studies(PRESETS.values(), users, files, self.stdout.write)

    def seed_judges(self, project: Project, researcher) -> None:
        for judge in project.preset.demo_judges:
            if JudgeConfig.objects.filter(project=project, name=judge.name).exists():
                continue
            create_judge_config(
                project=project,
                name=judge.name,
                backend=judge.backend,
                model_id=judge.model_id,
                params=dict(judge.params),
                created_by=researcher,
            )
            self.stdout.write(f"{project.name}: judge {judge.name!r} ({judge.backend})")

    def seed_annotations(self, project: Project, users) -> None:
        table = project.preset.demo_answers
        if not table:
            return
        n = 0
        for k, username in enumerate(("annotator1", "annotator2")):
            rater = projects.rater_for_user(users[username])
            open_rows = Assignment.objects.filter(
                project=project,
                rater=rater,
                purpose=Assignment.Purpose.REGULAR,
                status=Assignment.Status.ASSIGNED,
                opened_at__isnull=True,
                item__external_id__in=list(table),
            ).select_related("item", "project__rubric_version")
            for assignment in open_rows:
                annotating.submit_annotation(
                    assignment_id=assignment.id,
                    rater=rater,
                    answers=table[assignment.item.external_id][k],
                    loaded=assignment,
                )
                n += 1
        if n:
            self.stdout.write(f"{project.name}: {n} demo annotations by annotator1 and annotator2")
