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

A staged-upload job like every import of a file (:class:`~judges.models.JudgeOutputImport` on
the skeleton of ``annotation.staging``): :func:`start_judge_import` runs it at once below
``HV_INLINE_IMPORT_BYTES`` (the page, the API; the command always), else on a worker
(``judges.tasks``), with its progress in its report while it runs, its staged upload deleted
once it ended, and the reaper's re-run (it writes its rows and "done" in one transaction).

All or nothing: any bad line (invalid JSON, wrong CSV header, no or unknown external id, an item
given twice, an unknown question, an invalid answer, a score that is not a number) means nothing
is written; the report lists the problems by line number. A name already used by a judge or an
import of the project is refused (import under a new name; names are how reports tell raters
apart). Idempotent: a file already written into the project (same SHA-256) adds nothing (the
import ends done as its duplicate), also when two imports of it run at once (the writer claims
the file's hash in its writing transaction, ``staging.claim_file``)."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from annotation.annotation_import import (
    MatchedItem,
    Problems,
    comparison_answer,
    comparison_defaults,
    items_by_key,
    read_bytes,
    read_ratings,
)
from annotation.answers import METRICS_KEY
from annotation.models import Item, Project, Rater
from annotation.rubric import AnswerError, Question, RubricError
from annotation.sources import registry
from annotation.sources.common import Expected, ReadCounts, Reader
from annotation.staging import (
    Progress,
    Ticker,
    claim_file,
    format_of,
    run_checked_import,
    stage_file,
    start_staged,
)
from core import jobs
from core.errors import DomainError
from core.values import loads, shown, value_problem

from .models import JudgeConfig, JudgeOutputImport
from .ratings import judge_derived, judged_rubric, write_judge_annotation

BACKEND = "imported"
ID_KEY = "id"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: the longest name of an imported judge (``JudgeOutputImport.name``, the page's and the API's limit)
NAME_LENGTH = 150
#: the staged file's name before its format's ending (``outputs.jsonl``)
STAGED_STEM = "outputs"
#: share of the bar taken by reading and checking (the rest: writing)
CHECK_SHARE = 0.5


@dataclass
class JudgeImportReport:
    ok: bool
    rater: int | None = None
    name: str = ""
    items: int = 0
    lines_read: int = 0
    questions: list[str] = field(default_factory=list)
    metrics: list[str] = field(default_factory=list)
    #: the import that wrote this file into the project already (nothing written by this one)
    duplicate_of: int | None = None
    errors: list[str] = field(default_factory=list)
    errors_truncated: int = 0

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def of(cls, job: JudgeOutputImport) -> JudgeImportReport:
        """The report a job keeps (a pending job's holds only its progress: not ``ok`` yet)."""
        stored = job.report or {}
        known = {f.name for f in fields(cls)}
        report = cls(**{k: v for k, v in stored.items() if k in known and k != "ok"}, ok=bool(stored.get("ok")))
        report.name = report.name or job.name
        return report


def rater_name(name: str) -> str:
    return f"imported: {name}"[:200]


def metric_names(text: str) -> list[str]:
    """The metric columns a form or API request names, comma-separated."""
    return [m.strip() for m in (text or "").split(",") if m.strip()]


def _reader(data_format: str) -> Reader:
    """The model reader of ``data_format``: its key (``outputs-jsonl``) or its file type (``jsonl``)."""
    reader = registry.READERS.get(data_format)
    if reader is None or reader.rater_kind != registry.MODEL:
        reader = registry.by_suffix(registry.MODEL).get(data_format)
    if reader is None:
        raise DomainError("the outputs file is JSONL or CSV")
    return reader


def _clean_metrics(project: Project, metrics: Sequence[str]) -> list[str]:
    rubric = project.rubric_version.parsed()
    metrics = list(dict.fromkeys(str(m).strip() for m in metrics if str(m).strip()))
    taken = {*(q.id for q in rubric.questions), *(d.id for d in rubric.derived), "accepted", ID_KEY}
    for m in metrics:
        if not _NAME.match(m) or m in taken:
            raise DomainError(
                f"metric name {m!r} must be a plain name (letters, digits, _) that is not a rubric question, "
                "derived field, 'accepted' or 'id'"
            )
    return metrics


