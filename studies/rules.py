"""Who may take which place of an item: eligibility and balance rules.

Rules reduce to one idea: every one of an item's k places (a *slot*) may require annotator
attributes, written canonically as ``"nationality=china&..."`` ("" = anyone).
  * eligibility ``{"attribute": "nationality", "item_key": "country"}`` makes every slot of
    an item require ``nationality = <the item's country>``;
  * balance ``{"attribute": "nationality", "quota": {"China": 2, "Germany": 2}}`` makes two
    slots require China and two Germany (remaining slots up to k require only eligibility).
An annotator matches a slot when the slot's requirement is one of the subsets of their own
attribute pairs (:func:`rater_requirement_keys`)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from annotation.models import Item, Rater
from core.errors import DomainError
from studies.models import AssignmentPlan

from .sampling import metadata_columns


def norm(value: Any) -> str:
    return str(value).strip().casefold()


def canonical(pairs: Iterable[tuple[str, str]]) -> str:
    return "&".join(f"{a}={v}" for a, v in sorted(set(pairs)))


def plan_attributes(plan: AssignmentPlan) -> list[str]:
    attrs = [r["attribute"] for r in plan.eligibility]
    if plan.balance.get("attribute"):
        attrs.append(plan.balance["attribute"])
    return sorted(set(attrs))


def rater_values(rater: Rater, attribute: str) -> set[str]:
    raw = (rater.attributes or {}).get(attribute)
    if raw is None or raw == "":
        return set()
    if isinstance(raw, (list, tuple)):
        return {norm(v) for v in raw if str(v).strip()}
    return {norm(raw)}


def rater_requirement_keys(rater: Rater, plan: AssignmentPlan) -> list[str]:
    """Every slot requirement this annotator satisfies, most specific first ("" last)."""
    options = []
    for attr in plan_attributes(plan):
        options.append([None, *sorted((attr, v) for v in rater_values(rater, attr))])
    keys = {canonical(p for p in combo if p is not None) for combo in itertools.product(*options)}
    return sorted(keys, key=lambda k: (-k.count("=") if k else 1, k))


@dataclass
class Rules:
    k: int
    eligibility: list[dict[str, str]]
    balance: dict[str, Any]


def parse_rules(*, k: int, eligibility: list[dict[str, str]] | None, balance: dict[str, Any] | None) -> Rules:
    if not 1 <= int(k) <= 100:
        raise DomainError("k (annotators per item) must be between 1 and 100")
    rules = []
    for rule in eligibility or []:
        attr, key = (rule.get("attribute") or "").strip(), (rule.get("item_key") or "").strip()
        key = key.removeprefix("meta.")
        if not attr or not key:
            raise DomainError("an eligibility rule needs an annotator attribute and an item key")
        rules.append({"attribute": attr, "item_key": key})
    bal: dict[str, Any] = {}
    if balance and balance.get("quota"):
        attr = (balance.get("attribute") or "").strip()
        if not attr:
            raise DomainError("a balance rule needs an annotator attribute")
        quota = {}
        for value, n in balance["quota"].items():
            try:
                n = int(n)
            except (TypeError, ValueError):
                raise DomainError(f"balance quota for {value!r} must be a whole number") from None
            if n < 1:
                raise DomainError(f"balance quota for {value!r} must be at least 1")
            quota[str(value).strip()] = n
        if sum(quota.values()) > int(k):
            raise DomainError(f"the balance quotas add up to {sum(quota.values())}, more than k = {k}")
        bal = {"attribute": attr, "quota": quota}
    return Rules(k=int(k), eligibility=rules, balance=bal)


def parse_balance_text(attribute: str, text: str) -> dict[str, Any]:
    """ "China:2, Germany:2" -> {"attribute": ..., "quota": {"China": 2, "Germany": 2}}."""
    quota: dict[str, int] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        value, sep, n = part.rpartition(":")
        if not sep or not value.strip():
            raise DomainError(f"write the balance as value:count pairs, e.g. China:2, Germany:2 (got {part.strip()!r})")
        try:
            quota[value.strip()] = int(n)
        except ValueError:
            raise DomainError(f"balance count {n.strip()!r} is not a whole number") from None
    return {"attribute": attribute.strip(), "quota": quota} if quota else {}


def format_balance_text(balance: Mapping[str, Any] | None) -> str:
    """The quota of a balance rule as :func:`parse_balance_text` reads it: "China:2, Germany:2"."""
    return ", ".join(f"{value}:{n}" for value, n in ((balance or {}).get("quota") or {}).items())


def slot_requirements(rules: Rules, item_values: dict[str, str]) -> tuple[list[str], str | None]:
    """The k requirement keys of one item's slots, or a reason the item cannot be staffed."""
    base: list[tuple[str, str]] = []
    for rule in rules.eligibility:
        value = item_values.get(rule["item_key"], "")
        if not value:
            return [], f"no value for {rule['item_key']!r}"
        base.append((rule["attribute"], norm(value)))
    reqs: list[str] = []
    fixed = dict(base)
    for value, n in (rules.balance.get("quota") or {}).items():
        attr = rules.balance["attribute"]
        if attr in fixed and fixed[attr] != norm(value):
            continue  # e.g. a Germany quota on an item only Chinese annotators may rate
        reqs.extend([canonical([*base, (attr, norm(value))])] * n)
    reqs.extend([canonical(base)] * (rules.k - len(reqs)))
    return reqs, None


def item_value_rows(item_ids: list[int], keys: list[str]) -> Iterable[tuple[int, dict[str, str]]]:
    columns, annotations = metadata_columns(keys)
    for start in range(0, len(item_ids), 10_000):
        chunk = item_ids[start : start + 10_000]
        qs = Item.objects.filter(id__in=chunk).annotate(**annotations).values_list("id", *columns)
        found = {row[0]: row[1:] for row in qs}
        for item_id in chunk:
            vals = found.get(item_id, ("",) * len(keys))
            yield item_id, {k: ("" if v is None else str(v)) for k, v in zip(keys, vals, strict=True)}


def eligible_for(rater: Rater, plan: AssignmentPlan, item: Item) -> bool:
    rules = Rules(k=plan.k, eligibility=plan.eligibility, balance=plan.balance)
    keys = sorted({r["item_key"] for r in plan.eligibility})
    values = next(iter(item_value_rows([item.id], keys)))[1] if keys else {}
    reqs, problem = slot_requirements(rules, values)
    return problem is None and bool(set(reqs) & set(rater_requirement_keys(rater, plan)))
