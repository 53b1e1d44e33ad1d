"""The item browser's reads: a project's items searched by external id and text fields, filtered
by stratum, work status, curation decision and design sample, with counts per status.

An item's *status* is read from the rows the project's assignment model writes (the default
strategy's assignments, or a plan's assignments and pool slots, ``studies/``):

- ``unassigned``: no work is waiting for it and nobody submitted it (never handed out, or every
  assignment was skipped or expired);
- ``assigned``: work waits for it (an assignment not yet opened, or an open place in an active
  plan's pool) and nobody has opened or submitted it;
- ``in_progress``: someone opened or submitted it, and work still waits for it;
- ``complete``: submitted at least once and no work waits for it.

The same four conditions serve the filter (in SQL) and the rows of a page (in Python), so a row
always shows the status it was filtered by."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Exists, OuterRef, Q, QuerySet, TextField
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotation.models import Assignment, Item, Project
from benchmarks.base import STRATA_KEYS
from core.errors import DomainError
from studies.models import AssignmentPlan, PoolSlot, Sample, SampleItem

from .models import STATUS_CHOICES as DECISION_CHOICES

ITEM_STATUSES: dict[str, Any] = {
    "unassigned": gettext_lazy("Unassigned"),
    "assigned": gettext_lazy("Assigned"),
    "in_progress": gettext_lazy("In progress"),
    "complete": gettext_lazy("Complete"),
}
DECISIONS: dict[str, str] = dict(DECISION_CHOICES)
#: meta keys are discovered from this many items (a project's items share their keys)
META_SAMPLE = 500
#: at most this many values are offered per stratum key
MAX_VALUES = 200
MAX_QUERY = 200
_META_KEY = re.compile(r"^[A-Za-z0-9_-]{1,100}$")
_OPEN = (Assignment.Status.ASSIGNED, Assignment.Status.IN_PROGRESS)
_STARTED = (Assignment.Status.IN_PROGRESS, Assignment.Status.SUBMITTED)


@dataclass(frozen=True)
class ItemFilters:
    """What the browser was asked for; "" means no filter."""

    q: str = ""
    stratum_key: str = ""
    stratum_value: str = ""
    status: str = ""
    decision: str = ""
    sample: str = ""  # "in" (in any sample), "out" (in none), or a sample id

    @classmethod
    def from_query(cls, query: Mapping[str, Any], project: Project) -> ItemFilters:
        """Read the page's or API's query parameters, refusing values that name nothing
        (a :class:`DomainError` the page shows and the API answers with 400)."""
        q = str(query.get("q") or "").strip()
        if len(q) > MAX_QUERY or "\x00" in q:
            raise DomainError(_("the search text is too long (at most %(n)d characters)") % {"n": MAX_QUERY})
        key, value = "", ""
        stratum = str(query.get("stratum") or "").strip()
        if stratum:
            key, sep, value = stratum.partition("=")
            key = key.strip().removeprefix("meta.")
            if not sep or not _META_KEY.match(key):
                raise DomainError(_("a stratum is key=value, e.g. country=China"))
            value = value.strip()
        status = str(query.get("status") or "")
        if status and status not in ITEM_STATUSES:
            raise DomainError(
                _("unknown status %(s)r: use one of %(all)s") % {"s": status, "all": ", ".join(ITEM_STATUSES)}
            )
        decision = str(query.get("decision") or "")
        if decision and decision not in DECISIONS:
            raise DomainError(
                _("unknown decision %(s)r: use one of %(all)s") % {"s": decision, "all": ", ".join(DECISIONS)}
            )
        sample = str(query.get("sample") or "")
        if (
            sample
            and sample not in ("in", "out")
            # ASCII digits only: "²" passes str.isdigit but not int()
            and (
                not (sample.isascii() and sample.isdigit())
                or not Sample.objects.filter(project=project, pk=int(sample[:18])).exists()
            )
        ):
            raise DomainError(_("no sample %(s)r in this project") % {"s": sample})
        return cls(q=q, stratum_key=key, stratum_value=value, status=status, decision=decision, sample=sample)

    @property
    def stratum(self) -> str:
        return f"{self.stratum_key}={self.stratum_value}" if self.stratum_key else ""

    def as_query(self) -> dict[str, str]:
        """The filters as query parameters (for the links of other pages of the same list)."""
        raw = {
            "q": self.q,
            "stratum": self.stratum,
            "status": self.status,
            "decision": self.decision,
            "sample": self.sample,
        }
        return {k: v for k, v in raw.items() if v}


def _status_flags() -> dict[str, Any]:
    """Per item: does work wait for it (an open assignment, an open place in an active plan's
    pool), has anyone opened or submitted it, has anyone submitted it."""
    live = Assignment.objects.filter(item=OuterRef("pk"))
    return {
        "_open": Exists(live.filter(status__in=_OPEN)),
        "_pool": Exists(
            PoolSlot.objects.filter(
                item=OuterRef("pk"), state=PoolSlot.State.OPEN, plan__status=AssignmentPlan.Status.ACTIVE
            )
        ),
        "_started": Exists(live.filter(status__in=_STARTED)),
        "_submitted": Exists(live.filter(status=Assignment.Status.SUBMITTED)),
    }


def _status_q(status: str) -> Q:
    waiting = Q(_open=True) | Q(_pool=True)
    return {
        "unassigned": ~waiting & Q(_submitted=False),
        "assigned": waiting & Q(_started=False),
        "in_progress": waiting & Q(_started=True),
        "complete": ~waiting & Q(_submitted=True),
    }[status]


def status_of(*, open_work: bool, started: bool, submitted: bool) -> str:
    """The status of one item from the same three facts the filter reads (module docstring)."""
    if open_work:
        return "in_progress" if started else "assigned"
    return "complete" if submitted else "unassigned"


def text_fields(project: Project) -> list[str]:
    """The preset's fields a search reads: text, long text, lists and objects (never image
    hashes or numbers)."""
    return [f["name"] for f in project.preset.item_fields if f["type"] not in ("image", "number")]


def meta_keys(project: Project) -> list[str]:
    """The ``meta`` keys of the project's items (from its first items; quality-control keys
    left out: they are not strata)."""
    metas = Item.objects.filter(project=project).order_by("id").values_list("meta", flat=True)[:META_SAMPLE]
    keys = {k for m in metas if isinstance(m, dict) for k in m}
    return sorted(k for k in keys if _META_KEY.match(k) and k != "qc" and not k.startswith("expected."))


def stratum_keys(project: Project) -> list[str]:
    """The strata a project's items can be grouped by: the strata columns some item fills, then
    the meta keys."""
    items = Item.objects.filter(project=project)
    used = [k for k in STRATA_KEYS if items.exclude(**{k: ""}).exists()]
    return used + [k for k in meta_keys(project) if k not in STRATA_KEYS]


def _column(qs: QuerySet[Item], key: str) -> tuple[QuerySet[Item], str]:
    """The queryset and the column holding ``key``: a strata column by name, any other key read
    from ``Item.meta`` as text."""
    if key in STRATA_KEYS:
        return qs, key
    # as text: compared with "" on SQLite, a bare JSON key transform reads "" as JSON ("malformed JSON")
    return qs.annotate(_stratum=Cast(KeyTextTransform(key, "meta"), output_field=TextField())), "_stratum"


def stratum_options(project: Project) -> list[dict[str, Any]]:
    """Per stratum key, its values among the project's items (at most ``MAX_VALUES``), with
    counts: ``[{"key": "country", "values": [("China", 12), ...]}]``."""
    out = []
    for key in stratum_keys(project):
        qs, column = _column(Item.objects.filter(project=project), key)
        rows = (
            qs.exclude(**{column: ""})
            .exclude(**{f"{column}__isnull": True})
            .values_list(column)
            .annotate(n=Count("id"))
            .order_by(column)[:MAX_VALUES]
        )
        values = [(str(v), n) for v, n in rows]
        if values:
            out.append({"key": key, "values": values})
    return out


def browse_items(project: Project, filters: ItemFilters) -> QuerySet[Item]:
    """The project's items matching ``filters``, in id order (status flags annotated)."""
    qs = Item.objects.filter(project=project).annotate(**_status_flags())
    if filters.q:
        match = Q(external_id__icontains=filters.q)
        for name in text_fields(project):
            match |= Q(**{f"data__{name}__icontains": filters.q})
        qs = qs.filter(match)
    if filters.stratum_key:
        qs, column = _column(qs, filters.stratum_key)
        qs = qs.filter(**{column: filters.stratum_value})
    if filters.status:
        qs = qs.filter(_status_q(filters.status))
    if filters.decision == "pending":
        qs = qs.filter(Q(decision__isnull=True) | Q(decision__status="pending"))
    elif filters.decision:
        qs = qs.filter(decision__status=filters.decision)
    if filters.sample:
        in_sample = Exists(SampleItem.objects.filter(item=OuterRef("pk")))
        if filters.sample == "in":
            qs = qs.filter(in_sample)
        elif filters.sample == "out":
            qs = qs.filter(~in_sample)
        else:
            qs = qs.filter(Exists(SampleItem.objects.filter(item=OuterRef("pk"), sample_id=int(filters.sample))))
    return qs.select_related("decision").order_by("id")