# ---------------------------------------------------------------------------------- start
def start_judge_import(
    *,
    project: Project,
    path: Path,
    data_format: str,
    name: str,
    model_id: str = "",
    method: str = "",
    metrics: Sequence[str] = (),
    original_name: str = "",
    user: AbstractBaseUser | None = None,
    inline: bool | None = None,
) -> JudgeOutputImport:
    """Create the job for a file (staged, or a path given on the command line) and run it: at
    once for small files (or ``inline``), else on a worker (``judges.tasks``). Refuses
    (DomainError, no job made) a missing or taken name, a bad metric name or format; what is
    wrong in the file is the job's report (failed, problems by line, nothing written)."""
    name = (name or "").strip()
    if not name:
        raise DomainError("an imported judge needs a name")
    if len(name) > NAME_LENGTH:  # the job's column: a longer name would be cut, and differ from the one checked
        raise DomainError(f"an imported judge's name is at most {NAME_LENGTH} characters")
    reader = _reader(data_format)
    metrics = _clean_metrics(project, metrics)
    _check_name_free(project, name)
    job = JudgeOutputImport.objects.create(
        project=project,
        created_by=user,
        data_file=str(path),
        data_format=reader.key,
        original_name=(original_name or Path(path).name)[:255],
        name=name,
        model_id=(model_id or "")[:200],
        method=method or "",
        metrics=metrics,
    )
    return start_staged(
        job, size=Path(path).stat().st_size, run=lambda job: run_judge_import_job(job=job), inline=inline
    )


def import_upload(
    *,
    project: Project,
    upload: Any,
    fields: Mapping[str, Any],
    data_format: str | None = None,
    user: AbstractBaseUser | None = None,
) -> JudgeOutputImport:
    """:func:`start_judge_import` of an uploaded file (the page's and the API's), staged to disk
    chunk by chunk through the imports' one door (``annotation.staging``: refused, with nothing
    left behind, above ``HV_MAX_UPLOAD_BYTES``) and deleted once the job ended, or at once when
    the request is refused; the format from ``data_format`` or the file's name (JSONL by
    default); ``fields`` the form's ``name``, ``model_id``, ``method``, ``metrics`` (comma-separated)."""
    data_format = data_format or format_of(upload.name) or "jsonl"
    reader = registry.READERS.get(data_format) or registry.by_suffix(registry.MODEL).get(data_format)
    staged = stage_file(
        name=upload.name,
        chunks=upload.chunks(),
        stem=STAGED_STEM,
        suffix=reader.suffix if reader else ".txt",
        owner={"project": project.id, "user": getattr(user, "pk", None)},
    )
    try:
        return start_judge_import(
            project=project,
            path=staged.path,
            data_format=data_format,
            name=fields["name"],
            model_id=fields.get("model_id", ""),
            method=fields.get("method", ""),
            metrics=metric_names(fields.get("metrics", "")),
            original_name=upload.name,
            user=user,
        )
    except BaseException:  # refused before a job was made: nothing will read the upload
        staged.discard()
        raise


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
    """Import the file (a path, or its content) as the model rater ``name`` at once, as a job
    (the command's and scripts' way; see the module docstring): its report. Refuses (DomainError)
    a missing or taken name, a bad metric name or format; a bad file gives ``ok=False`` and the
    problems by line, with nothing written. Content is staged first (the job reads a file)."""
    if isinstance(data, Path):
        path, staged = data.resolve(), None
    else:
        staged = stage_file(
            name=source_file or f"outputs{_reader(data_format).suffix}",
            chunks=[read_bytes(data)],
            stem=STAGED_STEM,
            suffix=_reader(data_format).suffix,
            owner={"project": project.id, "user": getattr(user, "pk", None)},
        )
        path = staged.path
    try:
        job = start_judge_import(
            project=project,
            path=path,
            data_format=data_format,
            name=name,
            model_id=model_id,
            method=method,
            metrics=metrics,
            original_name=source_file,
            user=user,
            inline=True,
        )
    except BaseException:
        if staged is not None:
            staged.discard()
        raise
    return JudgeImportReport.of(job)


