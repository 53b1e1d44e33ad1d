"""Importing human annotations collected in another tool onto a project's items (issue 26).

    read (the format's reader in ``annotation.sources.registry``: Label Studio JSON / JSON-MIN /
          CSV, long CSV / JSONL, wide CSV; :func:`read_ratings`, the stage a judge's outputs,
          ``judges.imported``, are read through too)
      -> match each rating's item by the item key: the task data's value of the key (e.g.
         ``pair_id``) as an item's external id first, then as a field of the item's data / meta
         of that name; with the default key ``id`` naming nothing, the one data key that names
         the project's items is detected (:func:`detect_item_key`)
      -> map source fields to rubric questions (by name; ``mapping`` FROM -> TO for the rest,
         TO "" to ignore a field) and coerce values to the rubric's options ("1" -> 1, an
         option's label -> its value)
      -> check every answer with the rubric validator a browser submission goes through
      -> write: one pseudonymous human rater per source annotator (no account; the source id
         kept in ``Rater.parameters``, shown only in the import's preview to say which annotator
         becomes which rater, never exported), one submitted regular ``Assignment`` and
         one ``Annotation`` per rating (``source_import`` = the import), rows streamed with COPY

The preview explains the import before anything is written: the item key (detected or given),
how each field's values are read (examples: in the file -> stored, with the option's label),
which annotators become which raters with their counts, and the first rows to be written; a
problem shared by every task is said once, first (a key no task has, a file for another project).
A preview of a file above ``HV_INLINE_IMPORT_BYTES`` is a job on a worker (an ``AnnotationImport``
with ``preview`` set: it writes and claims nothing and is no import), never work inside a web
request; and the check behind every preview reads the staged file from disk a chunk at a time,
once per pass, keeping no rating and no row (:func:`check_annotations`, issue 37, M3).

All or nothing: any problem (an option outside the rubric, an unknown item, a missing answer, a
rater-item pair given twice, an unknown field...) means nothing is written, and the report lists
every problem by task id or line number. Idempotent: a file already imported into the project
(same SHA-256) adds nothing, and a rating already stored by an earlier import with the same
answers is counted as ``already_imported`` instead of written again (different answers for a
stored pair are a problem). Idempotent at the same time too: the import that writes claims the
file's hash first in its writing transaction (``staging.claim_file``, a unique constraint per
project), so of imports of one file running at once one writes and the others end as its
duplicates. Provenance (SHA-256, format, item key, mapping) is the
:class:`~annotation.models.AnnotationImport` row, a ``core.jobs`` job like the item import."""

from __future__ import annotations

import codecs
import hashlib
import io
import json
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import IO, Any, TextIO

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.utils import timezone

from benchmarks.base import STRATA_KEYS
from core import jobs
from core.errors import DomainError
from core.values import loads, value_problem

from . import writing
from .bulk import insert_rows, reserve_ids
from .models import IMPORTED_BACKEND, Annotation, AnnotationImport, Assignment, Item, Project, Rater
from .presentation import render_context
from .rubric import AnswerError, Question, Rubric
from .sources import comparisons, labelstudio_flat, registry
from .sources.common import HUMAN, Expected, ReadCounts, Reader, SourceRating, TextSource, whole_text
from .staging import (
    UPLOAD_GONE,
    AlreadyWritten,
    Progress,
    StagedFile,
    Ticker,
    claim_file,
    discard_job_upload,
    discard_token,
    run_checked_import,
    run_staged,
    stage_file,
    staged_file,
    staging_root,
    start_staged,
)

#: item keys that mean the item's external id
EXTERNAL_ID_KEYS = ("id", "external_id")
#: item keys that leave the choice to the file: the default ``id`` (and no key at all); when the
#: tasks' data lack it, or none of its values names an item, the key is detected (:func:`detect_item_key`)
DETECTED_KEYS = ("", "id")
#: how many examples of the values read, per source field, and how many sample rows a preview shows
VALUE_EXAMPLES = 4
SAMPLE_ROWS = 3
MAX_REPORTED_ERRORS = 200
#: share of the bar taken by reading and checking (the rest: writing)
CHECK_SHARE = 0.7
#: ``q[3]``: the third element's answer of a question asked per element of a list
ELEMENT = re.compile(r"^(?P<q>[a-z][a-z0-9_]*)\[(?P<n>\d+)\]$")


@dataclass
class AnnotationImportReport:
    ok: bool
    preview: bool = False
    format: str = ""
    item_key: str = "id"
    #: the item key was found in the file (one key of the tasks' data names the project's items)
    item_key_detected: bool = False
    #: the keys of the tasks' data (Label Studio), listed when the item key is not one of them
    data_keys: list[str] = field(default_factory=list)
    sha256: str = ""
    #: source field -> rubric question (``q`` or ``q[n]``), or None when the field is ignored
    mapping: dict[str, str | None] = field(default_factory=dict)
    #: rubric questions no source field answers
    questions_unanswered: list[str] = field(default_factory=list)
    records_read: int = 0
    annotations_read: int = 0
    skipped_cancelled: int = 0
    #: records of a task nobody annotated (Label Studio's flat exports write one per such task)
    skipped_empty: int = 0
    raters: int = 0
    raters_new: int = 0
    items_matched: int = 0
    annotations_created: int = 0
    already_imported: int = 0
    duplicate_of: int | None = None
    errors: list[str] = field(default_factory=list)
    errors_truncated: int = 0
    #: how values are read: source field -> [[value in the file, value stored, the option's label]]
    value_examples: dict[str, list[list[str]]] = field(default_factory=dict)
    #: the raters the import writes to: [{"source", "rater", "new", "annotations"}], in file order
    rater_plan: list[dict[str, Any]] = field(default_factory=list)
    #: the first rows the import would write: [{"where", "item", "rater", "answers"}]
    sample_rows: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def parse_mapping(pairs: Iterable[str] | Mapping[str, str] | str | None) -> dict[str, str]:
    """``FROM=TO`` pairs (a list, or text with one per line or comma-separated) as a dict;
    ``FROM=`` ignores the field. Raises DomainError for a pair without ``=``."""
    if pairs is None:
        return {}
    if isinstance(pairs, Mapping):
        return {str(k).strip(): str(v or "").strip() for k, v in pairs.items()}
    if isinstance(pairs, str):
        pairs = [pairs]
    pairs = [p for text in pairs for line in str(text).splitlines() for p in line.split(",")]
    out: dict[str, str] = {}
    for raw in pairs:
        text = str(raw).strip()
        if not text:
            continue
        source, sep, target = text.partition("=")
        if not sep or not source.strip():
            raise DomainError(f"a mapping is FROM=TO (FROM= to ignore a field), not {text!r}")
        out[source.strip()] = target.strip()
    return out


# ---------------------------------------------------------------------------------- coercion
def _casefold(v: Any) -> str:
    return str(v).strip().casefold()


def coerce_option(q: Question, raw: Any) -> Any:
    """A source value as the option value the rubric expects: the value itself, its text
    (``"1"`` for ``1``, ``"1.0"``), or the option's label (case and spaces ignored). Anything
    else is passed on unchanged, so the validator names the problem."""
    values = q.option_values()
    if isinstance(raw, list) and len(raw) == 1:
        raw = raw[0]
    if not isinstance(raw, bool) and raw in values and any(type(raw) is type(v) for v in values if v == raw):
        return raw
    text = str(raw).strip()
    for o in q.options:
        if text == str(o.value):
            return o.value
    try:
        number = float(text)
    except ValueError:
        number = None
    if number is not None:
        for o in q.options:
            if isinstance(o.value, (int, float)) and not isinstance(o.value, bool) and float(o.value) == number:
                return o.value
    folded = text.casefold()
    for o in q.options:
        if folded == o.label.strip().casefold() or folded == str(o.value).casefold():
            return o.value
    if q.type == "pairwise" and q.pair:  # the item field picked names its side
        for side, item_field in zip(("left", "right"), q.pair, strict=True):
            if text == item_field:
                return side
    return raw


