"""AHEaD beyond one image (CULTIVate, cultivate-ahead.txt): what needs the project, not one item.

- :func:`real_images_param`: the real reference images EXAG's baseline averages over (Eq. 3),
  i.e. the project's items of the real-image generator (``params.real_generator``, default
  ``real``; Sec. 4.1 "Real Images": 5 per prompt in the paper), grouped by country and activity.
  ``execution.spec_for`` hands them to the backend, which never reads the database.
- :func:`calibrate_tau` (App. A.3): the quartiles of the descriptor similarities on the real
  images, the candidate thresholds; the paper keeps Q3.
- :func:`diversity_tables` (Eq. 6-7): DDIV and SDIV of every prompt's N generated images
  (same country, activity and T2I model), and their means by region and model (Table 1, N=10).

Both read what an AHEaD judge's runs stored: the raw output of each item's first pass in its
latest run (descriptors and best similarities per dimension, ``backends/ahead.py``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from annotation.assets import media_path
from annotation.models import Asset, Item, Project
from core.errors import DomainError
from hvstats.tables import Cell, Row, Table

from . import ahead_metrics
from .backends.ahead import BACKEND as AHEAD
from .backends.ahead import DEFAULT_REAL_GENERATOR, DEFAULT_TAU, REAL_IMAGES_PARAM, group_key
from .models import JudgeConfig, JudgeOutput


def real_generator(params: Mapping[str, Any]) -> str:
    return str(params.get("real_generator") or DEFAULT_REAL_GENERATOR)


def real_images_param(project: Project, params: Mapping[str, Any]) -> dict[str, dict[str, list[str]]]:
    """``{REAL_IMAGES_PARAM: {"<country>\\t<activity>": [image file, ...]}}``: the image files of the
    project's real-image items per prompt, for the backend's EXAG baseline. The image is the
    field the judge reads (``params.image_field``, as the backend), so the baseline and the
    generated images it is compared with come from the same field."""
    field = str(params.get("image_field") or "image")
    items = list(Item.objects.filter(project=project, generator=real_generator(params)).values_list("country", "data"))
    shas = {data.get(field) for _, data in items if isinstance(data.get(field), str)}
    assets = {a.sha256: a for a in Asset.objects.filter(sha256__in=shas)}
    out: dict[str, list[str]] = {}
    for country, data in items:
        asset = assets.get(data.get(field))
        if asset is None or not data.get("activity"):
            continue
        path = str(media_path(asset.relative_path()))
        group = out.setdefault(group_key(country, data["activity"]), [])
        if path not in group:  # the same picture imported twice counts once
            group.append(path)
    return {REAL_IMAGES_PARAM: out}


# ------------------------------------------------------------------------------ stored evidence
@dataclass(frozen=True)
class Evidence:
    """An item's AHEaD evidence: its strata and what the first pass of its latest run found."""

    item_id: int
    country: str
    region: str
    generator: str
    activity: str
    tau: float
    align: float
    dimensions: dict[str, dict[str, Any]]


def ahead_judge(project: Project, name: str) -> JudgeConfig:
    """The project's AHEaD judge of that name; DomainError for anything else."""
    config = JudgeConfig.objects.filter(project=project, name=name).first()
    if config is None:
        raise DomainError(f"this project has no judge named {name!r}")
    if config.backend != AHEAD.key:
        raise DomainError(f"judge {name!r} is a {config.backend} judge, not an AHEaD judge")
    return config


