"""Quality control per project, configured in ``Project.options["qc"]``::

    {
      "attention_rate": 0.1,        # one attention check per 10 submitted items
      "attention_pause_after": 2,   # failures that pause the annotator (0 = never)
      "gold_rate": 0.1,             # one gold item per 10 submitted items
      "gold_threshold": 0.8,        # accuracy below this marks the annotator at risk
      "gold_min_answered": 3,       # ... once they answered this many gold items
      "gold_pause": false,          # and pauses them when true
      "gold_tolerance": 0,          # ordinal answers within this distance count as correct
      "repeat_rate": 0.05,          # re-show an item they did, for within-annotator consistency
      "min_seconds": 5,             # refuse submissions faster than this
      "rationale_question": "rationale", "rationale_min_chars": 20
    }

Attention and gold items are items with ``meta.qc`` = "attention" / "gold" and their known
answers as flat meta keys ``expected.<question id>`` (a CSV column ``meta.expected.q1``);
they are never sampled or pooled. They
are injected into an annotator's queue at the configured rates (counted against the items
they have submitted, so checks arrive spread through the work) and scored at submit time
against the same rubric answers; the result is ``Assignment.qc_passed``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from typing import Any

from django.core.cache import cache
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.assigning import draw_presentation
from annotation.models import Annotation, Assignment, Item, Membership, Project, Rater
from core.errors import DomainError

QC_PURPOSES = (Assignment.Purpose.ATTENTION, Assignment.Purpose.GOLD, Assignment.Purpose.REPEAT)
DEFAULTS: dict[str, Any] = {
    "attention_rate": 0.0,
    "attention_pause_after": 0,
    "gold_rate": 0.0,
    "gold_threshold": 0.8,
    "gold_min_answered": 3,
    "gold_pause": False,
    "gold_tolerance": 0,
    "repeat_rate": 0.0,
    "min_seconds": 0,
    "rationale_question": "",
    "rationale_min_chars": 0,
}


def qc_settings(project: Project) -> dict[str, Any]:
    return {**DEFAULTS, **(project.options.get("qc") or {})}


def qc_enabled(project: Project) -> bool:
    return bool(project.options.get("qc"))


def clean_qc_settings(values: Mapping[str, Any]) -> dict[str, Any]:
    """The QC settings ``values`` give, checked and typed (keys of :data:`DEFAULTS`; unknown keys
    and empty values are left out). Raises DomainError on a bad value; writes nothing."""
    clean: dict[str, Any] = {}
    for key, default in DEFAULTS.items():
        if key not in values or values[key] in (None, ""):
            continue
        raw = values[key]
        try:
            if isinstance(default, bool):
                clean[key] = bool(raw) and raw not in ("0", "false", "off")
            elif isinstance(default, str):
                clean[key] = str(raw).strip()[:100]
            elif key.endswith("_rate") or key == "gold_threshold":
                clean[key] = float(raw)
                if not 0 <= clean[key] <= 1:
                    raise DomainError(f"{key.replace('_', ' ')} must be between 0 and 1")
            else:
                clean[key] = int(raw)
                if clean[key] < 0:
                    raise DomainError(f"{key.replace('_', ' ')} cannot be negative")
        except ValueError:
            raise DomainError(f"{key.replace('_', ' ')}: {raw!r} is not a number") from None
    return clean


def set_qc_settings(*, project: Project, values: dict[str, Any]) -> Project:
    clean = clean_qc_settings(values)
    options = dict(project.options)
    options["qc"] = {k: v for k, v in clean.items() if v != DEFAULTS[k] or k == "gold_threshold"}
    if not any(v for k, v in options["qc"].items() if k != "gold_threshold"):
        options.pop("qc")
    Project.objects.filter(pk=project.pk).update(options=options)
    project.options = options
    return project


# --------------------------------------------------------------------------- at submit time
def check_submission(
    *, project: Project, assignment: Assignment, answers: dict[str, Any], duration_ms: int | None
) -> None:
    """Refuse a first submission that is too fast or lacks the required rationale."""
    qc = qc_settings(project)
    min_s = qc["min_seconds"]
    if min_s:
        if assignment.opened_at is not None:
            elapsed = (timezone.now() - assignment.opened_at).total_seconds()
        else:
            elapsed = (duration_ms or 0) / 1000
        if elapsed < min_s:
            raise DomainError(
                _(
                    "That was too fast (%(elapsed).0f s): please take at least %(min)s seconds to look at each "
                    "item before submitting."
                )
                % {"elapsed": elapsed, "min": min_s},
                errors={"__all__": _("minimum time per item is %(min)s s") % {"min": min_s}},
            )
    question, min_chars = qc["rationale_question"], qc["rationale_min_chars"]
    if question and min_chars:
        text = answers.get(question)
        if not isinstance(text, str) or len(text.strip()) < min_chars:
            raise DomainError(
                _("Please explain your rating in at least %(n)s characters.") % {"n": min_chars},
                errors={question: _("a rationale of at least %(n)s characters is required") % {"n": min_chars}},
            )


def _matches(given: Any, expected: Any, tolerance: int) -> bool:
    if isinstance(expected, list):
        return sorted(map(str, given or [])) == sorted(map(str, expected))
    if given == expected or str(given) == str(expected):
        return True
    if tolerance:
        try:
            return abs(float(given) - float(expected)) <= tolerance
        except (TypeError, ValueError):
            return False
    return False


def expected_answers(item: Item) -> dict[str, Any]:
    meta = item.meta or {}
    return {k[len("expected.") :]: v for k, v in meta.items() if k.startswith("expected.") and len(k) > 9}


def score(*, item: Item, answers: dict[str, Any], derived: dict[str, Any], tolerance: int = 0) -> bool | None:
    expected = expected_answers(item)
    if not expected:
        return None
    return all(
        _matches(answers.get(q, derived.get(q)), value, tolerance if item.meta.get("qc") == "gold" else 0)
        for q, value in expected.items()
    )


def record_submission(*, assignment: Assignment, annotation: Annotation) -> bool | None:
    """Score an attention or gold submission; pause the annotator when the project says so."""
    if assignment.purpose not in (Assignment.Purpose.ATTENTION, Assignment.Purpose.GOLD):
        return None
    project = assignment.project
    qc = qc_settings(project)
    passed = score(
        item=assignment.item,
        answers=annotation.answers,
        derived=annotation.derived,
        tolerance=int(qc["gold_tolerance"]),
    )
    Assignment.objects.filter(pk=assignment.pk).update(qc_passed=passed)
    assignment.qc_passed = passed
    if passed is False:
        stats = rater_qc(assignment.rater, project)
        reason = ""
        if (
            assignment.purpose == Assignment.Purpose.ATTENTION
            and qc["attention_pause_after"]
            and stats["attention_failed"] >= qc["attention_pause_after"]
        ):
            reason = f"failed {stats['attention_failed']} attention checks"
        elif (
            assignment.purpose == Assignment.Purpose.GOLD
            and qc["gold_pause"]
            and stats["gold_answered"] >= qc["gold_min_answered"]
            and stats["gold_accuracy"] < qc["gold_threshold"]
        ):
            reason = f"gold accuracy {stats['gold_accuracy']:.0%} below {qc['gold_threshold']:.0%}"
        if reason:
            pause(project=project, rater=assignment.rater, reason=reason)
    return passed


# --------------------------------------------------------------------------- pausing
def pause(*, project: Project, rater: Rater, reason: str) -> int:
    return Membership.objects.filter(
        project=project, user_id=rater.user_id, role=Membership.Role.ANNOTATOR, paused_at__isnull=True
    ).update(paused_at=timezone.now(), paused_reason=reason[:300])


def resume(*, project: Project, rater: Rater) -> int:
    return Membership.objects.filter(project=project, user_id=rater.user_id, role=Membership.Role.ANNOTATOR).update(
        paused_at=None, paused_reason=""
    )


def pause_reason(rater: Rater, project: Project) -> str | None:
    row = (
        Membership.objects.filter(
            project=project, user_id=rater.user_id, role=Membership.Role.ANNOTATOR, paused_at__isnull=False
        )
        .values_list("paused_reason", flat=True)
        .first()
    )
    return None if row is None else (row or "paused by a researcher")


# --------------------------------------------------------------------------- injection
def _qc_item_ids(project: Project, kind: str) -> list[int]:
    key = f"hv:qcitems:{project.id}:{kind}"
    ids = cache.get(key)
    if ids is None:
        ids = list(Item.objects.filter(project=project, meta__qc=kind).order_by("id").values_list("id", flat=True))
        cache.set(key, ids, 60)
    return ids


def maybe_inject(*, rater: Rater, project: Project) -> Assignment | None:
    """Add one attention / gold / repeat assignment at the head of the queue when the annotator's
    submitted work calls for one at the project's rates (and none is already waiting)."""
    qc = qc_settings(project)
    rates = {
        Assignment.Purpose.ATTENTION: qc["attention_rate"],
        Assignment.Purpose.GOLD: qc["gold_rate"],
        Assignment.Purpose.REPEAT: qc["repeat_rate"],
    }
    if not any(rates.values()):
        return None
    counts = dict(
        Assignment.objects.filter(project=project, rater=rater)
        .exclude(status=Assignment.Status.EXPIRED)
        .values_list("purpose")
        .annotate(c=Count("id", filter=~Q(purpose=Assignment.Purpose.REGULAR) | Q(status=Assignment.Status.SUBMITTED)))
    )
    done = counts.get(Assignment.Purpose.REGULAR, 0)
    for purpose, rate in rates.items():
        if not rate or counts.get(purpose, 0) >= math.floor(done * rate):
            continue
        made = _inject(rater=rater, project=project, purpose=purpose)
        if made is not None:
            return made
    return None


