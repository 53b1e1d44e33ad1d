"""Label Studio's JSON export (``exportType=JSON``, Label Studio 1.x): a list of tasks, each
``{"id", "data": {...}, "annotations": [...], ...}``; each annotation ``{"id", "completed_by"
(an id, or ``{"id", "email", ...}``), "was_cancelled", "lead_time" (seconds), "created_at",
"updated_at", "result": [{"from_name", "to_name", "type", "value": {...}}, ...]}``.

A result's control name (``from_name``) is the source field; its value is read by type:
``choices`` (one choice, or a list for a multiple-choice control), ``rating``, ``number``,
``textarea`` (the lines joined), ``pairwise`` (``selected``), and every ``*labels`` type (the
labels of all its regions, in order, once each: a checklist). Cancelled (skipped) annotations
are counted and left out. The item key is read from the task's ``data``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from django.utils.translation import gettext_lazy as _

from core.values import iter_array

from .common import (
    HUMAN,
    NOT_JSON,
    Expected,
    Problem,
    ReadCounts,
    Reader,
    SourceRating,
    TextSource,
    duration_ms,
    load_json,
    parse_time,
    text_of,
    whole_text,
)

#: result types whose value is one entry of ``value``
SCALAR_TYPES = {"choices": "choices", "rating": "rating", "number": "number", "pairwise": "selected"}
#: the item key names that mean "the external id" when the task's data does not hold the key
EXTERNAL_ID_KEYS = ("id", "external_id")


def result_value(result: dict[str, Any]) -> tuple[bool, Any]:
    """(labels?, the raw answer) of one result; raises ValueError for an unsupported type."""
    rtype = str(result.get("type") or "")
    value = result.get("value")
    if not isinstance(value, dict):
        raise ValueError("its 'value' is not an object")
    if rtype.endswith("labels"):
        labels = value.get(rtype, value.get("labels"))
        if not isinstance(labels, list):
            raise ValueError(f"a {rtype} result has no list of labels")
        return True, labels
    if rtype == "textarea":
        text = value.get("text")
        return False, "\n".join(str(t) for t in text) if isinstance(text, list) else text
    if rtype in SCALAR_TYPES:
        raw = value.get(SCALAR_TYPES[rtype])
        if rtype == "choices" and isinstance(raw, list) and len(raw) == 1:
            raw = raw[0]
        return False, raw
    raise ValueError(f"results of type {rtype!r} are not supported (choices, rating, number, textarea, labels)")


def item_key_of(data: dict[str, Any], item_key: str) -> Any:
    if item_key in data:
        return data[item_key]
    if item_key in EXTERNAL_ID_KEYS:
        for k in EXTERNAL_ID_KEYS:
            if k in data:
                return data[k]
    return None


def read(
    text: TextSource, *, item_key: str, problem: Problem, counts: ReadCounts, expected: Expected | None = None
) -> Iterator[SourceRating]:
    """The ratings, a task at a time: from a file, its top-level list is parsed as it is read
    (``core.values.iter_array``), so neither the file's text nor its tasks are ever all in memory
    (issue 37, M3). JSON that breaks off is reported where it breaks and marks the read broken
    (``counts.broken``: the ratings yielded before count for nothing)."""
    try:
        # a top-level list (what Label Studio exports) is read a task at a time (issue 37, M3)
        yield from _read_tasks(iter_array(text), item_key=item_key, problem=problem, counts=counts)
        return
    except json.JSONDecodeError as exc:  # the file stops being JSON: a problem of the file, nothing read
        problem(f"line {exc.lineno}", f"invalid JSON ({exc.msg} at column {exc.colno})")
        counts.broken = True
        return
    except RecursionError:
        load_json(whole_text(text), problem)  # the same message as any JSON nested too deeply
        counts.broken = True
        return
    except ValueError:  # not a list: {"tasks": [...]}, or something else
        pass
    tasks = load_json(whole_text(text), problem)
    if tasks is NOT_JSON:
        return
    if isinstance(tasks, dict) and isinstance(tasks.get("tasks"), list):
        tasks = tasks["tasks"]
    if not isinstance(tasks, list):
        problem("line 1", "a Label Studio JSON export is a list of tasks")
        return
    yield from _read_tasks(iter(tasks), item_key=item_key, problem=problem, counts=counts)


def _read_tasks(tasks: Iterator[Any], *, item_key: str, problem: Problem, counts: ReadCounts) -> Iterator[SourceRating]:
    """The ratings of the tasks, every problem reported by task."""
    for i, task in enumerate(tasks):
        counts.records += 1
        if not isinstance(task, dict):
            problem(f"task #{i + 1}", "a task must be an object")
            continue
        tid = text_of(task.get("id", f"#{i + 1}"))
        data = task.get("data")
        if not isinstance(data, dict):
            problem(f"task {tid}", "the task has no 'data' object")
            continue
        counts.saw_data(data)
        key = item_key_of(data, item_key)
        if key is None or key == "":
            counts.missing_key.append(f"task {tid}")  # reported by the import, once, with the keys there are
            continue
        annotations = task.get("annotations") or []
        if not isinstance(annotations, list):
            problem(f"task {tid}", "'annotations' must be a list")
            continue
        for j, ann in enumerate(annotations):
            where = f"task {tid}, annotation {text_of(ann.get('id', j + 1)) if isinstance(ann, dict) else j + 1}"
            if not isinstance(ann, dict):
                problem(where, "an annotation must be an object")
                continue
            if ann.get("was_cancelled"):
                counts.skipped_cancelled += 1
                continue
            author = ann.get("completed_by")
            if isinstance(author, dict):
                author = author.get("id", author.get("email"))
            if author is None or author == "":
                problem(where, "no 'completed_by' (the annotator)")
                continue
            rating = SourceRating(where=where, key=text_of(key), rater=text_of(author))
            bad = False
            results = ann.get("result") or []
            if not isinstance(results, list):
                problem(where, "'result' must be a list")
                continue
            for result in results:
                name = result.get("from_name") if isinstance(result, dict) else None
                if not name:
                    problem(where, "a result without 'from_name'")
                    bad = True
                    continue
                if not isinstance(name, str):  # a list or an object cannot key the answers (issue 37, M6)
                    problem(where, "a result's 'from_name' must be a text (the control's name)")
                    bad = True
                    continue
                try:
                    labels, raw = result_value(result)
                except ValueError as exc:
                    problem(where, f"result {name!r}: {exc}")
                    bad = True
                    continue
                if labels:
                    have = rating.answers.setdefault(name, [])
                    have.extend(x for x in raw if x not in have)
                elif name in rating.answers:
                    problem(where, f"two results for {name!r}")
                    bad = True
                else:
                    rating.answers[name] = raw
            for name in rating.answers:
                counts.saw(name)
            try:
                rating.duration_ms = duration_ms(ann.get("lead_time"), seconds=True)
                rating.submitted_at = parse_time(ann.get("updated_at") or ann.get("created_at"))
            except ValueError as exc:
                problem(where, str(exc))
                bad = True
            if not bad:
                yield rating


READER = Reader("labelstudio", _("Label Studio JSON export"), HUMAN, ".json", read, reads_stream=True)
