"""The protocol's validation tables of a project: the paper's tables (e.g. ValueGround Table 4)
computed from the stored ratings by the preset's ``validation_report`` function.

:func:`validation_input` gathers what the preset's function reads (the ratings frame, who each
rater is, the field levels, the bootstrap settings, the order each item's raters were assigned
in, from which the rater *slots* are derived) into the pure
:class:`hvstats.validation.ValidationInput`; :func:`compute_tables` calls the preset.
A preset without a ``validation_report`` has no protocol tables (the generic report still
shows). The page, the API, the ``validation_report`` command and the dataset card all call
:func:`compute_tables` (directly or through a stored report), so their numbers are the same.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from annotation.models import Project
from core.errors import DomainError
from hvstats.alt_test import DEFAULT_EPSILON
from hvstats.notes import with_small_sample_note
from hvstats.ppi import attach_labels_saved
from hvstats.report import judge_verdicts, verdict_answers
from hvstats.systems import conclusions_tables
from hvstats.tables import Table
from hvstats.validation import MIN_RATER_ITEMS, RaterInfo, ValidationInput, judge_label
from hvstats.verdicts import answers_table, verdicts_table

from . import active, selectors
from .conclusions import project_conclusions
from .selectors import main_fields

FORMATS = ("json", "markdown", "latex", "csv")


def has_tables(project: Project) -> bool:
    return project.preset.validation_report is not None or active.has_active(project)


def validation_input(
    project: Project,
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    frame: pd.DataFrame | None = None,
    min_rater_items: int = MIN_RATER_ITEMS,
) -> ValidationInput:
    frame = selectors.ratings_frame(project) if frame is None else frame
    rubric = project.rubric_version.parsed()
    fields = list(dict.fromkeys(frame["field"].tolist())) if len(frame) else []
    levels = {f: lv for f in fields if (lv := selectors.field_level(rubric, f))}
    raters = {
        name: RaterInfo(name, p["kind"], p["attributes"], p["backend"], p["label"])
        for name, p in selectors.rater_profiles(project).items()
    }
    return ValidationInput(
        frame=frame,
        raters=raters,
        levels=levels,
        bootstrap=bootstrap,
        seed=seed,
        assignment_order=selectors.assignment_order(project),
        min_rater_items=min_rater_items,
    )


def answers_of(
    frame: pd.DataFrame,
    levels: dict[str, str],
    epsilon: float,
    verdicts: dict[str, dict[str, dict[str, Any]]] | None = None,
) -> list[dict[str, Any]]:
    """One answer per judge (``hvstats.answers``) over the main fields of a ratings frame, each with
    its headline of human labels saved (``labels_saved``, :func:`hvstats.ppi.judge_labels_saved`
    over the same fields' PPI++ means): what the agreement report's ``answers``, the validation
    report's ``answers`` and its ``judge-answers`` table say. ``verdicts``: the frame's
    :func:`hvstats.report.judge_verdicts` where the caller has them (else computed here)."""
    fields = main_fields(list(dict.fromkeys(frame["field"].tolist()))) if len(frame) else []
    if not fields:
        return []
    sub = frame[frame["field"].isin(fields)]
    main_levels = {f: levels[f] for f in fields if f in levels}
    answers = verdict_answers(sub, main_levels, epsilon)
    if verdicts is None:
        verdicts = judge_verdicts(sub, levels=main_levels, epsilon=epsilon)
    ppi = {f: {j: v.get("ppi") for j, v in per.items()} for f, per in verdicts.items() if f in fields}
    return attach_labels_saved(answers, ppi)


def project_answers(project: Project, epsilon: float = DEFAULT_EPSILON) -> list[dict[str, Any]]:
    """:func:`answers_of` the project's submitted ratings, with the rubric's levels."""
    inp = validation_input(project, bootstrap=0)
    try:
        return answers_of(inp.frame, dict(inp.levels), epsilon)
    except ValueError as exc:  # a pure library refused the data
        raise DomainError(f"the answers could not be computed: {exc}") from exc


def compute_tables(
    project: Project,
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    frame: pd.DataFrame | None = None,
    epsilon: float = DEFAULT_EPSILON,
    min_rater_items: int = MIN_RATER_ITEMS,
    conclusions: dict[str, Any] | None = None,
) -> list[Table]:
    """The preset's validation tables of the project's submitted ratings ([] without a report),
    then, when the project has judges, one answer per judge (:func:`hvstats.verdicts.answers_table`)
    and their verdicts table (alt-test at ``epsilon`` and the PPI mean per field,
    :mod:`hvstats.verdicts`); then, for a project with an active sample, one
    table of active estimates per series (:func:`agreement.active.estimates_tables`).
    ``min_rater_items``: the least number of rated items for a rater to enter the human
    agreement ceilings and slots. Each preset table gets a note naming its coefficients on fewer
    than ``hvstats.notes.SMALL_SAMPLE_ITEMS`` items (:func:`hvstats.notes.with_small_sample_note`).
    Last, "Does the benchmark's conclusion hold?" (:func:`hvstats.systems.conclusions_tables`) for a
    project with a system stratum: ``conclusions`` when the caller computed them
    (:func:`agreement.conclusions.project_conclusions`), else the preset's defaults."""
    fn = project.preset.validation_report
    extra = active.estimates_tables(active.estimates(project, frame)) if active.has_active(project) else []
    if conclusions is None and project.preset.system_stratum:
        conclusions = project_conclusions(project, frame=frame, bootstrap=bootstrap, seed=seed)
    if conclusions:
        labels = {name: judge_label(name, p["backend"]) for name, p in selectors.rater_profiles(project).items()}
        # their coefficients on fewer than SMALL_SAMPLE_ITEMS units are named too, as the protocol tables'
        extra = extra + [with_small_sample_note(t) for t in conclusions_tables(conclusions, lambda j: labels.get(j, j))]
    if fn is None:
        return extra
    inp = validation_input(project, bootstrap=bootstrap, seed=seed, frame=frame, min_rater_items=min_rater_items)
    try:
        # a coefficient on fewer than hvstats.notes.SMALL_SAMPLE_ITEMS items is named under its table
        out = [with_small_sample_note(t) for t in fn(inp)]
        verdicts = judge_verdicts(inp.frame, levels=dict(inp.levels), epsilon=epsilon) if len(inp.frame) else {}
        answers = answers_of(inp.frame, dict(inp.levels), epsilon, verdicts)
    except ValueError as exc:  # a pure library refused the data
        raise DomainError(f"the validation tables could not be computed: {exc}") from exc
    # one answer per judge (hvstats.answers) first, then the per-field verdicts
    judged = (answers_table(answers, inp.judge_label), verdicts_table(verdicts, inp.judge_label, epsilon))
    return out + [t for t in judged if t is not None] + extra
