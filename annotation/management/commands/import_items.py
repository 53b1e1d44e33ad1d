"""Import items from the command line: a JSONL/CSV file plus an images folder or zip on this
machine. The same all-or-nothing service as the web and API imports."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation import importing
from annotation.models import Project
from annotation.staging import format_of
from core.errors import DomainError


class Command(BaseCommand):
    help = "Import items into a project from JSONL or CSV, with images from a folder or a .zip."

    def add_arguments(self, parser):
        parser.add_argument("project", type=int, help="project id")
        parser.add_argument("data", type=Path, help="a .jsonl or .csv file")
        parser.add_argument("--images", type=Path, help="folder or .zip holding the image paths the file names")
        parser.add_argument("--format", choices=["jsonl", "csv"], help="default: from the file name")

    def handle(self, *args, project: int, data: Path, images: Path | None, format: str | None, **options):
        found = Project.objects.filter(pk=project).first()
        if found is None:
            raise CommandError(f"no project with id {project}")
        if not data.is_file():
            raise CommandError(f"no file at {data}")
        fmt = format or format_of(data.name)
        if fmt is None:
            raise CommandError(f"cannot tell the format of {data.name}: pass --format jsonl|csv")
        try:
            report = importing.import_items(project=found, data=data, data_format=fmt, images=images)
        except DomainError as exc:
            raise CommandError(exc.message) from None
        if not report.ok:
            lines = "\n".join(f"  {e}" for e in report.errors)
            more = f"\n  ... and {report.errors_truncated} more" if report.errors_truncated else ""
            raise CommandError(f"nothing was imported:\n{lines}{more}")
        self.stdout.write(
            f"imported {report.items_created} items ({report.images_stored} new images, "
            f"{report.images_reused} reused, {report.assignments_created} assignments)"
        )
