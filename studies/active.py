"""Active samples: items drawn for human labelling with probabilities that grow with a judge's
uncertainty (Zrnic and Candès, "Active Statistical Inference", ICML 2024; the statistics are
:mod:`hvstats.active`), stored as ordinary :class:`~studies.models.Sample` rows so that the usual
plans assign them (k, eligibility, balance, QC, caps, leases).

Study design sits below the judges, so this module never reads a judge: the caller (a page in
``agreement/``) passes a plain ``{item_id: uncertainty}`` and the judge's name.

A *series* is one design released in ``rounds`` rounds. Before anything is drawn the
population (the project's items that have an uncertainty, quality-control items left out) is
split at random into the rounds (:func:`hvstats.active.plan_rounds`, seeded), fixed in advance
as the sequential guarantee requires. Round ``r`` draws only over its own items, with an
expected budget ``budget * N_r / N``, probabilities from :func:`hvstats.active.sampling_probabilities`
(``floor`` = a fraction of the uniform probability, ``tau`` = weight of the uniform rule, default
:data:`hvstats.active.DEFAULT_TAU` = 0.5, which keeps coverage when the uncertainty carries no signal) and
Bernoulli draws from ``numpy.random.default_rng((seed, r))``. Round 0 uses the uncertainty
given when the series is created; a later round the uncertainty the caller passes (refitted
on the human labels of the earlier rounds: :func:`hvstats.active.refit_uncertainty`).

Each round is its own Sample (``design["round"]``, ``design["series"]`` = the id of round 0),
with every item of its part of the population and the probability it was drawn with in
``design["population"]``, and the drawn items as SampleItems with ``pi`` and ``round``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models.fields.json import KeyTextTransform
from django.utils import timezone
from scipy.stats import norm

from annotation.bulk import insert_rows
from annotation.models import Item, Project
from core.errors import DomainError
from hvstats.active import DEFAULT_FLOOR_FRACTION, DEFAULT_TAU, draw_sample, plan_rounds, sampling_probabilities
from studies.models import Sample, SampleItem
from studies.sampling import QC_META_KEY

KIND = "active"
MAX_ROUNDS = 20


def is_active(sample: Sample) -> bool:
    return (sample.design or {}).get("kind") == KIND


def series_rounds(first: Sample) -> list[Sample]:
    """The drawn rounds of a series, in order (round 0 first)."""
    rest = Sample.objects.filter(project_id=first.project_id, design__kind=KIND, design__series=first.id)
    return [first, *sorted(rest, key=lambda s: s.design["round"])]


def project_series(project: Project) -> list[Sample]:
    """The first round of each active series of the project, newest first."""
    return list(Sample.objects.filter(project=project, design__kind=KIND, design__round=0).order_by("-created_at"))


def describe(values: np.ndarray, bins: int = 10) -> dict[str, Any]:
    """Minimum, quartiles, maximum and a histogram (``bins`` equal-width bins) of an uncertainty."""
    v = np.asarray(values, dtype=float)
    if not len(v):
        return {"n": 0}
    q = np.quantile(v, [0, 0.25, 0.5, 0.75, 1])
    lo, hi = float(q[0]), float(q[4])
    counts, edges = np.histogram(v, bins=bins, range=(lo, hi if hi > lo else lo + 1))
    return {
        "n": len(v),
        "min": lo,
        "q1": float(q[1]),
        "median": float(q[2]),
        "q3": float(q[3]),
        "max": hi,
        "mean": float(v.mean()),
        "zeros": int((v == 0).sum()),
        "histogram": [
            {"low": float(edges[k]), "high": float(edges[k + 1]), "count": int(c)} for k, c in enumerate(counts)
        ],
    }


def budget_for_half_width(
    uncertainty: np.ndarray, residual_variance: float, half_width: float, alpha: float = 0.05
) -> float:
    """Expected number of human labels for a target half-width, planned with the optimal rule.

    The uncertainty is scaled so that the mean of its squares is the judge's residual variance
    ``E[(Y - f)^2]`` (``u`` is meant as the root expected squared error, up to a constant; all
    zero = uniform). With ``pi_i = n u_i / sum(u)`` and ``lambda = 1`` the estimator's variance is
    ``((sum u)^2 / n - sum u^2) / N^2``; setting it to ``(half_width / z)^2`` gives
    ``n = (sum u)^2 / (N^2 (half_width / z)^2 + sum u^2)``, clipped to [2, N]. A plan, not a
    guarantee: the floor, ``tau`` and power tuning move the realised width a little."""
    u = np.asarray(uncertainty, dtype=float)
    N = len(u)
    if N < 2:
        raise DomainError("at least 2 items are needed")
    if not residual_variance > 0 or not half_width > 0:
        raise DomainError("the residual variance and the half-width must be positive")
    ms = float(np.mean(u**2))
    s = np.full(N, math.sqrt(residual_variance)) if ms <= 0 else u * math.sqrt(residual_variance / ms)
    z = float(norm.ppf(1 - alpha / 2))
    n = float(s.sum()) ** 2 / (N**2 * (half_width / z) ** 2 + float((s**2).sum()))
    return float(min(max(n, 2.0), N))


def population_ids(project: Project, uncertainty: Mapping[int, float]) -> tuple[list[int], int]:
    """The items of the project with an uncertainty (QC items left out), sorted; and how many
    non-QC items had none (left out of the design: the judge did not rate them)."""
    rows = (
        Item.objects.filter(project=project)
        .annotate(_qc=KeyTextTransform(QC_META_KEY, "meta"))
        .order_by("id")
        .values_list("id", "_qc")
    )
    ids, missing = [], 0
    for item_id, qc in rows:
        if qc:
            continue
        if item_id in uncertainty:
            ids.append(item_id)
        else:
            missing += 1
    return ids, missing


def _u_array(ids: list[int], uncertainty: Mapping[int, float]) -> np.ndarray:
    u = np.array([float(uncertainty[i]) for i in ids], dtype=float)
    if not np.isfinite(u).all() or (u < 0).any():
        raise DomainError("every uncertainty must be a finite number >= 0")
    return u


def _draw_round(
    *,
    project: Project,
    name: str,
    design: dict[str, Any],
    ids: list[int],
    u: np.ndarray,
    budget: float,
    created_by: AbstractBaseUser | None,
) -> Sample:
    r = int(design["round"])
    try:
        pi = sampling_probabilities(u, budget, floor=design["floor"] * budget / len(ids), tau=design["tau"])
    except ValueError as exc:
        raise DomainError(f"the sampling probabilities could not be computed: {exc}") from exc
    xi = draw_sample(pi, np.random.default_rng((int(design["seed"]), r)))
    drawn = [(i, float(p)) for i, p, x in zip(ids, pi, xi, strict=True) if x]
    design = {
        **design,
        "round_budget": float(budget),
        "population": {"items": ids, "u": [float(v) for v in u], "pi": [float(p) for p in pi]},
    }
    label = f"round {r + 1}"
    report = {
        "population": len(ids),
        "total_asked": round(float(pi.sum())),
        "total_drawn": len(drawn),
        "strata": [
            {
                "values": [label],
                "label": label,
                "available": len(ids),
                "asked": round(float(pi.sum())),
                "drawn": len(drawn),
                "short": 0,
            }
        ],
        "short": [],
        "expected": float(pi.sum()),
    }
    name = (name or "").strip() or f"active sample {timezone.now():%Y-%m-%d %H:%M}"
    if design["rounds"] > 1:
        name = f"{name[:180]} ({label} of {design['rounds']})"
    with transaction.atomic():
        sample = Sample.objects.create(
            project=project,
            name=name[:200],
            strata_keys=[],
            allocation=Sample.Allocation.EQUAL,
            total_size=max(len(drawn), 1),
            seed=int(design["seed"]),
            report=report,
            design=design,
            created_by=created_by if created_by is not None and created_by.is_authenticated else None,
        )
        insert_rows(
            SampleItem,
            ["sample", "item", "stratum", "pi", "round"],
            ((sample.id, i, label, p, r) for i, p in drawn),
        )
    return sample


def series_name(first: Sample, rounds_drawn: int) -> str:
    """A series' name with the round it has reached (its rounds' samples are named by their own
    round: "<name> (round r of n)")."""
    rounds = int(first.design.get("rounds") or 1)
    if rounds <= 1:
        return first.name
    return f"{first.name.rsplit(' (round ', 1)[0]} (round {rounds_drawn} of {rounds})"


def draw_active_sample(
    *,
    project: Project,
    uncertainty: Mapping[int, float],
    budget: float,
    judge: Mapping[str, Any],
    field: str,
    source: str,
    name: str = "",
    tau: float = DEFAULT_TAU,
    floor: float = DEFAULT_FLOOR_FRACTION,
    seed: int = 0,
    rounds: int = 1,
    target_half_width: float | None = None,
    created_by: AbstractBaseUser | None = None,
) -> Sample:
    """Create an active series and draw its first round (module docstring).

    ``uncertainty``: ``{item_id: u >= 0}`` (items without one are left out); ``budget``: the
    expected number of human-labelled items over all rounds; ``judge``: ``{"rater": id, "name":
    ...}`` of the judge whose values the estimate uses; ``field``: the rubric field the
    uncertainty is about; ``source``: how it was computed (shown on the pages); ``floor``: the
    smallest probability as a fraction of the uniform one ``budget / N``; ``target_half_width``:
    stop releasing rounds once the confidence sequence is this narrow (optional)."""
    ids, missing = population_ids(project, uncertainty)
    N = len(ids)
    if N < 2:
        raise DomainError("the judge has rated fewer than 2 of the project's items: nothing to sample from")
    if not 1 <= rounds <= min(MAX_ROUNDS, N):
        raise DomainError(f"rounds must be between 1 and {min(MAX_ROUNDS, N)}")
    if not 0 < budget <= N:
        raise DomainError(f"the budget must be between 0 and {N} items (expected number of human labels)")
    if not 0 <= tau <= 1:
        raise DomainError("tau must be between 0 and 1")
    if not 0 < floor <= 1:
        raise DomainError("the floor must be between 0 (excluded) and 1 (a fraction of the uniform probability)")
    if target_half_width is not None and not target_half_width > 0:
        raise DomainError("the target half-width must be positive")
    u = _u_array(ids, uncertainty)
    round_of = plan_rounds(N, rounds, np.random.default_rng(int(seed)))
    design: dict[str, Any] = {
        "kind": KIND,
        "series": None,
        "round": 0,
        "rounds": int(rounds),
        "judge": dict(judge),
        "field": field,
        "uncertainty": source,
        "budget": float(budget),
        "target_half_width": target_half_width,
        "tau": float(tau),
        "floor": float(floor),
        "seed": int(seed),
        "population_size": N,
        "left_out": missing,
        "prior": {"items": ids, "u": [float(v) for v in u], "round": [int(r) for r in round_of]},
    }
    mine = [k for k in range(N) if round_of[k] == 0]
    return _draw_round(
        project=project,
        name=name,
        design=design,
        ids=[ids[k] for k in mine],
        u=u[mine],
        budget=budget * len(mine) / N,
        created_by=created_by,
    )


def next_round_items(first: Sample) -> tuple[int, list[int]]:
    """The index of the next round of a series and its items (DomainError when all are drawn)."""
    if not is_active(first) or first.design.get("round") != 0:
        raise DomainError("not the first round of an active sample")
    r = len(series_rounds(first))
    if r >= first.design["rounds"]:
        raise DomainError("every round of this active sample has been drawn")
    prior = first.design["prior"]
    return r, [i for i, k in zip(prior["items"], prior["round"], strict=True) if k == r]


def draw_next_round(
    *,
    first: Sample,
    uncertainty: Mapping[int, float],
    source: str,
    created_by: AbstractBaseUser | None = None,
) -> Sample:
    """Draw the next round of a series over its own items, with ``uncertainty`` computed from the
    earlier rounds' labels only (so the round's probabilities are fixed given the past)."""
    with transaction.atomic():
        Sample.objects.select_for_update().filter(pk=first.pk).first()  # one round at a time
        r, ids = next_round_items(first)
        missing = [i for i in ids if i not in uncertainty]
        if missing:
            raise DomainError(f"{len(missing)} item(s) of round {r + 1} have no uncertainty")
        d = first.design
        design = {
            **{k: v for k, v in d.items() if k not in ("prior", "population", "round_budget")},
            "series": first.id,
            "round": r,
            "uncertainty": source,
        }
        return _draw_round(
            project=first.project,
            name=first.name.rsplit(" (round ", 1)[0],
            design=design,
            ids=ids,
            u=_u_array(ids, uncertainty),
            budget=d["budget"] * len(ids) / d["population_size"],
            created_by=created_by,
        )
