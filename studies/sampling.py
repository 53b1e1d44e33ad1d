"""Stratified samples of a project's items.

Strata are the cross product of one or several item keys: the indexed strata columns
(country, region, generator, category, dimension) or any key of ``Item.meta``. Allocation is
equal per stratum or proportional to stratum size, for a total size (largest-remainder
rounding, so the quotas sum exactly to the total) or a fixed size per stratum. Within a
stratum the draw is a seeded simple random sample without replacement, seeded per stratum,
so the same seed over the same items gives the same sample. Strata holding fewer items than
asked are drawn whole and reported as short; nothing is silently dropped.

:func:`plan_sample` computes everything without writing (the preview); :func:`draw_sample`
stores a :class:`~annotation.models.Sample` with its items.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import TextField
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast
from django.utils import timezone

from annotation.bulk import insert_rows
from annotation.models import Item, Project
from benchmarks.base import STRATA_KEYS
from core.errors import DomainError
from studies.models import Sample, SampleItem

BLANK = "(blank)"
QC_META_KEY = "qc"  # items with meta.qc = attention | gold are quality-control items, never sampled


@dataclass
class StratumCount:
    values: tuple[str, ...]
    available: int
    asked: int
    drawn: int

    @property
    def label(self) -> str:
        return " / ".join(v or BLANK for v in self.values) if self.values else "(all items)"

    @property
    def short(self) -> int:
        return self.asked - self.drawn


@dataclass
class SamplePlan:
    strata_keys: list[str]
    allocation: str
    total_size: int | None
    per_stratum: int | None
    seed: int
    strata: list[StratumCount] = field(default_factory=list)
    item_ids: dict[tuple[str, ...], list[int]] = field(default_factory=dict)
    population: int = 0

    @property
    def total_asked(self) -> int:
        return sum(s.asked for s in self.strata)

    @property
    def total_drawn(self) -> int:
        return sum(s.drawn for s in self.strata)

    @property
    def short_strata(self) -> list[StratumCount]:
        return [s for s in self.strata if s.short > 0]

    def report(self) -> dict[str, Any]:
        return {
            "population": self.population,
            "total_asked": self.total_asked,
            "total_drawn": self.total_drawn,
            "strata": [
                {
                    "values": list(s.values),
                    "label": s.label,
                    "available": s.available,
                    "asked": s.asked,
                    "drawn": s.drawn,
                    "short": s.short,
                }
                for s in self.strata
            ],
            "short": [
                f"stratum {s.label}: {s.available} item(s) available, {s.asked} asked" for s in self.short_strata
            ],
        }


def metadata_columns(keys: list[str]) -> tuple[list[str], dict[str, Cast]]:
    """Query columns for item metadata keys: a strata column by name, any other key read from
    ``Item.meta`` as text under an alias. Returns (column names, annotations to add). Cast to
    text, so that a filter compares text on every database (on SQLite a bare key transform reads
    the value compared with as JSON: ``"China"`` or ``""`` is "malformed JSON")."""
    columns: list[str] = []
    annotations: dict[str, Cast] = {}
    for key in keys:
        if key in STRATA_KEYS:
            columns.append(key)
        else:
            alias = f"_m_{len(annotations)}"
            annotations[alias] = Cast(KeyTextTransform(key, "meta"), output_field=TextField())
            columns.append(alias)
    return columns, annotations


def _valid_keys(strata_keys: list[str]) -> list[str]:
    keys = []
    for raw in strata_keys:
        key = (raw or "").strip()
        if not key:
            continue
        key = key.removeprefix("meta.")
        if not key.replace("_", "").replace("-", "").isalnum() or len(key) > 100:
            raise DomainError(f"invalid stratum key {raw!r}: use letters, digits, - and _")
        if key in keys:
            raise DomainError(f"stratum key {key!r} given twice")
        keys.append(key)
    return keys


def largest_remainder(total: int, weights: list[int], *, tie_order: list[int]) -> list[int]:
    """Integer quotas proportional to ``weights`` summing exactly to ``total`` (Hamilton /
    largest-remainder method). Ties between equal remainders go by ``tie_order`` (a seeded
    permutation of the indices) so that no stratum is favoured by its name."""
    weight_sum = sum(weights)
    if total <= 0 or weight_sum <= 0:
        return [0] * len(weights)
    exact = [Fraction(total * w, weight_sum) for w in weights]
    quotas = [int(e) for e in exact]
    left = total - sum(quotas)
    rank = {idx: pos for pos, idx in enumerate(tie_order)}
    by_remainder = sorted(range(len(weights)), key=lambda i: (-(exact[i] - quotas[i]), rank[i]))
    for i in by_remainder[:left]:
        quotas[i] += 1
    return quotas


def _stratum_rng(seed: int, values: tuple[str, ...]) -> random.Random:
    digest = hashlib.sha256(repr((int(seed), values)).encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def plan_sample(
    *,
    project: Project,
    strata_keys: list[str],
    allocation: str = Sample.Allocation.EQUAL,
    total_size: int | None = None,
    per_stratum: int | None = None,
    seed: int = 0,
) -> SamplePlan:
    """The sample these parameters give (counts per stratum and the chosen item ids), without
    writing anything: the preview, and the first half of :func:`draw_sample`."""
    keys = _valid_keys(list(strata_keys or []))
    if allocation not in Sample.Allocation.values:
        raise DomainError(f"unknown allocation {allocation!r}: use equal or proportional")
    if (total_size is None) == (per_stratum is None):
        raise DomainError("give either a total sample size or a size per stratum (not both)")
    if total_size is not None and total_size < 1:
        raise DomainError("the total sample size must be at least 1")
    if per_stratum is not None and per_stratum < 1:
        raise DomainError("the size per stratum must be at least 1")
    if per_stratum is not None and allocation == Sample.Allocation.PROPORTIONAL:
        raise DomainError("a size per stratum means equal allocation; give a total size for proportional")

    qs = Item.objects.filter(project=project)
    columns, annotations = metadata_columns(keys)
    annotations["_qc"] = KeyTextTransform(QC_META_KEY, "meta")
    qs = qs.annotate(**annotations)
    groups: dict[tuple[str, ...], list[int]] = {}
    population = 0
    for row in qs.order_by("id").values_list("id", "_qc", *columns).iterator(chunk_size=20_000):
        if row[1]:
            continue
        population += 1
        values = tuple("" if v is None else str(v) for v in row[2:])
        groups.setdefault(values, []).append(row[0])
    if not groups:
        raise DomainError("the project has no items to sample from")
    order = sorted(groups)
    tie_order = list(range(len(order)))
    random.Random(int(seed)).shuffle(tie_order)
    sizes = [len(groups[v]) for v in order]
    if per_stratum is not None:
        asked = [per_stratum] * len(order)
    elif allocation == Sample.Allocation.EQUAL:
        asked = largest_remainder(total_size, [1] * len(order), tie_order=tie_order)
    else:
        asked = largest_remainder(total_size, sizes, tie_order=tie_order)
    plan = SamplePlan(
        strata_keys=keys,
        allocation=allocation,
        total_size=total_size,
        per_stratum=per_stratum,
        seed=int(seed),
        population=population,
    )
    for values, n_asked, available in zip(order, asked, sizes, strict=True):
        ids = groups[values]
        take = min(n_asked, available)
        chosen = sorted(_stratum_rng(seed, values).sample(ids, take)) if take < available else list(ids)
        plan.item_ids[values] = chosen
        plan.strata.append(StratumCount(values=values, available=available, asked=n_asked, drawn=take))
    return plan


def draw_sample(
    *,
    project: Project,
    name: str,
    strata_keys: list[str],
    allocation: str = Sample.Allocation.EQUAL,
    total_size: int | None = None,
    per_stratum: int | None = None,
    seed: int = 0,
    created_by: AbstractBaseUser | None = None,
) -> Sample:
    """Draw and store a sample (its parameters, per-stratum report and items) in one transaction."""
    plan = plan_sample(
        project=project,
        strata_keys=strata_keys,
        allocation=allocation,
        total_size=total_size,
        per_stratum=per_stratum,
        seed=seed,
    )
    name = (name or "").strip() or f"sample {timezone.now():%Y-%m-%d %H:%M}"
    with transaction.atomic():
        sample = Sample.objects.create(
            project=project,
            name=name[:200],
            strata_keys=plan.strata_keys,
            allocation=allocation,
            total_size=total_size,
            per_stratum=per_stratum,
            seed=int(seed),
            report=plan.report(),
            created_by=created_by if created_by is not None and created_by.is_authenticated else None,
        )
        insert_rows(
            SampleItem,
            ["sample", "item", "stratum"],
            ((sample.id, item_id, s.label) for s in plan.strata for item_id in plan.item_ids[s.values]),
        )
    return sample
