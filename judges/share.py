"""Nobody stalls the shared worker (issue 37, M4): a project's share of it, and a chunk's watch.

Every judge chunk of every project runs on the same few worker threads (``make run``: one
worker, two threads, for exports, imports and reports too). Two pieces keep one project's
judges from holding them all:

- **a share per project**: a chunk takes one of its project's ``HV_JUDGE_PROJECT_SHARE`` slots
  (default 1) before it works (:func:`take_slot`); when the project holds them all, the chunk
  is sent again after ``HV_JUDGE_SHARE_RETRY_SECONDS`` (with jitter) and holds no thread
  meanwhile. ``0`` turns the share off. A slot is a row (``JudgeChunkSlot``), so the share holds
  across worker processes and machines; takers are serialised by a row lock on the project
  (PostgreSQL) or by SQLite's single writer, and a slot ranks by its id among the live ones;
- **a watch per chunk** (:class:`ChunkWatch`): a thread beside the chunk reads the run's status
  every ``HV_JUDGE_CANCEL_POLL_SECONDS`` (default 1) and sets the backends' ``cancelled`` event
  when the run was cancelled (or failed elsewhere), which ends a retry back-off at once and
  starts no new request; it renews the chunk's slot on each read, so the slot of a killed
  worker lapses after ``SLOT_LEASE_TICKS`` missed reads instead of blocking the project. A slot
  held by a process of this machine that no longer exists is given back at once
  (:func:`_holder_gone`)."""

from __future__ import annotations

import os
import random
import socket
import threading
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.models import Project
from core import jobs
from core.job_thread import JobRowThread

from .models import JudgeChunkSlot, JudgeRun

# a slot lives this many watch reads without a renewal: a killed worker's slot lapses within
# seconds (10 s by default), while a busy database may miss a few renewals without harm
SLOT_LEASE_TICKS = 10


def project_share() -> int:
    """How many chunks of one project may work at once (0: no limit)."""
    return max(0, int(settings.HV_JUDGE_PROJECT_SHARE))


def poll_seconds() -> float:
    return max(0.05, float(settings.HV_JUDGE_CANCEL_POLL_SECONDS))


def slot_lease() -> timedelta:
    return timedelta(seconds=poll_seconds() * SLOT_LEASE_TICKS)


def retry_countdown() -> float:
    """When a chunk whose project is at its share is tried again: the setting, plus up to half
    of it at random, so the waiting chunks of one project do not all come back together."""
    base = max(0.1, float(settings.HV_JUDGE_SHARE_RETRY_SECONDS))
    return base * (1 + random.random() / 2)


def _holder_gone(worker: str) -> bool:
    """Whether a slot's worker (``jobs.worker_id()``, host:pid) was a process of this machine
    that has ended (a worker killed and started again): its slot need not wait for its lapse."""
    host, _, pid = worker.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)  # signal 0: does the process exist (nothing is sent)
    except ProcessLookupError:
        return True
    except OSError:  # it exists, under another user
        return False
    return False


def take_slot(run: JudgeRun) -> JudgeChunkSlot | bool:
    """A slot of the run's project for one chunk: the slot, ``True`` when the share is off, or
    ``False`` when the project already holds its share (nothing written)."""
    share = project_share()
    if not share:
        return True
    now = timezone.now()
    with transaction.atomic():
        # one taker at a time per project: a row lock on PostgreSQL; SQLite has one writer
        Project.objects.select_for_update().filter(pk=run.project_id).values_list("pk", flat=True).first()
        JudgeChunkSlot.objects.filter(project_id=run.project_id, expires_at__lte=now).delete()  # lapsed
        held = JudgeChunkSlot.objects.filter(project_id=run.project_id).values_list("pk", "worker")
        gone = [pk for pk, worker in held if _holder_gone(worker)]
        if gone:
            JudgeChunkSlot.objects.filter(pk__in=gone).delete()
        slot = JudgeChunkSlot.objects.create(
            project_id=run.project_id, run=run, worker=jobs.worker_id(), expires_at=now + slot_lease()
        )
        ahead = JudgeChunkSlot.objects.filter(project_id=run.project_id, pk__lt=slot.pk, expires_at__gt=now).count()
        if ahead >= share:
            slot.delete()
            return False
    return slot


def give_back(slot: JudgeChunkSlot | bool) -> None:
    if isinstance(slot, JudgeChunkSlot):
        JudgeChunkSlot.objects.filter(pk=slot.pk).delete()


def project_slots(project_id: int) -> int:
    """The live slots of a project (what its chunks hold now)."""
    return JudgeChunkSlot.objects.filter(project_id=project_id, expires_at__gt=timezone.now()).count()


class ChunkWatch(JobRowThread):
    """``with ChunkWatch(run, slot) as watch:`` reads the run's status every
    ``HV_JUDGE_CANCEL_POLL_SECONDS`` on its own connection; ``watch.cancelled`` is set once the
    run is no longer running (cancelled, or failed by another chunk). Only a status it reads
    sets it: a row it cannot see (not committed yet) is no cancel."""

    kind = "chunk-watch"

    def __init__(self, run: JudgeRun, slot: JudgeChunkSlot | bool) -> None:
        super().__init__(JudgeRun, run.pk, attempt=None, interval=poll_seconds())
        self.slot = slot
        self.cancelled = threading.Event()

    def tick(self) -> bool:
        status = JudgeRun.objects.filter(pk=self.pk).values_list("status", flat=True).first()
        if status in JudgeRun.TERMINAL:
            self.cancelled.set()
            return False
        # renewed only while the run is visible: a test's uncommitted run (or SQLite's writer
        # holding the lock) is never waited for
        if status is not None and isinstance(self.slot, JudgeChunkSlot):
            JudgeChunkSlot.objects.filter(pk=self.slot.pk).update(expires_at=timezone.now() + slot_lease())
        return True


__all__ = ["ChunkWatch", "give_back", "project_share", "project_slots", "retry_countdown", "take_slot"]