def _inject(*, rater: Rater, project: Project, purpose: str) -> Assignment | None:
    mine = Assignment.objects.filter(project=project, rater=rater, purpose=purpose)
    if purpose == Assignment.Purpose.REPEAT:
        source = (
            Assignment.objects.filter(
                project=project, rater=rater, purpose=Assignment.Purpose.REGULAR, status=Assignment.Status.SUBMITTED
            )
            .exclude(item_id__in=mine.values("item_id"))
            .order_by("?")
            .values_list("item_id", "presentation")
            .first()
        )
        if source is None:
            return None
        item_id, presentation = source
    else:
        ids = _qc_item_ids(project, purpose)
        if not ids:
            return None
        used = set(mine.values_list("item_id", flat=True))
        fresh = [i for i in ids if i not in used] or ids
        item_id = random.choice(fresh)
        presentation = draw_presentation(project, project.rubric_version.parsed(), random.Random())
    with transaction.atomic():
        return Assignment.objects.create(
            project=project, item_id=item_id, rater=rater, purpose=purpose, position=0, presentation=presentation
        )


# --------------------------------------------------------------------------- reading
def rater_qc(rater: Rater, project: Project) -> dict[str, Any]:
    row = Assignment.objects.filter(project=project, rater=rater).aggregate(
        attention_answered=Count("id", filter=Q(purpose="attention", qc_passed__isnull=False)),
        attention_failed=Count("id", filter=Q(purpose="attention", qc_passed=False)),
        gold_answered=Count("id", filter=Q(purpose="gold", qc_passed__isnull=False)),
        gold_correct=Count("id", filter=Q(purpose="gold", qc_passed=True)),
    )
    row["gold_accuracy"] = row["gold_correct"] / row["gold_answered"] if row["gold_answered"] else None
    return row


