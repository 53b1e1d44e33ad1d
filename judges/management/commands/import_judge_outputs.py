"""Import a judge's (or metric's) outputs from the command line as a model rater of a project:
the same all-or-nothing import job as the judges page and the API (``judges/imported.py``), run
at once whatever the file's size (the file is read where it is, never moved or deleted)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Project
from annotation.sources import registry
from annotation.staging import format_of
from core.errors import DomainError
from judges import imported


class Command(BaseCommand):
    help = "Import judge outputs (JSONL or CSV keyed by the item's external id) into a project as a model rater."

    def add_arguments(self, parser):
        parser.add_argument("project", type=int, help="project id")
        parser.add_argument("data", type=Path, help="a .jsonl or .csv file")
        parser.add_argument("--name", required=True, help="the judge's name in reports and exports")
        parser.add_argument("--model-id", default="", help="the model that produced the outputs")
        parser.add_argument("--method", default="", help="prompt or method description (hashed as the prompt hash)")
        parser.add_argument(
            "--metric", action="append", default=[], help="a numeric score column outside the rubric (repeatable)"
        )
        parser.add_argument(
            "--format",
            choices=[*registry.by_suffix(registry.MODEL), *registry.keys(registry.MODEL)],
            help="default: from the file name (jsonl or csv: one line per item); judge-pairs-jsonl / "
            "judge-pairs-csv: one line per pairwise comparison",
        )

    def handle(self, *args, project: int, data: Path, name: str, model_id: str, method: str, metric, format, **options):
        found = Project.objects.filter(pk=project).first()
        if found is None:
            raise CommandError(f"no project with id {project}")
        if not data.is_file():
            raise CommandError(f"no file at {data}")
        fmt = format or format_of(data.name)
        if fmt is None:
            raise CommandError(f"cannot tell the format of {data.name}: pass --format jsonl|csv")
        try:
            report = imported.import_judge_outputs(
                project=found,
                data=data,
                data_format=fmt,
                name=name,
                model_id=model_id,
                method=method,
                metrics=metric,
                source_file=data.name,
            )
        except DomainError as exc:
            raise CommandError(exc.message) from None
        if report.ok and report.duplicate_of is not None:
            self.stdout.write(
                f"this file was imported already (import {report.duplicate_of}, judge {report.name!r}): nothing added"
            )
            return
        if not report.ok:
            lines = "\n".join(f"  {e}" for e in report.errors)
            more = f"\n  ... and {report.errors_truncated} more" if report.errors_truncated else ""
            raise CommandError(f"nothing was imported:\n{lines}{more}")
        self.stdout.write(
            f"imported {report.items} outputs as judge {report.name!r} (rater {report.rater}; questions: "
            f"{', '.join(report.questions) or 'none'}; metrics: {', '.join(report.metrics) or 'none'})"
        )
