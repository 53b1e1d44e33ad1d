"""``python manage.py agreement INPUT``: the report of :mod:`hvstats.cli` (the ``hv-stats``
command of the statistics package), the same arguments and the same output; this wrapper only
turns its errors into Django's ``CommandError``. Details in :mod:`hvstats.cli`."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from hvstats.cli import DESCRIPTION, CliError, add_agreement_arguments, agreement_output


class Command(BaseCommand):
    help = DESCRIPTION

    def add_arguments(self, parser):
        add_agreement_arguments(parser)

    def handle(self, *args, **o):
        try:
            text = agreement_output(o)
        except CliError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(text, ending="")
