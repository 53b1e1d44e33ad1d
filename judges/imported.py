"""External judges and metrics as raters: import a JSONL / CSV of outputs made elsewhere (a
pipeline's own GPT-4o verdicts, AHEaD or CLIP scores, any lab's judge runs) into a project as one
model rater, so it appears in every report, acceptance rule and export like a judge run here.

File: one line (JSONL object or CSV row) per item, keyed by the item's external id ``id``, read
by the reader registry's model readers (``annotation.sources.outputs``: ``outputs-jsonl``,
``outputs-csv``, named here by the file type, ``jsonl`` or ``csv``) through the same reading
stage as human annotations made elsewhere (``annotation.annotation_import.read_ratings``); every
other key is a rubric question id (the answer, checked by the rubric validator against the part
of the rubric the file answers, like a run judge's) or a metric declared with ``metrics`` (a
finite number, e.g. ``clip``). CSV cells: a number or an option's value / label as written,
checklists and repeated questions as JSON lists; an empty cell is no answer.

Stored as ``Rater(kind=model, backend="imported", name="imported: <name>", model_id,
prompt_hash=sha256 of the method text, parameters={"method", "source_file", "questions",
"metrics"})`` with one submitted regular ``Assignment`` + ``Annotation`` per item (written by
``ratings.write_judge_annotation``, derived fields by ``ratings.judge_derived``, as for a run
judge). Metrics go to ``derived["judge_metrics"]``; :func:`annotation.answers.flatten_answers`
reads them like numeric derived fields, so the ratings frame, the policy context and the exports
list them under their names.

All or nothing: any bad line (invalid JSON, wrong CSV header, no or unknown external id, an item
given twice, an unknown question, an invalid answer, a score that is not a number) means nothing
is written; the report lists the problems by line number. A name already used by a judge or an
import of the project is refused (import under a new name; names are how reports tell raters
apart)."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from annotation.annotation_import import MatchedItem, Problems, items_by_key, read_ratings
from annotation.answers import METRICS_KEY
from annotation.models import Item, Project, Rater
from annotation.rubric import AnswerError, Question, RubricError
from annotation.sources import registry
from annotation.sources.common import Expected, ReadCounts
from annotation.staging import format_of, stage_file
from core.errors import DomainError
from core.values import loads, shown, value_problem

from .models import JudgeConfig
from .ratings import judge_derived, judged_rubric, write_judge_annotation

BACKEND = "imported"
ID_KEY = "id"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class JudgeImportReport:
    ok: bool
    rater: int | None = None
    name: str = ""
    items: int = 0
    lines_read: int = 0
    questions: list[str] = field(default_factory=list)
    metrics: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    errors_truncated: int = 0

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def rater_name(name: str) -> str:
    return f"imported: {name}"[:200]


def metric_names(text: str) -> list[str]:
    """The metric columns a form or API request names, comma-separated."""
    return [m.strip() for m in (text or "").split(",") if m.strip()]


def import_upload(
    *,
    project: Project,
    upload: Any,
    fields: Mapping[str, Any],
    data_format: str | None = None,
    user: AbstractBaseUser | None = None,
) -> JudgeImportReport:
    """:func:`import_judge_outputs` of an uploaded file (the page's and the API's), staged to disk
    chunk by chunk through the imports' one door (``annotation.staging``: refused, with nothing
    left behind, above ``HV_MAX_UPLOAD_BYTES``) and deleted afterwards whatever happened; the
    format from ``data_format`` or the file's name (JSONL by default); ``fields`` the form's
    ``name``, ``model_id``, ``method``, ``metrics`` (comma-separated)."""
    data_format = data_format or format_of(upload.name) or "jsonl"
    reader = registry.by_suffix(registry.MODEL).get(data_format)
    staged = stage_file(
        name=upload.name,
        chunks=upload.chunks(),
        stem="outputs",
        suffix=reader.suffix if reader else ".txt",
        owner={"project": project.id, "user": getattr(user, "pk", None)},
    )
    try:
        return import_judge_outputs(
            project=project,
            data=staged.path,
            data_format=data_format,
            name=fields["name"],
            model_id=fields.get("model_id", ""),
            method=fields.get("method", ""),
            metrics=metric_names(fields.get("metrics", "")),
            source_file=upload.name,
            user=user,
        )
    finally:
        staged.discard()


def import_judge_outputs(
    *,
    project: Project,
    data: bytes | str | Path,
    data_format: str,
    name: str,
    model_id: str = "",
    method: str = "",
    metrics: Sequence[str] = (),
    source_file: str = "",
    user: AbstractBaseUser | None = None,
) -> JudgeImportReport:
    """Import the file as the model rater ``name`` (see the module docstring). Refuses (DomainError)
    a missing or taken name, a bad metric name or format; a bad file gives ``ok=False`` and the
    problems by line, with nothing written."""
    name = (name or "").strip()
    if not name:
        raise DomainError("an imported judge needs a name")
    reader = registry.by_suffix(registry.MODEL).get(data_format)
    if reader is None:
        raise DomainError("the outputs file is JSONL or CSV")
    rubric = project.rubric_version.parsed()
    questions_by_id = {q.id: q for q in rubric.questions}
    metrics = list(dict.fromkeys(str(m).strip() for m in metrics if str(m).strip()))
    taken = {*questions_by_id, *(d.id for d in rubric.derived), "accepted", ID_KEY}
    for m in metrics:
        if not _NAME.match(m) or m in taken:
            raise DomainError(
                f"metric name {m!r} must be a plain name (letters, digits, _) that is not a rubric question, "
                "derived field, 'accepted' or 'id'"
            )
    _check_name_free(project, name)
    raw = Path(data).read_bytes() if isinstance(data, Path) else data
    sha256 = hashlib.sha256(raw.encode("utf-8") if isinstance(raw, str) else raw).hexdigest()
    report = JudgeImportReport(ok=False, name=name)
    problem = Problems(report)
    counts = ReadCounts()
    ratings = read_ratings(
        raw,
        reader,
        item_key=ID_KEY,
        problem=problem,
        counts=counts,
        expected=Expected(tuple(questions_by_id), tuple(metrics)),
    )
    report.lines_read = counts.records
    # a tabular file's cells are text: read as the rubric's values (a JSON line's are typed)
    cells_are_text = bool(counts.columns)
    # the latest version of each item, matched as every import of ratings matches them
    items, _several = items_by_key(project, ID_KEY, {r.key for r in ratings})
    parsed: list[tuple[str, MatchedItem, dict[str, Any], dict[str, float]]] = []
    for rating in ratings:
        where = rating.where
        item = items.get(rating.key)
        if item is None:
            problem(where, f"unknown external id {rating.key!r}")
            continue
        answers, scores, bad = {}, {}, False
        for key, value in rating.answers.items():
            if key in questions_by_id:
                answers[key] = _csv_answer(questions_by_id[key], value) if cells_are_text else value
            elif key in metrics:
                number = _number(value)
                if number is None:
                    problem(where, f"score {key!r} must be a finite number, not {shown(value)}")
                    bad = True
                else:
                    scores[key] = number
            else:
                problem(where, f"unknown question {key!r} (not in the rubric and not a declared metric)")
                bad = True
        # a CSV cell read as JSON (a list answer) can hold what the file's text did not (issue 37)
        stored_problem = None if bad else value_problem(answers)
        if stored_problem:
            problem(where, stored_problem)
            bad = True
        if not bad:
            parsed.append((where, item, answers, scores))
    if not report.lines_read and not problem.any:
        problem("line 1", "the file holds no outputs")
    questions = [q.id for q in rubric.questions if any(q.id in a for _, _, a, _ in parsed)]
    used_metrics = [m for m in metrics if any(m in s for _, _, _, s in parsed)]
    part = None
    if questions:
        try:
            part = judged_rubric(project, questions)
        except RubricError as exc:
            problem(
                "line 1", f"the questions answered ({', '.join(questions)}) are not a valid part of the rubric: {exc}"
            )
    elif parsed and not used_metrics:
        problem("line 1", "the file answers no rubric question and gives no declared metric")
    rows = []
    for where, item, answers, scores in parsed:
        cleaned: dict[str, Any] = {}
        if part is not None:
            try:
                cleaned = part.validate(answers, item=item.context)
            except AnswerError as exc:
                problem(where, f"invalid answer: {exc}")
                continue
        derived = judge_derived(part, cleaned, None) if part is not None else {}
        if scores:
            derived[METRICS_KEY] = scores
        rows.append((item, cleaned, derived))
    report.questions, report.metrics = questions, used_metrics
    if problem.any:
        return report
    phash = hashlib.sha256(method.encode("utf-8")).hexdigest()
    with transaction.atomic():
        _check_name_free(project, name)
        rater = Rater.objects.create(
            kind=Rater.Kind.MODEL,
            name=rater_name(name),
            backend=BACKEND,
            model_id=model_id[:200],
            prompt_hash=phash,
            parameters={
                "name": name,
                "method": method,
                "source_file": source_file,
                "sha256": sha256,
                "questions": questions,
                "metrics": used_metrics,
                "imported_by": getattr(user, "username", None),
            },
        )
        instances = Item.objects.in_bulk([item.id for item, _c, _d in rows])
        for item, cleaned, derived in rows:
            write_judge_annotation(
                rater=rater, project=project, item=instances[item.id], answers=cleaned, derived=derived
            )
    report.ok, report.rater, report.items = True, rater.id, len(rows)
    return report


def imported_raters(project: Project) -> list[Rater]:
    """The project's imported judges, newest first."""
    return list(
        Rater.objects.filter(backend=BACKEND, kind=Rater.Kind.MODEL, annotations__item__project=project)
        .distinct()
        .order_by("-created_at")
    )


