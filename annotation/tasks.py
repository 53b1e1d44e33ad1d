"""Celery interfaces: thin wrappers that call the service of the same name, and the senders of
the two import jobs (``core.jobs.register_sender``), used on commit and by the reaper, with the
staged-upload cleanup of a job failed from outside its run (the reaper gave up on it, or the
broker refused it)."""

from celery import shared_task

from core import jobs

from .annotation_import import discard_upload, run_annotation_import_job, run_annotation_preview_job
from .importing import run_import_job
from .models import AnnotationImport, ImportJob
from .staging import discard_job_upload
from .staging import sweep_staged_uploads as sweep


@shared_task(acks_late=True, name="annotation.run_import")
def run_import(job_id: int) -> str:
    job = ImportJob.objects.select_related("project").get(pk=job_id)
    if job.status in (ImportJob.Status.DONE, ImportJob.Status.FAILED):
        return job.status  # redelivered after completion: nothing to do
    return run_import_job(job=job).status


@shared_task(acks_late=True, name="annotation.run_annotation_import")
def run_annotation_import(job_id: int) -> str:
    job = AnnotationImport.objects.select_related("project__rubric_version").get(pk=job_id)
    if job.status in (AnnotationImport.Status.DONE, AnnotationImport.Status.FAILED):
        return job.status  # redelivered after completion: nothing to do
    if job.preview:  # a large file's preview (issue 37, M3): the same task, nothing written
        return run_annotation_preview_job(job=job).status
    return run_annotation_import_job(job=job).status


@shared_task(name="annotation.sweep_staged_uploads", ignore_result=True)
def sweep_staged_uploads() -> int:
    """Delete the staged uploads nobody imported (``staging.sweep_staged_uploads``); beat runs
    this hourly (``CELERY_BEAT_SCHEDULE``)."""
    return sweep()


def send_import(job: ImportJob) -> None:
    run_import.delay(job.pk)


def send_annotation_import(job: AnnotationImport) -> None:
    run_annotation_import.delay(job.pk)


# A failed import keeps no staged upload: its run deletes it when it ends, and the cleanup does
# when the job fails without a run (reaped, or refused by the broker); a page preview's upload
# stays for Confirm (annotation_import.discard_upload).
jobs.register_sender(ImportJob, send_import, cleanup=discard_job_upload)
jobs.register_sender(AnnotationImport, send_annotation_import, cleanup=discard_upload)
