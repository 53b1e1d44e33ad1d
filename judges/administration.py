"""Administration of a judge after it is made: its prices per 1M tokens (the runs' estimated
cost), its short label (what tables call it), hiding it from the reports, and deleting it with
everything it wrote.

``check_prices`` is also how a new judge's prices are checked (``judges/configuration.py``) and
how the API refuses a bad price before anything changes (``judges/api.py``)."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from annotation.models import Annotation, Assignment, Rater
from core.errors import DomainError

from . import labels
from .models import JudgeConfig, JudgeItemResult, JudgeOutput, JudgeRun

PRICE_STEP = Decimal("0.000001")  # the prices' stored precision (JudgeConfig: 6 decimal places)
MAX_PRICE = Decimal("1000000")


def check_prices(prompt: Any, completion: Any) -> tuple[Decimal | None, Decimal | None]:
    """Prices per 1M prompt / completion tokens: both (numbers from 0 to under 1,000,000, at
    most 6 decimal places) or neither; a ``DomainError`` saying what is wrong otherwise."""
    if (prompt is None) != (completion is None):
        raise DomainError("give both prices per 1M tokens (prompt and completion), or neither")
    if prompt is None:
        return None, None
    out = []
    for label, value in (("prompt", prompt), ("completion", completion)):
        if isinstance(value, bool) or not isinstance(value, (Decimal, int, float, str)):
            raise DomainError(f"the {label} price per 1M tokens must be a number")
        try:
            d = Decimal(str(value).strip())
        except InvalidOperation:
            raise DomainError(f"the {label} price per 1M tokens must be a number") from None
        if not d.is_finite() or not Decimal(0) <= d < MAX_PRICE:
            raise DomainError(f"the {label} price per 1M tokens must be from 0 to under {MAX_PRICE:,}")
        if d != d.quantize(PRICE_STEP):
            raise DomainError(f"the {label} price per 1M tokens has at most 6 decimal places")
        out.append(d.quantize(PRICE_STEP))
    return out[0], out[1]


def set_judge_prices(*, config: JudgeConfig, prompt: Any, completion: Any) -> JudgeConfig:
    """Set (or clear, with both None) what the judge's model costs per 1M tokens; every run's
    estimated cost follows (it is computed when read)."""
    prompt, completion = check_prices(prompt, completion)
    JudgeConfig.objects.filter(pk=config.pk).update(price_prompt_per_1m=prompt, price_completion_per_1m=completion)
    config.price_prompt_per_1m, config.price_completion_per_1m = prompt, completion
    return config


def check_judge_short_label(*, config: JudgeConfig, label: Any) -> str:
    """The label, checked (:func:`.labels.check_short_label`) against the project's other judges."""
    if not isinstance(label, str):
        raise DomainError("a judge's short label is text")
    taken = set(
        JudgeConfig.objects.filter(project_id=config.project_id)
        .exclude(pk=config.pk)
        .values_list("short_label", flat=True)
    )
    return labels.check_short_label(label, taken)


def set_judge_short_label(*, config: JudgeConfig, label: Any) -> JudgeConfig:
    """Set what tables and pages call the judge (issue 35); the stored reports show it from
    their next computation."""
    label = check_judge_short_label(config=config, label=label)
    JudgeConfig.objects.filter(pk=config.pk).update(short_label=label)
    config.short_label = label
    return config


def set_judge_hidden(*, config: JudgeConfig, hidden: bool) -> JudgeConfig:
    """Hide the judge (its rater leaves the agreement report, the validation tables, curation
    and exports; its runs leave the judges page) or show it again. Nothing is deleted."""
    if not isinstance(hidden, bool):
        raise DomainError("hidden is true or false")
    JudgeConfig.objects.filter(pk=config.pk).update(hidden=hidden)
    config.hidden = hidden
    return config


def delete_blockers(config: JudgeConfig) -> list[str]:
    """Why the judge cannot be deleted now (empty: it can): a run still queued or running (its
    workers would write to it), or an ensemble it is a member of (the ensemble's runs read it)."""
    reasons = []
    pending = list(
        config.runs.filter(status__in=[JudgeRun.Status.QUEUED, JudgeRun.Status.RUNNING])
        .order_by("id")
        .values_list("id", flat=True)
    )
    if pending:
        reasons.append(
            ngettext(
                "run %(runs)s is still queued or running: cancel it first",
                "runs %(runs)s are still queued or running: cancel them first",
                len(pending),
            )
            % {"runs": ", ".join(map(str, pending))}
        )
    ensembles = list(config.ensembles.order_by("name").values_list("name", flat=True))
    if ensembles:
        reasons.append(
            ngettext(
                "it is a member of the ensemble %(names)s: delete that first",
                "it is a member of the ensembles %(names)s: delete those first",
                len(ensembles),
            )
            % {"names": ", ".join(ensembles)}
        )
    return reasons


def delete_judge(*, config: JudgeConfig) -> dict[str, int]:
    """Delete the judge and everything it made, in one transaction: its runs with their outputs
    and results, its rater's annotations and assignments (the ratings every report and export
    reads), and the rater. Refused, with nothing deleted, for the reasons of
    :func:`delete_blockers`. Returns what was deleted (runs, outputs, annotations)."""
    with transaction.atomic():
        locked = JudgeConfig.objects.select_for_update().filter(pk=config.pk).first()
        if locked is None:
            raise DomainError("no such judge", code="not_found")
        reasons = delete_blockers(locked)
        if reasons:
            raise DomainError(
                _("judge %(name)r cannot be deleted: %(reasons)s")
                % {"name": locked.name, "reasons": "; ".join(reasons)},
                code="conflict",
            )
        rater_id = locked.rater_id
        outputs = JudgeOutput.objects.filter(run__config=locked)
        counts = {
            "runs": locked.runs.count(),
            "outputs": outputs.count(),
            "annotations": Annotation.objects.filter(rater_id=rater_id).count(),
        }
        # leaves first, so no cascade has to load rows into memory
        outputs.delete()
        JudgeItemResult.objects.filter(run__config=locked).delete()
        JudgeRun.objects.filter(config=locked).delete()
        locked.delete()  # the rater is PROTECTed while its judge exists
        Annotation.objects.filter(rater_id=rater_id).delete()
        Assignment.objects.filter(rater_id=rater_id).delete()
        Rater.objects.filter(pk=rater_id).delete()
    return counts