# ---------------------------------------------------------------------------------- check
@dataclass
class Plan:
    """What a checked import would write (nothing when ``report.ok`` is false)."""

    report: JudgeImportReport
    sha256: str
    rows: list[tuple[MatchedItem, dict[str, Any], dict[str, Any]]] = field(default_factory=list)


def check_outputs(
    *,
    project: Project,
    data: bytes | str | Path,
    data_format: str,
    name: str,
    metrics: Sequence[str] = (),
    progress: Progress | None = None,
    exclude_import: int | None = None,
) -> Plan:
    """Read and check a file (nothing written): the rows an import would write, with the report
    (every problem by line). A file an earlier import of the project wrote is its duplicate."""
    reader = _reader(data_format)
    rubric = project.rubric_version.parsed()
    questions_by_id = {q.id: q for q in rubric.questions}
    metrics = _clean_metrics(project, metrics)
    raw = read_bytes(data)
    report = JudgeImportReport(ok=False, name=name)
    plan = Plan(report=report, sha256=hashlib.sha256(raw).hexdigest())
    earlier = (
        JudgeOutputImport.objects.filter(project=project, sha256=plan.sha256, status=JudgeOutputImport.Status.DONE)
        .exclude(pk=exclude_import)
        .order_by("id")
        .first()
    )
    if earlier is not None:  # the same file again: nothing to add
        as_duplicate(report, earlier)
        return plan
    ticker = Ticker(progress)
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
    ticker.report(0.2 * CHECK_SHARE, "checking")
    # a tabular file's cells are text: read as the rubric's values (a JSON line's are typed)
    cells_are_text = bool(counts.columns)
    # the latest version of each item, matched as every import of ratings matches them
    items, _several = items_by_key(project, ID_KEY, {r.key for r in ratings})
    parsed: list[tuple[str, MatchedItem, dict[str, Any], dict[str, float]]] = []
    total = max(len(ratings), 1)
    for n, rating in enumerate(ratings):
        if ticker.due():
            ticker.report(CHECK_SHARE * (0.2 + 0.6 * n / total), "checking")
        where = rating.where
        item = items.get(rating.key)
        if item is None:
            problem(where, f"unknown external id {rating.key!r}")
            continue
        given = rating.answers
        if rating.compared is not None:  # a comparison: its winner and reason as rubric answers
            targets = comparison_defaults(rubric)
            winner = targets.get("winner")
            if winner is None:
                problem(where, "the rubric has no single pairwise question for the winner")
                continue
            try:
                side = comparison_answer(rating, questions_by_id[winner], item.context)
            except ValueError as exc:
                problem(where, str(exc))
                continue
            given = {winner: side}
            if "reason" in rating.answers and targets.get("reason", "reason"):
                given["reason"] = rating.answers["reason"]
        answers, scores, bad = {}, {}, False
        for key, value in given.items():
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
    for n, (where, item, answers, scores) in enumerate(parsed):
        if ticker.due():
            ticker.report(CHECK_SHARE * (0.8 + 0.2 * n / max(len(parsed), 1)), "checking")
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
        plan.rows.append((item, cleaned, derived))
    report.questions, report.metrics = questions, used_metrics
    report.ok = not problem.any
    if not report.ok:
        plan.rows = []
    return plan


def as_duplicate(report: JudgeImportReport, earlier: JudgeOutputImport) -> JudgeImportReport:
    """``report`` turned into "already imported by ``earlier``": nothing written, the earlier
    import's rater named."""
    stored = earlier.report or {}
    report.ok, report.duplicate_of, report.items = True, earlier.id, 0
    report.rater, report.name = earlier.rater_id, earlier.name
    report.lines_read = int(stored.get("lines_read") or 0)
    report.questions, report.metrics = list(stored.get("questions") or []), list(stored.get("metrics") or [])
    return report


