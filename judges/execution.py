"""The worker side of a judge run: what the Celery task runs for each chunk of item ids.

``execute_judge_chunk`` builds the judge's backends from its configuration (``spec_for``), asks
them for only the (item, pass, order) outputs that are missing, stores every raw answer as a
``JudgeOutput``, and finalises each item whose passes are all in: the passes combined into one
answer, written as the judge rater's annotation (``judges/ratings.py``). It is idempotent:
outputs are keyed by (run, item, pass, order), items finalise once (``JudgeItemResult`` is unique
per run and item), so a redelivered chunk (a worker killed mid-run, ``acks_late``) only does the
work that is missing. ``maybe_finish`` ends the run when every item has a result.

A chunk first takes a slot of its project's share of the worker; when the project holds its
share, the chunk is sent again after a countdown and does nothing now. While it works, a watch
thread sets the backends' ``cancelled`` event when the run is cancelled, which ends a retry's
back-off at once; what the backends answered after that is not stored (``judges/share.py``,
issue 37, M4).

Starting, cancelling and re-running runs is ``judges/runs.py``."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Count, F
from django.utils import timezone

from annotation.assets import media_path
from annotation.models import Asset, Item
from annotation.presentation import item_render_context
from annotation.rubric import AnswerError, Rubric
from core import jobs
from core.heartbeat import Heartbeat
from core.values import without_surrogates

from . import orders, prompts, share
from .backends import BackendUnavailable, JudgeItem, JudgeSpec, Verdict
from .backends.ahead import BACKEND as AHEAD
from .combine import combine, combine_metrics
from .models import JudgeConfig, JudgeItemResult, JudgeOutput, JudgeRun
from .outputs import EXACT_KEY, SCORES_KEY
from .ratings import judge_derived, judged_rubric, write_judge_annotation
from .registry import backend_for, is_ensemble


def spec_for(config: JudgeConfig) -> JudgeSpec:
    """What the judge's backend is built from: the configuration with the project's rubric and
    item fields; an AHEaD judge also gets the project's real images (found here, as a backend
    never reads the database)."""
    project = config.project
    preset = project.preset
    params = dict(config.params)
    if config.backend == AHEAD.key:  # EXAG's baseline: the real images (Eq. 3)
        from .ahead import real_images_param

        params.update(real_images_param(project, params))
    return JudgeSpec(
        backend=config.backend,
        model_id=config.model_id,
        prompt_template=config.prompt_template,
        parser=config.parser,
        questions=tuple(config.questions),
        params=params,
        rubric=project.rubric_version.parsed(),
        item_fields=preset.item_fields,
        preset_key=project.preset_key,
    )


def judge_items(items: Sequence[Item], image_fields: Sequence[str]) -> list[JudgeItem]:
    """The items as a backend reads them: the render context and the files of their images."""
    shas = {item.data.get(f) for item in items for f in image_fields if isinstance(item.data.get(f), str)}
    assets = {a.sha256: a for a in Asset.objects.filter(sha256__in=shas)}
    out = []
    for item in items:
        images = {}
        for f in image_fields:
            asset = assets.get(item.data.get(f))
            if asset is not None:
                images[f] = media_path(asset.relative_path())
        # the item's meta (plain values, e.g. a model's output for the refusal judge) can fill
        # prompt placeholders; the item's own fields and strata win over it
        context = {**(item.meta or {}), **item_render_context(item)}
        out.append(JudgeItem(item_id=item.id, context=context, images=images))
    return out


def _members(config: JudgeConfig) -> list[JudgeConfig]:
    if is_ensemble(config.backend):
        return list(config.members.select_related("project__rubric_version").order_by("id"))
    return [config]


def _state(run_id: int) -> str:
    return JudgeRun.objects.filter(pk=run_id).values_list("status", flat=True).first() or JudgeRun.Status.CANCELLED


def execute_judge_chunk(*, run_id: int, item_ids: Sequence[int], batch_size: int | None = None) -> JudgeRun:
    """Judge these items of the run: only the (item, pass, order) outputs that are missing, then
    finalise every item whose passes are all in. Stops early when the run is cancelled.

    A judge with ``both_orders`` asks every pass twice, the pair as stored and swapped
    (``judges/orders.py``), through the same backend call; the swapped answers are stored mapped
    back to the item's order. Only the original-order passes make the judge's rating."""
    run = JudgeRun.objects.select_related("config__project__rubric_version", "config__rater").get(pk=run_id)
    if run.status in JudgeRun.TERMINAL:
        return run
    slot = share.take_slot(run)
    if not slot:  # the project holds its share of the worker: this chunk waits in the queue
        from .runs import requeue_chunk

        requeue_chunk(run=run, item_ids=item_ids, countdown=share.retry_countdown())
        return JudgeRun.objects.get(pk=run.pk)
    try:
        return _claim_and_execute(run, item_ids, batch_size, slot)
    finally:
        share.give_back(slot)


def _claim_and_execute(run: JudgeRun, item_ids: Sequence[int], batch_size: int | None, slot) -> JudgeRun:
    now = timezone.now()
    # the first chunk to start claims the run (one attempt; the reaper counts the next ones)
    JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.QUEUED).update(
        status=JudgeRun.Status.RUNNING,
        started_at=now,
        heartbeat_at=now,
        worker=jobs.worker_id(),
        attempts=F("attempts") + 1,
    )
    JudgeRun.objects.filter(pk=run.pk, started_at__isnull=True).update(started_at=now)
    # every chunk beats the run's lease while it works (several may, on several workers)
    with Heartbeat(JudgeRun, run.pk), share.ChunkWatch(run, slot) as watch:
        return _execute_chunk(run, item_ids, batch_size, watch.cancelled)


def _execute_chunk(
    run: JudgeRun, item_ids: Sequence[int], batch_size: int | None, cancelled: threading.Event
) -> JudgeRun:
    config = run.config
    members = _members(config)
    per_member = config.passes
    total_passes = per_member * len(members)
    pair_order = run.project.preset.pair_order if config.both_orders else None
    kinds = (orders.ORIGINAL, orders.SWAPPED) if pair_order is not None else (orders.ORIGINAL,)
    try:
        specs = [spec_for(m) for m in members]
        backends = [backend_for(s) for s in specs]
    except BackendUnavailable as exc:
        jobs.fail(run, f"the judge cannot run: {exc}")
        return JudgeRun.objects.get(pk=run.pk)
    for backend in backends:  # the watch's cancel reaches every backend's waits
        backend.cancelled = cancelled
    finished = set(run.results.filter(item_id__in=item_ids).values_list("item_id", flat=True))
    todo_ids = [i for i in item_ids if i not in finished]
    items_by_id = {it.id: it for it in Item.objects.filter(pk__in=todo_ids, project=run.project)}
    todo = [items_by_id[i] for i in todo_ids if i in items_by_id]
    step = batch_size or max(1, int(config.params.get("batch_size", run.chunk_size)))
    rubric_part = judged_rubric(run.project, config.questions) if config.questions else None
    for start in range(0, len(todo), step):
        if _state(run.pk) != JudgeRun.Status.RUNNING:
            break  # cancelled (or failed elsewhere): stop between batches
        batch = todo[start : start + step]
        have = set(JudgeOutput.objects.filter(run=run, item__in=batch).values_list("item_id", "pass_index", "order"))
        for m_index, (member, spec, backend) in enumerate(zip(members, specs, backends, strict=True)):
            offset = m_index * per_member
            member_rubric = judged_rubric(run.project, member.questions) if member.questions else None
            for kind in kinds:
                need_passes: dict[tuple[int, ...], list[Item]] = {}
                for it in batch:
                    missing = tuple(p for p in range(per_member) if (it.id, offset + p, kind) not in have)
                    if missing:
                        need_passes.setdefault(missing, []).append(it)
                for passes, its in need_passes.items():
                    asked = judge_items(its, spec.image_fields())
                    if kind == orders.SWAPPED:
                        asked = [orders.swapped_item(j, pair_order) for j in asked]
                    try:
                        verdicts = backend.judge(asked, list(passes))
                    except BackendUnavailable as exc:
                        jobs.fail(run, f"the judge cannot run: {exc}")
                        return JudgeRun.objects.get(pk=run.pk)
                    if cancelled.is_set():  # answers cut short by the cancel are no outputs
                        return JudgeRun.objects.get(pk=run.pk)
                    if kind == orders.SWAPPED:
                        verdicts = [replace(v, answers=orders.map_back(v.answers, pair_order)) for v in verdicts]
                    _store_outputs(
                        run, member if len(members) > 1 else None, offset, verdicts, member_rubric, items_by_id, kind
                    )
        for it in batch:
            _finalise_item(run, it, rubric_part, total_passes, len(kinds))
    return maybe_finish(run=run)


def _store_outputs(
    run: JudgeRun,
    member: JudgeConfig | None,
    offset: int,
    verdicts: Sequence[Verdict],
    rubric: Rubric | None,
    items_by_id: dict[int, Item],
    order: str = orders.ORIGINAL,
) -> None:
    """Rubric answers validated by the rubric (``rubric`` None: a label judge answers none),
    the classifier labels kept beside them under ``prompts.LABELS_KEY``."""
    rows = []
    for v in verdicts:
        parsed, error = v.answers, v.error
        if parsed is not None and not error and rubric is not None:
            try:
                parsed = rubric.validate(parsed, item=item_render_context(items_by_id[v.item_id]))
            except AnswerError as exc:
                parsed, error = v.answers, f"invalid answer: {exc}"
        if parsed is not None and v.labels:
            parsed = {**parsed, prompts.LABELS_KEY: v.labels}
        if parsed is not None and not error and v.exact:  # unrounded scores: the statistics read them
            parsed = {**parsed, EXACT_KEY: v.exact}
        if parsed is not None and not error and v.metrics:
            parsed = {**parsed, SCORES_KEY: v.metrics}
        rows.append(
            JudgeOutput(
                run=run,
                item_id=v.item_id,
                pass_index=offset + v.pass_index,
                order=order,
                member=member,
                # a model's text is kept, not refused: a lone surrogate (a JSON "\udc00" in an
                # endpoint's answer) becomes U+FFFD, which every column and export can hold
                raw_output=without_surrogates(v.raw or ""),
                parsed=without_surrogates(parsed),
                error=without_surrogates(error)[:5000],
                latency_ms=v.latency_ms,
                prompt_tokens=v.usage.prompt_tokens if v.usage is not None else None,
                completion_tokens=v.usage.completion_tokens if v.usage is not None else None,
            )
        )
    # (run, item, pass, order) is unique: a redelivered chunk's duplicates are dropped here
    JudgeOutput.objects.bulk_create(rows, ignore_conflicts=True)


def _finalise_item(run: JudgeRun, item: Item, rubric: Rubric | None, total_passes: int, n_orders: int = 1) -> None:
    """The item's result once every (pass, order) output is in: its rating combines the
    original-order passes; a swapped output's error is kept with that output (the bias checks
    count the item as missing its second order), it does not fail the item."""
    every = list(JudgeOutput.objects.filter(run=run, item=item).order_by("pass_index"))
    if len(every) < total_passes * n_orders:
        return
    outputs = [o for o in every if o.order == JudgeOutput.Order.ORIGINAL]
    errors = [f"pass {o.pass_index + 1}: {o.error}" for o in outputs if o.error]
    ctx = item_render_context(item)
    answers = stored = None
    exact: dict[str, Any] = {}
    metrics: dict[str, float] = {}
    if not errors:
        answers = {}
        if rubric is not None:
            combined, exact = combine(
                rubric,
                run.config.questions,
                [o.parsed or {} for o in outputs],
                run.config.combine,
                unrounded=[(o.parsed or {}).get(EXACT_KEY) for o in outputs],
            )
            metrics = combine_metrics([(o.parsed or {}).get(SCORES_KEY) for o in outputs])
            try:
                answers = rubric.validate(combined, item=ctx)
            except AnswerError as exc:
                errors.append(f"combined answer invalid: {exc}")
        labels = combine_labels([(o.parsed or {}).get(prompts.LABELS_KEY) for o in outputs])
        stored = {**answers, prompts.LABELS_KEY: labels} if labels else answers
    with transaction.atomic():
        try:
            with transaction.atomic():
                JudgeItemResult.objects.create(
                    run=run,
                    item=item,
                    status=JudgeItemResult.Status.FAILED if errors else JudgeItemResult.Status.OK,
                    answers=None if errors else stored,
                    error="\n".join(errors)[:5000],
                )
        except IntegrityError:
            return  # finalised already (redelivered chunk)
        if not errors and rubric is not None:  # a label judge's output is no rubric annotation
            write_judge_annotation(
                rater=run.config.rater,
                project=run.project,
                item=item,
                answers=answers,
                derived=judge_derived(rubric, answers, exact, metrics),
            )


def combine_labels(per_pass: Sequence[dict[str, str] | None]) -> dict[str, str] | None:
    """Classifier labels over passes: the majority per classifier (ties: the earliest pass)."""
    present = [p for p in per_pass if p]
    if not present:
        return None
    out = {}
    for key in dict.fromkeys(k for p in present for k in p):
        values = [p[key] for p in present if key in p]
        out[key] = max(values, key=lambda v: (values.count(v), -values.index(v)))
    return out


def maybe_finish(*, run: JudgeRun) -> JudgeRun:
    """running -> done when every item has a result (failed when none succeeded)."""
    counts = dict(run.results.values_list("status").annotate(n=Count("id")))
    finished = sum(counts.values())
    if finished >= run.total:
        ok = counts.get(JudgeItemResult.Status.OK, 0)
        # only a running run ends here: a cancelled one keeps its outcome
        if ok:
            JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.RUNNING).update(
                status=JudgeRun.Status.DONE, finished_at=timezone.now(), message=""
            )
        else:
            jobs.fail(run, "no item could be judged: see the failures")
    return JudgeRun.objects.get(pk=run.pk)
