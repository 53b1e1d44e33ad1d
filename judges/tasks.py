"""Celery interface: thin wrappers that call the service of the same name. Chunks are routed
to the backend's queue (``api``, ``gpu``, ``default``) by ``services.enqueue_chunks``."""

from celery import shared_task

from .services import execute_judge_chunk


@shared_task(acks_late=True, reject_on_worker_lost=True, name="judges.run_judge_chunk")
def run_judge_chunk(run_id: int, item_ids: list[int]) -> str:
    return execute_judge_chunk(run_id=run_id, item_ids=item_ids).status
