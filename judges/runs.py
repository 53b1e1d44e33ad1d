"""A judge run's life, as the researcher drives it: start one over a scope (all items, chosen
ones, a design sample, a stratum, a random draw), queue its chunks, cancel it, re-run what
failed, and resume a run whose queued chunks were lost.

``start_judge_run`` stores the run and, on commit, enqueues chunks of item ids on the backend's
Celery queue (``api``, ``gpu`` or ``default``); the worker side, what a chunk does, is
``judges/execution.py``. Deleting, hiding and pricing a judge are ``judges/administration.py``."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from annotation.models import Item
from core import jobs
from core.errors import DomainError
from studies.models import Sample, SampleItem
from studies.sampling import metadata_columns

from .models import JudgeConfig, JudgeItemResult, JudgeRun
from .registry import BACKENDS, is_ensemble

DEFAULT_CHUNK = 16
MAX_CHUNK = 1000


def queue_for(config: JudgeConfig) -> str:
    """The Celery queue the run's chunks go to: the backend's; an ensemble's members run in one
    chunk, so it takes the queue of its most demanding member (``gpu``, then ``api``)."""
    if is_ensemble(config.backend):
        queues = {_queue_of(m.backend) for m in config.members.all()}
        return next((q for q in ("gpu", "api") if q in queues), "default")
    return _queue_of(config.backend)


def _queue_of(backend: str) -> str:
    """Its entry's queue; ``default`` for a key no entry has (its run then fails on the worker
    with the reason, ``registry.backend_for``)."""
    entry = BACKENDS.get(backend)
    return entry.queue if entry is not None else "default"


def start_judge_run(
    *,
    config: JudgeConfig,
    user: AbstractBaseUser | None = None,
    item_ids: Sequence[int] | None = None,
    sample_size: int | None = None,
    seed: int | None = None,
    chunk_size: int | None = None,
    parent: JudgeRun | None = None,
    sample_id: int | None = None,
    stratum: Mapping[str, Any] | None = None,
) -> JudgeRun:
    """Run the judge over all items of the project, the given ones, or those of a design sample
    (``sample_id``, a ``Sample`` of the project) and / or a stratum (``{key: value}`` over item
    strata or meta keys, e.g. ``{"country": "China"}``); ``sample_size`` then draws a random
    sample of those. The run keeps its scope (``sample``, ``stratum`` and ``scope`` in words)."""
    project = config.project
    qs = Item.objects.filter(project=project)
    stratum = check_stratum(stratum)
    if item_ids is not None and (sample_id is not None or stratum):
        raise DomainError("give item ids, or a sample and / or a stratum, not both")
    scope: list[str] = []
    sample = None
    if sample_id is not None:
        if isinstance(sample_id, bool) or not isinstance(sample_id, int):
            raise DomainError("a sample is given by its id")
        sample = Sample.objects.filter(pk=sample_id, project=project).first()
        if sample is None:
            raise DomainError(f"this project has no sample {sample_id}")
        qs = qs.filter(pk__in=SampleItem.objects.filter(sample=sample).values("item_id"))
        scope.append(f"sample {sample.name!r}")
    if stratum:
        qs = items_in_stratum(qs, stratum)
        scope.append("stratum " + stratum_label(stratum))
    if item_ids is not None:
        wanted = {int(i) for i in item_ids}
        ids = list(qs.filter(pk__in=wanted).order_by("id").values_list("id", flat=True))
        if len(ids) != len(wanted):
            raise DomainError("some items are not in this project")
        if parent is not None:
            scope.append(
                f"failed or unjudged items of run {parent.id}" + (f" ({parent.scope})" if parent.scope else "")
            )
        else:
            scope.append(f"{len(ids)} chosen item(s)")
    else:
        ids = list(qs.order_by("id").values_list("id", flat=True))
        if not ids and scope:
            raise DomainError(f"no item of this project is in {' and '.join(scope)}")
    if sample_size is not None:
        if sample_size < 1:
            raise DomainError("a sample needs at least one item")
        if sample_size < len(ids):
            scope.append(f"random {sample_size} of {len(ids)}" + (f" (seed {seed})" if seed is not None else ""))
            ids = sorted(random.Random(seed).sample(ids, sample_size))
    if not ids:
        raise DomainError("there are no items to judge")
    chunk = int(chunk_size or config.params.get("chunk_size") or DEFAULT_CHUNK)
    if not 1 <= chunk <= MAX_CHUNK:
        raise DomainError(f"chunk size must be between 1 and {MAX_CHUNK}")
    with transaction.atomic():
        run = JudgeRun.objects.create(
            config=config,
            project=project,
            item_ids=ids,
            total=len(ids),
            chunk_size=chunk,
            queue=queue_for(config),
            parent=parent,
            created_by=user,
            sample=sample,
            stratum=stratum,
            scope=" · ".join(scope)[:500],
        )
        transaction.on_commit(lambda: enqueue_chunks(run=run, item_ids=ids))
    return run


# at most this many keys in a stratum, and this long a value (an item's strata columns are 100)
MAX_STRATUM_KEYS = 10
MAX_STRATUM_VALUE = 300
_STRATUM_KEY = re.compile(r"^[A-Za-z0-9_-]{1,100}$")


def check_stratum(stratum: Mapping[str, Any] | None) -> dict[str, str]:
    """A stratum as ``{key: value}`` (text values; ``meta.`` before a key is dropped; "" is the
    blank stratum, items without the key included), or a ``DomainError`` saying what is wrong."""
    if stratum is None:
        return {}
    if not isinstance(stratum, Mapping):
        raise DomainError('a stratum is {"key": "value", ...} over item strata or meta keys')
    if len(stratum) > MAX_STRATUM_KEYS:
        raise DomainError(f"a stratum has at most {MAX_STRATUM_KEYS} keys")
    out: dict[str, str] = {}
    for raw, value in stratum.items():
        key = str(raw).strip().removeprefix("meta.")
        if not _STRATUM_KEY.match(key):
            raise DomainError(f"invalid stratum key {str(raw)[:100]!r}: use letters, digits, - and _")
        if key in out:
            raise DomainError(f"stratum key {key!r} given twice")
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise DomainError(f"the stratum value of {key!r} must be text")
        value = str(value).strip()
        if len(value) > MAX_STRATUM_VALUE or "\x00" in value:
            raise DomainError(f"the stratum value of {key!r} is not a stratum (over {MAX_STRATUM_VALUE} characters)")
        out[key] = value
    return out


def parse_stratum(text: str) -> dict[str, str]:
    """``"country=China, generator=sd"`` (the pages' form) as a checked stratum."""
    pairs: dict[str, str] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep:
            raise DomainError(
                f"a stratum is key=value pairs separated by commas, e.g. country=China; not {part.strip()!r}"
            )
        if key.strip() in pairs:
            raise DomainError(f"stratum key {key.strip()!r} given twice")
        pairs[key.strip()] = value.strip()
    return check_stratum(pairs)


def stratum_label(stratum: Mapping[str, str]) -> str:
    return ", ".join(f"{k} = {v or '(blank)'}" for k, v in stratum.items())


def items_in_stratum(qs: QuerySet[Item], stratum: Mapping[str, str]) -> QuerySet[Item]:
    """The items of ``qs`` in the stratum: the strata columns by name, other keys read from
    ``Item.meta`` as text (as the design samples read them, ``studies.sampling``)."""
    columns, annotations = metadata_columns(list(stratum))
    qs = qs.annotate(**annotations)
    for column, value in zip(columns, stratum.values(), strict=True):
        # a blank stratum holds the items with an empty value and those without the key
        qs = (
            qs.filter(Q(**{column: ""}) | Q(**{f"{column}__isnull": True}))
            if value == ""
            else qs.filter(**{column: value})
        )
    return qs


def enqueue_chunks(*, run: JudgeRun, item_ids: Sequence[int]) -> int:
    from .tasks import run_judge_chunk

    def fail(message: str) -> None:
        jobs.fail(run, message)

    n = 0
    for start in range(0, len(item_ids), run.chunk_size):
        chunk = list(item_ids[start : start + run.chunk_size])
        if not jobs.send_or_fail(lambda c=chunk: run_judge_chunk.apply_async(args=[run.id, c], queue=run.queue), fail):
            break
        n += 1
    return n


def requeue_chunk(*, run: JudgeRun, item_ids: Sequence[int], countdown: float) -> bool:
    """Send a chunk again after ``countdown`` seconds: its project holds its share of the worker
    (``judges/share.py``). A queued run counts as just sent, so the reaper does not send it
    again meanwhile (``HV_JOB_RESEND_SECONDS``)."""
    from .tasks import run_judge_chunk

    JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.QUEUED).update(heartbeat_at=timezone.now())
    return jobs.send_or_fail(
        lambda: run_judge_chunk.apply_async(args=[run.id, list(item_ids)], queue=run.queue, countdown=countdown),
        lambda message: jobs.fail(run, message),
    )


