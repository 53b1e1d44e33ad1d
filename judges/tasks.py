"""Celery interface: thin wrappers that call the service of the same name. Chunks are routed
to the backend's queue (``api``, ``gpu``, ``default``) by ``runs.enqueue_chunks``."""

from celery import shared_task

from .execution import execute_judge_chunk, maybe_finish
from .models import JudgeRun
from .runs import resume_judge_run


@shared_task(acks_late=True, reject_on_worker_lost=True, name="judges.run_judge_chunk")
def run_judge_chunk(run_id: int, item_ids: list[int]) -> str:
    return execute_judge_chunk(run_id=run_id, item_ids=item_ids).status


@shared_task(acks_late=True, name="judges.resume_run")
def resume_run(run_id: int) -> str:
    """Sent by the reaper (``core.reaper``) for a run whose workers stopped: chunks for the items
    without a result, or, when every item has one, the run's end that its worker did not write."""
    run = JudgeRun.objects.get(pk=run_id)
    if run.is_pending and not resume_judge_run(run=run):
        run = maybe_finish(run=run)
    return run.status