def coerce(q: Question, raw: Any) -> Any:
    """One source answer to ``q`` (one element's, for a repeated question) as the validator takes it."""
    if raw is None or raw == "":
        return None
    if q.type == "checklist":
        if isinstance(raw, str):
            text = raw.strip()
            try:
                raw = loads(text) if text.startswith("[") else re.split(r"\s*[|;]\s*", text)
            except (json.JSONDecodeError, RecursionError):
                return raw
        if not isinstance(raw, list):
            raw = [raw]
        return [coerce_option(q, x) for x in raw]
    if q.type in ("scale", "binary", "choice", "pairwise"):
        return coerce_option(q, raw)
    if q.type == "text":
        if isinstance(raw, list):
            return "\n".join(str(x) for x in raw)
        return raw if isinstance(raw, str) else str(raw)
    return raw


def coerce_repeated(q: Question, raw: Any) -> Any:
    """The whole list answer of a repeated question (a JSON list as text in a CSV cell)."""
    if isinstance(raw, str):
        try:
            raw = loads(raw)
        except (json.JSONDecodeError, RecursionError):
            return raw
    if not isinstance(raw, list):
        return raw
    return [coerce(q, x) for x in raw]


def comparison_defaults(rubric: Rubric) -> dict[str, str]:
    """Where a comparison file's answers go unless mapped: ``winner`` to the rubric's one pairwise
    question, ``reason`` to a question of that name (else left out: the rubric keeps none)."""
    pairwise = [q.id for q in rubric.questions if q.type == "pairwise"]
    out = {comparisons.WINNER_COLUMN: pairwise[0]} if len(pairwise) == 1 else {}
    if not any(q.id == comparisons.REASON_COLUMN for q in rubric.questions):
        out[comparisons.REASON_COLUMN] = ""
    return out


def comparison_answer(rating: SourceRating, q: Question, item_ctx: Mapping[str, Any]) -> str:
    """A comparison's winner (``model_a`` / ``model_b`` / ``tie`` in the file's order, the systems'
    names in ``rating.compared``) as the pairwise answer in the item's own order: ``left`` for its
    first field (``q.pair[0]``, the answer of the item's ``model_a``), ``right``, or ``tie``.
    ValueError when the item does not compare those two systems, or ``q`` is no pairwise question."""
    if q.type != "pairwise" or not q.pair:
        raise ValueError(f"the winner answers {q.id!r}, which is not a pairwise question")
    side = rating.answers.get(comparisons.WINNER_COLUMN)
    first, second = rating.compared or ("", "")
    held = tuple(str(item_ctx.get(name, "")) for name in comparisons.SYSTEM_COLUMNS)
    if not all(held):
        raise ValueError(
            f"item {rating.key!r} names no systems ({', '.join(comparisons.SYSTEM_COLUMNS)} fields): "
            "comparisons are imported onto items of a pairwise-comparison preset"
        )
    if held == (first, second):
        order = {"model_a": "left", "model_b": "right", "tie": "tie"}
    elif held == (second, first):  # the file lists the pair the other way round
        order = {"model_a": "right", "model_b": "left", "tie": "tie"}
    else:
        raise ValueError(
            f"item {rating.key!r} compares {held[0]!r} (model_a) and {held[1]!r} (model_b), "
            f"not {first!r} and {second!r}"
        )
    return order[str(side)]


# ---------------------------------------------------------------------------------- the check
@dataclass(slots=True)
class _Row:
    rater: str
    item_id: int
    answers: dict[str, Any]
    derived: dict[str, Any]
    duration_ms: int | None
    submitted_at: Any


@dataclass
class Plan:
    """What a checked import would write (nothing when ``report.ok`` is false)."""

    report: AnnotationImportReport
    rows: list[_Row] = field(default_factory=list)
    raters: dict[str, int | None] = field(default_factory=dict)  # source id -> Rater id (None: new)
    attributes: dict[str, dict[str, Any]] = field(default_factory=dict)  # source id -> attributes
    attribute_updates: dict[int, dict[str, Any]] = field(default_factory=dict)  # rater id -> merged
    #: the rows to write per source rater id (counted also when ``rows`` is not kept: a preview)
    per_source: dict[str, int] = field(default_factory=dict)

    @property
    def sha256(self) -> str:
        return self.report.sha256


class Problems:
    """``problem(where, message)`` for the readers and the checks: kept in the report's
    ``errors`` as "where: message", the first :data:`MAX_REPORTED_ERRORS`, then only counted in
    ``errors_truncated``. Any report with ``errors`` and ``errors_truncated``."""

    def __init__(self, report: Any) -> None:
        self.report = report

    def __call__(self, where: str, message: str) -> None:
        if len(self.report.errors) < MAX_REPORTED_ERRORS:
            self.report.errors.append(f"{where}: {message}")
        else:
            self.report.errors_truncated += 1

    @property
    def any(self) -> bool:
        return bool(self.report.errors or self.report.errors_truncated)


def read_bytes(data: bytes | str | Path) -> bytes:
    if isinstance(data, Path):
        return data.read_bytes()
    return data.encode("utf-8") if isinstance(data, str) else data


def sha256_of(data: bytes | str | Path) -> str:
    return hashlib.sha256(read_bytes(data)).hexdigest()


#: bytes read at a time where a file is hashed and its UTF-8 checked
READ_CHUNK_BYTES = 1 << 20
_BOM = codecs.BOM_UTF8


@dataclass(frozen=True)
class RatingsFile:
    """The file a check reads: a path (a staged upload, a file given to the command), read from
    disk again for each pass and never held whole (issue 37, M3), or the bytes a caller has."""

    path: Path | None = None
    data: bytes | None = None

    @classmethod
    def of(cls, data: bytes | str | Path) -> RatingsFile:
        if isinstance(data, Path):
            return cls(path=data)
        return cls(data=data.encode("utf-8") if isinstance(data, str) else data)

    def open_bytes(self) -> IO[bytes]:
        return self.path.open("rb") if self.path is not None else io.BytesIO(self.data or b"")

    def open_text(self) -> TextIO:
        """The file as text (a BOM dropped, line ends as written), decoded as it is read."""
        return io.TextIOWrapper(self.open_bytes(), encoding="utf-8-sig", newline="")

    def digest(self) -> tuple[str, int | None]:
        """(the SHA-256, the first byte that is no UTF-8 after a BOM, or None), in one streaming
        read: a chunk in memory at a time."""
        sha = hashlib.sha256()
        decoder = codecs.getincrementaldecoder("utf-8")()
        at, bad = 0, None  # bytes decoded so far, counted after a BOM as decode("utf-8-sig") counts

        def decode(data: bytes, final: bool = False) -> None:
            nonlocal at, bad
            if bad is None:
                pending = len(decoder.getstate()[0])
                try:
                    decoder.decode(data, final)
                except UnicodeDecodeError as exc:
                    bad = at - pending + exc.start
            at += len(data)

        with self.open_bytes() as fh:
            head = fh.read(len(_BOM))
            sha.update(head)
            decode(b"" if head == _BOM else head)
            for chunk in iter(lambda: fh.read(READ_CHUNK_BYTES), b""):
                sha.update(chunk)
                decode(chunk)
        decode(b"", final=True)
        return sha.hexdigest(), bad


