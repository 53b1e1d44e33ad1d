"""Celery interface: a thin wrapper that calls the service of the same name, and the sender of
the export job (``core.jobs.register_sender``), used on commit and by the reaper."""

from celery import shared_task

from core import jobs

from .exports import remove_partial_files, run_export_job
from .models import Export


@shared_task(acks_late=True, name="curation.run_export")
def run_export(export_id: int) -> str:
    export = Export.objects.select_related("project__rubric_version", "created_by").get(pk=export_id)
    if export.status in (Export.Status.DONE, Export.Status.FAILED):
        return export.status  # redelivered after completion: nothing to do
    return run_export_job(export=export).status


def send_export(export: Export) -> None:
    # also the reaper's re-queue: an export resumes from the start, its files are written
    # atomically and rewritten whole
    run_export.delay(export.pk)


def clean_up_export(export: Export) -> None:
    # an export failed from outside its run (the reaper, a refusing broker) never reached its
    # writers' own cleanup: its unfinished files go here (issue 37)
    remove_partial_files(export)


jobs.register_sender(Export, send_export, cleanup=clean_up_export)
