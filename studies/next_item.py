"""Which item an annotator gets next. The order of decisions is drawn in ``next_item.md``
beside this module; keep the two in step.

1. A crowd participant who has reached their study's quota gets nothing (the study ends).
2. With quality control on, a paused annotator gets nothing; otherwise an attention, gold or
   repeat item is injected at the head of the queue when their submitted work calls for one.
3. Their own queue: an opened assignment first, then the next assigned one by position.
4. With pooled plans on an open project, a claim from the pool under a lease.
5. Nothing: the queue is done (or the annotator is paused, or the quota is reached, which
   :func:`why_nothing` tells the page)."""

from __future__ import annotations

from typing import Literal

from django.db import DEFAULT_DB_ALIAS

from annotation import hotpath
from annotation.models import Assignment, Project, Rater

from . import crowd, pool, quality


def next_assignment(*, rater: Rater, project: Project) -> Assignment | None:
    """The annotator's next assignment, or None (see the module docstring for the order)."""
    options = project.options
    if rater.attributes.get("crowd") and crowd.quota_reached(rater=rater, project=project):
        return None
    if options.get("qc"):
        if quality.pause_reason(rater, project) is not None:
            return None
        injected = quality.maybe_inject(rater=rater, project=project)
        if injected is not None:
            return injected
    found = next_in_queue(rater, project)
    if found is not None or not options.get("pooled_plans") or not project.is_open:
        return found
    return pool.claim_from_pool(rater=rater, project=project)


def queue_alone_decides(rater: Rater, project: Project) -> bool:
    """Whether the annotator's own queue (step 3) decides their next item, with no crowd quota
    (step 1) or quality control (step 2) to consult first. The lean submit then probes the queue
    in the statement that stores the answer."""
    return not rater.attributes.get("crowd") and not project.options.get("qc")


def next_after_submit(*, rater: Rater, project: Project, queue_next: int | Literal[False] | None) -> int | None:
    """The id of the annotator's next assignment after a submit, for both annotate paths.

    ``queue_next`` is what the queue probe found when the lean path stored the answer and
    :func:`queue_alone_decides` held (an id, or None for an empty queue); ``False`` when nothing
    was probed (the ordinary path, an edit, or a crowd / QC project). Then steps 1-4 run as
    :func:`next_assignment`; otherwise only what follows the queue is left: the pool (step 4)."""
    if queue_next is False:
        found = next_assignment(rater=rater, project=project)
    elif queue_next is None and project.options.get("pooled_plans") and project.is_open:
        found = pool.claim_from_pool(rater=rater, project=project)
    else:
        return queue_next
    return found.id if found is not None else None


def next_in_queue(rater: Rater, project: Project) -> Assignment | None:
    """The rater's next open assignment in queue order (one already opened comes first), with
    only its id read.

    One prepared statement (``annotation.hotpath.queue_head``) with a probe per status, each an
    index range scan on (rater, project, status, position) that stops at the first row; an
    ``IN`` over both statuses would sort the whole queue."""
    found = hotpath.queue_head(rater.pk, project.pk)
    return None if found is None else Assignment.from_db(DEFAULT_DB_ALIAS, ["id"], [found])


def why_nothing(rater: Rater, project: Project) -> tuple[Literal["quota", "paused", "done"], str | None]:
    """Why :func:`next_assignment` gave nothing: the crowd quota is reached (the page sends the
    participant to the study's end), the annotator is paused (with the reason), or all done."""
    if rater.attributes.get("crowd") and crowd.participant_for(rater, project) is not None:
        return "quota", None
    if project.options.get("qc"):
        reason = quality.pause_reason(rater, project)
        if reason is not None:
            return "paused", reason
    return "done", None