def iter_ratings(
    source: TextSource,
    reader: Reader,
    *,
    item_key: str,
    problem: Callable[[str, str], None],
    counts: ReadCounts,
    expected: Expected | None = None,
) -> Iterator[SourceRating]:
    """The format's reader over ``source`` (a text, or a file opened as text, read as it goes),
    each rating's texts checked: a rating that cannot be stored is reported and left out."""
    text = source if reader.reads_stream else whole_text(source)  # a reader registered before streams
    for rating in reader.read(text, item_key=item_key, problem=problem, counts=counts, expected=expected or Expected()):
        # every text a rating brings is checked once here, for every format: an id or a rater name
        # holding a lone surrogate (JSON's "\udc00") would otherwise reach a query or a row (issue 37)
        bad = value_problem([rating.key, rating.rater, rating.answers, rating.attributes])
        if bad:
            problem(rating.where, bad)
        else:
            yield rating


def read_ratings(
    raw: bytes | str,
    reader: Reader,
    *,
    item_key: str,
    problem: Callable[[str, str], None],
    counts: ReadCounts,
    expected: Expected | None = None,
) -> list[SourceRating]:
    """The reading stage every import of ratings made elsewhere goes through, people's and a
    judge's alike: the file as UTF-8 text (a BOM dropped), read by its format's reader into
    :class:`SourceRating` rows; every problem reported by task or line. (The import of people's
    ratings reads a file through :func:`iter_ratings` instead, never holding it whole.)"""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            problem("line 1", f"the file is not UTF-8 text (byte {exc.start})")
            return []
    ratings = list(iter_ratings(raw, reader, item_key=item_key, problem=problem, counts=counts, expected=expected))
    return [] if counts.broken else ratings


def resolve_mapping(
    rubric: Rubric, fields: Iterable[str], explicit: Mapping[str, str]
) -> tuple[dict[str, str | None], dict[str, str]]:
    """(source field -> question / ``q[n]`` / None to ignore, source field -> why it maps to nothing)."""
    questions = {q.id: q for q in rubric.questions}
    mapping: dict[str, str | None] = {}
    unknown: dict[str, str] = {}
    for name in fields:
        target = explicit.get(name, name)
        if target == "":
            mapping[name] = None
            continue
        m = ELEMENT.match(target)
        if target in questions or (m and m["q"] in questions and questions[m["q"]].repeat_over and int(m["n"]) >= 1):
            mapping[name] = target
        elif name in explicit:
            unknown[name] = f"the mapping {name}={target} names no rubric question"
        else:
            # in the mapping's own words (FROM=TO), which the page, the API and the command all take
            unknown[name] = (
                f"unknown field {name!r}: not a rubric question ({', '.join(questions)}); "
                f"map it as {name}=QUESTION, or {name}= to leave it out"
            )
    return mapping, unknown


@dataclass(slots=True)
class MatchedItem:
    """An item a rating names, read as values: its id, external id and render context."""

    id: int
    external_id: str
    context: dict[str, Any]


#: the context of an item matched without it (one shared, never written to: not a dict per item)
NO_CONTEXT: Mapping[str, Any] = MappingProxyType({})


def _item_rows(qs: Any, *, with_context: bool = True) -> Iterable[tuple[MatchedItem, dict[str, Any]]]:
    if not with_context:  # the id and external id only (issue 37, M3)
        for pk, ext in qs.values_list("id", "external_id"):
            yield MatchedItem(pk, ext, NO_CONTEXT), NO_CONTEXT
        return
    for pk, ext, data, meta, *strata in qs.values_list("id", "external_id", "data", "meta", *STRATA_KEYS):
        yield MatchedItem(pk, ext, render_context(data, dict(zip(STRATA_KEYS, strata, strict=True)))), meta or {}


#: items whose render context is read at once while ratings are checked (:func:`with_contexts`)
CONTEXT_BATCH = 2_000


