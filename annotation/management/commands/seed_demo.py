"""Demo accounts and one demo project per preset, imported through the real import service.
Idempotent: running it again changes nothing."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotation import services
from annotation.models import Project
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
                    rater = services.rater_for_user(user)
                    if rater.attributes != attributes:
                        rater.attributes = attributes
                        rater.save(update_fields=["attributes"])
                users[username] = user
        for key, preset in PRESETS.items():
            name = f"Demo: {preset.name}"
            if Project.objects.filter(preset_key=key, name=name).exists():
                continue
            with transaction.atomic():
                project = services.create_project(name=name, preset_key=key, created_by=users["researcher"])
                for annotator in ("annotator1", "annotator2"):
                    services.add_member(project=project, user=users[annotator], role="annotator")
                with tempfile.TemporaryDirectory() as tmp:
                    folder = Path(tmp)
                    records = preset.demo_items(folder)
                    data = "\n".join(json.dumps(r, ensure_ascii=False) for r in records)
                    report = services.import_items(project=project, data=data, data_format="jsonl",
                                                   images=folder if preset.image_fields() else None)
                if not report.ok:
                    raise CommandError(f"demo data of {key} does not import: {report.errors[:5]}")
            self.stdout.write(f"{name}: {report.items_created} items, {report.assignments_created} assignments")
