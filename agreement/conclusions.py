"""Does the benchmark's conclusion hold? (issue 36): per-system scores, rank-sets, system-level
agreement and findings of a project's stored ratings, by :mod:`hvstats.systems`.

The *system* is an item stratum: the one a report names (``?system=generator``), else the
preset's ``system_stratum``; findings are the report's ``?finding=region: Global North vs Global
South``, else the preset's ``findings``. The agreement page, the printable report, the validation
report (its ``conclusions-*`` tables and JSON ``conclusions``) and the API all read
:func:`project_conclusions`, so their numbers are the same.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from annotation.models import Item, Project
from core.errors import DomainError
from hvstats.ranking import DEFAULT_ALPHA, Comparison, rank_report
from hvstats.systems import Finding, SystemsInputError, conclusions

from . import selectors
from .selectors import main_fields


def system_column(project: Project, frame: pd.DataFrame, system: str | None) -> str | None:
    """The stratum whose values are the systems: ``system`` when given (a DomainError naming the
    choices when it is no stratum of the ratings), else the preset's when the ratings have it."""
    strata = selectors.strata_columns(frame) if len(frame) else []
    if system:
        if system not in strata:
            raise DomainError(
                f"unknown system stratum {system!r}; choose a stratum with two or more values: "
                f"{', '.join(strata) or 'none'}"
            )
        return system
    default = project.preset.system_stratum
    return default if default in strata else None


def parse_findings(project: Project, frame: pd.DataFrame, finding: str | None) -> list[Finding]:
    """The report's finding (a DomainError saying why when it cannot be read or names a value the
    ratings lack), else the preset's findings whose values the ratings have."""
    if finding:
        try:
            found = Finding.parse(finding)
        except SystemsInputError as exc:
            raise DomainError(str(exc)) from None
        if found.column not in frame.columns:
            strata = selectors.strata_columns(frame) if len(frame) else []
            raise DomainError(
                f"unknown stratum {found.column!r} in the finding; choose one of: {', '.join(strata) or 'none'}"
            )
        seen = set(frame[found.column].dropna().astype(str))
        missing = [v for v in (*found.group_a, *found.group_b) if v not in seen]
        if missing:
            raise DomainError(
                f"{found.column!r} has no value {', '.join(repr(v) for v in missing)}; "
                f"its values: {', '.join(sorted(seen))}"
            )
        return [found]
    out = []
    for text in project.preset.findings:
        fd = Finding.parse(text)
        if fd.column in frame.columns:
            seen = set(frame[fd.column].dropna().astype(str))
            if all(v in seen for v in (*fd.group_a, *fd.group_b)):
                out.append(fd)
    return out


def project_conclusions(
    project: Project,
    *,
    frame: pd.DataFrame | None = None,
    system: str | None = None,
    finding: str | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
) -> dict[str, Any] | None:
    """:func:`hvstats.systems.conclusions` over the project's main fields (numeric and two-label
    ones with people and a judge), or None when the project has no system stratum."""
    frame = selectors.ratings_frame(project) if frame is None else frame
    if not system and not finding and (pairwise := pairwise_rank_sets(project, frame)) is not None:
        return pairwise
    column = system_column(project, frame, system)
    findings = parse_findings(project, frame, finding) if len(frame) else []
    if column is None:
        return None
    rubric = project.rubric_version.parsed()
    fields = main_fields(list(dict.fromkeys(frame["field"].tolist())))
    levels = {f: lv for f in fields if (lv := selectors.field_level(rubric, f))}
    try:
        return conclusions(
            frame, column, fields=fields, findings=findings, levels=levels, bootstrap=bootstrap, seed=seed
        )
    except (SystemsInputError, ValueError) as exc:  # the pure library refused the data
        raise DomainError(f"the per-system scores could not be computed: {exc}") from exc


#: the item fields naming the two systems of a pairwise-preference item (benchmarks/arena), in the
#: order of the pairwise question's two answer fields
SYSTEM_FIELDS = ("model_a", "model_b")


def pairwise_question(project: Project) -> tuple[str, tuple[str, str]] | None:
    """The rubric's pairwise question (its id and its two answer fields) when the items name their
    systems (``SYSTEM_FIELDS``), else None."""
    item_fields = {f.get("name") for f in project.preset.item_fields or ()}
    if not set(SYSTEM_FIELDS) <= item_fields:
        return None
    for q in project.rubric_version.parsed().questions:
        pair = getattr(q, "pair", None)
        if q.type == "pairwise" and pair and len(pair) == 2:
            return q.id, (pair[0], pair[1])
    return None


def pairwise_comparisons(project: Project, frame: pd.DataFrame) -> list[Comparison]:
    """Every answer to a pairwise-preference question as a comparison (``hvstats.ranking``): the
    item, its two systems (``model_a``, ``model_b`` in the item's data), the rater and its kind,
    and the winner: the stored answer names the answer field that won (whatever order it was
    shown in), anything else is a tie, which Chatzi et al. count as no win for either. [] when the
    study has none."""
    found = pairwise_question(project)
    if found is None or not len(frame):
        return []
    qid, (first, second) = found
    sub = frame[frame["field"] == qid]
    if not len(sub):
        return []
    systems = {
        pk: (str(d.get(SYSTEM_FIELDS[0]) or ""), str(d.get(SYSTEM_FIELDS[1]) or ""))
        for pk, d in Item.objects.filter(project=project, pk__in=sub["item_pk"].unique()).values_list("pk", "data")
    }
    out = []
    for item_pk, rater, kind, value in sub[["item_pk", "rater", "rater_kind", "value"]].itertuples(index=False):
        a, b = systems.get(item_pk, ("", ""))
        if not a or not b or a == b:
            continue
        winner = "a" if value == first else "b" if value == second else "tie"
        out.append(Comparison(str(item_pk), a, b, str(rater), winner, "model" if kind == "model" else "human"))
    return out


def pairwise_rank_sets(project: Project, frame: pd.DataFrame, alpha: float = DEFAULT_ALPHA) -> dict[str, Any] | None:
    """Rank-sets of a pairwise-preference study (issue 36), one ranking per judge: people's
    comparisons plus that judge's (``hvstats.ranking.rank_report``: items both compared are the
    labelled set, items only the judge compared the unlabelled one), with the report's notes
    (systems without an estimate, a judge-only ranking outside the prediction-powered rank-sets).
    None when the study holds no comparisons of named systems."""
    comparisons = pairwise_comparisons(project, frame)
    if not comparisons:
        return None
    people = [c for c in comparisons if c.rater_kind != "model"]
    judges: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    for judge in sorted({c.rater for c in comparisons if c.rater_kind == "model"}):
        mine = [c for c in comparisons if c.rater == judge]
        try:
            report, notes = rank_report(people + mine, judges=[judge], alpha=alpha)
        except ValueError as exc:  # e.g. no comparison people and the judge share
            skipped[judge] = str(exc)
            continue
        judges[judge] = {"report": report, "notes": notes}
    return {
        "system": " / ".join(SYSTEM_FIELDS),
        "alpha": alpha,
        "fields": {},
        "findings": [],
        "skipped": skipped,
        "pairwise": {"alpha": alpha, "field": pairwise_question(project)[0], "judges": judges},
    }