def consistency_scores(project: Project) -> dict[int, dict[str, Any]]:
    """Per annotator: the share of rated questions answered the same way on a repeated item as
    the first time (text answers excluded), averaged over their repeats."""
    rubric = project.rubric_version.parsed()
    scored = {q.id for q in rubric.questions if q.type != "text"}
    repeats = Annotation.objects.filter(assignment__project=project, assignment__purpose=Assignment.Purpose.REPEAT)
    # the repeated items read first, as a list: as a subquery PostgreSQL planned a nested loop
    # over every annotation of a large project (minutes on the demo studies)
    repeated = list(repeats.values_list("item_id", flat=True).distinct())
    originals = {
        (a.item_id, a.rater_id): a.answers
        for a in Annotation.objects.filter(
            assignment__project=project,
            assignment__purpose=Assignment.Purpose.REGULAR,
            item_id__in=repeated,
        ).only("item_id", "rater_id", "answers")
    }
    out: dict[int, list[float]] = {}
    for rep in repeats.only("item_id", "rater_id", "answers"):
        first = originals.get((rep.item_id, rep.rater_id))
        if first is None:
            continue
        keys = [k for k in scored if k in first or k in rep.answers]
        if not keys:
            continue
        same = sum(1 for k in keys if first.get(k) == rep.answers.get(k))
        out.setdefault(rep.rater_id, []).append(same / len(keys))
    return {rid: {"repeats": len(v), "consistency": sum(v) / len(v)} for rid, v in out.items()}
