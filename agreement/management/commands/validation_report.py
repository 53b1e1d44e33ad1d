"""``python manage.py validation_report PROJECT_ID``: the protocol's validation tables of a
project (the paper's tables from its stored ratings) as Markdown, LaTeX, CSV or JSON; the same
function and numbers as the agreement page and ``GET /api/projects/<id>/validation-report/``."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from agreement import conclusions, validation
from agreement.services import MAX_BOOTSTRAP, MAX_MIN_RATER_ITEMS
from annotation.models import Project
from core import csvsafe
from core.errors import DomainError
from hvstats import tables
from hvstats.alt_test import DEFAULT_EPSILON, EPSILON_RANGE, valid_epsilon
from hvstats.validation import MIN_RATER_ITEMS


class Command(BaseCommand):
    help = "The protocol's validation tables of a project (Markdown, LaTeX booktabs, CSV or JSON)."

    def add_arguments(self, parser):
        parser.add_argument("project_id", type=int)
        parser.add_argument("--format", choices=validation.FORMATS, default="markdown")
        parser.add_argument("--bootstrap", type=int, default=1000, help="item resamples for 95%% CIs (0 = none)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--epsilon", type=float, default=DEFAULT_EPSILON, help="alt-test margin of the verdicts table, in [0, 1)"
        )

        parser.add_argument(
            "--min-rater-items",
            type=int,
            default=MIN_RATER_ITEMS,
            help=f"least rated items for a rater to enter the human agreement ceilings and slots "
            f"(default {MIN_RATER_ITEMS}, the alt-test's minimum; 0 = every rater)",
        )

        parser.add_argument(
            "--system",
            default=None,
            help='the item stratum whose values are the systems for "Does the benchmark\'s conclusion hold?" '
            "(default: the preset's, e.g. generator)",
        )
        parser.add_argument(
            "--finding",
            default=None,
            help="a comparison of item groups, 'column: A, B vs C' (default: the preset's findings)",
        )

    def handle(self, *args, **o):
        if not 0 <= o["bootstrap"] <= MAX_BOOTSTRAP:
            raise CommandError(f"--bootstrap must be between 0 and {MAX_BOOTSTRAP}")
        if o["seed"] < 0:
            raise CommandError("--seed must be zero or positive")
        if not 0 <= o["min_rater_items"] <= MAX_MIN_RATER_ITEMS:
            raise CommandError(f"--min-rater-items must be between 0 and {MAX_MIN_RATER_ITEMS}")
        if not valid_epsilon(o["epsilon"]):
            raise CommandError(f"--epsilon must be in {EPSILON_RANGE}")
        project = Project.objects.filter(pk=o["project_id"]).first()
        if project is None:
            raise CommandError(f"no project {o['project_id']}")
        if not validation.has_tables(project):
            raise CommandError(
                f"the protocol of project {project.id} ({project.preset.name}) declares no validation tables"
            )
        try:
            found = None
            if o["system"] or o["finding"]:  # else compute_tables reads the preset's
                found = conclusions.project_conclusions(
                    project, system=o["system"], finding=o["finding"], bootstrap=o["bootstrap"], seed=o["seed"]
                )
            result = validation.compute_tables(
                project,
                bootstrap=o["bootstrap"],
                seed=o["seed"],
                epsilon=o["epsilon"],
                min_rater_items=o["min_rater_items"],
                conclusions=found,
            )
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        if o["format"] == "json":
            self.stdout.write(json.dumps(tables.to_json(result), indent=2, ensure_ascii=False))
        else:
            self.stdout.write(tables.render(result, o["format"], csv_writer=csvsafe.dict_writer), ending="")
