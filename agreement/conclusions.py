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

from annotation.models import Project
from core.errors import DomainError
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