def status_counts(items: QuerySet[Item]) -> dict[str, int]:
    """How many of ``items`` (from :func:`browse_items`) are in each status: one query."""
    return items.order_by().aggregate(**{s: Count("id", filter=_status_q(s)) for s in ITEM_STATUSES})


def item_rows(items: list[Item]) -> list[dict[str, Any]]:
    """A page of items as table rows: status, decision, strata and their assignment counts
    (two grouped queries for the page, never one per item)."""
    ids = [it.id for it in items]
    by_status: dict[int, Counter] = defaultdict(Counter)
    for item_id, status, n in (
        Assignment.objects.filter(item_id__in=ids).values_list("item_id", "status").annotate(n=Count("id"))
    ):
        by_status[item_id][status] += n
    samples: dict[int, list[str]] = defaultdict(list)
    for item_id, name in SampleItem.objects.filter(item_id__in=ids).values_list("item_id", "sample__name"):
        samples[item_id].append(name)
    rows = []
    for it in items:
        counts = by_status[it.id]
        decision = getattr(it, "decision", None)
        status = status_of(
            open_work=bool(getattr(it, "_open", False) or getattr(it, "_pool", False)),
            started=bool(getattr(it, "_started", False)),
            submitted=bool(getattr(it, "_submitted", False)),
        )
        decided = decision.status if decision is not None else "pending"
        rows.append(
            {
                "item": it,
                "status": status,
                "status_label": ITEM_STATUSES[status],
                "decision": decided,
                "decision_label": DECISIONS.get(decided, decided),
                "decided": decision is not None,
                "strata": [(k, getattr(it, k)) for k in STRATA_KEYS if getattr(it, k)]
                + [(k, v) for k, v in sorted((it.meta or {}).items()) if k != "qc" and not k.startswith("expected.")],
                "submitted": counts[Assignment.Status.SUBMITTED],
                "waiting": counts[Assignment.Status.ASSIGNED] + counts[Assignment.Status.IN_PROGRESS],
                "skipped": counts[Assignment.Status.SKIPPED],
                "samples": sorted(samples[it.id]),
            }
        )
    return rows


def project_samples(project: Project) -> QuerySet[Sample]:
    return Sample.objects.filter(project=project).order_by("name", "id").only("id", "name")
