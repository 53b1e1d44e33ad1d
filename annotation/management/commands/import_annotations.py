"""Import human annotations collected in another tool (Label Studio JSON export, long CSV /
JSONL, wide CSV) onto a project's items: the same all-or-nothing service as the project page and
the API (``annotation/annotation_import.py``), run as a job in this process."""

from __future__ import annotations

import re
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation import annotation_import
from annotation.models import Project
from annotation.sources import registry
from core.errors import DomainError

#: the service's messages name a field to map as FIELD=QUESTION (the page's and the API's words)
UNKNOWN_FIELD = re.compile(r"unknown field '([^']+)'")


def command_hints(report: annotation_import.AnnotationImportReport) -> str:
    """The same advice in this command's own options (--map, --item-key)."""
    hints = []
    for name in dict.fromkeys(m for e in report.errors for m in UNKNOWN_FIELD.findall(e)):
        hints.append(f"  map {name!r} with --map {name}=QUESTION, or --map {name}= to leave it out")
    if any("as the item key" in e for e in report.errors):
        hints.append("  give the item key with --item-key KEY")
    return "\n" + "\n".join(hints) if hints else ""


class Command(BaseCommand):
    help = (
        "Import human annotations (Label Studio JSON, JSON-MIN or CSV, long CSV/JSONL, wide CSV) onto a project's items, "
        "each source annotator as a pseudonymous rater; all or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("project", type=int, help="project id")
        parser.add_argument("data", type=Path, help="the exported file")
        parser.add_argument("--format", required=True, choices=registry.keys(registry.HUMAN))
        parser.add_argument(
            "--item-key",
            default="id",
            help=(
                "the key of the task's data naming the item, e.g. pair_id: matched against the items' external ids "
                "first, then a field of the item's data or meta of that name; with id (the default) the key is "
                "detected from the file when id names no item and one data key does"
            ),
        )
        parser.add_argument(
            "--map",
            action="append",
            default=[],
            metavar="FROM=TO",
            help="source field FROM answers rubric question TO (FROM= leaves the field out); repeatable",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="check and show the mapping and counts; write nothing"
        )

    def handle(self, *args, project: int, data: Path, format: str, item_key: str, map, dry_run: bool, **options):
        found = Project.objects.select_related("rubric_version").filter(pk=project).first()
        if found is None:
            raise CommandError(f"no project with id {project}")
        if not data.is_file():
            raise CommandError(f"no file at {data}")
        try:
            mapping = annotation_import.parse_mapping(map)
            if dry_run:
                report = annotation_import.check_annotations(
                    project=found, data=data, data_format=format, item_key=item_key, mapping=mapping
                ).report
            else:
                job = annotation_import.start_annotation_import(
                    project=found,
                    user=None,
                    path=data.resolve(),
                    original_name=data.name,
                    data_format=format,
                    item_key=item_key,
                    mapping=mapping,
                    inline=True,
                )
                report = annotation_import.AnnotationImportReport(**{**job.report})
        except DomainError as exc:
            raise CommandError(exc.message) from None
        except TypeError:  # a job failed outside the check: its report is only the message
            raise CommandError(f"nothing was imported: {'; '.join(job.report.get('errors') or [])}") from None
        if not report.ok:
            lines = "\n".join(f"  {e}" for e in report.errors)
            more = f"\n  ... and {report.errors_truncated} more" if report.errors_truncated else ""
            raise CommandError(f"nothing was imported:\n{lines}{more}{command_hints(report)}")
        if report.item_key_detected:
            self.stdout.write(f"item key: {report.item_key} (detected from the file; --item-key to choose another)")
        mapping_text = ", ".join(f"{k} -> {v or '(left out)'}" for k, v in report.mapping.items())
        self.stdout.write(f"mapping: {mapping_text or '(none)'}")
        if dry_run and report.rater_plan:
            raters = ", ".join(
                f"{r['source']} -> {r['rater']}{' (new)' if r['new'] else ''}: {r['annotations']}"
                for r in report.rater_plan
            )
            self.stdout.write(f"raters (annotator in the file -> rater: annotations): {raters}")
        if report.questions_unanswered:
            self.stdout.write(f"questions no field answers: {', '.join(report.questions_unanswered)}")
        if report.duplicate_of is not None:
            self.stdout.write(f"this file was already imported (import {report.duplicate_of}): nothing added")
            return
        counts = (
            f"{report.annotations_read} annotations read ({report.skipped_cancelled} cancelled skipped"
            + (f", {report.skipped_empty} tasks without annotations" if report.skipped_empty else "")
            + "), "
            f"{report.raters} raters ({report.raters_new} new), {report.items_matched} items, "
            f"{report.already_imported} already imported"
        )
        if dry_run:
            self.stdout.write(
                f"dry run, nothing written: {counts}; would create {report.annotations_read - report.already_imported} annotations"
            )
        else:
            self.stdout.write(f"imported {report.annotations_created} annotations (import {job.id}): {counts}")
