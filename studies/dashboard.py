"""The reads behind the progress dashboard: where the work stands per stratum of a plan, per
annotator (with quality control and an at-risk flag), and submissions per hour."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db.models import Count, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import TruncHour
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from annotation.models import Assignment, Membership, Project, Rater
from studies.models import AssignmentPlan, PoolSlot, SampleItem

from .quality import consistency_scores, qc_settings

STATUS_KEYS = ("assigned", "in_progress", "submitted", "skipped", "expired")


def status_counts(qs: QuerySet[Assignment], group: str) -> dict[Any, dict[str, int]]:
    out: dict[Any, dict[str, int]] = {}
    for key, status, n in qs.values_list(group, "status").annotate(c=Count("id")).order_by():
        out.setdefault(key, dict.fromkeys(STATUS_KEYS, 0))[status] = n
    return out


def progress_by_stratum(plan: AssignmentPlan) -> list[dict[str, Any]]:
    """Per stratum of the plan's sample: items, places (items x k), and where the work stands."""
    stratum = SampleItem.objects.filter(sample_id=plan.sample_id, item_id=OuterRef("item_id")).values("stratum")[:1]
    by_status = status_counts(Assignment.objects.filter(plan=plan).annotate(stratum=Subquery(stratum)), "stratum")
    items = dict(SampleItem.objects.filter(sample_id=plan.sample_id).values_list("stratum").annotate(c=Count("id")))
    open_slots = dict(
        PoolSlot.objects.filter(plan=plan, state=PoolSlot.State.OPEN)
        .annotate(stratum=Subquery(stratum))
        .values_list("stratum")
        .annotate(c=Count("id"))
        .order_by()
    )
    rows = []
    for name in sorted(items):
        counts = by_status.get(name, dict.fromkeys(STATUS_KEYS, 0))
        rows.append(
            {
                "stratum": name,
                "items": items[name],
                "places": items[name] * plan.k,
                **counts,
                "open_in_pool": open_slots.get(name, 0),
                "percent": round(100 * counts["submitted"] / (items[name] * plan.k)) if items[name] else 0,
            }
        )
    return rows


def progress_by_annotator(project: Project) -> list[dict[str, Any]]:
    """Per annotator: work by status, quality-control results, pause state and an at-risk flag."""
    qc = qc_settings(project)
    by_status = status_counts(
        Assignment.objects.filter(project=project, purpose=Assignment.Purpose.REGULAR), "rater_id"
    )
    qc_rows = {
        r["rater_id"]: r
        for r in Assignment.objects.filter(project=project)
        .values("rater_id")
        .annotate(
            attention_answered=Count("id", filter=Q(purpose="attention", qc_passed__isnull=False)),
            attention_failed=Count("id", filter=Q(purpose="attention", qc_passed=False)),
            gold_answered=Count("id", filter=Q(purpose="gold", qc_passed__isnull=False)),
            gold_correct=Count("id", filter=Q(purpose="gold", qc_passed=True)),
        )
        .order_by()
    }
    consistency = consistency_scores(project)
    members = (
        Membership.objects.filter(project=project, role=Membership.Role.ANNOTATOR)
        .select_related("user__rater")
        .order_by("user__username")
    )
    rows = []
    for m in members:
        rater = getattr(m.user, "rater", None)
        rid = rater.id if rater else None
        counts = by_status.get(rid, dict.fromkeys(STATUS_KEYS, 0))
        q = qc_rows.get(rid, {})
        gold_answered = q.get("gold_answered", 0)
        accuracy = q.get("gold_correct", 0) / gold_answered if gold_answered else None
        cons = consistency.get(rid, {})
        risky_gold = (
            accuracy is not None and gold_answered >= qc["gold_min_answered"] and accuracy < qc["gold_threshold"]
        )

        def risks(m=m, q=q, accuracy=accuracy, cons=cons, risky_gold=risky_gold) -> str:
            """Why the annotator is at risk, in the active language."""
            out = []
            if m.paused_at:
                out.append(_("paused: %(reason)s") % {"reason": m.paused_reason or _("by a researcher")})
            if failed := q.get("attention_failed"):
                out.append(
                    ngettext("%(n)d attention check failed", "%(n)d attention checks failed", failed) % {"n": failed}
                )
            if risky_gold:
                out.append(_("gold accuracy %(share)s") % {"share": f"{accuracy:.0%}"})
            if cons and cons["consistency"] < 0.5:
                out.append(_("consistency %(share)s") % {"share": f"{cons['consistency']:.0%}"})
            return "; ".join(out)

        with translation.override("en"):  # the CSV and the API keep one language
            at_risk = risks()
        attrs = {k: v for k, v in ((rater.attributes if rater else {}) or {}).items() if k != "crowd"}
        rows.append(
            {
                "rater_id": rid,
                "name": rater.name if rater else m.user.get_username(),
                "attributes": attrs,
                **counts,
                "attention_answered": q.get("attention_answered", 0),
                "attention_failed": q.get("attention_failed", 0),
                "gold_answered": gold_answered,
                "gold_accuracy": accuracy,
                "repeats": cons.get("repeats", 0),
                "consistency": cons.get("consistency"),
                "paused": bool(m.paused_at),
                "at_risk": at_risk,
                "at_risk_shown": risks() if at_risk else "",  # the page's words
            }
        )
    return rows


def throughput(project: Project, *, hours: int = 48) -> list[dict[str, Any]]:
    """The people's submissions per hour over the last ``hours`` hours (a judge's are not)."""
    since = timezone.now() - timedelta(hours=hours)
    rows = (
        Assignment.objects.filter(
            project=project, rater__kind=Rater.Kind.HUMAN, status=Assignment.Status.SUBMITTED, submitted_at__gte=since
        )
        .annotate(hour=TruncHour("submitted_at"))
        .values("hour")
        .annotate(n=Count("id"))
        .order_by("hour")
    )
    return [{"hour": r["hour"], "submitted": r["n"]} for r in rows]