def item_contexts(ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    """Item id -> its render context, for the items ``ids``."""
    out: dict[int, dict[str, Any]] = {}
    wanted = list(ids)
    for start in range(0, len(wanted), 5000):
        rows = Item.objects.filter(pk__in=wanted[start : start + 5000]).values_list("id", "data", *STRATA_KEYS)
        for pk, data, *strata in rows:
            out[pk] = render_context(data, dict(zip(STRATA_KEYS, strata, strict=True)))
    return out


def with_contexts(
    ratings: Iterable[SourceRating], items: Mapping[str, MatchedItem]
) -> Iterator[tuple[SourceRating, dict[str, Any]]]:
    """Each rating with the render context of the item it names (empty when it names none), the
    contexts read :data:`CONTEXT_BATCH` ratings at a time: a check holds a batch's contexts, not
    every matched item's (issue 37, M3)."""
    batch: list[SourceRating] = []

    def flush() -> Iterator[tuple[SourceRating, dict[str, Any]]]:
        contexts = item_contexts({items[r.key].id for r in batch if r.key in items})
        for r in batch:
            item = items.get(r.key)
            yield r, contexts.get(item.id, {}) if item is not None else {}
        batch.clear()

    for rating in ratings:
        batch.append(rating)
        if len(batch) >= CONTEXT_BATCH:
            yield from flush()
    yield from flush()


def latest_items(project: Project) -> list[tuple[MatchedItem, dict[str, Any]]]:
    """The latest version of every item of the project with its meta (matching by a field)."""
    latest: dict[str, tuple[MatchedItem, dict[str, Any]]] = {}
    for it, meta in _item_rows(Item.objects.filter(project=project).order_by("external_id", "version")):
        latest[it.external_id] = (it, meta)  # ordered by version: the latest wins
    return list(latest.values())


def items_by_key(
    project: Project,
    item_key: str,
    keys: set[str],
    *,
    latest: list[tuple[MatchedItem, dict[str, Any]]] | None = None,
    with_context: bool = True,
) -> tuple[dict[str, MatchedItem], dict[str, list[str]]]:
    """The matching step of every import of ratings made elsewhere: key -> the latest version of
    the item it names, and key -> external ids when it names several. A key is the item's
    external id first (a project whose items were imported with ``id`` = the task's ``pair_id``
    is matched by ``pair_id``); a key no external id has is then looked up as the field
    ``item_key`` of the item's data or meta (not for ``id`` / ``external_id``). Without
    ``with_context`` the items come with an empty context (:func:`item_contexts` reads it later)."""
    qs = Item.objects.filter(project=project).order_by("external_id", "version")
    found: dict[str, MatchedItem] = {}
    several: dict[str, list[str]] = {}
    wanted = list(keys)
    for start in range(0, len(wanted), 5000):
        for it, _meta in _item_rows(qs.filter(external_id__in=wanted[start : start + 5000]), with_context=with_context):
            found[it.external_id] = it  # ordered by version: the latest wins
    rest = set(keys) - found.keys()
    if item_key in EXTERNAL_ID_KEYS or not rest:
        return found, several
    by_field: dict[str, MatchedItem] = {}
    for it, meta in latest if latest is not None else latest_items(project):
        value = it.context.get(item_key, meta.get(item_key))
        if value is None or isinstance(value, (list, dict)):
            continue
        text = str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
        if text not in rest:
            continue
        if text in by_field:
            several.setdefault(text, [by_field[text].external_id]).append(it.external_id)
        else:
            by_field[text] = it if with_context else MatchedItem(it.id, it.external_id, NO_CONTEXT)
    found.update(by_field)
    return found, several


def detect_item_key(project: Project, data_keys: Mapping[str, set[str]], *, tried: str) -> tuple[str | None, list[str]]:
    """(the one key of the tasks' data whose values name items of the project, else None; the
    keys that name some, each value one item). Each key's values are matched as
    :func:`items_by_key` matches them."""
    latest = latest_items(project)
    naming: list[str] = []
    for key in sorted(data_keys):
        values = data_keys[key]
        if key == tried or not values:
            continue
        found, several = items_by_key(project, key, values, latest=latest)
        if found and not several:  # a value shared by several items (a question's text) names none
            naming.append(key)
    return (naming[0] if len(naming) == 1 else None), naming


def _shown(value: Any) -> str:
    """A value as a preview shows it: text as written, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


@dataclass
class KeysRead:
    """What a first pass over the file keeps (issue 37, M3: never the ratings themselves): the
    reader's counts, how many ratings it read, the item keys they name (once each) and whether
    any is a comparison of two named systems."""

    counts: ReadCounts
    annotations: int = 0
    keys: dict[str, None] = field(default_factory=dict)
    compared: bool = False


def _item_fields(ids: set[int]) -> set[str]:
    """The names of the fields the items ``ids`` have, read in batches (not kept per item)."""
    names: set[str] = set()
    wanted = sorted(ids)
    for start in range(0, len(wanted), CONTEXT_BATCH):
        names.update(name for ctx in item_contexts(wanted[start : start + CONTEXT_BATCH]).values() for name in ctx)
    return names


def _ignore(where: str, message: str) -> None:
    """The problem sink of a pass after the first: the first reported what the reader finds."""


def _read_keys(
    source: RatingsFile, reader: Reader, *, item_key: str, problem: Problems, expected: Expected, bad_byte: int | None
) -> KeysRead:
    """One pass over the file by ``item_key``, reporting what the reader finds."""
    read = KeysRead(ReadCounts())
    if bad_byte is not None:
        problem("line 1", f"the file is not UTF-8 text (byte {bad_byte})")
        return read
    with source.open_text() as text:
        for rating in iter_ratings(
            text, reader, item_key=item_key, problem=problem, counts=read.counts, expected=expected
        ):
            read.annotations += 1
            read.keys[rating.key] = None
            read.compared = read.compared or rating.compared is not None
    if read.counts.broken:  # the file broke off: what was read before counts for nothing
        read.annotations, read.keys, read.compared = 0, {}, False
    return read


def _read_with_item_key(
    project: Project,
    source: RatingsFile,
    reader: Reader,
    *,
    item_key: str,
    report: AnnotationImportReport,
    expected: Expected,
    bad_byte: int | None,
) -> tuple[KeysRead, str]:
    """Read the file by ``item_key``; with the default key (:data:`DETECTED_KEYS`) that no task
    has, or whose values name no item, read it again by the one data key that names items
    (:func:`detect_item_key`). Tasks without the key are reported once, with the keys they have."""
    problem = Problems(report)
    read = _read_keys(source, reader, item_key=item_key, problem=problem, expected=expected, bad_byte=bad_byte)
    counts = read.counts
    if item_key in DETECTED_KEYS and counts.data_keys:
        keys = list(read.keys)
        # a first thousand keys decide for a file that matches (the common case costs one query)
        named = bool(keys) and bool(
            items_by_key(project, item_key, set(keys[:1000]))[0] or items_by_key(project, item_key, set(keys[1000:]))[0]
        )
        if not named:
            detected, naming = detect_item_key(project, counts.data_keys, tried=item_key or "id")
            if detected is not None:
                report.errors.clear()
                report.errors_truncated = 0
                read = _read_keys(
                    source, reader, item_key=detected, problem=problem, expected=expected, bad_byte=bad_byte
                )
                counts = read.counts
                item_key, report.item_key, report.item_key_detected = detected, detected, True
            elif len(naming) > 1:
                problem(
                    "item key",
                    f"several keys of the tasks' data name items of this project ({', '.join(naming)}): "
                    "choose one as the item key",
                )
    report.data_keys = sorted(counts.data_keys)
    if counts.missing_key:
        key = item_key or "id"
        # a flat export has one record per annotation, the full export one task with its annotations
        noun = "records" if reader.task_data_beside_answers else "tasks"
        summary = (
            f"{len(counts.missing_key)} of {len(counts.missing_key) + read.annotations} {noun} have no {key!r} "
            f"in their data (the item key); the keys the {noun} have: {', '.join(report.data_keys) or '(none)'}: "
            "choose one of them as the item key"
        )
        report.errors.insert(0, f"item key: {summary}")
        if read.annotations:  # only some lack it: name them (all lacking it, the summary says it all)
            for where in counts.missing_key:
                problem(where, f"no {key!r} in the task's data (the item key)")
    return read, item_key


def _rater_plan(project: Project, plan: Plan, known: Mapping[str, tuple[int, Any]]) -> list[dict[str, Any]]:
    """Which source annotator becomes which rater, with how many annotations each brings: the
    new raters named as :func:`write_plan` names them (``imported-<n>``, in file order)."""
    per_source = plan.per_source
    names = dict(Rater.objects.filter(pk__in=[rid for rid, _ in known.values()]).values_list("id", "name"))
    taken = Rater.objects.filter(
        kind=Rater.Kind.HUMAN, backend=IMPORTED_BACKEND, parameters__project=project.id
    ).count()
    out = []
    for sid, rid in plan.raters.items():
        if rid is None and sid in per_source:
            taken += 1
            name = f"imported-{taken}"
        else:
            name = names.get(rid, "") if rid is not None else ""
        out.append({"source": sid, "rater": name, "new": rid is None, "annotations": per_source.get(sid, 0)})
    return out


class RatedPairs:
    """The (rater, item) pairs of a file checked so far, for its duplicate check, in memory that
    does not grow with the file (issue 37, M3): per rater the numbers of the items it rated, a set
    while that is small, else a bitmap of the matched items (one bit each), whichever is smaller:
    at most about 64 bytes per rating and ``items / 8`` bytes per rater. Raters and items are
    numbered in the order first met (:meth:`number`)."""

    #: what one entry of a set of ints costs (its slot and its int object), in bits
    SET_ENTRY_BITS = 64 * 8

    def __init__(self, items: int) -> None:
        self.items = max(items, 1)
        self.of: dict[int, set[int] | bytearray] = {}
        self.raters: dict[str, int] = {}
        self.item_numbers: dict[int, int] = {}

    def number(self, rater: str, item_id: int) -> tuple[int, int]:
        """(the rater's number, the item's number), each given when first met."""
        return (
            self.raters.setdefault(rater, len(self.raters)),
            self.item_numbers.setdefault(item_id, len(self.item_numbers)),
        )

    def key(self, rater: int, item: int) -> int:
        """One int per pair (the duplicates' keys when their first rating is looked for)."""
        return rater * self.items + item

    def add(self, rater: int, item: int) -> bool:
        """Mark the pair rated: False when it was already."""
        seen = self.of.setdefault(rater, set())
        if isinstance(seen, set):
            if item in seen:
                return False
            seen.add(item)
            if len(seen) * self.SET_ENTRY_BITS > self.items:  # the bitmap is smaller now
                bitmap = bytearray((self.items + 7) // 8)
                for k in seen:
                    bitmap[k >> 3] |= 1 << (k & 7)
                self.of[rater] = bitmap
            return True
        byte, bit = item >> 3, 1 << (item & 7)
        if seen[byte] & bit:
            return False
        seen[byte] |= bit
        return True


#: where a duplicate's message names its first rating until :func:`_name_first_places` has read it
FIRST_PLACE = "\x00first\x00"


def _read_again(
    source: RatingsFile, reader: Reader, *, item_key: str, expected: Expected, read: KeysRead
) -> Iterator[SourceRating]:
    """The ratings once more, from disk, for the per-rating checks (their reader's problems were
    reported by the first pass); none when the first pass read none (a broken file)."""
    if not read.annotations:
        return
    with source.open_text() as text:
        yield from iter_ratings(
            text, reader, item_key=item_key, problem=_ignore, counts=ReadCounts(), expected=expected
        )


def _name_first_places(
    report: AnnotationImportReport,
    duplicates: list[tuple[int, int]],
    source: RatingsFile,
    reader: Reader,
    *,
    item_key: str,
    expected: Expected,
    items: Mapping[str, MatchedItem],
    pairs: RatedPairs,
) -> None:
    """Put the place of each reported duplicate's first rating into its message: found by reading
    the file again, only when there are duplicates, instead of keeping every rating's place."""
    wanted = {pair for _, pair in duplicates}
    first: dict[int, str] = {}
    with source.open_text() as text:
        for rating in iter_ratings(
            text, reader, item_key=item_key, problem=_ignore, counts=ReadCounts(), expected=expected
        ):
            item = items.get(rating.key)
            if item is None or rating.rater not in pairs.raters or item.id not in pairs.item_numbers:
                continue
            pair = pairs.key(pairs.raters[rating.rater], pairs.item_numbers[item.id])
            if pair in wanted and pair not in first:
                first[pair] = rating.where
                if len(first) == len(wanted):
                    break
    for index, pair in duplicates:
        report.errors[index] = report.errors[index].replace(FIRST_PLACE, first.get(pair, "?"))


def check_annotations(
    *,
    project: Project,
    data: bytes | str | Path,
    data_format: str,
    item_key: str = "id",
    mapping: Mapping[str, str] | None = None,
    progress: Progress | None = None,
    exclude_import: int | None = None,
    keep_rows: bool = True,
) -> Plan:
    """Read and check a file (nothing written): the plan of what an import would write, with
    the report (mapping, counts, every problem); ``keep_rows=False`` (a preview) counts the rows
    without keeping them.

    Memory does not grow with the file's annotations (issue 37, M3): the file is read from disk
    a chunk at a time, once for its SHA-256 and UTF-8 check, once for the item keys and the
    fields (the item key's detection and the mapping need all of them before any rating is
    checked; a second time when the key is detected), once for the per-rating checks, and once
    more only to name where a duplicate's first rating is. Per rating at most the duplicate
    check's entry stays (:class:`RatedPairs`), per distinct task its item key and matched item
    (the items' contexts are read a batch of ratings at a time, :func:`with_contexts`), besides
    the rows an import keeps to write."""
    reader = registry.get_reader(data_format, rater_kind=HUMAN)
    item_key = (item_key or "id").strip()
    explicit = dict(mapping or {})
    source = RatingsFile.of(data)
    report = AnnotationImportReport(ok=False, format=data_format, item_key=item_key, sha256="")
    report.sha256, bad_byte = source.digest()
    plan = Plan(report=report)
    problem = Problems(report)
    earlier = (
        AnnotationImport.objects.filter(
            project=project, sha256=report.sha256, status=AnnotationImport.Status.DONE, preview=False
        )
        .exclude(pk=exclude_import)
        .order_by("id")
        .first()
    )
    if earlier is not None:  # the same file again: nothing to add
        report.mapping = dict((earlier.report or {}).get("mapping") or {})
        as_duplicate(report, earlier)
        return plan
    ticker = Ticker(progress)
    rubric = project.rubric_version.parsed()
    questions = {q.id: q for q in rubric.questions}
    expected = Expected(tuple(questions))
    keys_read_pass, item_key = _read_with_item_key(
        project, source, reader, item_key=item_key, report=report, expected=expected, bad_byte=bad_byte
    )
    counts = keys_read_pass.counts
    report.records_read, report.skipped_cancelled = counts.records, counts.skipped_cancelled
    report.skipped_empty = counts.skipped_empty
    report.annotations_read = keys_read_pass.annotations
    ticker.report(0.2 * CHECK_SHARE, "checking")
    for name, target in explicit.items():
        if target and name not in counts.source_fields:
            problem("mapping", f"{name}={target}: the file has no field {name!r}")
    # the matched items without their contexts: those are read a batch of ratings at a time
    items, several = items_by_key(project, item_key, set(keys_read_pass.keys), with_context=False)
    if reader.task_data_beside_answers:  # the task's data beside the answers: left out, shown in the mapping
        item_fields = _item_fields({it.id for it in items.values()}) | set(STRATA_KEYS)
        for name in labelstudio_flat.task_data_columns(counts.source_fields, item_fields, set(questions)):
            explicit.setdefault(name, "")
    if keys_read_pass.compared:
        for name, target in comparison_defaults(rubric).items():
            explicit.setdefault(name, target)
    report.mapping, unknown = resolve_mapping(rubric, counts.source_fields, explicit)
    answered = {ELEMENT.sub(r"\g<q>", t) for t in report.mapping.values() if t}
    if keys_read_pass.annotations:  # with nothing read, no field was seen: "no field answers q1" would be untrue
        report.questions_unanswered = [q for q in questions if q not in answered]
    if not keys_read_pass.annotations and not problem.any:
        problem("line 1", "the file holds no annotations")
    keys_read = keys_read_pass.keys.keys()
    report.items_matched = len(keys_read & items.keys())
    raters = {
        str((p or {}).get("source_id")): (rid, attrs or {})
        for rid, p, attrs in Rater.objects.filter(
            kind=Rater.Kind.HUMAN, backend=IMPORTED_BACKEND, parameters__project=project.id
        ).values_list("id", "parameters", "attributes")
    }
    stored: dict[tuple[int, int], tuple[dict, int | None]] = {}
    known_ids = [rid for rid, _ in raters.values()]
    if known_ids:
        for rid, iid, answers, imp in Annotation.objects.filter(
            rater_id__in=known_ids, item__project=project
        ).values_list("rater_id", "item_id", "answers", "source_import_id"):
            stored[(rid, iid)] = (answers, imp)
    reported_unknown: set[str] = set()
    seen_pairs = RatedPairs(len({it.id for it in items.values()}))
    #: duplicates reported: (index in the errors, pair), the first rating's place named at the end
    duplicates: list[tuple[int, int]] = []
    attrs_of: dict[str, tuple[dict[str, Any], str]] = {}
    total = max(keys_read_pass.annotations, 1)
    key_label = "external id" if item_key in EXTERNAL_ID_KEYS else f"external id or {item_key}"
    examples: dict[str, dict[str, list[str]]] = {}
    ratings = _read_again(source, reader, item_key=item_key, expected=expected, read=keys_read_pass)
    for n, (rating, ctx) in enumerate(with_contexts(ratings, items)):
        if ticker.due():
            ticker.report(CHECK_SHARE * (0.2 + 0.8 * n / total), "checking")
        where = rating.where
        for name in rating.answers:
            if name in unknown and name not in reported_unknown:
                reported_unknown.add(name)
                problem((rating.origins or {}).get(name, where), unknown[name])
        item = items.get(rating.key)
        if item is None:
            if rating.key in several:
                problem(where, f"{key_label} {rating.key!r} names several items ({', '.join(several[rating.key])})")
            else:
                hint = reader.unknown_external_id_hint if item_key in EXTERNAL_ID_KEYS else ""
                problem(where, f"unknown item: no item with {key_label} {rating.key!r} in this project{hint}")
            continue
        rater_no, item_no = seen_pairs.number(rating.rater, item.id)
        if not seen_pairs.add(rater_no, item_no):
            if len(report.errors) < MAX_REPORTED_ERRORS:
                duplicates.append((len(report.errors), seen_pairs.key(rater_no, item_no)))
            problem(where, f"duplicate: rater {rating.rater!r} already rated item {rating.key!r} ({FIRST_PLACE})")
            continue
        known, first = attrs_of.setdefault(rating.rater, ({}, where))
        for name, value in rating.attributes.items():
            if name in known and known[name] != value:
                problem(where, f"rater {rating.rater!r} has {name} {value!r} here but {known[name]!r} ({first})")
            known.setdefault(name, value)
        if any(name in unknown for name in rating.answers):
            continue
        given = rating.answers
        if rating.compared is not None and report.mapping.get(comparisons.WINNER_COLUMN):
            try:
                winner = comparison_answer(rating, questions[report.mapping[comparisons.WINNER_COLUMN]], ctx)
            except ValueError as exc:
                problem(where, str(exc))
                continue
            given = {**given, comparisons.WINNER_COLUMN: winner}
        answers: dict[str, Any] = {}
        elements: dict[str, dict[int, Any]] = {}
        for name, raw_value in given.items():
            target = report.mapping.get(name)
            if target is None:
                continue
            m = ELEMENT.match(target)
            if m:
                q = questions[m["q"]]
                elements.setdefault(q.id, {})[int(m["n"])] = coerce(q, raw_value)
            else:
                q = questions[target]
                answers[q.id] = coerce_repeated(q, raw_value) if q.repeat_over else coerce(q, raw_value)
                seen = examples.setdefault(name, {})
                if len(seen) < VALUE_EXAMPLES and _shown(raw_value) not in seen:
                    label = next((o.label for o in q.options if o.value == answers[q.id]), "")
                    seen[_shown(raw_value)] = [_shown(raw_value), _shown(answers[q.id]), str(label)]
        for qid, given in elements.items():
            q = questions[qid]
            size = rubric.repeat_count(q, ctx)
            if qid in answers or max(given) > size:
                problem(where, f"question {qid!r}: {max(given)} elements given, the item has {size}")
                continue
            answers[qid] = [given.get(i + 1) for i in range(size)]
        bad = value_problem(answers)
        if bad:
            problem(where, bad)
            continue
        try:
            cleaned = rubric.validate(answers, item=ctx, presentation=None)
        except AnswerError as exc:
            for qid, message in exc.errors.items():
                problem(where, f"question {qid!r} (item {rating.key!r}): {message}")
            continue
        known_rater = raters.get(rating.rater)
        if known_rater is not None and (known_rater[0], item.id) in stored:
            previous, imp = stored[(known_rater[0], item.id)]
            if previous == cleaned:
                report.already_imported += 1
                continue
            problem(
                where,
                f"rater {rating.rater!r} already has a different answer for item {rating.key!r}"
                + (f" (import {imp})" if imp else ""),
            )
            continue
        if len(report.sample_rows) < SAMPLE_ROWS:
            report.sample_rows.append(
                {"where": where, "item": item.external_id, "rater": rating.rater, "answers": cleaned}
            )
        plan.per_source[rating.rater] = plan.per_source.get(rating.rater, 0) + 1
        if keep_rows:
            plan.rows.append(
                _Row(
                    rater=rating.rater,
                    item_id=item.id,
                    answers=cleaned,
                    derived=rubric.derive(cleaned, presentation=None),
                    duration_ms=rating.duration_ms,
                    submitted_at=rating.submitted_at,
                )
            )
    if duplicates:
        _name_first_places(
            report, duplicates, source, reader, item_key=item_key, expected=expected, items=items, pairs=seen_pairs
        )
    del seen_pairs
    for source_id, (attrs, _first) in attrs_of.items():
        bad = value_problem(attrs)
        if bad:
            problem(_first, f"rater {source_id!r}'s attributes: {bad}")
    plan.raters = {sid: (raters[sid][0] if sid in raters else None) for sid in attrs_of}
    plan.attributes = {sid: attrs for sid, (attrs, _w) in attrs_of.items()}
    for sid, (rid, current) in raters.items():
        extra = {k: v for k, v in plan.attributes.get(sid, {}).items() if k not in current}
        if extra:
            plan.attribute_updates[rid] = {**current, **extra}
    report.raters = len(attrs_of)
    report.raters_new = sum(1 for rid in plan.raters.values() if rid is None)
    report.value_examples = {name: list(seen.values()) for name, seen in examples.items()}
    report.rater_plan = _rater_plan(project, plan, raters)
    unmatched = len(keys_read - items.keys())
    if keys_read and (not report.items_matched or unmatched > 1):
        # one line before the per-task lines: a file for another project fails every task alike
        noun = "tasks" if counts.data_keys else "item keys"
        report.errors.insert(
            0,
            f"file: {report.items_matched} of {len(keys_read)} {noun} match an item of this project (by {key_label})"
            + (": is this the project the file was exported for?" if not report.items_matched else ""),
        )
    report.ok = not problem.any
    if not report.ok:
        plan.rows, plan.per_source = [], {}
    return plan


def as_duplicate(report: AnnotationImportReport, earlier: AnnotationImport) -> AnnotationImportReport:
    """``report`` turned into "already imported by ``earlier``": nothing written, the earlier
    import's annotations counted as already there."""
    report.ok, report.duplicate_of = True, earlier.id
    report.already_imported = int((earlier.report or {}).get("annotations_created") or 0)
    report.annotations_created = report.raters_new = 0
    return report


#: rows (an assignment and its annotation each) per transaction on SQLite, where a transaction
#: holds the one write lock of the database: about a second of it on a busy machine, so an
#: annotator's submit waits that long at most instead of the whole write phase (issue 37, M5)
SQLITE_WRITE_BATCH = 2_000
#: seconds the import lets the write lock go between two SQLite batches. A writer waiting for
#: the lock sleeps in SQLite's busy handler, up to 100 ms between tries, while the import would
#: take the lock again within microseconds of its commit: without a pause the waiters starve
#: (measured: 2-2.6 s per submit with 0.3-0.8 s batches). Over 10^6 rows: 500 pauses, ~50 s.
SQLITE_YIELD_SECONDS = 0.1


def write_plan(
    plan: Plan,
    *,
    project: Project,
    job: AnnotationImport,
    before_commit: Callable[[AnnotationImportReport], None] | None = None,
    progress: Progress | None = None,
) -> None:
    """Write a checked plan: the rows and, through ``before_commit``, the job's "done". It starts
    by claiming the file for ``job`` (:func:`claim_file`): :class:`AlreadyWritten`, and nothing
    written, when another import of the project wrote the same file.

    On PostgreSQL all of it is one transaction (readers and other writers go on beside it). On
    SQLite a transaction holds the database's only write lock, and one of 10^6 rows held it
    ~150 s, failing annotators' submits with "database is locked" (issue 37, M5): there the rows
    go in transactions of :data:`SQLITE_WRITE_BATCH`, each checking that the job is still this
    worker's, and the job's "done" in the last. An error on the way deletes what was written
    (:func:`discard_written`); a killed worker's batches are deleted by the job's next run."""
    ticker = Ticker(progress)
    if connection.vendor != "sqlite":
        with transaction.atomic():
            rater_ids = claim_and_add_raters(plan, project=project, job=job)
            write_rows(plan.rows, rater_ids, project=project, job=job, ticker=ticker, done=0, total=len(plan.rows))
            plan.report.annotations_created = len(plan.rows)
            if before_commit is not None:
                before_commit(plan.report)
        return
    with transaction.atomic():
        rater_ids = claim_and_add_raters(plan, project=project, job=job)
    try:
        rows = plan.rows
        for start in range(0, len(rows), SQLITE_WRITE_BATCH):
            with transaction.atomic():
                if not jobs.holds_claim(job):
                    raise jobs.Superseded(f"AnnotationImport {job.pk} is no longer held by this worker")
                batch = rows[start : start + SQLITE_WRITE_BATCH]
                write_rows(batch, rater_ids, project=project, job=job, ticker=ticker, done=start, total=len(rows))
            time.sleep(SQLITE_YIELD_SECONDS)  # the waiting writers' turn (annotators' submits)
        with transaction.atomic():
            plan.report.annotations_created = len(rows)
            if before_commit is not None:
                before_commit(plan.report)
    except BaseException:
        if jobs.holds_claim(job):  # not when the job went to another worker: those rows are its
            discard_written(job)
        raise


def claim_and_add_raters(plan: Plan, *, project: Project, job: AnnotationImport) -> dict[str, int]:
    """Claim the file for ``job`` and create the file's new raters (inside the caller's
    transaction): the rater id of every source rater id."""
    report = plan.report
    claim_file(job, report.sha256)
    rater_ids = {sid: rid for sid, rid in plan.raters.items() if rid is not None}
    used = {r.rater for r in plan.rows}
    new = [sid for sid, rid in plan.raters.items() if rid is None and sid in used]
    if new:
        taken = Rater.objects.filter(
            kind=Rater.Kind.HUMAN, backend=IMPORTED_BACKEND, parameters__project=project.id
        ).count()
        created = Rater.objects.bulk_create(
            [
                Rater(
                    kind=Rater.Kind.HUMAN,
                    backend=IMPORTED_BACKEND,
                    name=f"imported-{taken + k + 1}",
                    attributes=plan.attributes.get(sid, {}),
                    parameters={
                        "project": project.id,
                        "source_id": sid,
                        "source_format": report.format,
                        "import": job.id,
                    },
                )
                for k, sid in enumerate(new)
            ]
        )
        rater_ids.update({sid: r.id for sid, r in zip(new, created, strict=True)})
    for rid, attrs in plan.attribute_updates.items():
        Rater.objects.filter(pk=rid).update(attributes=attrs)
    report.raters_new = len(new)
    return rater_ids


def write_rows(
    rows: list[Any],
    rater_ids: dict[str, int],
    *,
    project: Project,
    job: AnnotationImport,
    ticker: Ticker,
    done: int,
    total: int,
) -> None:
    """Insert ``rows`` (checked ratings) as submitted assignments and their annotations, inside
    the caller's transaction; ``done`` of ``total`` rows were written before (progress)."""
    now = timezone.now()
    assignment_ids = reserve_ids(Assignment, len(rows))
    total = max(total, 1)
    rubric_version_id = project.rubric_version_id

    # the rows come from the one writer of a submitted annotation (annotation.writing), as
    # the annotate, judge and demo paths write theirs: the columns are decided there once
    def assignments():
        for n, (aid, row) in enumerate(zip(assignment_ids, rows, strict=True)):
            if ticker.due():
                ticker.report(CHECK_SHARE + (1 - CHECK_SHARE) * (done + 0.5 * n) / total, "writing")
            yield writing.new_submitted_assignment_row(
                aid,
                project_id=project.id,
                item_id=row.item_id,
                rater_id=rater_ids[row.rater],
                at=row.submitted_at or now,
                created_at=now,
                opened_at=None,
            )

    insert_rows(Assignment, writing.ASSIGNMENT_COLUMNS, assignments())

    def annotations():
        for n, (aid, row) in enumerate(zip(assignment_ids, rows, strict=True)):
            if ticker.due():
                ticker.report(CHECK_SHARE + (1 - CHECK_SHARE) * (done + 0.5 * len(rows) + 0.5 * n) / total, "writing")
            yield writing.bulk_row(
                writing.Submission(
                    assignment_id=aid,
                    item_id=row.item_id,
                    rater_id=rater_ids[row.rater],
                    rubric_version_id=rubric_version_id,
                    answers=row.answers,
                    derived=row.derived,
                    at=row.submitted_at or now,
                    duration_ms=row.duration_ms,
                    source_import_id=job.id,
                )
            )

    insert_rows(Annotation, writing.COLUMNS, annotations())


def discard_written(job: AnnotationImport) -> None:
    """Delete what ``job`` wrote (its annotations, their assignments, the raters it created that
    have nothing else) and release its claim on the file: after an error between the batches
    of a SQLite write, or a killed earlier attempt's batches. Nothing when it wrote nothing."""
    with transaction.atomic():
        written = Annotation.objects.filter(source_import=job)
        assignment_ids = list(written.values_list("assignment_id", flat=True))
        written.delete()
        for start in range(0, len(assignment_ids), 10_000):  # bounded IN lists (SQLite's variables)
            Assignment.objects.filter(pk__in=assignment_ids[start : start + 10_000]).delete()
        Rater.objects.filter(backend=IMPORTED_BACKEND, parameters__import=job.id, assignments__isnull=True).delete()
        AnnotationImport.objects.filter(pk=job.pk).update(written_sha256=None)


# ---------------------------------------------------------------------------------- jobs
def run_annotation_import_job(*, job: AnnotationImport) -> AnnotationImport:
    """Run a stored import (from the page, the API, the command or a worker) and keep its report
    and the file's SHA-256 on the job (``staging.run_checked_import``: progress while it runs,
    refused, a duplicate or written, the staged upload deleted once the job has ended)."""

    def check(job: AnnotationImport, progress: Progress) -> Plan:
        return check_annotations(
            project=job.project,
            data=Path(job.data_file),
            data_format=job.data_format,
            item_key=job.item_key,
            mapping=job.mapping,
            progress=progress,
            exclude_import=job.pk,
        )

    def write(plan: Plan, job: AnnotationImport, progress: Progress) -> None:
        write_plan(
            plan,
            project=job.project,
            job=job,
            # rows and "done" in one commit (a killed worker wrote nothing; the reaper re-runs it)
            before_commit=lambda r: jobs.finish_claimed(
                job, report=r.as_dict(), sha256=r.sha256, item_key=r.item_key[:200]
            ),
            progress=progress,
        )

    # discard_written: the batches an earlier, killed attempt committed on SQLite (write_plan)
    return run_checked_import(job, check=check, write=write, as_duplicate=as_duplicate, before=discard_written)


#: the staged file's name before its format's ending (``annotations.json``)
STAGED_STEM = "annotations"


def _owner(project: Project, user: AbstractBaseUser | None) -> dict[str, Any]:
    return {"project": project.id, "user": getattr(user, "pk", None)}


def stage_annotations(
    *, project: Project, user: AbstractBaseUser | None, name: str, chunks: Iterable[bytes], data_format: str
) -> StagedFile:
    """An uploaded annotations file in its own staging folder, with the project and user it was
    uploaded for, until it is imported or dropped (``staging.stage_file``)."""
    reader = registry.get_reader(data_format, rater_kind=HUMAN)
    return stage_file(name=name, chunks=chunks, stem=STAGED_STEM, suffix=reader.suffix, owner=_owner(project, user))


def discard_staged_token(token: str) -> None:
    """Drop a staged upload (a preview that will not be imported, or a cancelled page upload)."""
    discard_token(token)


def staged_annotations(*, project: Project, user: AbstractBaseUser | None, token: str) -> tuple[Path, str]:
    """(path, original name) of a file staged by :func:`stage_annotations` for this project and
    user; DomainError (not found) for any other token."""
    return staged_file(token=token, stem=STAGED_STEM, owner=_owner(project, user))


def preview_staged(
    *, project: Project, path: Path, data_format: str, item_key: str, mapping: Mapping[str, str]
) -> AnnotationImportReport:
    """What importing the staged file would do (the mapping, the counts, every problem); nothing
    written, no row kept (the check counts them: memory flat in the file's size, issue 37, M3)."""
    report = check_annotations(
        project=project, data=path, data_format=data_format, item_key=item_key, mapping=mapping, keep_rows=False
    ).report
    report.preview = True
    return report


def preview_runs_inline(path: Path) -> bool:
    """A preview of the file runs inside the request (up to ``HV_INLINE_IMPORT_BYTES``, as an
    import does); a larger one is a preview job on a worker (:func:`start_annotation_preview`),
    so a large file never takes a web worker's memory and time (issue 37, M3)."""
    return Path(path).stat().st_size <= settings.HV_INLINE_IMPORT_BYTES


def run_annotation_preview_job(*, job: AnnotationImport) -> AnnotationImport:
    """Run a stored preview (on a worker): its report is the preview (``preview_staged``), kept on
    the job; nothing written. Its staged upload stays for the import Confirm starts when the job
    ``keeps_upload`` (the page's), else it goes once the job has ended (the API's)."""

    def work(job: AnnotationImport, progress: Progress) -> dict[str, Any]:
        if not Path(job.data_file).is_file():
            raise DomainError(UPLOAD_GONE)
        try:
            report = check_annotations(
                project=job.project,
                data=Path(job.data_file),
                data_format=job.data_format,
                item_key=job.item_key,
                mapping=job.mapping,
                progress=progress,
                keep_rows=False,
            ).report
        except FileNotFoundError:  # imported by a Confirm from another tab while this pass was to read it
            raise DomainError(UPLOAD_GONE) from None
        report.preview = True
        return {"report": report.as_dict()}

    return run_staged(job, work, discard_upload=not job.keeps_upload)


def start_annotation_preview(
    *,
    project: Project,
    user: AbstractBaseUser | None,
    path: Path,
    original_name: str,
    data_format: str,
    item_key: str,
    mapping: Mapping[str, str],
    keeps_upload: bool,
) -> AnnotationImport:
    """A preview job for a staged file larger than ``HV_INLINE_IMPORT_BYTES``, handed to a worker
    through the staged-job skeleton (``staging.start_staged``); its page shows the progress, then
    the preview. ``keeps_upload``: the upload stays for Confirm (the page), else it is dropped
    once the preview has ended (the API)."""
    registry.get_reader(data_format, rater_kind=HUMAN)
    job = _new_job(
        project=project,
        user=user,
        path=path,
        original_name=original_name,
        data_format=data_format,
        item_key=item_key,
        mapping=mapping,
        preview=True,
        keeps_upload=keeps_upload,
    )
    return start_staged(job, size=path.stat().st_size, run=lambda job: run_annotation_preview_job(job=job))


def preview_annotations(
    *,
    project: Project,
    user: AbstractBaseUser | None,
    path: Path,
    original_name: str,
    data_format: str,
    item_key: str,
    mapping: Mapping[str, str],
    keeps_upload: bool,
) -> AnnotationImportReport | AnnotationImport:
    """What importing the staged file would do, nothing written: the preview itself for a file
    up to ``HV_INLINE_IMPORT_BYTES`` (:func:`preview_staged`, in the request), else a preview job
    on a worker whose report will be it (:func:`start_annotation_preview`; issue 37, M3)."""
    if preview_runs_inline(path):
        return preview_staged(project=project, path=path, data_format=data_format, item_key=item_key, mapping=mapping)
    return start_annotation_preview(
        project=project,
        user=user,
        path=path,
        original_name=original_name,
        data_format=data_format,
        item_key=item_key,
        mapping=mapping,
        keeps_upload=keeps_upload,
    )


def _new_job(
    *,
    project: Project,
    user: AbstractBaseUser | None,
    path: Path,
    original_name: str,
    data_format: str,
    item_key: str,
    mapping: Mapping[str, str],
    **flags: bool,
) -> AnnotationImport:
    """The job row of an import or a preview of a staged file (``flags``: ``preview``, ``keeps_upload``)."""
    return AnnotationImport.objects.create(
        project=project,
        created_by=user,
        data_file=str(path),
        data_format=data_format,
        original_name=original_name[:255],
        item_key=(item_key or "id").strip()[:200],
        mapping=dict(mapping),
        **flags,
    )


def preview_of(job: AnnotationImport) -> AnnotationImportReport | None:
    """The report of an ended preview job as the preview page shows it; None while it runs or
    when it failed (its page says why)."""
    if not job.preview or job.status != AnnotationImport.Status.DONE:
        return None
    names = {f.name for f in fields(AnnotationImportReport)}
    return AnnotationImportReport(**{k: v for k, v in (job.report or {}).items() if k in names})


def discard_upload(job: AnnotationImport) -> None:
    """The cleanup of a job failed without a run (the reaper gave up, the broker refused it): its
    staged upload goes, unless a page preview keeps it for Confirm (swept when stale)."""
    if not job.keeps_upload:
        discard_job_upload(job)


def start_annotation_import(
    *,
    project: Project,
    user: AbstractBaseUser | None,
    path: Path,
    original_name: str,
    data_format: str,
    item_key: str,
    mapping: Mapping[str, str],
    inline: bool | None = None,
) -> AnnotationImport:
    """Create the job for a file (staged, or a path given on the command line) and run it: at
    once for small files (or ``inline``), else on a worker (``annotation.tasks``)."""
    registry.get_reader(data_format, rater_kind=HUMAN)
    # Confirm posted twice with one staged token (a double click): the second gets the first's
    # job. Two posts at the same instant can both pass this lookup; neither writes twice even
    # then (``claim_file``), this only spares the second job.
    staged_already = (
        AnnotationImport.objects.filter(project=project, data_file=str(path), status__in=jobs.PENDING, preview=False)
        .order_by("id")
        .first()
    )
    if staged_already is not None and Path(path).resolve().is_relative_to(staging_root().resolve()):
        return staged_already
    job = _new_job(
        project=project,
        user=user,
        path=path,
        original_name=original_name,
        data_format=data_format,
        item_key=item_key,
        mapping=mapping,
    )
    return start_staged(
        job, size=path.stat().st_size, run=lambda job: run_annotation_import_job(job=job), inline=inline
    )


def imports_of(project: Project) -> list[AnnotationImport]:
    """The project's last imports (previews are no imports: left out)."""
    return list(AnnotationImport.objects.filter(project=project, preview=False).order_by("-created_at")[:20])


__all__ = [
    "AlreadyWritten",
    "AnnotationImportReport",
    "MatchedItem",
    "Problems",
    "as_duplicate",
    "check_annotations",
    "claim_file",
    "coerce",
    "comparison_answer",
    "comparison_defaults",
    "items_by_key",
    "parse_mapping",
    "preview_annotations",
    "preview_of",
    "preview_runs_inline",
    "preview_staged",
    "read_ratings",
    "run_annotation_import_job",
    "run_annotation_preview_job",
    "stage_annotations",
    "staged_annotations",
    "start_annotation_import",
    "start_annotation_preview",
]
