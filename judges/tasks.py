"""Celery interface: thin wrappers that call the service of the same name. Chunks are routed
to the backend's queue (``api``, ``gpu``, ``default``) by ``runs.enqueue_chunks``, the one
sender of chunks; a run itself is sent (by the reaper, to resume it) through the sender
registered here (``core.jobs.register_sender``), as is an import of a judge's outputs made
elsewhere, with the staged-upload cleanup of one failed from outside its run (the reaper gave up
on it, or the broker refused it), as ``annotation.tasks`` does for the other imports."""

from celery import shared_task

from annotation.staging import discard_job_upload
from core import jobs

from .chunk_failures import record_chunk_failure
from .execution import execute_judge_chunk, maybe_finish
from .imported import run_judge_import_job
from .models import JudgeOutputImport, JudgeRun
from .runs import resume_judge_run


@shared_task(acks_late=True, reject_on_worker_lost=True, name="judges.run_judge_chunk")
def run_judge_chunk(run_id: int, item_ids: list[int]) -> str:
    """One chunk of a run. An exception the chunk raises fails its items with that exception and
    ends the run or lets it go on, at once (``judges/chunk_failures.py``): never a run held
    "running" until the reaper. A lost worker (``kill -9``) is still the reaper's to resume."""
    try:
        return execute_judge_chunk(run_id=run_id, item_ids=item_ids).status
    except Exception as exc:
        run = record_chunk_failure(run_id=run_id, item_ids=item_ids, exc=exc)
        return run.status if run is not None else JudgeRun.Status.CANCELLED


@shared_task(acks_late=True, name="judges.resume_run")
def resume_run(run_id: int) -> str:
    """Sent by the reaper (``core.reaper``) for a run whose workers stopped: chunks for the items
    without a result, or, when every item has one, the run's end that its worker did not write."""
    run = JudgeRun.objects.get(pk=run_id)
    if run.is_pending and not resume_judge_run(run=run):
        run = maybe_finish(run=run)
    return run.status


def send_run(run: JudgeRun) -> None:
    # a run is many chunks: what is sent for the run as a whole is its resume (chunks for the
    # items without a result), on the default queue whatever the backend's queue is
    resume_run.apply_async(args=[run.pk], queue="default")


jobs.register_sender(JudgeRun, send_run)


@shared_task(acks_late=True, name="judges.run_output_import")
def run_output_import(job_id: int) -> str:
    job = JudgeOutputImport.objects.select_related("project__rubric_version", "created_by").get(pk=job_id)
    if not job.is_pending:
        return job.status  # redelivered after completion: nothing to do
    return run_judge_import_job(job=job).status


def send_output_import(job: JudgeOutputImport) -> None:
    run_output_import.delay(job.pk)


jobs.register_sender(JudgeOutputImport, send_output_import, cleanup=discard_job_upload)