# ---------------------------------------------------------------------------------- write, run
def write_outputs(plan: Plan, *, job: JudgeOutputImport, progress: Progress | None = None) -> Rater:
    """Write a checked plan as the job's model rater in one transaction, which ends with the
    job's "done" (rows and outcome one commit: a killed worker wrote nothing). It starts by
    claiming the file for ``job`` (``staging.claim_file``): :class:`AlreadyWritten`, and nothing
    written, when another import of the project wrote the same file; then the name is checked
    again under the project's row lock (taken meanwhile: DomainError, nothing written)."""
    report, project = plan.report, job.project
    ticker = Ticker(progress)
    with transaction.atomic():
        claim_file(job, plan.sha256)
        # Two files imported under one name at once each found the name free when checked; the
        # project's row lock makes the second writer wait for the first's commit, so its check
        # here sees the first's rater (no unique constraint can say "one rater of this name per
        # project": a rater belongs to a project only through its annotations). SQLite has one
        # writer at a time, and claim_file above has already taken it.
        Project.objects.select_for_update().filter(pk=project.pk).first()
        _check_name_free(project, job.name)
        rater = Rater.objects.create(
            kind=Rater.Kind.MODEL,
            name=rater_name(job.name),
            backend=BACKEND,
            model_id=job.model_id[:200],
            prompt_hash=hashlib.sha256(job.method.encode("utf-8")).hexdigest(),
            parameters={
                "name": job.name,
                "method": job.method,
                "source_file": job.original_name,
                "sha256": plan.sha256,
                "questions": report.questions,
                "metrics": report.metrics,
                "imported_by": getattr(job.created_by, "username", None),
                "import": job.id,
            },
        )
        instances = Item.objects.in_bulk([item.id for item, _c, _d in plan.rows])
        total = max(len(plan.rows), 1)
        for n, (item, cleaned, derived) in enumerate(plan.rows):
            if ticker.due():
                ticker.report(CHECK_SHARE + (1 - CHECK_SHARE) * n / total, "writing")
            write_judge_annotation(
                rater=rater, project=project, item=instances[item.id], answers=cleaned, derived=derived
            )
        report.rater, report.items = rater.id, len(plan.rows)
        jobs.finish_claimed(job, report=report.as_dict(), sha256=plan.sha256, rater=rater)
    return rater


def run_judge_import_job(*, job: JudgeOutputImport) -> JudgeOutputImport:
    """Run a stored import (from the page, the API, the command or a worker) and keep its report
    and the file's SHA-256 on the job (``staging.run_checked_import``: progress while it runs,
    refused, a duplicate or written, the staged upload deleted once the job has ended)."""

    def check(job: JudgeOutputImport, progress: Progress) -> Plan:
        return check_outputs(
            project=job.project,
            data=Path(job.data_file),
            data_format=job.data_format,
            name=job.name,
            metrics=job.metrics,
            progress=progress,
            exclude_import=job.pk,
        )

    def write(plan: Plan, job: JudgeOutputImport, progress: Progress) -> None:
        write_outputs(plan, job=job, progress=progress)

    return run_checked_import(job, check=check, write=write, as_duplicate=as_duplicate)


def imported_raters(project: Project) -> list[Rater]:
    """The project's imported judges, newest first."""
    return list(
        Rater.objects.filter(backend=BACKEND, kind=Rater.Kind.MODEL, annotations__item__project=project)
        .distinct()
        .order_by("-created_at")
    )


def judge_imports(project: Project, *, limit: int = 20) -> list[JudgeOutputImport]:
    """The project's latest imports of judge outputs, newest first (the judges page's table)."""
    return list(JudgeOutputImport.objects.filter(project=project).order_by("-created_at")[:limit])


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


__all__ = [
    "BACKEND",
    "JudgeImportReport",
    "check_outputs",
    "import_judge_outputs",
    "import_upload",
    "imported_raters",
    "judge_imports",
    "rater_name",
    "run_judge_import_job",
    "start_judge_import",
]
