"""A judge chunk that raises (issue 23, finding 2): its items fail with the exception, at once.

``execute_judge_chunk`` handles what a backend reports (``BackendUnavailable`` fails the run,
a verdict's error fails its item). Anything else a chunk raises (a bug, an HTTP client refusing
a URL, a model that crashes) used to escape the Celery task: the run stayed "running" until the
reaper gave up on it minutes later, no item said why, and the error was only in the worker log.
Now the task (``judges.tasks.run_judge_chunk``) hands the exception here: every item of the chunk
without a result is stored failed with the exception's type and message (the failures list and
"re-run failed items" see them), and the run ends (failed when no item succeeded, done when
others did) or carries on with its other chunks, as :func:`maybe_finish` decides.

A run that already ended (cancelled, failed, done) keeps its outcome and gets no results."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from annotation.models import Item
from core.errors import public_text

from .models import JudgeItemResult, JudgeRun

logger = logging.getLogger(__name__)

#: the longest message stored on an item (the column's own limit elsewhere is 5,000)
MAX_MESSAGE = 2000


def chunk_error_message(exc: BaseException) -> str:
    """What an item of a chunk that raised says: the exception's type and message, on one line."""
    # no type name and no absolute server path (issue 37): the worker's log has both
    message = f"the judge failed on this item's chunk: {public_text(exc)}"
    return message[:MAX_MESSAGE]


def record_chunk_failure(*, run_id: int, item_ids: Sequence[int], exc: BaseException) -> JudgeRun | None:
    """Store ``exc`` as the failure of every item of the chunk that has no result yet, then end
    the run if every item now has one. Returns the run (None when it no longer exists)."""
    from .execution import maybe_finish  # execution imports the models; import late, no cycle

    logger.error("judge run %s: a chunk of %d items raised", run_id, len(item_ids), exc_info=exc)
    run = JudgeRun.objects.filter(pk=run_id).first()
    if run is None:
        return None
    if run.status in JudgeRun.TERMINAL:
        return run
    allowed = set(Item.objects.filter(pk__in=list(item_ids), project_id=run.project_id).values_list("pk", flat=True))
    done = set(run.results.filter(item_id__in=item_ids).values_list("item_id", flat=True))
    message = chunk_error_message(exc)
    JudgeItemResult.objects.bulk_create(
        [
            JudgeItemResult(run=run, item_id=i, status=JudgeItemResult.Status.FAILED, answers=None, error=message)
            for i in dict.fromkeys(item_ids)
            if i in allowed and i not in done
        ],
        ignore_conflicts=True,  # (run, item) is unique: a result written meanwhile stays
    )
    if run.status == JudgeRun.Status.QUEUED:  # raised before the chunk claimed the run
        JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.QUEUED).update(status=JudgeRun.Status.RUNNING)
    return maybe_finish(run=run)