# ---------------------------------------------------------------------------------- reading
def _check_name_free(project: Project, name: str) -> None:
    if JudgeConfig.objects.filter(project=project, name=name).exists() or any(
        r.name == rater_name(name) for r in imported_raters(project)
    ):
        raise DomainError(
            f"this project already has a judge named {name!r}; import under another name", code="conflict"
        )


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, str):
        try:
            v = float(v.strip())
        except ValueError:
            return None
    if isinstance(v, (int, float)):
        try:
            number = float(v)
        except OverflowError:  # an integer past 1e308 (issue 37, M6): no score
            return None
        return number if math.isfinite(number) else None
    return None


def _csv_answer(q: Question, cell: Any) -> Any:
    """A CSV cell as the rubric validator expects it (what cannot be read is passed on as text,
    so the validator's message names the problem)."""
    if not isinstance(cell, str):
        return cell
    cell = cell.strip()
    if q.repeat_over or q.type == "checklist":
        try:
            return loads(cell)
        except (json.JSONDecodeError, RecursionError):
            return cell
    if q.type in ("scale", "binary", "choice"):
        for o in q.options:
            if cell in (str(o.value), o.label):
                return o.value
        return cell
    return cell


__all__ = ["BACKEND", "JudgeImportReport", "import_judge_outputs", "imported_raters", "rater_name"]
