"""Reads of the judge side: progress (done / failed / remaining, throughput, ETA), outputs
with raw text next to parsed answers, failures."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, QuerySet
from django.utils import timezone

from annotation.models import Project
from annotation.selectors import can_manage
from core import reaper

from .models import JudgeConfig, JudgeItemResult, JudgeOutput, JudgeRun
from .outputs import output_labels


def can_run_judges(user: AbstractBaseUser, project: Project) -> bool:
    return can_manage(user, project)


def judge_configs(project: Project) -> QuerySet[JudgeConfig]:
    return JudgeConfig.objects.filter(project=project).prefetch_related("members").order_by("name")


def judge_runs(project: Project) -> QuerySet[JudgeRun]:
    return JudgeRun.objects.filter(project=project).select_related("config").order_by("-created_at")


def managed_run(user: AbstractBaseUser, run_id: int) -> JudgeRun | None:
    run = JudgeRun.objects.select_related("config__rater", "project__rubric_version").filter(pk=run_id).first()
    if run is None or not can_manage(user, run.project):
        return None
    return reaper.check(run)  # a run whose workers died is resumed or failed before it is shown


def run_progress(run: JudgeRun) -> dict[str, Any]:
    counts = dict(run.results.values_list("status").annotate(n=Count("id")))
    done = counts.get(JudgeItemResult.Status.OK, 0)
    failed = counts.get(JudgeItemResult.Status.FAILED, 0)
    remaining = max(0, run.total - done - failed)
    end = run.finished_at or timezone.now()
    elapsed = (end - run.started_at).total_seconds() if run.started_at else 0.0
    throughput = (done + failed) / elapsed if elapsed > 0 and done + failed else None
    eta = remaining / throughput if throughput and run.is_pending else None
    return {
        "id": run.id,
        "status": run.status,
        "total": run.total,
        "done": done,
        "failed": failed,
        "remaining": remaining,
        "percent": round(100 * (done + failed) / run.total) if run.total else 0,
        "items_per_s": round(throughput, 3) if throughput else None,
        "eta_s": round(eta, 1) if eta is not None else None,
        "elapsed_s": round(elapsed, 1),
        "message": run.message,
        "queue": run.queue,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
    }


def run_label_counts(run: JudgeRun) -> dict[str, dict[str, int]]:
    """Per classifier, how many finished items got each label (e.g. the refusal judge's
    ``{"refusal": {"answered": 7, "refused": 2}}``, the refusal rate's numerator and denominator)."""
    counts: dict[str, dict[str, int]] = {}
    for answers in run.results.filter(status=JudgeItemResult.Status.OK).values_list("answers", flat=True):
        for key, label in (output_labels(answers) or {}).items():
            per = counts.setdefault(key, {})
            per[label] = per.get(label, 0) + 1
    return {k: dict(sorted(v.items())) for k, v in counts.items()}


def run_outputs(run: JudgeRun, *, errors_only: bool = False) -> QuerySet[JudgeOutput]:
    qs = JudgeOutput.objects.filter(run=run).select_related("item", "member").order_by("item_id", "pass_index")
    return qs.exclude(error="") if errors_only else qs


def run_failures(run: JudgeRun) -> QuerySet[JudgeItemResult]:
    return run.results.filter(status=JudgeItemResult.Status.FAILED).select_related("item").order_by("item_id")