def stored_evidence(config: JudgeConfig) -> list[Evidence]:
    """The evidence of every item the judge scored, from the first pass of its latest run with a
    good output for it (passes differ only when sampling; the first is the deterministic one)."""
    rows = (
        JudgeOutput.objects.filter(run__config=config, order=JudgeOutput.Order.ORIGINAL, pass_index=0, error="")
        .exclude(parsed=None)
        .order_by("item_id", "-run_id")
        .values_list("item_id", "raw_output", "item__country", "item__region", "item__generator", "item__data")
    )
    out: list[Evidence] = []
    seen: set[int] = set()
    for item_id, raw, country, region, generator, data in rows:
        if item_id in seen:
            continue
        try:
            found = json.loads(raw)
            dims, align = found["dimensions"], float(found["align"])
        except (ValueError, KeyError, TypeError):
            continue  # not an AHEaD output (an older format): nothing to read
        seen.add(item_id)
        out.append(
            Evidence(
                item_id,
                country,
                region,
                generator,
                str((data or {}).get("activity") or ""),
                float(found.get("tau", DEFAULT_TAU)),
                align,
                dims,
            )
        )
    return out


# ------------------------------------------------------------------------------ calibration
def calibrate_tau(config: JudgeConfig) -> tuple[ahead_metrics.TauCandidates, int]:
    """App. A.3 on the judge's stored outputs for the real-image items: every reference
    descriptor's best similarity to the descriptors extracted from a real image (the quantity
    Eq. 1 compares with tau; the paper does not say which pairs it pools, this is the one the
    threshold acts on), pooled over dimensions and images. (candidates, n real images).
    DomainError when the judge has scored no real image."""
    generator = real_generator(config.params)
    real = [e for e in stored_evidence(config) if e.generator == generator]
    sims = [s for e in real for d in e.dimensions.values() for s in d.get("reference_best") or [] if s is not None]
    if not sims:
        raise DomainError(
            f"judge {config.name!r} has scored no real image with a descriptor match (items of generator "
            f"{generator!r}): run it over them first"
        )
    return ahead_metrics.tau_candidates(sims), len(real)


def calibration_table(config: JudgeConfig) -> Table:
    cands, n_images = calibrate_tau(config)
    tau = float(config.params.get("tau", DEFAULT_TAU))
    rows = [
        Row("Q1 (lower quartile)", (Cell(cands.q1, fmt="num"),)),
        Row("Median", (Cell(cands.median, fmt="num"),)),
        Row("Q3 (upper quartile): the paper's choice", (Cell(cands.q3, fmt="num"),)),
        Row("Threshold this judge used", (Cell(tau, fmt="num"),)),
        Row("n similarities", (Cell(cands.n, fmt="count"),)),
        Row("n real images", (Cell(n_images, fmt="count"),)),
    ]
    return Table(
        key="ahead-tau-calibration",
        title="Threshold τ calibration on real images (App. A.3)",
        columns=("Value",),
        rows=tuple(rows),
        caption="Best similarity of every reference descriptor to the descriptors extracted from a real "
        f"image (generator {real_generator(config.params)!r}), pooled over dimensions and images; the "
        "candidate thresholds are its quartiles and the paper keeps Q3 (Table 5: 0.29, 0.39, 0.52 for "
        "InternVL3). A judge with another τ is a new judge (params.tau).",
        row_header="Candidate",
    )


# ------------------------------------------------------------------------------ diversity
@dataclass(frozen=True)
class GroupDiversity:
    """Eq. 6-7 for one prompt's N generated images (one country, activity and T2I model)."""

    country: str
    region: str
    generator: str
    activity: str
    n_images: int
    ddiv: float | None
    sdiv: float


def group_diversity(members: list[Evidence]) -> tuple[float | None, float]:
    """(DDIV, SDIV) of N images of one prompt from their evidence. A reference descriptor is
    "appearing" in an image when its best match there exceeds tau (Eq. 1's hit); ``q(d)`` its
    share of all hits (Eq. 6, over the whole ``D^ref``); ``ALIGN_N`` the share of each
    dimension's reference descriptors hit in some image, averaged over the dimensions as ALIGN
    is, minus the images' mean ALIGN (Eq. 7)."""
    hits: dict[tuple[str, str], int] = {}
    for e in members:
        for dim, d in e.dimensions.items():
            for ref, best in zip(d.get("reference") or [], d.get("reference_best") or [], strict=False):
                hits[(dim, ref)] = hits.get((dim, ref), 0) + int(best is not None and best > e.tau)
    hit_somewhere: dict[str, list[bool]] = {}
    for (dim, _), n in hits.items():
        hit_somewhere.setdefault(dim, []).append(n > 0)
    align_n = ahead_metrics.dimension_mean({dim: float(np.mean(v)) for dim, v in hit_somewhere.items()})
    ddiv = ahead_metrics.ddiv(list(hits.values()))
    sdiv = ahead_metrics.sdiv(align_n if align_n is not None else 0.0, [e.align for e in members])
    return ddiv, sdiv


