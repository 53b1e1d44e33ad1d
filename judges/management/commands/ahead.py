"""AHEaD (CULTIVate) from an AHEaD judge's stored outputs: the threshold calibration on real images
(App. A.3) or the diversity scores DDIV / SDIV (Eq. 6-7). See ``judges/ahead.py``."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Project
from core import csvsafe
from core.errors import DomainError
from hvstats.tables import to_csv, to_json, to_markdown
from judges import ahead


class Command(BaseCommand):
    help = (
        "AHEaD from a judge's stored outputs: 'calibrate' (tau quartiles on the real images, App. A.3) "
        "or 'diversity' (DDIV and SDIV per prompt and by region, Eq. 6-7)."
    )

    def add_arguments(self, parser):
        parser.add_argument("what", choices=["calibrate", "diversity"])
        parser.add_argument("project", type=int, help="project id")
        parser.add_argument("--judge", required=True, help="the AHEaD judge's name")
        parser.add_argument("--format", choices=["markdown", "csv", "json"], default="markdown")

    def handle(self, *args, what: str, project: int, judge: str, format: str, **options):
        found = Project.objects.filter(pk=project).first()
        if found is None:
            raise CommandError(f"no project with id {project}")
        try:
            config = ahead.ahead_judge(found, judge)
            tables = [ahead.calibration_table(config)] if what == "calibrate" else ahead.diversity_tables(config)
        except DomainError as exc:
            raise CommandError(exc.message) from None
        if format == "json":
            self.stdout.write(json.dumps(to_json(tables), indent=2))
        elif format == "csv":
            self.stdout.write(to_csv(tables, csvsafe.dict_writer))  # judge and prompt names are researchers' text
        else:
            self.stdout.write(to_markdown(tables))
