"""Reads of the judge side: progress (done / failed / remaining, throughput, ETA), outputs
with raw text next to parsed answers, failures with what the model said, tokens and the
estimated cost."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Prefetch, QuerySet, Sum
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from annotation.models import Project
from annotation.selectors import can_manage
from core import reaper

from .models import JudgeConfig, JudgeItemResult, JudgeOutput, JudgeRun
from .outputs import output_labels


def can_run_judges(user: AbstractBaseUser, project: Project) -> bool:
    return can_manage(user, project)


def judge_configs(project: Project) -> QuerySet[JudgeConfig]:
    return JudgeConfig.objects.filter(project=project).prefetch_related("members").order_by("name")


def judge_runs(project: Project, *, include_hidden: bool = True) -> QuerySet[JudgeRun]:
    """The project's runs, newest first; ``include_hidden=False`` leaves out those of hidden judges."""
    qs = JudgeRun.objects.filter(project=project).select_related("config").order_by("-created_at")
    return qs if include_hidden else qs.filter(config__hidden=False)


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
    """The run's failed items, each with its outputs (``item_outputs``: pass, order, member, the
    raw text the model gave and why it failed), so a parse failure is read beside what it parsed."""
    outputs = JudgeOutput.objects.filter(run=run).select_related("member").order_by("pass_index", "order")
    return (
        run.results.filter(status=JudgeItemResult.Status.FAILED)
        .select_related("item")
        .prefetch_related(Prefetch("item__judge_outputs", queryset=outputs, to_attr="item_outputs"))
        .order_by("item_id")
    )


MILLION = Decimal(1_000_000)


def run_usage(run: JudgeRun) -> dict[str, Any]:
    """Tokens the run took and its estimated cost, from the prices per 1M tokens the researcher
    set on the judge (on each member, for an ensemble), read now: a price set after the run
    applies. ``cost`` is None, with ``cost_note`` saying why, when a judge has no price or no
    output has token counts; ``counted`` of ``outputs`` outputs have counts (a backend without
    tokens, an endpoint that does not report them). The note is in the active language (the API
    asks for it in English)."""
    rows = list(
        JudgeOutput.objects.filter(run=run)
        .values("member_id")
        .annotate(n=Count("id"), counted=Count("prompt_tokens"), pt=Sum("prompt_tokens"), ct=Sum("completion_tokens"))
        .order_by("member_id")
    )
    n = sum(r["n"] for r in rows)
    counted = sum(r["counted"] for r in rows)
    prompt = sum(r["pt"] or 0 for r in rows)
    completion = sum(r["ct"] or 0 for r in rows)
    member_ids = [r["member_id"] for r in rows if r["member_id"] is not None]
    # read now, not from ``run.config``: a price set since the run was loaded applies
    judges = {c.id: c for c in JudgeConfig.objects.filter(pk__in=[run.config_id, *member_ids])}
    cost: Decimal | None = Decimal(0)
    unpriced: list[str] = []
    for r in rows:
        if not r["counted"]:
            continue
        judge = judges.get(r["member_id"] or run.config_id)
        if judge is None or judge.price_prompt_per_1m is None or judge.price_completion_per_1m is None:
            unpriced.append(judge.name if judge is not None else _("a deleted member"))
            continue
        cost += (
            Decimal(r["pt"] or 0) * judge.price_prompt_per_1m + Decimal(r["ct"] or 0) * judge.price_completion_per_1m
        ) / MILLION
    note = ""
    if not counted:
        cost, note = None, _("no token counts (this backend has none, or the endpoint did not report them)")
    elif unpriced:
        cost, note = None, _("set a price per 1M tokens on %(judges)s") % {"judges": ", ".join(sorted(set(unpriced)))}
    elif counted < n:
        note = ngettext(
            "%(missing)d of %(n)d outputs has no token counts: the cost covers the others",
            "%(missing)d of %(n)d outputs have no token counts: the cost covers the others",
            n - counted,
        ) % {"missing": n - counted, "n": n}
    return {
        "outputs": n,
        "counted": counted,
        "prompt_tokens": prompt if counted else None,
        "completion_tokens": completion if counted else None,
        "cost": cost.quantize(Decimal("0.000001")) if cost is not None else None,
        "cost_note": note,
    }


def delete_footprint(config: JudgeConfig) -> dict[str, int]:
    """What deleting the judge removes (the confirmation page says it before anything goes)."""
    return {
        "runs": config.runs.count(),
        "outputs": JudgeOutput.objects.filter(run__config=config).count(),
        "annotations": config.rater.annotations.count(),
    }