def diversity(config: JudgeConfig) -> list[GroupDiversity]:
    """DDIV and SDIV of every prompt with at least two scored generated images (real images are
    references, not generations)."""
    groups: dict[tuple[str, str, str], list[Evidence]] = {}
    real = real_generator(config.params)
    for e in stored_evidence(config):
        if e.generator != real:
            groups.setdefault((e.country, e.activity, e.generator), []).append(e)
    out = []
    for (country, activity, generator), members in sorted(groups.items()):
        if len(members) < 2:
            continue  # Eq. 6-7 compare N > 1 generations of one prompt
        ddiv, sdiv = group_diversity(members)
        out.append(GroupDiversity(country, members[0].region, generator, activity, len(members), ddiv, sdiv))
    return out


def diversity_tables(config: JudgeConfig) -> list[Table]:
    """Per prompt, then mean per region and T2I model (Table 1's N=10 columns)."""
    found = diversity(config)
    if not found:
        raise DomainError(
            f"judge {config.name!r} has not scored two or more images of one prompt (same country, activity "
            "and generator): DDIV and SDIV compare the N images of a prompt"
        )
    per_prompt = Table(
        key="ahead-diversity-per-prompt",
        title="Descriptor and semantic diversity per prompt (Eq. 6-7)",
        columns=("Region", "T2I model", "N images", "DDIV", "SDIV"),
        rows=tuple(
            Row(
                f"{g.country}: {g.activity}",
                (
                    Cell(g.region, fmt="text"),
                    Cell(g.generator, fmt="text"),
                    Cell(g.n_images, fmt="count"),
                    Cell(
                        g.ddiv,
                        fmt="num",
                        note="" if g.ddiv is not None else "fewer than two reference descriptors or none matched",
                    ),
                    Cell(g.sdiv, fmt="num"),
                ),
            )
            for g in found
        ),
        caption="DDIV: the normalised entropy of how often each reference descriptor is matched across the "
        "prompt's N images (Eq. 6); SDIV: ALIGN of the N images together minus their mean single-image ALIGN "
        "(Eq. 7). From the first pass of each image's latest run.",
        row_header="Prompt",
    )
    summary: dict[tuple[str, str], list[GroupDiversity]] = {}
    for g in found:
        summary.setdefault((g.generator, g.region), []).append(g)
    rows = []
    for (generator, region), gs in sorted(summary.items()):
        dd = [g.ddiv for g in gs if g.ddiv is not None]
        rows.append(
            Row(
                f"{generator}: {region or '(no region)'}",
                (
                    Cell(float(np.mean(dd)) if dd else None, fmt="num"),
                    Cell(float(np.mean([g.sdiv for g in gs])), fmt="num"),
                    Cell(len(gs), fmt="count"),
                ),
            )
        )
    by_region = Table(
        key="ahead-diversity-by-region",
        title="Table 1 (N images per prompt): DDIV and SDIV by T2I model and region",
        columns=("DDIV", "SDIV", "n prompts"),
        rows=tuple(rows),
        caption="Means over the prompts of each model and region. Paper (N=10): DDIV 0.60-0.68, SDIV 0.28-0.33.",
        row_header="Model: region",
    )
    return [per_prompt, by_region]


__all__ = [
    "Evidence",
    "GroupDiversity",
    "ahead_judge",
    "calibrate_tau",
    "calibration_table",
    "diversity",
    "diversity_tables",
    "group_diversity",
    "real_images_param",
    "stored_evidence",
]