def cancel_judge_run(*, run: JudgeRun) -> JudgeRun:
    """Stop a queued or running run: chunks not started do nothing; a running chunk's watch sees
    the cancel within ``HV_JUDGE_CANCEL_POLL_SECONDS``, which ends its retries' back-off at once
    and starts no new request (a request in flight ends by its ``timeout_s``); it gives its
    worker thread back then. What was judged stays."""
    updated = jobs.cancel(run)
    run.refresh_from_db()
    if not updated:
        raise DomainError(f"the run is already {run.status}")
    return run


def rerun_failed_items(*, run: JudgeRun, user: AbstractBaseUser | None = None) -> JudgeRun:
    """A new run of the same judge over the items of this one that failed or never got a result
    (the run was cancelled, or failed because its worker stopped), in the run's order."""
    if run.is_pending:
        raise DomainError("wait for the run to finish (or cancel it) before re-running its failures")
    ok = set(run.results.filter(status=JudgeItemResult.Status.OK).values_list("item_id", flat=True))
    existing = set(Item.objects.filter(pk__in=run.item_ids).values_list("id", flat=True))  # none deleted since
    todo = [i for i in run.item_ids if i not in ok and i in existing]
    if not todo:
        raise DomainError("no item failed or was left unjudged in this run")
    return start_judge_run(config=run.config, user=user, item_ids=todo, chunk_size=run.chunk_size, parent=run)


def resume_judge_run(*, run: JudgeRun) -> int:
    """Enqueue again the items of an active run that have no result yet (e.g. after the broker
    lost messages). Safe to call any time: the writes are idempotent. Returns chunks enqueued."""
    if not run.is_pending:
        raise DomainError(f"the run is {run.status}; only queued or running runs resume")
    finished = set(run.results.values_list("item_id", flat=True))
    missing = [i for i in run.item_ids if i not in finished]
    return enqueue_chunks(run=run, item_ids=missing) if missing else 0
