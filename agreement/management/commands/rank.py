"""``python manage.py rank FILE``: the rank-sets of :mod:`hvstats.cli` (``hv-stats rank``), the
same arguments and output; this wrapper turns its errors into Django's ``CommandError`` and
writes the notes of a JSON report to the command's stderr. Details in :mod:`hvstats.ranking`."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from hvstats.cli import RANK_DESCRIPTION, CliError, add_rank_arguments, rank_report_of, rank_text


class Command(BaseCommand):
    help = RANK_DESCRIPTION

    def add_arguments(self, parser):
        add_rank_arguments(parser)

    def handle(self, *args, **o):
        try:
            report, notes = rank_report_of(o)
        except CliError as exc:
            raise CommandError(str(exc)) from exc
        if o["format"] == "json":
            for note in notes:
                self.stderr.write(f"note: {note}")
        self.stdout.write(rank_text(report, notes, o), ending="")
